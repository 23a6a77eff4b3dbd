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
