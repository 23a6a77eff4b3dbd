"""The injection record written behind (store.injection_log): a context call writes no row of its own, and every
recorded injection still reaches the database, soon, before any read of it, before an erase or a purge, and on close;
what an erase in another process took is not written back. SQLite and PostgreSQL."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import create_engine, text

from memory_core.store import injection_log
from tests.conftest import make_memory


def _rows(url: str) -> list[tuple]:
    """The injections table as another connection sees it."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(text("SELECT user_id, agent_name, query FROM injections ORDER BY pk"))]
    finally:
        engine.dispose()


def _ask(m, query: str, user_id: str = "ana") -> None:
    m.scoped(user_id=user_id, agent_name="bot", role="editor", actor="test").injection_report(
        max_tokens=300, query=query, record=True)


def test_a_recorded_injection_reaches_the_database_within_moments_without_a_read(tmp_path, database_url):
    with make_memory(tmp_path, database_url) as m:
        m.facts.add("User likes green tea", "preference", 0.9, user_id="ana", agent_name="bot")
        url = m.settings.database_url
        _ask(m, "what does the user drink?")
        deadline = time.monotonic() + 10 * injection_log.FLUSH_SECONDS + 5
        while not _rows(url) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _rows(url) == [("ana", "bot", "what does the user drink?")]
        assert m.ledger.store.injection_log.pending() == 0


def test_a_read_of_the_record_sees_every_injection_made_before_it_in_order(tmp_path, database_url):
    with make_memory(tmp_path, database_url) as m:
        m.facts.add("User likes green tea", "preference", 0.9, user_id="ana", agent_name="bot")
        for n in range(5):
            _ask(m, f"question {n}")
        _ask(m, "another scope's question", user_id="bob")
        view = m.scoped(user_id="ana", agent_name="bot")
        assert [i.query for i in view.injections()] == [f"question {n}" for n in reversed(range(5))]
        assert [i.query for i in m.scoped(user_id="bob", agent_name="bot").injections()] == ["another scope's question"]
        assert sum(n for n, _at in view.injection_counts().values()) == 5


def test_close_writes_what_waits(tmp_path, database_url, monkeypatch):
    monkeypatch.setattr(injection_log, "FLUSH_SECONDS", 3600.0)  # no timer writes it here
    m = make_memory(tmp_path, database_url)
    m.facts.add("User likes green tea", "preference", 0.9, user_id="ana", agent_name="bot")
    url = m.settings.database_url
    _ask(m, "asked just before the close")
    m.close(flush=False)  # even without flushing the queue: the record is not work left for another process
    assert ("ana", "bot", "asked just before the close") in _rows(url)


def test_a_full_buffer_is_written_by_the_call_that_fills_it(tmp_path, database_url, monkeypatch):
    monkeypatch.setattr(injection_log, "MAX_PENDING", 3)
    monkeypatch.setattr(injection_log, "FLUSH_SECONDS", 3600.0)  # no timer writes them here
    with make_memory(tmp_path, database_url) as m:
        m.facts.add("User likes green tea", "preference", 0.9, user_id="ana", agent_name="bot")
        url = m.settings.database_url
        _ask(m, "one")
        _ask(m, "two")
        assert _rows(url) == [] and m.ledger.store.injection_log.pending() == 2
        _ask(m, "three")
        assert [r[2] for r in _rows(url)] == ["one", "two", "three"]


def test_rows_the_database_refuses_wait_for_the_next_write(tmp_path, database_url, monkeypatch):
    monkeypatch.setattr(injection_log, "FLUSH_SECONDS", 3600.0)
    with make_memory(tmp_path, database_url) as m:
        m.facts.add("User likes green tea", "preference", 0.9, user_id="ana", agent_name="bot")
        log = m.ledger.store.injection_log
        _ask(m, "first")
        real = m.db.write_rows

        def refused():
            raise RuntimeError("database is locked")

        monkeypatch.setattr(m.db, "write_rows", refused)
        with pytest.raises(RuntimeError):
            log.flush()
        assert log.pending() == 1
        _ask(m, "second")
        monkeypatch.setattr(m.db, "write_rows", real)
        assert [i.query for i in m.scoped(user_id="ana", agent_name="bot").injections()] == ["second", "first"]


def test_an_erase_here_reaches_a_waiting_injection(tmp_path, database_url, monkeypatch):
    monkeypatch.setattr(injection_log, "FLUSH_SECONDS", 3600.0)
    with make_memory(tmp_path, database_url) as m:
        fact = m.facts.add("User works at Globex as a data engineer", "context", 0.9, user_id="ana", agent_name="bot")
        _ask(m, "User works at Globex as a data engineer")
        assert m.ledger.store.injection_log.pending() == 1
        m.scoped(user_id="ana", agent_name="bot").facts.erase(fact.id)
        assert m.ledger.store.injection_log.pending() == 0
        assert not [r for r in _rows(m.settings.database_url) if "data engineer" in (r[2] or "")]


def test_an_erase_in_another_process_is_not_undone_by_a_late_write(tmp_path, database_url, monkeypatch):
    monkeypatch.setattr(injection_log, "FLUSH_SECONDS", 3600.0)
    with make_memory(tmp_path, database_url) as server, make_memory(tmp_path, database_url) as dashboard:
        fact = server.facts.add("User works at Globex as a data engineer", "context", 0.9, user_id="ana",
                                agent_name="bot")
        _ask(server, "User works at Globex as a data engineer. What else?")  # waits in the server's process
        dashboard.scoped(user_id="ana", agent_name="bot").facts.erase(fact.id)
        [seen] = server.scoped(user_id="ana", agent_name="bot").injections()
        assert "data engineer" not in seen.query and "What else?" in seen.query
        assert not [r for r in _rows(server.settings.database_url) if "data engineer" in (r[2] or "")]


def test_a_purge_takes_the_waiting_injections_of_its_scope(tmp_path, database_url, monkeypatch):
    monkeypatch.setattr(injection_log, "FLUSH_SECONDS", 3600.0)
    with make_memory(tmp_path, database_url) as m:
        m.facts.add("User likes green tea", "preference", 0.9, user_id="ana", agent_name="bot")
        _ask(m, "what does ana drink?")
        m.purge_scope(user_id="ana", agent_name="bot")
        assert _rows(m.settings.database_url) == []


@pytest.mark.slow  # a subprocess
def test_a_script_that_never_closes_its_memory_still_writes_the_record_at_exit(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = (f"from memory_core import Memory, Settings\n"
              f"from memory_core.store import injection_log\n"
              f"injection_log.FLUSH_SECONDS = 3600.0\n"
              f"m = Memory(Settings(home={str(tmp_path / 'home')!r}, timezone='UTC'), worker=False)\n"
              f"m.facts.add('User likes green tea', 'preference', 0.9)\n"
              f"m.format_for_injection(query='what does the user drink?', record=True)\n")  # and exits, not closed
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_CORE_", "OPENAI_"))}
    subprocess.run([sys.executable, "-c", script], check=True, cwd=Path(__file__).parents[2], env=env, timeout=120)
    assert _rows(f"sqlite:///{tmp_path / 'home' / 'memory.db'}") == [("default", "default", "what does the user drink?")]
