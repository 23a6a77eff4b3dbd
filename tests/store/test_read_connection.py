"""`Database.reads()`: the reads of one request share a connection and a read transaction (issue 35), and still
see every write made before them, on SQLite (whose read transaction is a snapshot) and PostgreSQL."""

from __future__ import annotations

import contextvars
import threading

import pytest
from sqlalchemy import event, inspect, select, text

from memory_core.scope import Scope
from memory_core.store.models import FactRow
from tests.conftest import make_memory

SCOPE = Scope("ana", "bot")


@pytest.fixture
def m(tmp_path, database_url):
    memory = make_memory(tmp_path, database_url)
    memory.facts.add("User likes tea", "preference", 0.9, user_id="ana", agent_name="bot")
    yield memory
    memory.close()


def checkouts(memory) -> list:
    """Every connection taken from the pool from now on."""
    taken: list = []
    event.listen(memory.parts.db.engine, "checkout", lambda *_args: taken.append(1))
    return taken


def test_the_reads_of_a_block_take_one_connection(m):
    db, store = m.parts.db, m.parts.store
    taken = checkouts(m)
    for _ in range(3):
        store.count(SCOPE)
    assert len(taken) == 3
    taken.clear()
    with db.reads():
        for _ in range(3):
            assert store.count(SCOPE) == 1
            assert [f.content for f in store.list(SCOPE)] == ["User likes tea"]
    assert len(taken) == 1


def test_a_write_in_the_block_is_seen_by_the_reads_after_it(m):
    db, store = m.parts.db, m.parts.store
    with db.reads():
        assert store.count(SCOPE) == 1
        m.facts.add("User plays chess", "preference", 0.8, user_id="ana", agent_name="bot")
        assert store.count(SCOPE) == 2
        with db.read() as s:  # a write while a read is open: seen once that read has ended
            s.execute(select(FactRow.id)).all()
            m.facts.add("User sails", "preference", 0.7, user_id="ana", agent_name="bot")
        assert store.count(SCOPE) == 3


def test_what_a_read_returns_is_detached_as_before(m):
    with m.parts.db.reads():
        with m.parts.db.read() as s:
            row = s.execute(select(FactRow)).scalars().first()
        assert inspect(row).detached
        assert row.content == "User likes tea"


def test_a_failed_read_does_not_spoil_the_reads_after_it(m):
    db, store = m.parts.db, m.parts.store
    with db.reads():
        with pytest.raises(Exception), db.read() as s:
            s.execute(text("SELECT no_such_column FROM facts"))
        assert store.count(SCOPE) == 1  # PostgreSQL would refuse it in the failed transaction


def test_another_thread_in_a_copied_context_takes_its_own_connection(m):
    db, store = m.parts.db, m.parts.store
    taken = checkouts(m)
    counted: list[int] = []
    with db.reads():
        store.count(SCOPE)
        context = contextvars.copy_context()  # as anyio.to_thread hands it on
        worker = threading.Thread(target=context.run, args=(lambda: counted.append(store.count(SCOPE)),))
        worker.start()
        worker.join()
        store.count(SCOPE)
    assert counted == [1]
    assert len(taken) == 2


def test_a_context_call_reads_on_one_connection_and_leaves_its_record_to_be_written_behind(m):
    view = m.scoped(user_id="ana", agent_name="bot", role="editor", actor="test")
    view.injection_report(max_tokens=500, query="what about tea?", record=True)  # indexes and embeds once
    taken = checkouts(m)
    report = view.injection_report(max_tokens=500, query="what about tea?", record=True)
    assert "User likes tea" in report.text
    assert len(taken) == 1  # the reads' connection: the record is written behind (store.injection_log)
    assert len(view.injections()) == 2  # a read writes what waits first
    taken.clear()
    assert [h.text for h in view.search("tea", k=3)] == ["User likes tea"]
    assert len(taken) == 1


def test_work_left_for_the_opening_does_not_wait_on_the_blocks_own_transaction(tmp_path, database_url, m):
    again = make_memory(tmp_path, database_url)  # the same database, not yet opened by this Memory
    db = again.parts.db
    vacuumed: list[bool] = []

    def finish_an_erase() -> None:  # as an interrupted erase is finished on opening: it reads, then VACUUMs
        again.parts.store.list(SCOPE)
        vacuum(db)
        vacuumed.append(True)

    db.on_ready.append(finish_an_erase)
    try:
        with db.reads():
            assert again.parts.store.count(SCOPE) == 1
        assert vacuumed == [True]
    finally:
        again.close()


def vacuum(db) -> None:
    """VACUUM outside any transaction, as erase and purge do; an error after a few seconds of waiting for a lock."""
    if db.is_sqlite:
        raw = db.engine.raw_connection()  # the engine's connections begin a transaction, which VACUUM refuses
        try:
            cursor = raw.cursor()
            cursor.execute("PRAGMA busy_timeout = 3000")
            cursor.execute("VACUUM")
        finally:
            raw.close()
        return
    with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql("SET lock_timeout = '5s'")
        conn.exec_driver_sql("VACUUM FULL facts")


def test_once_reads_a_value_once_a_read_transaction_and_again_after_a_write(m):
    db, store = m.parts.db, m.parts.store
    calls: list[int] = []

    def count() -> int:
        calls.append(1)
        return store.count(SCOPE)

    assert [db.once("n", count), db.once("n", count)] == [1, 1] and len(calls) == 2  # outside a block: every time
    calls.clear()
    with db.reads():
        assert [db.once("n", count), db.once("n", count), db.once("other", count)] == [1, 1, 1]
        assert len(calls) == 2  # once a key
        m.facts.add("User plays chess", "preference", 0.8, user_id="ana", agent_name="bot")
        assert db.once("n", count) == 2 and len(calls) == 3  # the write ended the transaction it was read in
    with db.reads():
        assert db.once("n", count) == 2 and len(calls) == 4  # a new block reads afresh


def test_a_search_with_passages_reads_the_retired_facts_once(m):
    """search() marks a passage that states a retired fact, and the injection's turns are marked with the same
    reads: within injection_report one read of the retired facts (and of the deleted ones' audit entries)."""
    view = m.scoped(user_id="ana", agent_name="bot")
    view.update([{"role": "user", "content": "I live in Lisbon and I keep bees on the roof."}], thread_id="t1")
    view.update([{"role": "user", "content": "I moved to Porto last month, the bees came with me."}], thread_id="t2")
    statements: list[str] = []
    event.listen(m.parts.db.engine, "before_cursor_execute",
                 lambda _c, _cur, statement, *_rest: statements.append(statement))
    view.injection_report(query="Where are the bees kept?")
    assert sum("FROM fact_audit" in s for s in statements) == 1
    assert sum("superseded_by" in s and "invalid_at IS NOT NULL" in s for s in statements) == 1


def test_the_latest_deleted_facts_are_read_by_an_index(tmp_path):
    """Every search with passages reads a scope's latest deleted facts: by the index of action, not by walking
    every audit entry of the scope (an added fact leaves one). SQLite's plan (PostgreSQL gets the same index)."""
    m = make_memory(tmp_path)
    m.parts.db.ensure_ready()
    with m.parts.db.engine.connect() as conn:
        plan = " ".join(str(r[-1]) for r in conn.exec_driver_sql(
            "EXPLAIN QUERY PLAN SELECT fact_id, old FROM fact_audit WHERE user_id = 'ana' AND agent_name = 'bot' "
            "AND action = 'deleted' ORDER BY at DESC LIMIT 500"))
    m.close()
    assert "ix_fact_audit_action" in plan and "TEMP B-TREE" not in plan
