"""Issue 19, library side: database passwords in every form are masked and scrubbed; bidirectional control
characters are removed from what memory stores; sandboxes are capped and cleaned up whole."""

from __future__ import annotations

import logging

import pytest

from memory_core import Memory, Settings
from memory_core.redact import RedactingFilter, scrub
from memory_core.search.embedders import HashingEmbedder

DB_PASSWORD = "q-p@ss/w0rd-7731"
ENCODED = "q-p%40ss%2Fw0rd-7731"


@pytest.mark.parametrize("url", [f"postgresql://mc@db.example:5432/mem?password={ENCODED}&sslmode=require",
                                 f"postgres://mc:{ENCODED}@db.example/mem",
                                 f"postgresql://mc@db.example/mem?sslmode=require&PASSWORD={ENCODED}"])
def test_every_form_of_the_database_password_is_masked_and_scrubbed(url, tmp_path):
    settings = Settings(home=tmp_path, database_url=url)
    shown = settings.safe_database_url()
    assert DB_PASSWORD not in shown and ENCODED not in shown and "***" in shown
    assert "mc" in shown and "db.example" in shown  # still says where
    assert DB_PASSWORD in settings.secrets() and ENCODED in settings.secrets()
    assert "mc" not in settings.secrets()  # the user name is not a secret: logs keep saying who
    memory = Memory(settings, embedder=HashingEmbedder())
    assert DB_PASSWORD not in memory.storage_description() and ENCODED not in memory.storage_description()
    # What the logs are scrubbed of: the password as written in the URL, decoded, or quoted in a driver error.
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "connect to %s failed: password %s rejected (%s)",
                               (url, DB_PASSWORD, ENCODED), None)
    RedactingFilter(settings.secrets()).filter(record)
    assert DB_PASSWORD not in record.getMessage() and ENCODED not in record.getMessage()
    assert DB_PASSWORD not in scrub(f"dsn {url} with {DB_PASSWORD}", *settings.secrets())


def test_the_sidebar_storage_line_masks_a_query_password(tmp_path):
    settings = Settings(home=tmp_path, database_url=f"sqlite:///{tmp_path}/m.db?password={ENCODED}")
    assert ENCODED not in settings.safe_database_url() and "password=***" in settings.safe_database_url()


# -- bidi controls ----------------------------------------------------------------------------------

BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"


@pytest.fixture
def memory(tmp_path):
    with Memory(Settings(home=tmp_path / "home", timezone="UTC"), embedder=HashingEmbedder()) as m:
        yield m


def test_bidi_controls_are_removed_from_facts_at_write(memory):
    fact = memory.facts.add("User sent \u202egnp.exe", "context", 0.9)
    assert fact.content == "User sent gnp.exe"
    assert [f.content for f in memory.facts.list()] == ["User sent gnp.exe"]
    updated = memory.facts.update(fact.id, content="User " + BIDI + "renamed it")
    assert updated.content == "User renamed it"
    assert not any(c in BIDI for f in memory.facts.list(include_invalid=True) for c in f.content)


def test_bidi_controls_are_removed_from_documents_summaries_and_plans(memory):
    memory.daily.append("Looked at \u202egnp.exe today", title="Files \u2066x\u2069")
    day = memory.daily.days()[0]
    text = memory.read_document(f"memory/{day}.md")
    assert "gnp.exe" in text and not any(c in text for c in BIDI)
    memory.write_core("# Memory\n- keep \u202egnp.exe\u202c away\n")
    assert memory.read_core() == "# Memory\n- keep gnp.exe away\n"
    assert not any(c in BIDI for v in memory.core_versions() for c in v.content)
    memory.set_summaries({"topOfMind": "\u202eeno pot"})
    assert memory.memory_data()["user"]["topOfMind"]["summary"] == "eno pot"
    plan = memory.plans.start("Ship \u202e1.0", ["step \u2067one\u2069"], session_id="s")
    assert plan.name == "Ship 1.0" and [s.text for s in plan.steps] == ["step one"]


# -- the MCP server says which memory it serves ------------------------------------------------------


def _mcp_start_message(env: dict[str, str], cwd) -> tuple[str, bytes]:
    """Start `memory-core mcp` (stdio), close its stdin at once (it exits), return its stderr and stdout."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "memory_core", "mcp"], input=b"", capture_output=True, cwd=cwd,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stderr.decode(), done.stdout


def test_mcp_says_on_stderr_which_home_and_database_it_uses(tmp_path, pg_url):
    import os
    from pathlib import Path

    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_CORE_", "OPENAI_"))}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
    stderr, stdout = _mcp_start_message(env, tmp_path)
    assert stdout == b""  # stdout is the protocol's
    assert f"home {tmp_path / 'memory_data'}" in stderr and "MEMORY_CORE_HOME is not set" in stderr
    assert f"sqlite:///{tmp_path / 'memory_data'}" in stderr or "sqlite:///memory_data" in stderr

    # A password in the URL's query is masked (the local server trusts 127.0.0.1, so any password works).
    env.update(MEMORY_CORE_HOME=str(tmp_path / "home"), MEMORY_CORE_DATABASE_URL=f"{pg_url}&password={ENCODED}")
    stderr, stdout = _mcp_start_message(env, tmp_path)
    assert stdout == b"" and f"home {tmp_path / 'home'}, database postgresql+psycopg://" in stderr
    assert "password=***" in stderr and ENCODED not in stderr and DB_PASSWORD not in stderr
    assert "MEMORY_CORE_HOME is not set" not in stderr


# -- sandboxes: capped, and cleaned up whole ---------------------------------------------------------


def test_sandboxes_are_capped_live_and_per_minute(tmp_path, database_url, clock):
    from memory_core.access import SandboxLimitError
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


@pytest.mark.parametrize("older_file", [False, True])
def test_an_expired_sandbox_leaves_no_rows_no_folder_and_its_space_is_given_back(tmp_path, clock, older_file):
    import sqlite3

    from memory_core.demo import load_demo
    from memory_core.store.purge import SCOPED_TABLES
    from sqlalchemy import text
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
