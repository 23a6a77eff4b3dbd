"""Requirement set 1 (facts) on SQLite and PostgreSQL."""

from __future__ import annotations

import logging
import re
import threading
from datetime import datetime, timezone

import pytest

from memory_core import CATEGORIES, Settings
from memory_core.scope import DEFAULT_SCOPE
from tests.conftest import make_memory


def test_create_assigns_id_timestamps_and_persists(memory, tmp_path):
    fact = memory.facts.add("User prefers dark mode", "preference", 0.9)
    assert re.fullmatch(r"fact_[0-9a-f]{8}", fact.id)
    assert fact.created_at.tzinfo is not None and fact.created_at.utcoffset().total_seconds() == 0
    d = fact.to_dict()
    assert {"id", "content", "category", "confidence", "createdAt", "updatedAt", "source"} <= set(d)
    assert d["validFrom"] == d["createdAt"] and d["invalidAt"] is None and d["supersededBy"] is None
    assert datetime.fromisoformat(d["createdAt"]).tzinfo is not None
    assert memory.facts.get(fact.id) == fact


def test_persists_across_instances(tmp_path, database_url):
    with make_memory(tmp_path, database_url) as a:
        fact = a.facts.add("User lives in Porto", "context", 0.8)
    with make_memory(tmp_path, database_url) as b:
        assert b.facts.get(fact.id).content == "User lives in Porto"


def test_categories_validated():
    assert CATEGORIES == ("preference", "knowledge", "context", "behavior", "goal", "correction")


@pytest.mark.parametrize("content,category,confidence,field", [
    ("", "preference", 0.9, "content"), ("   ", "goal", 0.9, "content"), ("x", "opinion", 0.9, "category"),
    ("x", "preference", 1.5, "confidence"), ("x", "preference", -0.1, "confidence"),
    ("x", "preference", float("nan"), "confidence"), ("x", "preference", True, "confidence"),
    ("x", "preference", "0.9", "confidence"), ("x" * 5000, "goal", 0.9, "content"),
])
def test_validation_errors_name_the_field(sqlite_memory, content, category, confidence, field):
    with pytest.raises(ValueError, match=field):
        sqlite_memory.facts.add(content, category, confidence)
    assert sqlite_memory.facts.list() == []


def test_low_confidence_not_persisted_and_logged(memory, caplog):
    with caplog.at_level(logging.INFO):
        assert memory.facts.add("User might like jazz", "preference", 0.3) is None
    assert memory.facts.list() == []
    assert "low-confidence" in caplog.text


def test_threshold_is_configurable(tmp_path):
    with make_memory(tmp_path, fact_confidence_threshold=0.8) as m:
        assert m.facts.add("User likes tea", "preference", 0.7) is None
        assert m.facts.add("User likes coffee", "preference", 0.8) is not None


def test_duplicate_skipped_existing_unchanged_and_logged(memory, caplog):
    first = memory.facts.add("User prefers dark mode", "preference", 0.9)
    with caplog.at_level(logging.INFO):
        assert memory.facts.add("USER PREFERS DARK MODE", "goal", 0.6) is None
        assert memory.facts.add("user  prefers dark   mode ", "preference", 0.99) is None
    assert memory.facts.list() == [first]
    assert "duplicate" in caplog.text


def test_delete_and_unknown_ids(memory):
    fact = memory.facts.add("User likes tea", "preference", 0.9)
    memory.facts.delete(fact.id)
    assert memory.facts.list() == []
    for call in (lambda: memory.facts.delete(fact.id), lambda: memory.facts.get("fact_00000000"),
                 lambda: memory.facts.update("fact_00000000", confidence=0.5)):
        with pytest.raises(KeyError):
            call()


def test_update_only_given_fields_created_at_kept(memory, clock):
    fact = memory.facts.add("User likes tea", "preference", 0.9)
    updated = memory.facts.update(fact.id, confidence=0.7)
    assert (updated.content, updated.category, updated.confidence) == ("User likes tea", "preference", 0.7)
    assert updated.created_at == fact.created_at and updated.updated_at >= fact.updated_at
    updated = memory.facts.update(fact.id, content="User loves green tea", category="knowledge")
    assert (updated.content, updated.category, updated.confidence) == ("User loves green tea", "knowledge", 0.7)
    assert memory.facts.get(fact.id) == updated
    with pytest.raises(ValueError, match="category"):
        memory.facts.update(fact.id, category="nope")
    other = memory.facts.add("User likes coffee", "preference", 0.9)
    with pytest.raises(ValueError, match="duplicate"):
        memory.facts.update(other.id, content="user loves GREEN tea")


