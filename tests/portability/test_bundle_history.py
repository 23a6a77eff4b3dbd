"""What a bundle must keep besides the facts themselves: the history of facts that no longer exist (who
deleted or evicted what), and a correction's source_error, on SQLite and PostgreSQL and back."""

from __future__ import annotations

from memory_core import format_memory_for_injection
from tests.conftest import make_memory
from tests.app.test_app import GRID, app_env  # noqa: F401  (fixture)
from tests.portability.test_bundles import fill, snapshot


def audit_log(m, user_id="ana", agent_name="bot"):
    return [(e.fact_id, e.action, e.at, e.actor, e.reason, e.old, e.new)
            for e in m.facts.history(user_id=user_id, agent_name=agent_name, limit=10_000)]


def fill_with_history(m, clock):
    """`fill`, plus a fact deleted, a fact evicted, and a correction with what it corrects."""
    fill(m, clock)
    with m.acting_as("dashboard:ana@acme.com"):
        gone = m.facts.add("User owns a boat", "context", 0.6, user_id="ana", agent_name="bot")
        clock.advance(5)
        m.facts.delete(gone.id)
        m.facts.add("Run make dev, not npm start", "correction", 0.95, user_id="ana", agent_name="bot",
                    source_error="npm start")
    return gone


def test_the_history_of_deleted_facts_survives_sqlite_postgresql_sqlite(tmp_path, pg_url, clock):
    with make_memory(tmp_path / "a", clock=clock) as a:
        gone = fill_with_history(a, clock)
        before, history = snapshot(a), audit_log(a)
        a.export_bundle(tmp_path / "one.zip")
    assert [e[1] for e in history if e[0] == gone.id] == ["deleted", "added"]
    with make_memory(tmp_path / "b", pg_url, clock=clock) as b:
        b.import_bundle(tmp_path / "one.zip")
        assert audit_log(b) == history  # the add and the delete of the fact that no longer exists too
        again = b.import_bundle(tmp_path / "one.zip", mode="replace")
        assert again["audit"] == 0 and audit_log(b) == history  # once, not twice
        b.export_bundle(tmp_path / "two.zip")
    with make_memory(tmp_path / "c", clock=clock) as c:
        c.import_bundle(tmp_path / "two.zip")
        assert audit_log(c) == history and snapshot(c) == before
        correction = next(f for f in c.facts.list(user_id="ana", agent_name="bot") if f.category == "correction")
        assert correction.content == "Run make dev, not npm start" and correction.source_error == "npm start"


def test_a_correction_keeps_what_it_corrects_beside_its_content(tmp_path, clock):
    with make_memory(tmp_path, clock=clock) as m:
        fix = m.facts.add("Use make dev to start the stack", "correction", 0.95, source_error="  npm start ")
        plain = m.facts.add("User likes tea", "preference", 0.9)
        odd = m.facts.add("User drinks coffee", "preference", 0.5, source_error="tea")  # not a correction
        assert m.facts.get(fix.id).source_error == "npm start" and plain.source_error is None
        assert fix.to_dict()["sourceError"] == "npm start" and "sourceError" not in plain.to_dict()
        assert m.facts.history(fix.id)[0].new["sourceError"] == "npm start"
        text = m.format_for_injection()
        # DeerFlow's injection of a correction: the seed's format, then what to avoid
        assert "- [correction | 0.95] Use make dev to start the stack (avoid: npm start)" in text.splitlines()
        assert "- [preference | 0.50] User drinks coffee" in text.splitlines() and odd.source_error == "tea"
        assert format_memory_for_injection({"facts": [{"content": "a", "category": "correction", "confidence": 1,
                                                       "sourceError": "line\nbreak"}]}).endswith("(avoid: line break)")


def test_a_deerflow_correction_is_imported_as_deerflow_wrote_it(tmp_path, clock):
    from pathlib import Path

    data = Path(__file__).parents[1] / "data" / "imports" / "deerflow" / "memory.json"
    with make_memory(tmp_path, clock=clock) as m:
        m.import_file(data, user_id="ana", agent_name="bot")
        fix = next(f for f in m.facts.list(user_id="ana", agent_name="bot") if f.category == "correction")
        assert fix.content == "Use make dev to start the local stack" and fix.source_error == "npm start"
        assert "Use make dev to start the local stack (avoid: npm start)" in m.format_for_injection(
            user_id="ana", agent_name="bot")


def test_a_database_from_before_m012_gets_source_error_and_the_restore_journal(tmp_path, database_url, monkeypatch):
    from sqlalchemy import inspect, text

    from memory_core.store.migrations import MIGRATIONS, migrate

    m = make_memory(tmp_path, database_url)
    before = [f for f in MIGRATIONS if f.__name__ < "m012"]
    monkeypatch.setattr("memory_core.store.migrations.MIGRATIONS", before)
    m.db.ensure_ready()
    monkeypatch.undo()
    with m.db.engine.begin() as conn:
        conn.exec_driver_sql("ALTER TABLE facts DROP COLUMN source_error")  # the schema as it was
        assert "restore_journal" not in inspect(conn).get_table_names()
        stamp = "CAST(:t AS TIMESTAMP)" if m.db.dialect == "postgresql" else ":t"
        conn.execute(text("INSERT INTO facts (id, user_id, agent_name, content, content_key, category, confidence, "
                          f"created_at, updated_at) VALUES ('fact_00000001', 'default', 'default', 'User likes tea', "
                          f"'k', 'preference', 0.9, {stamp}, {stamp})"), {"t": "2026-01-01 10:00:00"})
    assert "m012_source_error_and_restore_journal" in migrate(m.db)
    try:
        assert m.facts.get("fact_00000001").source_error is None
        fix = m.facts.add("Use make dev", "correction", 0.9, source_error="npm start")
        assert m.facts.get(fix.id).source_error == "npm start" and m.status().restores_pending == 0
    finally:
        m.close()


def test_the_facts_page_shows_what_a_correction_corrects(app_env):
    from memory_core.dashboard.helpers import _memory
    from tests.app.test_app import page

    memory = _memory()
    fix = memory.facts.add("Use make dev to start the stack", "correction", 0.95, source_error="npm start")
    memory.facts.add("User likes tea", "preference", 0.9)
    table = page("facts").data_editor(key=GRID).value
    shown = dict(zip(table["content"], table["avoid"]))
    assert shown == {fix.content: "npm start", "User likes tea": ""}


def test_a_scope_whose_only_fact_was_deleted_keeps_its_history(tmp_path, clock):
    with make_memory(tmp_path / "a", clock=clock) as a:
        gone = a.facts.add("User owns a boat", "context", 0.6, user_id="zed", agent_name="bot")
        a.facts.delete(gone.id)
        history = audit_log(a, "zed", "bot")
        a.export_bundle(tmp_path / "b.zip")
    with make_memory(tmp_path / "b", clock=clock) as b:
        assert b.import_bundle(tmp_path / "b.zip")["audit"] == 2
        assert audit_log(b, "zed", "bot") == history and [h[1] for h in history] == ["deleted", "added"]
        assert b.import_bundle(tmp_path / "b.zip")["audit"] == 0
