"""`memory-core export` and `memory-core import`, as people run them: the real console script in a subprocess,
on real SQLite files and a real PostgreSQL schema, checked against the databases it wrote."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from memory_core import ManualClock, Memory, Settings
from memory_core.cli.main import Progress
from memory_core.portability.bundle import read_bundle
from tests.portability.test_bundles import fill, snapshot

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parents[1] / "data" / "imports"
SCRIPT = Path(sys.executable).with_name("memory-core")


def cli_env(home: Path, database_url: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_CORE_", "OPENAI_"))}
    # A long debounce: the import's own process must leave conversations queued, not process them.
    env.update(MEMORY_CORE_HOME=str(home), MEMORY_CORE_TIMEZONE="UTC", MEMORY_CORE_DEBOUNCE_SECONDS="3600",
               MEMORY_CORE_RATE_LIMIT_SECONDS="0", MEMORY_CORE_DREAM_SCHEDULE_ENABLED="false")
    if database_url:
        env["MEMORY_CORE_DATABASE_URL"] = database_url
    return env


def run(env: dict[str, str], *args: str | Path) -> subprocess.CompletedProcess:
    command = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "memory_core"]
    return subprocess.run([*command, *map(str, args)], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def ok(env: dict[str, str], *args: str | Path) -> str:
    done = run(env, *args)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout


def refused(env: dict[str, str], *args: str | Path) -> str:
    """Exit status 2 and a clear error on stderr, never a traceback; returns the error line."""
    done = run(env, *args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and done.stdout == ""
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, done.stderr
    return errors[0]


@contextmanager
def opened(env: dict[str, str], clock: ManualClock | None = None) -> Iterator[Memory]:
    """The memory the command line works on, in this process; what is queued stays queued."""
    memory = Memory(Settings.from_env(env), clock=clock)
    try:
        yield memory
    finally:
        memory.close(flush=False)


@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_export_sqlite_import_postgresql_export_import_sqlite_is_lossless(tmp_path, pg_url):
    clock = ManualClock()
    a, b, c = cli_env(tmp_path / "a"), cli_env(tmp_path / "b", pg_url), cli_env(tmp_path / "c")
    with opened(a, clock) as memory:
        fill(memory, clock)
        before = snapshot(memory)
    one, two = tmp_path / "one.zip", tmp_path / "two.zip"

    out = ok(a, "export", one)
    assert "2 scopes, 4 facts" in out and str(one) in out
    assert not list(tmp_path.glob(".*.tmp"))  # written under a temporary name, then renamed

    out = ok(b, "import", one)
    assert "Imported bundle one.zip" in out and "ana/bot, bob/coder" in out and "4 facts" in out
    with opened(b) as memory:
        assert snapshot(memory) == before
        history = memory.facts.history(user_id="ana", agent_name="bot")
        assert {e.actor for e in history} == {"dashboard:ana@acme.com"}  # the bundle's own audit, as it was
    again = json.loads(ok(b, "import", one, "--json"))
    assert again["kind"] == "bundle" and (again["facts"], again["audit"], again["documents"]) == (0, 0, 0)
    assert again["facts_skipped"] == 4
    with opened(b) as memory:
        assert snapshot(memory) == before

    assert "4 facts" in ok(b, "export", two)
    preview = ok(c, "import", two, "--dry-run")
    assert preview.startswith("Dry run, nothing changed") and "4 facts" in preview
    with opened(c) as memory:
        assert snapshot(memory) == {}
    ok(c, "import", two, "--mode", "replace")
    with opened(c) as memory:
        assert snapshot(memory) == before  # ids, contents, validity, audit, versions, documents

    # Export refuses to overwrite, unless told to; --scope narrows the bundle.
    first = one.read_bytes()
    assert "exists" in refused(a, "export", one) and "--force" in refused(a, "export", one)
    assert one.read_bytes() == first
    assert "1 scopes, 3 facts" in ok(a, "export", one, "--scope", "ana/bot", "--force")
    assert read_bundle(one)[0]["scopes"] == ["ana/bot"]
    # A bundle carries its own scopes: --user / --agent with one is refused, before anything changes.
    assert "not for a bundle" in refused(c, "import", two, "--user", "ana")
    with opened(c) as memory:
        assert snapshot(memory) == before


FIXTURES = [("deerflow", DATA / "deerflow" / "memory.json"), ("mem0", DATA / "mem0" / "get_all_list.json"),
            ("chatgpt", DATA / "chatgpt" / "conversations.json"), ("claude", DATA / "claude" / "export"),
            ("markdown", DATA / "markdown" / "openclaw")]


@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_every_fixture_format_is_recognised_and_imported_into_its_scope(tmp_path):
    env = cli_env(tmp_path / "home")
    preview = ok(env, "import", DATA / "deerflow" / "memory.json", "--user", "ana", "--agent", "deerflow",
                 "--dry-run")
    assert preview.startswith("Dry run, nothing changed: would import deerflow") and "sample:" in preview
    assert "facts: 7 added" in preview and "errors, left out (3)" in preview
    with opened(env) as memory:
        assert memory.facts.count(user_id="ana", agent_name="deerflow") == 0

    reports = {}
    for fmt, source in FIXTURES:
        reports[fmt] = json.loads(ok(env, "import", source, "--user", "ana", "--agent", fmt, "--json"))
        assert reports[fmt]["format"] == fmt and reports[fmt]["scope"] == f"ana/{fmt}"
    with opened(env) as memory:
        for fmt in ("deerflow", "mem0"):
            assert memory.facts.count(user_id="ana", agent_name=fmt) == reports[fmt]["facts_added"] > 0
        assert memory.read_core(user_id="ana", agent_name="markdown").strip()
        for fmt in ("chatgpt", "claude"):  # queued for the worker, not processed by the import
            queued = reports[fmt]["conversations"]
            assert queued > 0 and reports[fmt]["pending"] == queued
            assert memory.queue.pending(user_id="ana", agent_name=fmt) == queued
            assert memory.facts.count(user_id="ana", agent_name=fmt) == 0
        assert {i.actor for i in memory.queue.items()} == {"cli:import"}
        assert {e.actor for e in memory.facts.history(user_id="ana", agent_name="deerflow")} == {"cli:import"}

    out = ok(env, "import", DATA / "chatgpt" / "conversations.json", "--user", "ana", "--agent", "chatgpt")
    assert "0 queued, 6 imported before" in out
    assert "6 conversation(s) of ana/chatgpt wait in the update queue" in out and "--wait" in out


def test_wait_processes_the_conversations_before_exiting(tmp_path):
    env = cli_env(tmp_path / "home")
    out = ok(env, "import", DATA / "chatgpt" / "conversations.json", "--user", "ana", "--agent", "bot", "--wait")
    assert "Processed 6 queued update(s) of ana/bot now" in out and "wait in the update queue" not in out
    with opened(env) as memory:
        assert memory.queue.pending() == 0
        facts = memory.facts.list(user_id="ana", agent_name="bot")
        assert "Lisbon" in " ".join(f.content for f in facts)
        assert f"of ana/bot now: it has {len(facts)} more fact(s)" in out


@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_a_bad_file_is_refused_in_one_line_and_changes_nothing(tmp_path):
    env = cli_env(tmp_path / "home")
    ok(env, "import", DATA / "deerflow" / "memory.json", "--user", "ana", "--agent", "bot")
    with opened(env) as memory:
        before = snapshot(memory)
    garbage = tmp_path / "garbage.json"
    garbage.write_bytes(b"\x00\x01\x02 not json at all")
    assert "garbage.json" in refused(env, "import", garbage, "--user", "ana", "--agent", "bot")
    damaged = tmp_path / "damaged.zip"
    ok(env, "export", damaged)
    with zipfile.ZipFile(damaged) as zf:
        blobs = {name: zf.read(name) for name in zf.namelist()}
    with zipfile.ZipFile(damaged, "w") as zf:
        for name, blob in blobs.items():
            zf.writestr(name, blob.replace(b"Finch", b"Fincj"))  # a fact changed after export
    assert "checksum" in refused(env, "import", damaged)
    assert "chatgpt" in refused(env, "import", DATA / "deerflow" / "memory.json", "--format", "chatgpt").lower()
    assert "no such file" in refused(env, "import", tmp_path / "missing.json")
    with opened(env) as memory:
        assert snapshot(memory) == before

    fresh = cli_env(tmp_path / "fresh")
    refused(fresh, "import", garbage)
    assert not (tmp_path / "fresh").exists()  # not even a database was made


def test_progress_is_a_percentage_line_only_for_work_that_takes_a_while():
    stream = io.StringIO()
    progress = Progress(stream, quiet_seconds=0)
    for n in range(101):
        progress.importing(n / 100, f"queued {n} of 100 conversations")
    lines = stream.getvalue().splitlines()
    assert [line.split("%")[0] for line in lines] == [f"importing: {p:3d}" for p in range(0, 101, 10)]
    assert lines[-1] == "importing: 100%  queued 100 of 100 conversations"

    quiet = io.StringIO()
    slow_start = Progress(quiet, quiet_seconds=3600)
    slow_start.importing(1.0, "done")
    assert quiet.getvalue() == ""