def test_max_facts_evicts_lowest_confidence_ties_by_age(tmp_path, database_url):
    with make_memory(tmp_path, database_url, max_facts=3) as m:
        a = m.facts.add("fact a", "knowledge", 0.6)
        b = m.facts.add("fact b", "knowledge", 0.6)
        c = m.facts.add("fact c", "knowledge", 0.9)
        d = m.facts.add("fact d", "knowledge", 0.7)
        ids = {f.id for f in m.facts.list()}
        assert ids == {b.id, c.id, d.id}  # a: lowest confidence, older of the tie
        assert [f.confidence for f in m.facts.list()] == [0.9, 0.7, 0.6]
        history = m.facts.history(a.id)
        assert [e.action for e in history] == ["evicted", "added"]


def test_list_sorted_by_confidence_and_filtered(memory):
    memory.facts.add("a", "goal", 0.6)
    memory.facts.add("b", "preference", 0.95)
    memory.facts.add("c", "goal", 0.8)
    assert [f.content for f in memory.facts.list()] == ["b", "c", "a"]
    assert [f.content for f in memory.facts.list(category="goal")] == ["c", "a"]


def test_audit_log_records_every_change(memory):
    fact = memory.facts.add("User likes tea", "preference", 0.9)
    memory.facts.update(fact.id, confidence=0.6)
    memory.facts.delete(fact.id)
    entries = memory.facts.history(fact.id)
    assert [e.action for e in entries] == ["deleted", "updated", "added"]
    assert entries[1].old["confidence"] == 0.9 and entries[1].new["confidence"] == 0.6
    assert entries[0].old["content"] == "User likes tea" and entries[0].new is None


def test_scope_isolation(memory):
    a = memory.facts.add("User likes tea", "preference", 0.9, user_id="alice", agent_name="bot")
    b = memory.facts.add("User likes tea", "preference", 0.9, user_id="bob", agent_name="bot")
    assert a and b and a.id != b.id
    assert memory.facts.list(user_id="alice", agent_name="bot") == [a]
    assert memory.facts.list() == []
    assert "tea" not in memory.format_for_injection(user_id="carol", agent_name="bot")


@pytest.mark.parametrize("bad", ["", ".", "..", "a/b", "x" * 65, "a b", None, "é"])
def test_scope_names_validated(sqlite_memory, bad):
    with pytest.raises(ValueError):
        sqlite_memory.facts.list(user_id=bad)


def test_eight_threads_same_hundred_facts_store_hundred(memory):
    contents = [f"User fact number {i}" for i in range(100)]
    errors = []

    def work():
        try:
            for c in contents:
                memory.facts.add(c, "knowledge", 0.9)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(memory.facts.list()) == 100
    assert sum(1 for e in memory.facts.history(limit=10_000) if e.action == "added") == 100


def test_settings_from_env(monkeypatch, tmp_path):
    monkeypatch.setenv("MEMORY_CORE_HOME", str(tmp_path))
    monkeypatch.setenv("MEMORY_CORE_MAX_FACTS", "7")
    monkeypatch.setenv("MEMORY_CORE_ENABLED", "false")
    monkeypatch.setenv("MEMORY_CORE_DATABASE_URL", "postgres://u:secret@h/db")
    s = Settings.from_env()
    assert s.home == tmp_path and s.max_facts == 7 and s.enabled is False
    assert s.database_url.startswith("postgresql+psycopg://") and "secret" not in s.safe_database_url()
    assert Settings(home=tmp_path).database_url == f"sqlite:///{tmp_path / 'memory.db'}"
    monkeypatch.setenv("MEMORY_CORE_MAX_FACTS", "many")
    with pytest.raises(ValueError, match="MAX_FACTS"):
        Settings.from_env()


def test_sqlite_uses_wal_and_migrations_are_versioned(sqlite_memory):
    from memory_core.store.migrations import MIGRATIONS, migrate, schema_version

    sqlite_memory.db.ensure_ready()
    with sqlite_memory.db.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    assert schema_version(sqlite_memory.db) == sorted(m.__name__ for m in MIGRATIONS)
    assert migrate(sqlite_memory.db) == []


def test_fact_counts_follow_every_write_path(memory):
    a = memory.facts.add("one", "goal", 0.9)
    memory.facts.add("two", "goal", 0.9)
    memory.facts.add("three", "goal", 0.9, user_id="other")
    assert memory.facts.count() == 2 and memory.facts.count(user_id="other") == 1
    memory.facts.delete(a.id)
    with memory.parts.store.transaction(DEFAULT_SCOPE) as tx:  # as an update's factsToRemove invalidates
        for fact in memory.facts.list():
            tx.invalidate(fact.id, reason="test")
    assert memory.facts.count() == 0 and memory.facts.count(user_id="other") == 1


def test_constructing_memory_does_no_io(tmp_path):
    home = tmp_path / "not-yet"
    with make_memory(home) as m:
        assert not home.exists() and not m.worker.running  # nothing on disk, no thread, until first use
        m.facts.add("User likes tea", "preference", 0.9)
        assert (home / "home" / "memory.db").exists()
