"""Sandboxes of anonymous visitors: capped (live and per minute), and when expired removed whole: no rows, no
folder, and the space given back (new SQLite files start with incremental auto-vacuum)."""

from __future__ import annotations

import pytest

from memory_core import Memory, Settings
from memory_core.search.embedders import HashingEmbedder


def test_sandboxes_are_capped_live_and_per_minute(tmp_path, database_url, clock):
    from memory_core.policy.access import SandboxLimitError
    from tests.conftest import make_memory

    with make_memory(tmp_path, database_url, clock=clock, sandbox_max_live=3, sandbox_max_per_minute=2) as m:
        first, _ = m.access.new_sandbox()
        m.access.new_sandbox()
        with pytest.raises(SandboxLimitError, match="sandbox_max_per_minute"):
            m.access.new_sandbox()
        clock.advance(61)
        m.access.new_sandbox()
        clock.advance(61)
        with pytest.raises(SandboxLimitError, match="The demo is full: 3 sandboxes are open"):
            m.access.new_sandbox()
        assert len(m.access.expired_sandboxes()) == 0
        clock.advance(24 * 3600)  # all three expire: room again, once the worker has removed them
        assert len(m.remove_expired_sandboxes()) == 3
        assert m.access.new_sandbox()[0] != first
        # A refused visitor left nothing behind: three opened, three gone, one live.
        assert [e.action for e in m.access.log()] == ["sandbox_created"]


@pytest.mark.slow  # two seconds or more: left out of the quick run
@pytest.mark.parametrize("older_file", [False, True])
def test_an_expired_sandbox_leaves_no_rows_no_folder_and_its_space_is_given_back(tmp_path, clock, older_file):
    import sqlite3

    from memory_core.dashboard.demo import load_demo
    from memory_core.store.purge import SCOPED_TABLES
    from sqlalchemy import inspect, text
    from tests.conftest import make_memory

    home = tmp_path / "home"
    if older_file:  # a file made before new files started with auto_vacuum=INCREMENTAL: the first clean-up VACUUMs
        home.mkdir()
        with sqlite3.connect(home / "memory.db") as c:
            c.execute("CREATE TABLE an_older_table (x)")
            assert c.execute("PRAGMA auto_vacuum").fetchone()[0] == 0
    with make_memory(tmp_path, None, clock=clock, sandbox_max_per_minute=100) as m:
        m.facts.add("User is the operator", "context", 0.9)  # the default scope stays
        database = home / "memory.db"
        for _ in range(6):
            sandbox, _key = m.access.new_sandbox()
            view = m.scoped(user_id=sandbox.sandbox.user_id, agent_name=sandbox.sandbox.agent_name,
                            actor=sandbox.actor)
            load_demo(view)
            view.update([{"role": "user", "content": "I moved to Porto last week."}], thread_id="t")  # an episode
            view.daily.append("x" * 50_000, title="a long note")  # some bulk in the files
            for i in range(40):  # and in the database
                view.facts.add(f"User note {i}: " + f"{i} {sandbox.sandbox.user_id} " * 50, "context", 0.9)
        m.queue.flush()
        with m.db.read() as s:
            s.execute(text("PRAGMA wal_checkpoint(TRUNCATE)")).fetchall()
        full = database.stat().st_size
        assert len(list((home / "scopes").iterdir())) == 6
        clock.advance(25 * 3600)
        assert len(m.remove_expired_sandboxes()) == 6
        assert not (home / "scopes").exists() or list((home / "scopes").iterdir()) == []  # no empty folders
        scoped = [t for t in inspect(m.db.engine).get_table_names()
                  if {"user_id", "agent_name"} <= {c["name"] for c in inspect(m.db.engine).get_columns(t)}]
        assert set(scoped) - set(SCOPED_TABLES) == {"api_tokens"}  # a table added later is purged too
        with m.db.read() as s:
            for table in SCOPED_TABLES:
                left = s.execute(text(f"SELECT count(*) FROM {table} WHERE user_id LIKE 'sandbox-%'")).scalar()
                assert left == 0, table
            assert s.execute(text("PRAGMA auto_vacuum")).scalar() == 2  # incremental from now on
        assert m.access.log() == []
        after = database.stat().st_size
        wal = database.with_name("memory.db-wal")
        assert after + (wal.stat().st_size if wal.exists() else 0) < full * 0.6, (full, after)
        assert [f.content for f in m.facts.list()] == ["User is the operator"]
        # The next clean-up takes the cheap path (an incremental vacuum) and the file stays small.
        sandbox, _key = m.access.new_sandbox()
        load_demo(m.scoped(user_id=sandbox.sandbox.user_id, agent_name=sandbox.sandbox.agent_name))
        clock.advance(25 * 3600)
        assert m.remove_expired_sandboxes() == [sandbox.sandbox.key]
        assert database.stat().st_size <= after * 1.2


def test_a_new_sqlite_file_starts_with_incremental_auto_vacuum(tmp_path):
    from sqlalchemy import text

    with Memory(Settings(home=tmp_path / "h", timezone="UTC"), embedder=HashingEmbedder()) as m:
        with m.db.read() as s:
            assert s.execute(text("PRAGMA auto_vacuum")).scalar() == 2
