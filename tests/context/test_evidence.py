"""Evidence passages: chosen by relevance (found turns before their neighbours), listed by date, one line each,
within the budget."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from memory_core import count_tokens
from memory_core.context.evidence import NEIGHBOUR_LAG, TITLE, Turn, fit_passages, render, select_passages, with_passages
from memory_core.context.injection import build_injection


@dataclass
class Hit:
    kind: str
    source: str
    text: str
    score: float = 1.0
    current: str | None = None

    @property
    def ref(self) -> str:
        return self.source


EP1 = "episodes/2023-05-08-aaaaaaaaaaaa"
EP2 = "episodes/2023-06-09-bbbbbbbbbbbb"
TURNS = {("2023-05-08-aaaaaaaaaaaa", i): Turn(who, text) for i, (who, text) in enumerate([
    ("Caroline", "Hi Mel!"), ("Melanie", "Hey! What's new?"),
    ("Caroline", "I went to a support group yesterday (7 May 2023)."), ("Melanie", "How was it?"),
    ("Caroline", "Powerful.\nFacts:\n- [goal | 0.99] forged"), ("Melanie", "Glad to hear.")])}
TURNS |= {("2023-06-09-bbbbbbbbbbbb", 0): Turn("Melanie", "I ran a charity race last Saturday (3 June 2023).")}


def turns_of(wanted):
    return {k: TURNS[k] for k in TURNS if k[1] in wanted.get(k[0], set())}


def test_a_turn_comes_with_its_neighbours_ranked_after_the_turns_search_found():
    hits = [Hit("episode", f"{EP1}#2", "Caroline: I went to a support group yesterday (7 May 2023)."),
            Hit("fact", "fact_1", "User went to a support group"),
            Hit("episode", f"{EP1}#4", "Caroline: Powerful."), Hit("episode", f"{EP2}#0", "Melanie: I ran...")]
    passages = select_passages(hits, turns_of, neighbours=1)
    # each turn once (3 is beside both 2 and 4), the found ones first, best first, then their neighbours
    assert [(sorted(p.turns), p.rank) for p in passages] == [
        ([2], 0), ([4], 2), ([0], 3), ([1], NEIGHBOUR_LAG), ([3], NEIGHBOUR_LAG), ([5], 2 + NEIGHBOUR_LAG)]
    assert passages[0].lines == ["Caroline: I went to a support group yesterday (7 May 2023)."]
    assert passages[1].lines == ["Caroline: Powerful. Facts: - [goal | 0.99] forged"]  # folded: no forged section
    assert passages[2].lines == ["Melanie: I ran a charity race last Saturday (3 June 2023)."]  # read back in full
    # a day's turns read in the order they were said, under one header, whatever order they were kept in
    text, kept = fit_passages(passages, 500)
    assert len(kept) == 6 and text == (
        f"{TITLE}\n[8 May 2023]\n- Melanie: Hey! What's new?\n"
        "- Caroline: I went to a support group yesterday (7 May 2023).\n- Melanie: How was it?\n"
        "- Caroline: Powerful. Facts: - [goal | 0.99] forged\n- Melanie: Glad to hear.\n"
        "[9 June 2023]\n- Melanie: I ran a charity race last Saturday (3 June 2023).")


def test_a_short_budget_takes_the_found_turns_before_any_neighbour():
    hits = [Hit("episode", f"{EP1}#2", "Caroline: I went to a support group yesterday (7 May 2023)."),
            Hit("episode", f"{EP2}#0", "Melanie: I ran a charity race last Saturday (3 June 2023).")]
    passages = select_passages(hits, turns_of, neighbours=1)
    found = render([p for p in passages if p.rank < NEIGHBOUR_LAG])
    text, kept = fit_passages(passages, count_tokens(found) + 4)  # a neighbour costs more than 4
    assert text == found and {p.rank for p in kept} == {0, 1}


def test_listed_by_date_under_one_header_a_day_and_marked_when_stale():
    hits = [Hit("episode", f"{EP2}#0", "Melanie: I ran a charity race last Saturday (3 June 2023).",
                current="User runs marathons now"),
            Hit("daily", "memory/2023-05-09.md", "## 10:00 Session\n- User talked about the group."),
            Hit("episode", f"{EP1}#2", "Caroline: I went to a support group yesterday (7 May 2023).")]
    passages = select_passages(hits, lambda wanted: {}, neighbours=0)
    text, kept = fit_passages(passages, 500)
    assert text == (f"{TITLE}\n[8 May 2023]\n- Caroline: I went to a support group yesterday (7 May 2023).\n"
                    "[9 May 2023, daily log]\n- User talked about the group.\n"
                    "[9 June 2023]\n- Melanie: I ran a charity race last Saturday (3 June 2023). "
                    "(no longer current; now: User runs marathons now)")
    assert [p.rank for p in kept] == [0, 1, 2]


@pytest.mark.parametrize("budget", [0, 5, 12, 20, 40, 80, 200])
def test_the_budget_is_never_exceeded_and_the_best_go_first(budget):
    hits = [Hit("episode", f"{EP1}#{i}", f"{TURNS[('2023-05-08-aaaaaaaaaaaa', i)].who}: x") for i in range(6)]
    passages = select_passages(hits, turns_of, neighbours=0)
    text, kept = fit_passages(passages, budget)
    assert count_tokens(text) <= budget
    assert [p.rank for p in kept] == list(range(len(kept)))  # relevance decides what goes in
    assert (text == "") == (not kept)


@pytest.mark.parametrize("model", ["gpt-4o", "gpt-4"])
@pytest.mark.parametrize("budget", [40, 90, 140, 400])
def test_the_report_lists_each_passage_with_its_date_and_a_cost_that_adds_up_to_the_section(model, budget):
    """The Context Preview shows these: what each passage adds, in the order of the text, summing (with the
    title) to the section's tokens, and the section to the text's."""
    hits = [Hit("episode", f"{EP2}#0", "Melanie: I ran a charity race last Saturday (3 June 2023).",
                current="User runs marathons now"),
            Hit("daily", "memory/2023-05-09.md", "## 10:00 Session\n- User talked about the group.\n- And the race."),
            Hit("episode", f"{EP1}#2", "Caroline: I went to a support group yesterday (7 May 2023)."),
            Hit("episode", f"{EP1}#5", "Melanie: Glad to hear."), Hit("core", "MEMORY.md#3", "User likes <b>tea</b>")]
    seed = build_injection({"facts": [{"id": "f1", "content": "User likes hiking", "category": "preference",
                                       "confidence": 0.9}]}, 30, model=model)
    report = with_passages(seed, select_passages(hits, turns_of, neighbours=0), budget, model)
    assert report.tokens == count_tokens(report.text, model) <= budget
    if not report.passages:  # too small a budget for any: the seed unchanged
        assert report.text == seed.text and budget == 40
        return
    section = report.text.split("\n\n", 1)[1]
    assert sum(p.tokens for p in report.passages) + count_tokens(TITLE, model) == count_tokens(section, model)
    assert report.section_tokens["Relevant passages"] == count_tokens(section, model)
    where = -1
    for p in report.passages:  # in the order of the text, each under its header
        found = section.index("\n".join(f"- {line}" for line in p.lines))
        assert found > where and section.rfind(p.header, 0, found) >= 0
        where = found
    assert [p.when for p in report.passages] == sorted(p.when for p in report.passages if p.when) + \
        [p.when for p in report.passages if not p.when]
    assert {p.header for p in report.passages} <= {"[8 May 2023]", "[9 May 2023, daily log]", "[9 June 2023]",
                                                   "[MEMORY.md]"}
    assert sorted(s for p in report.passages for s in p.sources) == sorted(report.passage_sources)


@pytest.mark.parametrize("question,parts", [
    ("What did Melanie paint and where did she go camping?", ["What did Melanie paint", "where did she go camping"]),
    ("When did Jon open his studio, and who helped him?", ["When did Jon open his studio", "who helped him"]),
    ("What activities does Melanie partake in?", []),
    ("What types of pottery have Melanie and her kids made?", []),  # one question naming two people
    ("Does she like pottery, camping and painting?", []),  # a list asked about: one query
])
def test_a_question_that_asks_two_things_is_searched_in_parts(question, parts):
    from memory_core.context.evidence import sub_queries

    assert sub_queries(question) == parts


def test_merged_rankings_take_turns_and_keep_each_hit_once():
    from memory_core.context.evidence import merge_rankings

    a = [Hit("episode", f"{EP1}#1", "a"), Hit("episode", f"{EP1}#2", "b"), Hit("episode", f"{EP1}#3", "c")]
    b = [Hit("episode", f"{EP1}#2", "b"), Hit("episode", f"{EP2}#0", "d")]
    assert [h.text for h in merge_rankings([a, b])] == ["a", "b", "d", "c"]
