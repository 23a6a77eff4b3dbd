"""The one-truth matcher on what it used to miss: numbers ("2 kids" -> "3 kids", "floor 4"), dates ("March 3" vs
"March 13"), names and negation ("likes jazz" -> "no longer likes jazz") are part of the statement, in summaries and
hand-written MEMORY.md, and `doctor()` finds what the matcher finds.

The labelled table (tests/data/truth_matcher_table.json, 64 (retired fact, sentence, states?) pairs) was split in
halves before the matcher changed. The matcher before: A 21/32 right (recall 0.625, precision 0.667), B 21/32
(recall 0.533, precision 0.667). After: B, measured first, before any tuning on A: 32/32 (recall 1.000, precision
1.000); A: 32/32, and nothing was tuned on it after. Since both were perfect at once, a third set C (24 pairs in the
prose of summaries) was written afterwards and measured once: 21/24 (recall 0.917, precision 0.846); "replaced X
with Y" and "was X until" then became negations: 23/24. Left: "At 41, the user ..." (an age said without "is")."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from memory_core.consistency.doctor import check
from memory_core.text.truth import (Provenance, Retired, distinctive, may_state, says_same, scrub_markdown, scrub_prose,
                                    sentence_key, stale, states)
from memory_core.facts.api import Fact

from tests.conftest import make_memory

TABLE = Path(__file__).resolve().parents[1] / "data" / "truth_matcher_table.json"


def rows(half: str | None = None) -> list[dict]:
    found = json.loads(TABLE.read_text(encoding="utf-8"))["rows"]
    return [r for r in found if half in (None, r["half"])]


def judged(row: dict) -> bool:
    return stale(row["sentence"], [Retired("fact_old", row["fact"], row["replacement"])], row["valid"]) is not None


@pytest.mark.parametrize("half", ["A", "B"])
def test_the_labelled_table_is_judged_right_in_both_halves(half):
    wrong = [(r["fact"], r["sentence"], r["states"]) for r in rows(half) if judged(r) != r["states"]]
    assert wrong == []


def test_the_set_written_afterwards_in_summary_prose():
    wrong = [(r["fact"], r["sentence"], r["states"]) for r in rows("C") if judged(r) != r["states"]]
    assert wrong == [("User is 41", "At 41, the user is training for a marathon.", True)]


# Halves D and E (the fifteenth session): turns of a conversation, judged as said (`stale(..., said=True)`, as search
# and injection judge an episode's turns), written as a probe before any change. Before: D 7/15, E 9/15 (every
# sentence that named the old value was stale: "Madrid is hot in summer.", "My sister lives in Madrid.", "I googled the
# answer."); tuned on D (someone of the user's opening a sentence tells of them unless the fact names them; a turn
# that names no one of the user's side states nothing of the user): D 13/15; E once after: 11/15; not tuned further.
# Left then, both halves: the user's own sentence naming the old value in another predicate ("I loved the food in
# Madrid.", "I googled the answer.", "I bought a blue shirt.") was taken as stating it (mended below), and "I drive a
# Civic." does not state "User drives a Honda Civic" (one of its two names).
# Halves F and G (the sixteenth session): 24 more turns, a probe written before any change. Before: F 8/12, G 8/12 (the
# same weakness: "I took the train to Oslo", "I listen to Spotify while I cook", "I spilled coffee on my laptop" taken
# as stating where the user lives, works, what they drink; "I'm 29 and still can't cook" read as a denial). The rule
# was then written from both halves' failures, so neither is a held-out figure: a turn that names a retired fact's value
# states it only with the fact's predicate ("I've lived in Oslo") or a word that says it ("my team at Spotify", "my flat
# in Madrid", "colour" for "color"), or owning the value ("My Vespa broke down"), and an age as one ("I'm 29", not "I
# ran 29 km"); "and still", "and I" part clauses. After: F 12/12, G 12/12, D 14/15, E 15/15 (five of the six left
# before mended).
# Half H, 12 turns written after those rules, measured once: 8/12 (7/12 with the matcher before this session); then
# tuned on it ("works as a nurse": "I'm a nurse"; "Cats make me sneeze": allergic; "my" owns the word or the one after
# it, not "my parents to Porto"): 11/12. Left: "Porto has been home for six years now." (no word of the user).
SAID_LEFT = {"I drive a Civic.", "Porto has been home for six years now."}


# Halves I and J (the same session, later): 16 sentences in the prose of summaries, a probe written before any change,
# judged as summaries are (not `said`). Measured: I 4/8, J 5/8; every miss but one is a sentence that names the old
# value in another predicate ("User visited Oslo for a conference", "User listens to Spotify while coding", "User plays
# golf on Sundays"), which the turns' predicate rule above would mend. Tried on summaries too, with third-person owning
# ("User's Golf") and the job said as "a data engineer at Spotify": I 7/8, J 7/8, A, B and C unchanged, but `bench
# stale_memory` with the scripted LLM went from 0/60 to 8/60 (forgotten facts whose summaries say them in other words
# were no longer found): not kept. Left as measured, so that the next change to summaries starts from these figures.
SUMMARY_LEFT = {"User visited Oslo for a conference.", "User is a parent of two.", "User plays golf on Sundays.",
                "User saw Muse live once, years ago.", "User listens to Spotify while coding.",
                "Sam from accounting helped User with taxes.", "User cooked a vegetarian lasagne for guests."}


@pytest.mark.parametrize("half", ["I", "J"])
def test_summaries_that_name_an_old_value_in_another_predicate_are_still_taken_as_stating_it(half):
    wrong = {r["sentence"] for r in rows(half) if judged(r) != r["states"]}
    assert wrong == {r["sentence"] for r in rows(half)} & SUMMARY_LEFT


@pytest.mark.parametrize("half", ["E", "D", "F", "G", "H"])
def test_turns_of_a_conversation_are_judged_as_said(half):
    wrong = {r["sentence"] for r in rows(half) if (stale(r["sentence"], [Retired("fact_old", r["fact"], r["replacement"])],
                                                        r["valid"], said=True) is not None) != r["states"]}
    assert wrong == {r["sentence"] for r in rows(half)} & SAID_LEFT


def test_a_text_that_may_state_nothing_retired_loses_nothing_whatever_is_valid():
    """Propagation judges only the summaries `may_state` lets through (it reads no valid fact for the others): over
    the whole table, where it says no, scrub_prose drops nothing with or without the valid facts; where a sentence
    is dropped, it said yes."""
    for r in rows():
        retired = [Retired("fact_old", r["fact"], r["replacement"])]
        text = f"User keeps a tidy desk. {r['sentence']}"
        for valid in ([], r["valid"]):
            _new, dropped = scrub_prose(text, retired, valid)
            assert not dropped or may_state(text, retired), (r["fact"], r["sentence"])
        assert may_state(text, retired) == bool(scrub_prose(text, retired, [])[1])  # with nothing valid: the same
    sources = {sentence_key("User lives in Lyon."): Provenance(frozenset({"fact_old"}))}
    assert may_state("User lives in Lyon.", [Retired("fact_old", "User lives in Berlin", None)], sources)
    assert not may_state("User lives in Lyon.", [Retired("fact_old", "User lives in Berlin", None)])


def test_the_table_is_varied_and_split_in_halves():
    table = rows()
    assert len(table) >= 60 and len(rows("A")) == len(rows("B")) >= 30
    for half in "AB":
        labels = [r["states"] for r in rows(half)]
        assert 0.35 <= sum(labels) / len(labels) <= 0.65
    text = " ".join(r["fact"] + " " + r["sentence"] for r in table)
    for kind in ("kids", "floor", "March", "no longer", "not", "never", "quit", "named", "Sunday", "1990"):
        assert kind in text


@pytest.mark.parametrize("sentence, old, replacement, expected", [
    ("User has 2 kids.", "User has 2 kids", "User has 3 kids", True),
    ("User has two kids.", "User has 2 kids", "User has 3 kids", True),  # a number said in words is the number
    ("User has 3 kids.", "User has 2 kids", "User has 3 kids", False),
    ("User lives on floor 4.", "User lives on floor 4", "User lives on floor 5", True),
    ("User is 4 years into a PhD and lives on floor 5.", "User lives on floor 4", "User lives on floor 5", False),
    ("User likes jazz.", "User likes jazz", "User no longer likes jazz", True),
    ("User no longer likes jazz.", "User likes jazz", "User no longer likes jazz", False),
    ("User does not like jazz.", "User likes jazz", None, False),
    ("User likes rock but not jazz.", "User likes rock", None, True),  # the negation is the other clause's
])
def test_numbers_and_negation_are_part_of_the_statement(sentence, old, replacement, expected):
    assert states(sentence, distinctive(old, replacement)) is expected


def test_a_valid_fact_that_shares_every_other_word_keeps_no_stale_sentence():
    old = Retired("fact_2", "User has 2 kids", "User has 3 kids", "fact_3")
    assert stale("User has 2 kids.", [old], ["User has 3 kids"]) == old
    assert not says_same("User has 3 kids", "User has 2 kids")
    assert not says_same("User has three kids", "User has two kids")
    assert says_same("User has two kids", "User has 2 kids")
    assert not says_same("User no longer likes jazz", "User likes jazz")


def test_summaries_and_a_hand_written_memory_md_lose_the_stale_sentences():
    kids = Retired("fact_2", "User has 2 kids", "User has 3 kids", "fact_3")
    jazz = Retired("fact_j", "User likes jazz", "User no longer likes jazz", "fact_n")
    valid = ["User has 3 kids", "User no longer likes jazz", "User lives in Porto"]
    kept, dropped = scrub_prose("User has 2 kids. User likes jazz and bossa nova. User lives in Porto.",
                                [kids, jazz], valid)
    assert kept == "User has 3 kids. User no longer likes jazz. User lives in Porto."
    assert dropped == ["User has 2 kids.", "User likes jazz and bossa nova."]
    md, gone = scrub_markdown("# Memory\n- User has 2 kids\n- User has 3 kids\n- User likes jazz\n"
                              "- User lives on floor 4\n", [kids, jazz], valid)
    assert md == "# Memory\n- User has 3 kids\n- User no longer likes jazz\n- User lives on floor 4\n"
    assert gone == ["User has 2 kids", "User likes jazz"]


def _fact(fact_id: str, content: str, valid: bool = True, superseded_by: str | None = None) -> Fact:
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    return Fact(id=fact_id, content=content, category="context", confidence=0.9, created_at=now, updated_at=now,
                user_id="default", agent_name="default", invalid_at=None if valid else now,
                superseded_by=superseded_by)


def test_doctor_finds_what_the_matcher_finds():
    facts = [_fact("fact_2", "User has 2 kids", False, "fact_3"), _fact("fact_3", "User has 3 kids"),
             _fact("fact_j", "User likes jazz", False, "fact_n"), _fact("fact_n", "User no longer likes jazz"),
             _fact("fact_4", "User lives on floor 4", False, "fact_5"), _fact("fact_5", "User lives on floor 5"),
             _fact("fact_b", "User's birthday is March 3", False)]
    summary = ("User has 2 kids. User has 3 kids. User no longer likes jazz. User's birthday is March 13. "
               "User has 4 cats.")
    core = ("# Memory\n- User likes jazz\n- User lives on floor 4\n- User lives on floor 5\n"
            "- User celebrates their birthday on March 3\n")
    found = {(f.place, f.text, f.fact_ids) for f in check({"personalContext": summary}, core, facts)
             if f.kind == "stale"}
    assert found == {("summary:personalContext", "User has 2 kids.", ("fact_2",)),
                     ("MEMORY.md", "User likes jazz", ("fact_j",)),
                     ("MEMORY.md", "User lives on floor 4", ("fact_4",)),
                     ("MEMORY.md", "User celebrates their birthday on March 3", ("fact_b",))}
    retired = [Retired(f.id, f.content, next((g.content for g in facts if g.id == f.superseded_by), None))
               for f in facts if not f.valid]
    valid = [f.content for f in facts if f.valid]
    sentences = [s.strip() for s in summary.split(". ")] + [line[2:] for line in core.splitlines()[1:]]
    by_matcher = {s.rstrip(".") for s in sentences if stale(s, retired, valid)}
    assert by_matcher == {text.rstrip(".") for _place, text, _ids in found}


def test_three_kids_said_in_conversation_reach_every_copy(tmp_path, database_url):
    with make_memory(tmp_path, database_url) as m:
        m.update([{"role": "user", "content": "I have 2 kids and I love jazz."}], thread_id="t1")
        m.set_summaries({"personalContext": "User has 2 kids. User loves jazz."})  # by hand: no provenance
        m.write_core("# Memory\n- User has 2 kids\n- User loves jazz\n")
        result = m.update([{"role": "user", "content": "I have 3 kids now, and I don't love jazz anymore."}],
                          thread_id="t2")
        assert len(result.superseded) == 2
        summary = m.memory_data()["user"]["personalContext"]["summary"]
        injected = m.format_for_injection()
        for text in (summary, injected, m.read_core()):
            assert "2 kids" not in text and "User loves jazz" not in text
        assert "User has 3 kids" in injected and "User has 3 kids" in m.read_core()
        assert [f for f in m.doctor() if f.kind == "stale"] == []


def test_doctor_reports_two_valid_facts_that_count_or_name_one_thing_differently():
    facts = [_fact("fact_1", "User has 1 kid"), _fact("fact_3", "User has 3 kids"),
             _fact("fact_r", "User's dog is called Rex"), _fact("fact_m", "User's dog's name is Max"),
             _fact("fact_t", "User likes tea"), _fact("fact_c", "User likes coffee")]
    found = {f.fact_ids: f.advice for f in check({}, None, facts) if f.kind == "conflict"}
    assert set(found) == {("fact_1", "fact_3"), ("fact_r", "fact_m")}
    assert found[("fact_r", "fact_m")].startswith("both say what the user's dog is called")
