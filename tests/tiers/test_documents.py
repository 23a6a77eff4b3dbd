"""Documents: a scope's own MEMORY.md and memory/... and nothing else, limits on what enters them, and
MEMORY.md versions that record whatever is on disk."""

from __future__ import annotations

from datetime import date, datetime, timezone
from pathlib import Path

import pytest
from sqlalchemy import event, func, select

from memory_core.tiers.documents import LocalDocumentStore, export_documents, is_document_path
from memory_core.scope import Scope
from memory_core.store.models import CoreVersionRow, DocumentRow
from memory_core.tiers.core import FOUND_ON_DISK, CoreTier
from memory_core.tiers.daily import TITLE_MAX_CHARS
from tests.conftest import make_memory

WHEN = datetime(2026, 11, 22, 14, 30, tzinfo=timezone.utc)
DAY = WHEN.date()
DEFAULT = Scope("default", "default")
ALICE = Scope("alice", "bot")

NOT_DOCUMENTS = [
    "scopes/alice/bot/MEMORY.md", "scopes/alice/bot/memory/2026-11-22.md", "memory.db", "memory.db-wal",
    "../MEMORY.md", "memory/../MEMORY.md", "memory/../../etc/passwd", "memory/dreams/../../memory.db",
    "/etc/passwd", "/MEMORY.md", "memory\\2026-11-22.md", "..\\MEMORY.md", "memory/.2026-11-22.md.committed",
    ".MEMORY.md.committed", "memory/.MEMORY.md.x1y2.tmp", "", ".", "..", "MEMORY.md/", "./MEMORY.md",
    "memory", "memory/", "memory/dreams", "memory//2026-11-22.md", "memory/a/b/c.md", "memory/x.txt",
    "memory/2026-11-22.md.bak", "notes.md", "memory.md", "MEMORY.MD", " MEMORY.md", "MEMORY.md\n",
    "memory/2026-11-22.md\x00", "memory/" + "x" * 300 + ".md", None, 1, b"MEMORY.md", ["MEMORY.md"],
    Path("MEMORY.md"),
]
DOCUMENTS = ["MEMORY.md", "memory/2026-11-22.md", "memory/dreams/2026-11-22.md", "memory/notes_1.2-a.md"]


@pytest.fixture(params=["files", "database"])
def docs_memory(request, tmp_path, clock):
    clock.set(WHEN)
    m = make_memory(tmp_path, clock=clock, document_store=request.param)
    yield m
    m.close()


def test_is_document_path_table():
    assert [p for p in DOCUMENTS if not is_document_path(p)] == []
    assert [p for p in NOT_DOCUMENTS if is_document_path(p)] == []


def snapshot(memory, tmp_path) -> tuple:
    """Every file under tmp_path, and every document row: what a refused call must leave as it was."""
    with memory.db.read() as s:
        rows = s.execute(select(DocumentRow.user_id, DocumentRow.agent_name, DocumentRow.path,
                                DocumentRow.content).order_by(DocumentRow.path)).all()
    files = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and "memory.db" not in p.name}
    return files, [tuple(r) for r in rows]


@pytest.mark.parametrize("path", NOT_DOCUMENTS, ids=repr)
def test_any_other_path_is_an_unknown_document_in_both_stores(docs_memory, tmp_path, path):
    docs_memory.daily.append("- mine")
    docs_memory.write_core("- alice's\n", user_id="alice", agent_name="bot")
    store, before = docs_memory.documents, snapshot(docs_memory, tmp_path)
    for call in (lambda: store.read(DEFAULT, path), lambda: store.write(DEFAULT, path, "x"),
                 lambda: store.append(DEFAULT, path, "x\n", "# h\n"), lambda: store.delete(DEFAULT, path),
                 lambda: docs_memory.read_document(path)):
        with pytest.raises(KeyError):
            call()
    assert snapshot(docs_memory, tmp_path) == before


def test_the_default_scope_reaches_no_other_scope_and_not_the_database(tmp_path, clock):
    clock.set(WHEN)
    with make_memory(tmp_path, clock=clock) as m:  # SQLite and files: the default workspace is the home folder
        m.write_core("- alice's secret\n", user_id="alice", agent_name="bot")
        m.daily.append("- alice's day", user_id="alice", agent_name="bot")
        assert (tmp_path / "home" / "scopes" / "alice" / "bot" / "MEMORY.md").exists()
        assert (tmp_path / "home" / "memory.db").exists()
        for path in ("scopes/alice/bot/MEMORY.md", "scopes/alice/bot/memory/2026-11-22.md", "memory.db",
                     "memory.db-wal", "memory/.2026-11-22.md.committed"):
            with pytest.raises(KeyError):
                m.read_document(path)
        assert m.read_document("MEMORY.md") is None  # a document path that does not exist (yet)
        assert m.read_document("memory/2026-11-22.md") is None
        assert m.read_document("MEMORY.md", user_id="alice", agent_name="bot") == "- alice's secret\n"
        assert m.export_documents(tmp_path / "out") == []
        assert not (tmp_path / "out").exists() or list((tmp_path / "out").rglob("*")) == []


