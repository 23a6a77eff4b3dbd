"""Imports killed with SIGKILL at their worst moment, in a real subprocess: a bundle import after its database
commit, before all its documents are written (finished on the next open, or reported by `status()`), and a
conversations import between a queued row and its ledger entry (they commit together, so neither trails).

The child kills itself at the chosen point (a wrapper around the document store's write, or SQLAlchemy's
after_commit event): the timing is exact, the kill is a real SIGKILL."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import text

from memory_core.tiers.documents import LocalDocumentStore
from memory_core.scope import Scope
from memory_core.store.db import Database
from memory_core.store.migrations import migrate
from tests.conftest import make_memory

ROOT = Path(__file__).resolve().parents[2]
DAYS = 40
SCOPE = Scope("ana", "bot")
CHATGPT = ROOT / "tests" / "data" / "imports" / "chatgpt" / "conversations.json"

CHILD = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from memory_core import Memory, Settings
    from memory_core.search.embedders import HashingEmbedder

    job, home, url, path = sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4]
    settings = Settings(home=home, database_url=url, timezone="UTC", llm_api_key=None, llm_base_url=None,
                        debounce_seconds=3600)
    memory = Memory(settings, embedder=HashingEmbedder(), worker=False)
    if job == "bundle":  # killed after the commit, when 5 of the bundle's documents are written
        real, written = memory.documents.write, []

        def write(scope, doc_path, text):
            if len(written) == 5:
                os.kill(os.getpid(), signal.SIGKILL)
            real(scope, doc_path, text)
            written.append(doc_path)

        memory.documents.write = write
        memory.import_bundle(path)
    else:  # killed right after the commit of the second queued conversation, or of the first facts
        from sqlalchemy import event
        from sqlalchemy.orm import Session
        from memory_core.store.models import FactRow, PendingUpdateRow

        watched, commits = (PendingUpdateRow, 2) if job == "chatgpt" else (FactRow, 1)
        done = []

        @event.listens_for(Session, "after_flush")
        def flushed(session, _context):
            if any(isinstance(row, watched) for row in session.new):
                session.info["watched"] = True

        @event.listens_for(Session, "after_commit")
        def committed(session):
            if session.in_nested_transaction():  # a savepoint's release, not the commit
                return
            if session.info.pop("watched", False):
                done.append(1)
                if len(done) == commits:
                    os.kill(os.getpid(), signal.SIGKILL)

        memory.import_file(path, format=job, user_id="ana", agent_name="bot")
    print("not killed", flush=True)
""")


def run_child(job: str, home: Path, url: str, path: Path) -> None:
    """Run CHILD on the memory that `make_memory(home, url)` opens; it must die of SIGKILL."""
    proc = subprocess.run([sys.executable, "-c", CHILD, job, str(home / "home"), url, str(path)], cwd=ROOT, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True)
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, proc.stdout, proc.stderr[-2000:])


def bundle_with_documents(tmp_path: Path, clock) -> tuple[Path, dict[str, str]]:
    """A bundle of one scope with DAYS daily logs and a MEMORY.md; returns it and its documents."""
    with make_memory(tmp_path / "src", clock=clock) as src:
        for day in range(DAYS):
            src.daily.append(f"- note of day {day}", when=clock.now() - timedelta(days=day), user_id="ana",
                             agent_name="bot")
        src.write_core("- User likes tea\n", user_id="ana", agent_name="bot")
        src.facts.add("User likes tea", "preference", 0.9, user_id="ana", agent_name="bot")
        src.export_bundle(tmp_path / "b.zip")
        from memory_core.portability.bundle import _documents

        return tmp_path / "b.zip", _documents(src, SCOPE)


def raw_count(url: str, table: str) -> int:
    """Rows of `table`, read without a Memory (whose first use would finish the restore)."""
    db = Database(url, migrate=migrate)
    try:
        with db.read() as s:
            return s.execute(text(f"SELECT count(*) FROM {table}")).scalar()
    finally:
        db.dispose()


def documents_of(m) -> dict[str, str]:
    from memory_core.portability.bundle import _documents

    return _documents(m, SCOPE)


def test_a_restore_killed_after_its_commit_is_finished_on_the_next_open(tmp_path, database_url, clock, caplog):
    bundle, expected = bundle_with_documents(tmp_path, clock)
    assert len(expected) == DAYS + 1
    home = tmp_path / "dst"
    run_child("bundle", home, database_url, bundle)
    assert raw_count(database_url, "facts") == 1  # the rows were committed
    missing = raw_count(database_url, "restore_journal")
    assert missing == DAYS + 1  # and every document listed, none yet cleared
    if not database_url.startswith("postgresql"):  # documents are files here: 5 were written, the rest not
        assert len(list((home / "home/scopes/ana/bot").rglob("*.md"))) == 5
    with caplog.at_level(logging.WARNING), make_memory(home, database_url, clock=clock) as m:
        assert m.status().restores_pending == 0  # the first use of the database finished it
        assert documents_of(m) == expected
        assert m.read_core(user_id="ana", agent_name="bot") == "- User likes tea\n"
    assert any("interrupted bundle import" in r.getMessage() and str(DAYS - 4) in r.getMessage()
               for r in caplog.records), [r.getMessage() for r in caplog.records]
    assert raw_count(database_url, "restore_journal") == 0
    with make_memory(home, database_url, clock=clock) as m:
        again = m.import_bundle(bundle)
        assert again["documents"] == 0 and again["facts"] == 0  # nothing left to do


