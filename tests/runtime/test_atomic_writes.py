"""Writes that lose nothing: an update is applied whole or not at all, and a fact id that clashes with a stored
one draws a new id. SQLite and PostgreSQL."""

from __future__ import annotations

import json

import pytest

from memory_core import ScriptedChatModel
from memory_core.store import fact_store
from tests.conftest import make_memory


def test_update_is_applied_whole_or_not_at_all(tmp_path, database_url, monkeypatch):
    llm = ScriptedChatModel()
    with make_memory(tmp_path, database_url, llm=llm) as m:
        old = m.facts.add("User lives in Lisbon", "context", 0.9)
        llm.enqueue([json.dumps({
            "facts": [{"content": "User likes tea", "category": "preference", "confidence": 0.9},
                      {"content": "User likes jazz", "category": "preference", "confidence": 0.9},
                      {"content": "User lives in Porto", "category": "context", "confidence": 0.9}],
            "factsToRemove": [old.id],
            "user": {"workContext": {"summary": "Nurse at Acme", "shouldUpdate": True}}})])
        real_add = fact_store.FactTransaction.add
        calls = []

        def failing_add(self, *args, **kwargs):
            calls.append(args[0])
            if len(calls) == 2:
                raise RuntimeError("the database went away in the middle")
            return real_add(self, *args, **kwargs)

        monkeypatch.setattr(fact_store.FactTransaction, "add", failing_add)
        with pytest.raises(RuntimeError):
            m.update([{"role": "user", "content": "I moved to Porto; tea and jazz"}], thread_id="t")
        monkeypatch.undo()
        assert [f.content for f in m.facts.list()] == ["User lives in Lisbon"]  # nothing of it applied
        assert m.facts.get(old.id).valid and [e.action for e in m.facts.history(old.id)] == ["added"]
        assert m.memory_data()["user"]["workContext"]["summary"] == ""
        assert m.facts.count() == 1


def test_an_id_clash_draws_a_new_id_and_loses_nothing(memory, monkeypatch):
    first = memory.facts.add("User likes tea", "preference", 0.9)
    ids = iter([first.id, first.id, "fact_0000beef"])
    monkeypatch.setattr(fact_store, "new_fact_id", lambda: next(ids))
    second = memory.facts.add("User likes coffee", "preference", 0.9)
    assert second is not None and second.id == "fact_0000beef"
    other = iter([first.id, "fact_0000cafe"])  # a clash with a fact of another scope, too
    monkeypatch.setattr(fact_store, "new_fact_id", lambda: next(other))
    assert memory.facts.add("User likes tea", "preference", 0.9, user_id="bob").id == "fact_0000cafe"
    assert {f.content for f in memory.facts.list()} == {"User likes tea", "User likes coffee"}
    assert memory.facts.count() == 2