def test_listing_and_export_yield_only_documents(docs_memory, tmp_path):
    m = docs_memory
    m.daily.append("- a day")
    m.write_core("- core\n")
    m.documents.append(DEFAULT, "memory/dreams/2026-11-22.md", "## Dream\n", "# Dream Diary\n\n")
    m.daily.append("- alice's", user_id="alice", agent_name="bot")
    if m.documents.kind == "files":
        home = tmp_path / "home"
        for stray in ("notes.md", "memory/notes.txt", "memory/.hidden.md", "memory/dreams/x.md.bak",
                      "memory/sub/deep.md"):
            (home / stray).parent.mkdir(parents=True, exist_ok=True)
            (home / stray).write_text("not a document")
    else:
        with m.db.write() as s:  # rows that no store would write today
            for stray in ("notes.md", "memory.db", "scopes/alice/bot/MEMORY.md", "memory/sub/deep.md"):
                s.add(DocumentRow(user_id="default", agent_name="default", path=stray, content="stray",
                                  updated_at=WHEN))
    expected = ["MEMORY.md", "memory/2026-11-22.md", "memory/dreams/2026-11-22.md"]
    listed = [p for folder in ("", "memory", "memory/dreams") for p in m.documents.list(DEFAULT, folder)]
    assert listed == expected
    assert m.daily.days() == [DAY]
    for bad in ("scopes", "scopes/alice/bot", "memory/sub", "..", "memory/..", None):
        with pytest.raises(KeyError):
            m.documents.list(DEFAULT, bad)
    assert sorted(m.export_documents(tmp_path / "out")) == expected
    exported = sorted(str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert exported == expected
    assert (tmp_path / "out" / "MEMORY.md").read_text() == "- core\n"
    # straight through the store function too, into a second folder
    target = LocalDocumentStore(lambda _scope: tmp_path / "out2")
    assert sorted(export_documents(m.documents, target, DEFAULT)) == expected


def test_scopes_with_only_documents_are_active(docs_memory):
    """A scope with a daily log and no fact is one a scheduled dream looks at, in either document store."""
    m = docs_memory
    m.daily.append("- alice's", user_id="alice", agent_name="bot")
    assert Scope("alice", "bot") in m.active_scopes() and Scope("alice", "bot") in m.scopes()
    assert Scope("carol", "bot") not in m.active_scopes()


# -- limits and text ---------------------------------------------------------------------------------

BAD_TEXT = [("x" * 1001, "limit"), ("a\x00b", "NUL"), ("a\ud800b", "surrogate"), (b"bytes", "string"),
            (None, "string")]


@pytest.mark.parametrize("text,why", BAD_TEXT)
def test_daily_append_refuses_bad_text_and_writes_nothing(tmp_path, clock, text, why):
    clock.set(WHEN)
    for kind in ("files", "database"):
        with make_memory(tmp_path / kind, clock=clock, document_store=kind, max_document_chars=1000) as m:
            with pytest.raises(ValueError, match=why if why != "string" else "must be a string"):
                m.daily.append(text)
            assert m.daily.read(DAY) is None and m.daily.days() == []
            m.daily.append("- kept")
            before = m.daily.read(DAY)
            with pytest.raises(ValueError):
                m.daily.append(text)
            with pytest.raises(ValueError):
                m.daily.append("- fine", title=text)
            assert m.daily.read(DAY) == before


def test_daily_append_limits_text_and_title(tmp_path, clock):
    clock.set(WHEN)
    with make_memory(tmp_path, clock=clock, max_document_chars=1000) as m:
        m.daily.append("x" * 1000, title="t" * TITLE_MAX_CHARS)  # at the limits: accepted
        with pytest.raises(ValueError, match="title is 257 characters"):
            m.daily.append("x", title="t" * (TITLE_MAX_CHARS + 1))
        assert m.daily.read(DAY).count("## ") == 1
        with pytest.raises(ValueError, match="must not be empty"):
            m.daily.append(" \n ")


@pytest.mark.parametrize("kind", ["files", "database"])
def test_stores_refuse_text_that_cannot_be_stored(tmp_path, clock, kind):
    with make_memory(tmp_path, clock=clock, document_store=kind) as m:
        m.documents.write(DEFAULT, "MEMORY.md", "- kept\n")
        for bad in ("a\x00b", "a\udc80b"):
            with pytest.raises(ValueError):
                m.documents.write(DEFAULT, "MEMORY.md", bad)
            with pytest.raises(ValueError):
                m.documents.append(DEFAULT, "memory/2026-11-22.md", bad, "# h\n")
            with pytest.raises(ValueError):
                m.documents.append(DEFAULT, "memory/2026-11-22.md", "ok\n", bad)
        assert m.documents.read(DEFAULT, "MEMORY.md") == "- kept\n"
        assert m.documents.read(DEFAULT, "memory/2026-11-22.md") is None


@pytest.mark.parametrize("text,why", BAD_TEXT)
def test_memory_write_refuses_bad_text_and_writes_nothing(tmp_path, clock, text, why):
    for kind in ("files", "database"):
        with make_memory(tmp_path / kind, clock=clock, document_store=kind) as m:
            core = CoreTier(m.documents, m.db, m.clock, max_chars=1000)
            core.write(DEFAULT, "- kept\n", "first")
            core.write(DEFAULT, "y" * 1000, "at the limit")
            with pytest.raises(ValueError, match=why if why != "string" else "must be a string"):
                core.write(DEFAULT, text, "bad")
            with pytest.raises(ValueError):
                core.write(DEFAULT, "- fine\n", "bad reason \x00")
            assert core.read(DEFAULT) == "y" * 1000
            assert [v.reason for v in core.versions(DEFAULT)] == ["at the limit", "first"]


# -- MEMORY.md on disk is always a recorded version ---------------------------------------------------

@pytest.fixture(params=["files", "database"])
def core_memory(request, tmp_path, clock, database_url):
    clock.set(WHEN)
    m = make_memory(tmp_path, database_url, clock=clock, document_store=request.param)
    yield m
    m.close()


def fresh_core(m) -> CoreTier:
    """A CoreTier as a new process would have it: nothing cached."""
    return CoreTier(m.documents, m.db, m.clock, max_chars=m.settings.max_document_chars)


def test_a_memory_file_without_its_version_row_is_recorded_when_found(core_memory):
    m = core_memory
    fresh_core(m).write(ALICE, "- one\n", "first")
    m.documents.write(ALICE, "MEMORY.md", "- one\n- two\n")  # the state a kill between file and row leaves
    core = fresh_core(m)
    assert core.read(ALICE) == "- one\n- two\n"
    versions = core.versions(ALICE)
    assert [(v.version, v.content, v.reason) for v in versions] == [
        (2, "- one\n- two\n", FOUND_ON_DISK), (1, "- one\n", "first")]
    assert fresh_core(m).versions(ALICE) == versions  # found once, recorded once
    # write() records what it finds on disk before its own version
    m.documents.write(ALICE, "MEMORY.md", "- edited by hand\n")
    fresh_core(m).write(ALICE, "- three\n", "third")
    assert [(v.version, v.reason) for v in fresh_core(m).versions(ALICE)] == [
        (4, "third"), (3, FOUND_ON_DISK), (2, FOUND_ON_DISK), (1, "first")]
    assert fresh_core(m).version(ALICE, 3).content == "- edited by hand\n"


def test_a_hand_made_memory_is_recorded_and_an_empty_one_is_not(core_memory):
    m = core_memory
    m.documents.write(DEFAULT, "MEMORY.md", "")
    assert fresh_core(m).versions(DEFAULT) == []
    m.documents.write(DEFAULT, "MEMORY.md", "- by hand\n")
    fresh_core(m).write(DEFAULT, "- by the tier\n", "edited")
    assert [(v.version, v.content, v.reason) for v in fresh_core(m).versions(DEFAULT)] == [
        (2, "- by the tier\n", "edited"), (1, "- by hand\n", FOUND_ON_DISK)]
    # rollback goes through write(): recorded, nothing found
    fresh_core(m).rollback(DEFAULT, 1)
    assert [v.reason for v in fresh_core(m).versions(DEFAULT)] == ["rollback to version 1", "edited", FOUND_ON_DISK]


def test_reading_an_unchanged_memory_costs_no_query(core_memory):
    m = core_memory
    core = fresh_core(m)
    core.write(ALICE, "- one\n", "first")
    statements = []

    def count(*_args):
        statements.append(1)

    event.listen(m.db.engine, "before_cursor_execute", count)
    try:
        for _ in range(5):
            m.documents.read(ALICE, "MEMORY.md")
        own = len(statements)  # the document's own reads: none with files
        statements.clear()
        for _ in range(5):
            assert core.read(ALICE) == "- one\n"
        assert len(statements) == own and (own == 0) == (m.documents.kind == "files")
        m.documents.write(ALICE, "MEMORY.md", "- changed\n")
        statements.clear()
        assert core.read(ALICE) == "- changed\n"
        assert statements  # a changed file is checked against the versions
    finally:
        event.remove(m.db.engine, "before_cursor_execute", count)
    with m.db.read() as s:
        assert s.execute(select(func.count()).select_from(CoreVersionRow)).scalar() == 2


def test_memory_writes_through_the_database_store_commit_the_document_and_its_version_together(tmp_path, clock,
                                                                                                database_url):
    with make_memory(tmp_path, database_url, clock=clock, document_store="database") as m:
        core = fresh_core(m)
        for i in range(3):
            core.write(DEFAULT, f"- v{i}\n", f"v{i}")
        with m.db.read() as s:
            doc = s.get(DocumentRow, ("default", "default", "MEMORY.md"))
        assert doc.content == "- v2\n"
        assert [v.reason for v in fresh_core(m).versions(DEFAULT)] == ["v2", "v1", "v0"]
        assert m.read_document("MEMORY.md") == "- v2\n" and m.read_core() == "- v2\n"

