"""Engines, transactions and locks for SQLite (file, WAL) and PostgreSQL (psycopg 3)."""

from __future__ import annotations

import hashlib
import logging
import threading
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Callable, Iterator

from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import Connection, Engine, make_url
from sqlmodel import Session

log = logging.getLogger(__name__)


def _sqlite_engine(url: str) -> Engine:
    engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 60})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record) -> None:  # pragma: no cover - exercised by every test
        dbapi_conn.isolation_level = None  # let SQLAlchemy's begin event issue BEGIN itself
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA auto_vacuum=INCREMENTAL")  # takes effect in a new file (purge.reclaim_space)
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA busy_timeout=60000")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA cache_size=-16384")  # 16 MB: a large scope's keyword matches are read by pk
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn) -> None:
        # Writers take the lock up front, so that a read-then-write never fails to upgrade.
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("immediate") else "BEGIN")

    return engine


class _Lender:
    """The connection that one `Database.reads()` block lends to the read()s of its thread."""

    def __init__(self, db: "Database") -> None:
        self.db = db
        self.thread = threading.get_ident()
        self.conn: Connection | None = None
        self.session: Session | None = None  # joins the connection's transaction; emptied after each read()
        self.depth = 0  # read() sessions open on the connection
        self.stale = False  # a write committed while a read() was open: end the transaction once none is
        self.memo: dict[object, object] = {}  # what `Database.once` read in this transaction

    def lends(self, db: "Database") -> bool:
        return db is self.db and threading.get_ident() == self.thread

    def give_back(self) -> None:
        """End the read transaction and return the connection to the pool (the next read() takes one again)."""
        conn, session, self.conn, self.session, self.stale = self.conn, self.session, None, None, False
        self.memo.clear()  # read in the transaction that ends
        if session is not None:
            session.close()
        if conn is not None:
            conn.close()


_lender: ContextVar[_Lender | None] = ContextVar("memory_core_read_lender", default=None)


def lock_id(key: str) -> int:
    """A signed 64-bit id for a PostgreSQL advisory lock."""
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big", signed=True)


