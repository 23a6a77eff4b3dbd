"""The budget keeps filling after a fact that does not fit: the kept facts are the most confident that fit, with
or without a query, checked against a plain greedy reference on tables of varied facts."""

from __future__ import annotations

import random

import pytest

from memory_core import build_injection, count_tokens, format_memory_for_injection
from memory_core.context.injection import fact_line


def fact(i, conf, content, cat="knowledge"):
    return {"id": f"fact_{i:08x}", "content": content, "category": cat, "confidence": conf}


def greedy(data, budget, model=None, priority=()):
    """The rule spelled out: each fact in turn (the priority ones first, then by confidence, ties oldest first)
    is kept if the whole text with it still fits."""
    facts = [f for f in data["facts"] if f["content"].strip()]
    by_id = {f["id"]: f for f in facts}
    first = [by_id[i] for i in dict.fromkeys(priority) if i in by_id]
    rest = sorted((f for f in facts if f not in first), key=lambda f: -f["confidence"])
    kept = []
    for f in first + rest:
        trial = sorted(kept + [f], key=lambda g: (-g["confidence"], facts.index(g)))
        text = "Facts:\n" + "\n".join(fact_line(g) for g in trial)
        if count_tokens(text, model) <= budget:
            kept = trial
    return [f["id"] for f in kept]


BIG = "User wrote a long note about " + "the quarterly planning of the data platform and its many teams " * 40
SMALL = [f"User likes item {n}" for n in range(8)]

# (name, facts, budget, kept ids expected as a set, or None to compare with the reference only)
CASES = [
    ("issue 34: a 430-token fact at 250", [fact(0, 0.95, BIG)] + [fact(n + 1, 0.9 - n / 100, s) for n, s in enumerate(SMALL)],
     250, {f"fact_{n + 1:08x}" for n in range(8)}),
    ("issue 34: the same at 500, the long one fits", [fact(0, 0.95, BIG)] + [fact(n + 1, 0.9 - n / 100, s)
                                                                          for n, s in enumerate(SMALL)], 500, None),
    ("the big one fits at 1000", [fact(0, 0.95, BIG)] + [fact(n + 1, 0.9 - n / 100, s) for n, s in enumerate(SMALL)],
     1000, None),
    ("a long fact in the middle", [fact(1, 0.9, "User drinks tea"), fact(2, 0.8, BIG), fact(3, 0.7, "User hikes")],
     40, {"fact_00000001", "fact_00000003"}),
    ("nothing fits but the last", [fact(1, 0.9, BIG), fact(2, 0.8, BIG), fact(3, 0.1, "Ok")], 20, {"fact_00000003"}),
    ("nothing fits", [fact(1, 0.9, BIG)], 20, set()),
    ("Portuguese and Japanese", [fact(1, 0.9, "O utilizador mora no Porto " * 30), fact(2, 0.5, "東京に住んでいる"),
                                 fact(3, 0.4, "Gosta de café")], 60, {"fact_00000002", "fact_00000003"}),
]


@pytest.mark.parametrize("name, facts, budget, expected", CASES, ids=[c[0] for c in CASES])
def test_fill_table(name, facts, budget, expected):
    data = {"facts": facts}
    report = build_injection(data, budget)
    assert report.tokens == count_tokens(report.text) <= budget and not report.truncated
    assert report.kept_fact_ids == greedy(data, budget)
    if expected is not None:
        assert set(report.kept_fact_ids) == expected
    assert format_memory_for_injection(data, budget) == report.text


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("model", [None, "gpt-4"])
def test_random_tables_match_the_greedy_reference(seed, model):
    rnd = random.Random(seed)
    words = ["tea", "Porto", "the", "runs", "marathon", "Zoë", "東京", "data", "on Sundays", "quarterly report"]
    facts = [fact(i, round(rnd.random(), 3), " ".join(rnd.choice(words) for _ in range(rnd.choice([2, 3, 5, 40, 120]))))
             for i in range(40)]
    data = {"facts": facts}
    for budget in (0, 15, 60, 200, 700):
        report = build_injection(data, budget, model=model)
        assert report.kept_fact_ids == greedy(data, budget, model), budget
        priority = [facts[3]["id"], facts[17]["id"]]
        with_query = build_injection(data, budget, model=model, priority=priority)
        assert set(with_query.kept_fact_ids) == set(greedy(data, budget, model, priority)), budget


def test_without_a_fact_too_long_the_output_is_what_it_was():
    """Facts of one length: the first that does not fit ends the list, as before."""
    data = {"facts": [fact(i, round(0.99 - i / 100, 2), f"User fact number {i + 10}") for i in range(60)]}
    for budget in (30, 100, 333):
        report = build_injection(data, budget)
        ids = [f["id"] for f in data["facts"]]
        assert report.kept_fact_ids == ids[:len(report.kept_fact_ids)]  # a prefix of the confidence order


def test_summaries_do_not_repeat_each_other_or_the_facts():
    data = {"user": {"workContext": {"summary": "User is a data scientist at Initech. User is a data scientist at "
                                                 "Initech. User lives in Hamburg."},
                     "personalContext": {"summary": "User lives in Hamburg. Plays the cello."}},
            "facts": [fact(1, 0.9, "User lives in Hamburg"), fact(2, 0.2, BIG)]}
    report = build_injection(data, 80)
    assert report.text.startswith("User Context:\n- Work: User is a data scientist at Initech.\n"
                                  "- Personal: Plays the cello.\n\nFacts:\n")
    assert report.text.count("Hamburg") == 1 and report.kept_fact_ids == ["fact_00000001"]
    assert sum(report.section_tokens.values()) <= report.tokens + 2


@pytest.mark.parametrize("budget", [5, 12, 20, 37, 61])
def test_summaries_are_trimmed_by_whole_sentences(budget):
    data = {"user": {"workContext": {"summary": "User is a data scientist at Initech. Works remotely on Fridays."},
                     "topOfMind": {"summary": "Preparing a talk for PyCon. Moving flat in May."}},
            "facts": [fact(1, 0.9, "User drinks tea")]}
    report = build_injection(data, budget)
    assert report.tokens == count_tokens(report.text) <= budget
    if budget >= 20:  # a whole sentence fits (15 tokens with its heading): nothing is cut mid-text
        assert not report.truncated and report.text.startswith("User Context:\n- Work: User is a data scientist")
        assert all(line.endswith(".") or line.startswith("- [") or line.endswith(":")
                   for line in report.text.splitlines() if line)
