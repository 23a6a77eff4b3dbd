"""m031: SQLite's word index matches a scope (and a fact's validity) inside the index; a database file made before it
gets the index rebuilt from its tables, and the triggers keep it in step with every later change."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from memory_core.scope import Scope
from memory_core.store.migrations import MIGRATIONS, m031_scoped_word_index, migrate
from tests.conftest import make_memory

A, B = Scope("ana", "default"), Scope("bo", "helper")


def old_file(tmp_path):
    """A SQLite file as the code before m031 left it (migrated up to m030, closed), with facts of two scopes (one
    of them invalid) and a chunk written there."""
    m = make_memory(tmp_path)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("memory_core.store.migrations.MIGRATIONS", MIGRATIONS[:MIGRATIONS.index(m031_scoped_word_index)])
        m.db.ensure_ready()
    rows = [("f1", A, "User keeps bees on the roof", None), ("f2", B, "User keeps bees in the garden", None),
            ("f3", A, "User keeps goats on the farm", "2026-01-02 10:00:00")]
    with m.db.engine.begin() as conn:
        for fact_id, scope, content, invalid in rows:
            conn.execute(text("INSERT INTO facts (id, user_id, agent_name, content, content_key, category, confidence, "
                              "created_at, updated_at, valid_from, invalid_at) VALUES (:i, :u, :a, :c, :k, 'context', "
                              "0.9, '2026-01-01 10:00:00', '2026-01-01 10:00:00', '2026-01-01 10:00:00', :x)"),
                         {"i": fact_id, "u": scope.user_id, "a": scope.agent_name, "c": content, "k": f"key-{fact_id}",
                          "x": invalid})
        conn.execute(text("INSERT INTO chunks (user_id, agent_name, kind, path, start_line, end_line, text) "
                          "VALUES ('ana', 'default', 'daily', 'memory/2026-01-01.md', 1, 2, 'Ana fed the bees')"))
    m.close()
    return tmp_path


def integrity(m) -> None:
    """FTS5's own check of an external-content index against what its view reads from the tables."""
    with m.db.engine.begin() as conn:
        for index in ("facts_words", "chunks_words"):
            conn.exec_driver_sql(f"INSERT INTO {index}({index}, rank) VALUES ('integrity-check', 1)")


def found(m, scope: Scope, query: str) -> list[str]:
    return sorted(owner for owner, _score in m.index.keyword(scope, query))


def test_an_old_file_gets_the_scoped_index_and_finds_only_its_scopes_valid_items(tmp_path):
    m = make_memory(old_file(tmp_path))
    try:
        assert migrate(m.db)[0] == "m031_scoped_word_index"
        integrity(m)
        with m.db.engine.connect() as conn:
            columns = [r[1] for r in conn.exec_driver_sql("PRAGMA table_info(facts_words)")]
        assert columns == ["content", "scope"]
        chunk = [o for o in found(m, A, "bees") if o.startswith("c:")]
        assert found(m, A, "bees") == sorted(["f:f1", *chunk]) and len(chunk) == 1
        assert found(m, B, "bees") == ["f:f2"]
        assert found(m, A, "goats") == []  # f3 is invalid
        assert found(m, Scope("nobody", "default"), "bees") == []
    finally:
        m.close()


def test_the_triggers_keep_the_scoped_index_in_step(tmp_path):
    m = make_memory(old_file(tmp_path))
    try:
        a, b = m.scoped(user_id="ana"), m.scoped(user_id="bo", agent_name="helper")
        added = a.facts.add("User rides a tandem bicycle", "context", 0.9)
        assert found(m, A, "tandem") == [f"f:{added.id}"] and found(m, B, "tandem") == []
        b.facts.update("f2", content="User keeps hornets in the garden")
        assert found(m, B, "hornets") == ["f:f2"] and found(m, B, "bees") == []
        a.facts.invalidate("f1")  # invalid now: out of the index's scope word, out of search
        assert [o for o in found(m, A, "bees") if o.startswith("f:")] == []
        a.facts.delete(added.id)
        assert found(m, A, "tandem") == []
        integrity(m)
    finally:
        m.close()