class Database:
    """One engine per Memory. `read()` and `write()` hand out sessions in a transaction.

    `migrate` brings the schema up to date on first use (store.migrations.migrate, passed in by whoever opens
    the database, so that this module imports no migration)."""

    def __init__(self, url: str, *, migrate: Callable[["Database"], object]) -> None:
        self.url = url
        self.migrate = migrate
        self.is_sqlite = url.startswith("sqlite")
        if self.is_sqlite:
            self.engine = _sqlite_engine(url)
        else:
            self.engine = create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=5)
        self.dialect = self.engine.dialect.name
        self.has_fts5 = False
        # SQLite has one writer at a time. Threads of this process take turns on a lock instead of
        # meeting in SQLite's busy handler, which sleeps in steps of up to 100 ms; other processes
        # still wait through busy_timeout.
        self.sqlite_writer = threading.RLock()
        self._ready = False
        self._ready_lock = threading.Lock()
        self.on_ready: list[Callable[[], object]] = []  # run once the schema is current (unfinished work)
        # Rows this process writes behind (the injection record, store.injection_log): written by
        # `flush_buffered` before whatever must see them (an erase, a purge) and when the database is released.
        self.buffered: list[Callable[[], object]] = []

    def ensure_ready(self) -> None:
        """Create the SQLite file's folder and bring the schema up to date, once, on first use
        (constructors do no I/O)."""
        if self._ready:
            return
        # Not on a connection lent by `reads()`: the unfinished work may VACUUM, which would wait for ever on the
        # lent transaction of its own thread.
        lent = _lender.set(None)
        try:
            with self._ready_lock:
                if self._ready:
                    return
                if self.is_sqlite:
                    database = make_url(self.url).database
                    if database and database != ":memory:":
                        Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
                self.migrate(self)
                self._ready = True
            for callback in self.on_ready:  # outside the lock, by the one thread that migrated: they use the database
                callback()
        finally:
            _lender.reset(lent)

    @contextmanager
    def reads(self) -> Iterator[None]:
        """Within this block, the read()s of this thread share one connection and one read transaction: a
        request's dozen reads pay for one pool checkout, BEGIN and ROLLBACK instead of a dozen. A write() gives
        the connection back first (or, inside an open read(), once that read ends), so that the reads after it
        see what it wrote and a thread holds no more connections than without this block. Nested: the outer
        block's."""
        lender = _lender.get()
        if lender is not None and lender.lends(self):
            yield
            return
        lender = _Lender(self)
        token = _lender.set(lender)
        try:
            yield
        finally:
            _lender.reset(token)
            lender.give_back()

    @contextmanager
    def read(self) -> Iterator[Session]:
        self.ensure_ready()
        lender = _lender.get()
        if lender is None or not lender.lends(self):
            with Session(self.engine, expire_on_commit=False) as session:
                yield session
            return
        if lender.session is None:
            lender.conn = self.engine.connect()
            lender.conn.begin()  # begun here, so that the session joins it and leaves it open between reads
            lender.session = Session(bind=lender.conn, expire_on_commit=False)
        lender.depth += 1
        try:
            yield lender.session
        except BaseException:
            lender.stale = True  # PostgreSQL refuses every statement of a transaction after an error
            raise
        finally:
            lender.depth -= 1
            if lender.stale and lender.depth == 0:
                lender.give_back()
            elif lender.depth == 0:
                lender.session.expunge_all()  # what a read() returns is detached, as from a session of its own

    def once(self, key: object, read: Callable[[], object]) -> object:
        """`read()`, run once per `key` in a `reads()` block's read transaction: the reads after it in the block get
        what it returned, until a write ends the transaction (its reads after see the write). Outside such a block,
        run every time."""
        lender = _lender.get()
        if lender is None or not lender.lends(self):
            return read()
        if key not in lender.memo:
            lender.memo[key] = read()
        return lender.memo[key]

    @contextmanager
    def rows(self) -> Iterator[Connection]:
        """`read()`'s connection and transaction, for Core statements of plain rows: without the ORM session's
        layer a statement costs about half as much (a search or an injection runs a dozen of them)."""
        with self.read() as session:
            yield session.connection()

    def _writing(self) -> None:
        """Before a write: the reads of this thread's `reads()` block after it must see it."""
        lender = _lender.get()
        if lender is not None and lender.lends(self):
            if lender.depth == 0:
                lender.give_back()
            else:
                lender.stale = True

    @contextmanager
    def write(self, lock: str | None = None) -> Iterator[Session]:
        """A write transaction. `lock` serialises writers of one key across processes.

        SQLite serialises every writer with BEGIN IMMEDIATE; PostgreSQL takes a transaction-scoped
        advisory lock on `lock`.
        """
        self.ensure_ready()
        self._writing()
        if self.is_sqlite:
            with self.sqlite_writer, self.engine.connect() as conn:
                conn = conn.execution_options(immediate=True)
                with Session(bind=conn, expire_on_commit=False) as session:
                    try:
                        yield session
                        session.commit()
                    except BaseException:
                        session.rollback()
                        raise
        else:
            with Session(self.engine, expire_on_commit=False) as session:
                try:
                    if lock:
                        session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": lock_id(lock)})
                    yield session
                    session.commit()
                except BaseException:
                    session.rollback()
                    raise

    @contextmanager
    def write_rows(self) -> Iterator[Connection]:
        """`write()` without a lock, for Core statements (no ORM session, about half the cost): a row every call
        writes (the injection record)."""
        self.ensure_ready()
        self._writing()
        if self.is_sqlite:
            with self.sqlite_writer, self.engine.connect() as conn:
                with conn.execution_options(immediate=True).begin():
                    yield conn
        else:
            with self.engine.begin() as conn:
                yield conn

    def run_in_transaction(self, fn, *, locks: list[str] = (), commit: bool = True):
        """Run `fn(session)` in one write transaction holding `locks` (taken in order); with `commit=False`
        everything it did is rolled back (a dry run that counts exactly what a real run would write)."""
        self.ensure_ready()
        self._writing()
        if self.is_sqlite:
            with self.sqlite_writer, self.engine.connect() as conn:
                conn = conn.execution_options(immediate=True)
                with Session(bind=conn, expire_on_commit=False) as session:
                    return self._run(session, fn, [], commit)
        with Session(self.engine, expire_on_commit=False) as session:
            return self._run(session, fn, sorted(set(locks)), commit)

    @staticmethod
    def _run(session: Session, fn, locks: list[str], commit: bool):
        try:
            for lock in locks:
                session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": lock_id(lock)})
            result = fn(session)
            if commit:
                session.commit()
            else:
                session.rollback()
            return result
        except BaseException:
            session.rollback()
            raise

    def flush_buffered(self) -> None:
        """Write the rows this process holds back (see `buffered`)."""
        for flush in self.buffered:
            flush()

    def dispose(self) -> None:
        try:
            self.flush_buffered()
        except Exception:  # noqa: BLE001 - released all the same; the rows are lost, and said to be
            log.exception("rows written behind could not be written before the database was released")
        self.engine.dispose()
