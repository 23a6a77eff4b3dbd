"""Facts that change: supersede, invalidate, merge, as_of, and updates that supersede (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from memory_core import ScriptedChatModel
from tests.conftest import make_memory


def reply(facts=(), remove=()):
    return json.dumps({"facts": list(facts), "factsToRemove": list(remove)})


@pytest.fixture
def timed(tmp_path, database_url, clock):
    m = make_memory(tmp_path, database_url, clock=clock)
    yield m
    m.close()


def test_supersede_keeps_history_and_lists_only_the_valid(timed, clock):
    old = timed.facts.add("User lives in Lisbon", "context", 0.9)
    before = clock.now()
    clock.advance(3600)
    with timed.acting_as("dashboard:ana@acme.com"):
        new = timed.facts.supersede(old.id, "User lives in Porto", reason="moved")
    assert (new.category, new.confidence) == ("context", 0.9)  # defaults to the old one's
    gone = timed.facts.get(old.id)
    assert gone.invalid_at == clock.now() and gone.superseded_by == new.id and not gone.valid
    assert [f.id for f in timed.facts.list()] == [new.id]
    assert {f.id for f in timed.facts.list(include_invalid=True)} == {old.id, new.id}
    assert [f.id for f in timed.facts.list(as_of=before)] == [old.id]
    assert [f.id for f in timed.facts.list(as_of=clock.now())] == [new.id]
    assert timed.facts.count() == 1
    entry = timed.facts.history(old.id)[0]
    assert (entry.action, entry.actor, entry.reason) == ("superseded", "dashboard:ana@acme.com", "moved")
    assert entry.new["supersededBy"] == new.id
    assert "Lisbon" not in timed.format_for_injection() and "Porto" in timed.format_for_injection()
    assert [d["id"] for d in timed.memory_data()["facts"]] == [new.id]
    assert timed.facts.get(old.id).to_dict()["supersededBy"] == new.id


def test_supersede_errors_and_existing_replacement(timed):
    a = timed.facts.add("User likes tea", "preference", 0.9)
    b = timed.facts.add("User likes coffee", "preference", 0.8)
    with pytest.raises(ValueError, match="same"):
        timed.facts.supersede(a.id, "user likes TEA")
    with pytest.raises(KeyError):
        timed.facts.supersede("fact_00000000", "x")
    with pytest.raises(ValueError, match="category"):
        timed.facts.supersede(a.id, "x", category="nope")
    with pytest.raises(ValueError, match="threshold"):
        timed.facts.supersede(a.id, "User likes water", confidence=0.1)
    assert timed.facts.get(a.id).valid  # nothing changed by the refusals
    replacement = timed.facts.supersede(a.id, "User likes coffee")  # already said: that fact replaces it
    assert replacement.id == b.id and timed.facts.get(a.id).superseded_by == b.id
    with pytest.raises(ValueError, match="no longer valid"):
        timed.facts.supersede(a.id, "User likes juice")


def test_invalidate_is_kept_audited_and_idempotent(timed):
    fact = timed.facts.add("User is on holiday", "context", 0.8)
    gone = timed.facts.invalidate(fact.id, reason="back at work")
    assert not gone.valid and gone.invalid_reason == "back at work" and gone.superseded_by is None
    assert timed.facts.invalidate(fact.id) == gone
    assert timed.facts.list() == [] and timed.facts.count() == 0
    assert [e.action for e in timed.facts.history(fact.id)] == ["invalidated", "added"]
    again = timed.facts.add("User is on holiday", "context", 0.8)  # invalid facts never block their text
    assert again is not None and again.id != fact.id


def test_max_facts_counts_only_valid_facts(tmp_path, database_url):
    with make_memory(tmp_path, database_url, max_facts=2) as m:
        a = m.facts.add("fact a", "knowledge", 0.6)
        b = m.facts.add("fact b", "knowledge", 0.7)
        a2 = m.facts.supersede(a.id, "fact a2")  # three rows, two valid: nothing is evicted
        assert {f.id for f in m.facts.list()} == {a2.id, b.id} and m.facts.count() == 2
        c = m.facts.add("fact c", "knowledge", 0.9)  # at the cap: the lowest valid one goes
        assert {f.id for f in m.facts.list()} == {b.id, c.id}
        assert m.facts.get(a.id).superseded_by == a2.id  # the invalid one is history, not capacity
        with pytest.raises(KeyError):
            m.facts.get(a2.id)


def test_merge_supersedes_the_dropped_one(timed):
    keep = timed.facts.add("User enjoys hiking", "preference", 0.7)
    drop = timed.facts.add("User likes to hike", "preference", 0.9)
    kept = timed.facts.merge(keep.id, drop.id)
    assert kept.id == keep.id and kept.confidence == 0.9
    assert timed.facts.get(drop.id).superseded_by == keep.id
    assert [e.action for e in timed.facts.history(drop.id)][0] == "merged"
    with pytest.raises(ValueError):
        timed.facts.merge(keep.id, keep.id)
    with pytest.raises(ValueError, match="no longer valid"):
        timed.facts.merge(keep.id, drop.id)
    other = timed.facts.add("User likes tea", "preference", 0.9, user_id="bob")
    with pytest.raises(KeyError):
        timed.facts.merge(keep.id, other.id)


def test_update_invalidates_removals_and_applies_supersedes(tmp_path, database_url, clock):
    llm = ScriptedChatModel()
    with make_memory(tmp_path, database_url, llm=llm, clock=clock) as m:
        lisbon = m.facts.add("User lives in Lisbon", "context", 0.9)
        tea = m.facts.add("User drinks tea", "preference", 0.8)
        foreign = m.facts.add("User lives in Paris", "context", 0.9, user_id="bob")
        llm.enqueue([reply(
            facts=[{"content": "User lives in Porto", "category": "context", "confidence": 0.9,
                    "supersedes": lisbon.id},
                   {"content": "User is learning Portuguese", "category": "goal", "confidence": 0.8,
                    "supersedes": [foreign.id, "fact_zzzzzzzz"]}],
            remove=[tea.id, foreign.id])])
        result = m.update([{"role": "user", "content": "I moved to Porto and stopped drinking tea"}], thread_id="t1")
        porto = next(f for f in result.added if "Porto" in f.content)
        assert result.superseded == [(lisbon.id, porto.id)]
        assert result.removed == [tea.id]  # the other scope's id is ignored, never touched
        assert m.facts.get(foreign.id).valid and m.facts.get(lisbon.id).superseded_by == porto.id
        assert not m.facts.get(tea.id).valid  # invalidated, not deleted
        assert {f.content for f in m.facts.list()} == {"User lives in Porto", "User is learning Portuguese"}


def test_a_correction_inside_one_reply_keeps_both_in_history(tmp_path, database_url):
    llm = ScriptedChatModel([reply(facts=[
        {"content": "User lives in Lisbon", "category": "context", "confidence": 0.9},
        {"content": "User lives in Porto", "category": "context", "confidence": 0.9, "supersedes": ["#0"]}])])
    with make_memory(tmp_path, database_url, llm=llm) as m:
        result = m.update([{"role": "user", "content": "I live in Lisbon. Actually, Porto now."}], thread_id="t")
        assert [f.content for f in m.facts.list()] == ["User lives in Porto"]
        lisbon = next(f for f in m.facts.list(include_invalid=True) if "Lisbon" in f.content)
        assert lisbon.superseded_by == m.facts.list()[0].id and len(result.superseded) == 1


def test_retention_purges_old_invalid_facts_only(tmp_path, database_url, clock):
    with make_memory(tmp_path, database_url, clock=clock, invalid_fact_retention_days=30) as m:
        old = m.facts.add("User is 30", "context", 0.9)
        recent = m.facts.add("User has a cat", "context", 0.9)
        m.facts.supersede(old.id, "User is 31")
        clock.advance(timedelta(days=40).total_seconds())
        m.facts.invalidate(recent.id)
        assert any("invalid fact" in r for r in m.apply_retention())
        with pytest.raises(KeyError):
            m.facts.get(old.id)
        assert not m.facts.get(recent.id).valid
        assert m.facts.history(old.id)[0].action == "purged"
        assert [f.content for f in m.facts.list()] == ["User is 31"]


def test_near_duplicates_found_in_a_scope_and_merged(memory):
    a = memory.facts.add("User enjoys hiking in the mountains", "preference", 0.8)
    b = memory.facts.add("User enjoys hiking in the mountains!", "preference", 0.9)
    memory.facts.add("User does not enjoy hiking in the mountains", "preference", 0.9)
    memory.facts.add("User works at Acme", "context", 0.9)
    memory.facts.add("User enjoys hiking in the mountains", "preference", 0.9, user_id="bob")
    pairs = memory.facts.near_duplicates()
    assert [(x.id, y.id) for x, y, _ in pairs] in ([(a.id, b.id)], [(b.id, a.id)])  # never the negation
    assert pairs[0][2] >= 0.9
    view = memory.scoped()
    assert [(x.id, y.id) for x, y, _ in view.facts.near_duplicates()] == [(x.id, y.id) for x, y, _ in pairs]
    kept = view.facts.merge(b.id, a.id)
    assert kept.id == b.id and memory.facts.near_duplicates() == []
    assert memory.facts.get(a.id).superseded_by == b.id
    with pytest.raises(ValueError):
        memory.facts.near_duplicates(threshold=2)


@pytest.mark.parametrize("mode", ["keyword", "vector", "hybrid"])
def test_search_finds_only_valid_facts(timed, mode):
    old = timed.facts.add("User lives in Lisbon near the river", "context", 0.9)
    timed.facts.add("User drinks green tea", "preference", 0.9)
    assert old.id in {h.ref for h in timed.search("Lisbon river", mode=mode)}  # indexed while valid
    new = timed.facts.supersede(old.id, "User lives in Porto near the river", reason="moved")
    gone = timed.facts.add("User owns a red bicycle", "context", 0.9)
    timed.search("bicycle", mode=mode)
    timed.facts.invalidate(gone.id, reason="sold it")
    refs = {h.ref for h in timed.search("Lisbon river", mode=mode)} | {h.ref for h in timed.search("red bicycle", mode=mode)}
    assert old.id not in refs and gone.id not in refs
    assert new.id in {h.ref for h in timed.search("Porto river", mode=mode)}
