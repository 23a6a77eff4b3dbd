"""The Facts grid's edits keyed to the fact and its version (memory_core.dashboard.fact_edits), on SQLite and
PostgreSQL: an edit lands on its fact whatever happened to the list, and an edit of a changed fact is refused."""

from __future__ import annotations

import pytest

from memory_core.dashboard.fact_edits import Row, delete_facts, pending_edits, save_edits
from memory_core.errors import StaleEditError


def rows_of(memory):
    return [Row.of(f) for f in memory.facts.list()]


def test_an_edit_stays_on_its_fact_after_the_list_changes(memory):
    berlin = memory.facts.add("User lives in Berlin", "context", 0.9)
    tomas = memory.facts.add("User's manager is Tomas", "context", 0.9)
    rows = rows_of(memory)
    position = [r.id for r in rows].index(berlin.id)
    edits = pending_edits(rows, {str(position): {"content": "User lives in Hamburg"}})
    assert [(e.row.id, e.changes) for e in edits] == [(berlin.id, {"content": "User lives in Hamburg"})]
    memory.facts.add("User plays the cello", "preference", 0.95)  # another tab adds a fact meanwhile
    outcome = save_edits(memory, edits)
    assert outcome.refused == [] and "“User lives in Berlin” is now “User lives in Hamburg”" in outcome.done[0]
    assert memory.facts.get(tomas.id).content == "User's manager is Tomas" and memory.facts.get(tomas.id).valid
    assert not memory.facts.get(berlin.id).valid
    assert sorted(f.content for f in memory.facts.list()) == ["User lives in Hamburg", "User plays the cello",
                                                              "User's manager is Tomas"]
    again = save_edits(memory, edits)  # the same edit offered twice is refused, never applied to another fact
    assert again.done == [] and "changed elsewhere" in again.refused[0]


def test_an_edit_of_a_fact_changed_meanwhile_is_refused_saying_so(memory):
    fact = memory.facts.add("User drinks tea", "preference", 0.8)
    rows = rows_of(memory)
    edits = pending_edits(rows, {0: {"confidence": 0.5}})
    memory.facts.revise(fact.id, category="context")  # the other tab saves first
    outcome = save_edits(memory, edits)
    assert outcome.done == [] and "changed elsewhere" in outcome.refused[0]
    assert memory.facts.get(fact.id).confidence == pytest.approx(0.8)


def test_revise_with_the_version_it_was_made_on(memory):
    fact = memory.facts.add("User drinks tea", "preference", 0.8)
    made_on = fact.updated_at
    memory.facts.revise(fact.id, confidence=0.9, made_on=made_on)
    with pytest.raises(StaleEditError, match="changed since"):
        memory.facts.revise(fact.id, confidence=0.7, made_on=made_on)
    assert isinstance(StaleEditError("x"), ValueError)


@pytest.mark.parametrize("edited, expected", [
    ({}, []),
    (None, []),
    ({0: {"content": "User drinks tea"}}, []),  # set back to what it was
    ({0: {"confidence": 0.8}}, []),
    ({0: {"confidence": 0.75}}, [{"confidence": 0.75}]),
    ({0: {"category": "context", "content": "User drinks coffee"}},
     [{"content": "User drinks coffee", "category": "context"}]),
    ({5: {"content": "out of range"}}, []),
    ({"0": {"content": "User drinks green tea"}}, [{"content": "User drinks green tea"}]),
])
def test_pending_edits_table(sqlite_memory, edited, expected):
    sqlite_memory.facts.add("User drinks tea", "preference", 0.8)
    assert [e.changes for e in pending_edits(rows_of(sqlite_memory), edited)] == expected


def test_delete_only_the_version_ticked(memory):
    kept = memory.facts.add("User drinks tea", "preference", 0.8)
    gone = memory.facts.add("User likes jazz", "preference", 0.8)
    rows = {r.id: r for r in rows_of(memory)}
    memory.facts.revise(kept.id, confidence=0.6)
    outcome = delete_facts(memory, [rows[kept.id], rows[gone.id]])
    assert "changed elsewhere" in outcome.refused[0] and outcome.done == ["Deleted “User likes jazz”."]
    assert [f.id for f in memory.facts.list()] == [kept.id]