def test_a_restore_that_cannot_be_finished_is_reported_and_finished_later(tmp_path, clock, caplog):
    bundle, expected = bundle_with_documents(tmp_path, clock)
    home, url = tmp_path / "dst", f"sqlite:///{tmp_path / 'dst.db'}"
    run_child("bundle", home, url, bundle)
    logs = home / "home/scopes/ana/bot/memory"
    shutil.rmtree(logs)
    logs.write_text("a file where the daily logs' folder should be")  # every write of a log now fails
    with caplog.at_level(logging.ERROR), make_memory(home, url, clock=clock) as m:
        status = m.status()
        assert status.restores_pending > 0  # said, not silent
        assert any("could not be finished" in r.getMessage() for r in caplog.records)
    logs.unlink()
    with make_memory(home, url, clock=clock) as m:
        assert m.status().restores_pending == 0 and documents_of(m) == expected


def test_a_changed_document_is_kept_when_the_restore_is_finished(tmp_path, clock):
    bundle, expected = bundle_with_documents(tmp_path, clock)
    home, url = tmp_path / "dst", f"sqlite:///{tmp_path / 'dst.db'}"
    run_child("bundle", home, url, bundle)
    store = LocalDocumentStore(lambda scope: home / "home/scopes" / scope.user_id / scope.agent_name)
    store.write(SCOPE, "MEMORY.md", "- written by hand after the crash\n")
    with make_memory(home, url, clock=clock) as m:
        assert m.status().restores_pending == 0  # the first use of the database finishes the restore
        found = documents_of(m)
        assert found["MEMORY.md"] == "- written by hand after the crash\n"  # not overwritten by the bundle's
        assert {k: v for k, v in found.items() if k != "MEMORY.md"} == \
            {k: v for k, v in expected.items() if k != "MEMORY.md"}


@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_a_conversations_import_killed_leaves_the_ledger_and_the_queue_equal(tmp_path, database_url, clock):
    home = tmp_path / "dst"
    run_child("chatgpt", home, database_url, CHATGPT)
    db = Database(database_url, migrate=migrate)
    try:
        with db.read() as s:
            queued = {r[0] for r in s.execute(text("SELECT thread_id FROM pending_updates"))}
            ledger = {r[0] for r in s.execute(text("SELECT source_key FROM imported_items "
                                                   "WHERE source_key LIKE 'chatgpt:%'"))}
    finally:
        db.dispose()
    assert len(queued) == 2 and ledger == queued
    with make_memory(home, database_url, clock=clock, debounce_seconds=3600) as m:
        report = m.import_file(CHATGPT, format="chatgpt", user_id="ana", agent_name="bot")
        assert report.conversations_skipped == 2
        assert m.queue.pending(user_id="ana", agent_name="bot") == 2 + report.conversations


def test_a_purged_scope_leaves_no_document_to_restore(tmp_path, clock):
    """An expired sandbox removed while a restore of it waits: its documents must not come back."""
    from memory_core.store.restore_store import journal_documents, journal_size

    with make_memory(tmp_path, clock=clock) as m:
        with m.db.write() as s:
            journal_documents(s, [(SCOPE, "MEMORY.md", "- restored\n", None),
                                  (Scope("bob", "bot"), "MEMORY.md", "- kept\n", None)], clock.now())
        m.purge_scope(user_id="ana", agent_name="bot")
        assert journal_size(m.db) == 1


def test_a_facts_import_killed_after_its_commit_has_its_ledger_entries(tmp_path, clock):
    """The facts and their ledger entries commit together: a fact forgotten after the crash is not brought back
    by importing the file again."""
    home, url = tmp_path / "dst", f"sqlite:///{tmp_path / 'dst.db'}"
    deerflow = ROOT / "tests" / "data" / "imports" / "deerflow" / "memory.json"
    run_child("deerflow", home, url, deerflow)
    assert raw_count(url, "facts") == 7 and raw_count(url, "imported_items") == 7
    with make_memory(home, url, clock=clock) as m:
        fix = next(f for f in m.facts.list(user_id="ana", agent_name="bot") if f.category == "correction")
        m.facts.delete(fix.id)
        report = m.import_file(deerflow, user_id="ana", agent_name="bot")
        assert report.facts_added == 0 and report.facts_skipped == 7
        assert all(f.category != "correction" for f in m.facts.list(user_id="ana", agent_name="bot"))
