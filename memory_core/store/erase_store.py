"""The SQL of erasure: every text column of a scope's rows put through a scrub, in one transaction, and the
database's own leftovers (SQLite's free pages and WAL, full-text segments, PostgreSQL's dead tuples) reclaimed."""

from __future__ import annotations

import json
import logging
import time
from typing import Any, Callable

from sqlalchemy import text

from memory_core.store.actors import current_actor
from memory_core.clock import Clock
from memory_core.scope import Scope
from memory_core.store.db import Database
from memory_core.store.models import FactAuditRow
from memory_core.store.provenance_store import forget_in

log = logging.getLogger(__name__)
HORIZON_WAIT_SECONDS = 30.0  # how long reclaiming waits for older transactions of other sessions to end

Scrub = Callable[[str], "tuple[str, int]"]  # text -> (scrubbed text, passages erased)

# table -> (key columns, plain text columns, JSON columns). Every scoped table that keeps text of memory: a new
# one (episodes, say: `"episodes": (("pk",), ("text",), ())`) is one entry here, and erase plans, rewrites and
# reclaims it like the others.
TEXT_COLUMNS: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "facts": (("pk",), ("invalid_reason",), ()),
    "fact_audit": (("pk",), ("reason",), ("old", "new")),
    "scope_summaries": (("section",), ("summary",), ()),
    "documents": (("path",), ("content",), ()),
    "core_versions": (("pk",), ("content", "reason"), ()),
    "dream_state": ((), ("last_reason",), ()),
    "dream_runs": (("pk",), ("reason",), ()),
    "pending_updates": (("pk",), ("last_error",), ("messages", "options")),
    "plans": (("id",), ("name",), ("steps",)),
    "chunks": (("pk",), ("text",), ()),
    "episode_turns": (("pk",), ("text",), ()),  # a turn that states it reads `[erased]`, like a log sentence
    "injections": (("pk",), ("query",), ()),
    "agent_items": (("pk",), (), ("value",)),
    "dream_proposals": (("id",), ("text",), ("notes",)),
}
# Tables that held erased text without being rewritten row by row (their rows are rewritten or deleted by id):
# PostgreSQL rewrites them too, since their dead row versions keep the old text.
ALSO_RECLAIMED = ("facts", "fact_audit", "embeddings", "provenance", "erase_journal")
ERASED = "[erased]"


def _scrub_json(value: Any, scrub: Scrub) -> tuple[Any, int]:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, list):
        pairs = [_scrub_json(v, scrub) for v in value]
        return [p[0] for p in pairs], sum(p[1] for p in pairs)
    if isinstance(value, dict):
        out, n = {}, 0
        for key, v in value.items():
            out[key], k = _scrub_json(v, scrub)
            n += k
        return out, n
    return value, 0


def _strings(raw: str | None) -> list[str]:
    """The strings of a JSON column's value (the raw text when it is not JSON)."""
    if not raw:
        return []
    try:
        value = json.loads(raw)
    except ValueError:
        return [raw]
    found: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, str):
            found.append(v)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)

    walk(value)
    return found


def _scrubbed_json(raw: str | None, scrub: Scrub) -> tuple[str | None, int]:
    if not raw:
        return raw, 0
    try:
        value = json.loads(raw)
    except ValueError:
        return scrub(raw)
    new, n = _scrub_json(value, scrub)
    return (json.dumps(new) if n else raw), n


class EraseStore:
    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock

    def survey(self, scope: Scope, visit: Callable[[str, str], None]) -> None:
        """Every text of the scope's rows, each as visit(where, text): "table:key" (a JSON column's strings one by
        one), agent items' keys as "agent_items:key"."""
        where = {"u": scope.user_id, "a": scope.agent_name}
        self.db.flush_buffered()  # rows this process holds back (the injection record) are surveyed too
        with self.db.read() as s:
            for table, (keys, plain, as_json) in TEXT_COLUMNS.items():
                columns = list(keys) + list(plain) + list(as_json)
                for row in s.execute(text(f"SELECT {', '.join(columns)} FROM {table} WHERE user_id = :u AND "
                                          f"agent_name = :a"), where).all():
                    values = dict(zip(columns, row))
                    place = f"{table}:{'/'.join(str(values[k]) for k in keys)}" if keys else table
                    for column in plain:
                        if isinstance(values[column], str):
                            visit(place, values[column])
                    for column in as_json:
                        for piece in _strings(values[column]):
                            visit(place, piece)
            for path, key in s.execute(text("SELECT path, item_key FROM agent_items WHERE user_id = :u AND "
                                            "agent_name = :a"), where).all():
                visit(f"agent_items:{'/'.join(filter(None, [path, key]))}", key)

    def erase(self, scope: Scope, fact_ids: list[str], scrub: Scrub, reason: str | None) -> dict[str, int]:
        """In one transaction: each fact's own text and its audit snapshots become `[erased]`, every other text
        column of the scope goes through `scrub`, the agent items of those facts (or whose key `scrub` changes)
        go, stale embeddings go, and one audit row per fact says it happened (once, however often this runs).
        Returns {table: rows changed}."""
        counts: dict[str, int] = {}
        where = {"u": scope.user_id, "a": scope.agent_name}
        self.db.flush_buffered()  # and scrubbed
        with self.db.write(lock=f"facts:{scope.key}") as s:
            for fact_id in fact_ids:
                self._own(s, scope, fact_id, counts, reason)
            changed_chunks: list[int] = []
            for table, (keys, plain, as_json) in TEXT_COLUMNS.items():
                columns = list(keys) + list(plain) + list(as_json)
                rows = s.execute(text(f"SELECT {', '.join(columns)} FROM {table} WHERE user_id = :u AND "
                                      f"agent_name = :a"), where).all()
                changed = 0
                for row in rows:
                    values = dict(zip(columns, row))
                    updates: dict[str, Any] = {}
                    for column in plain:
                        if isinstance(values[column], str):
                            new, n = scrub(values[column])
                            if n:
                                updates[column] = new
                    for column in as_json:
                        new, n = _scrubbed_json(values[column], scrub)
                        if n:
                            updates[column] = new
                    if not updates:
                        continue
                    sets = ", ".join(f"{c} = :set_{c}" for c in updates)
                    match = " AND ".join(["user_id = :u", "agent_name = :a"] + [f"{k} = :key_{k}" for k in keys])
                    s.execute(text(f"UPDATE {table} SET {sets} WHERE {match}"),
                              {**where, **{f"set_{c}": v for c, v in updates.items()},
                               **{f"key_{k}": values[k] for k in keys}})
                    changed += 1
                    if table == "chunks":
                        changed_chunks.append(values["pk"])
                if changed:
                    counts[table] = counts.get(table, 0) + changed
            gone_items = [pk for pk, key, fact in s.execute(text(
                "SELECT pk, item_key, fact_id FROM agent_items WHERE user_id = :u AND agent_name = :a"), where).all()
                if fact in fact_ids or scrub(key)[1]]
            for pk in gone_items:
                s.execute(text("DELETE FROM agent_items WHERE pk = :pk"), {"pk": pk})
            counts["agent_items"] = counts.get("agent_items", 0) + len(gone_items)
            owners = [f"f:{fact_id}" for fact_id in fact_ids] + [f"c:{pk}" for pk in changed_chunks]
            gone = 0
            for owner in owners:
                gone += s.execute(text("DELETE FROM embeddings WHERE owner = :o AND user_id = :u AND agent_name = :a"),
                                  {"o": owner, **where}).rowcount or 0
            counts["embeddings"] = gone
        return {k: v for k, v in counts.items() if v}

    def _own(self, s, scope: Scope, fact_id: str, counts: dict[str, int], reason: str | None) -> None:
        """One fact's own rows: its text, its audit snapshots and its provenance; the audit row of the erasure."""
        where = {"u": scope.user_id, "a": scope.agent_name, "id": fact_id}
        found = s.execute(text("UPDATE facts SET content = :e WHERE id = :id AND user_id = :u AND agent_name = :a "
                               "AND content <> :e"), {"e": ERASED, **where}).rowcount
        counts["facts"] = counts.get("facts", 0) + (found or 0)
        own = 0
        for pk, old, new in s.execute(text("SELECT pk, old, new FROM fact_audit WHERE fact_id = :id AND "
                                           "user_id = :u AND agent_name = :a"), where).all():
            values = [json.loads(v) if v else None for v in (old, new)]
            if not any(isinstance(v, dict) and v.get("content", ERASED) != ERASED for v in values):
                continue
            for value in values:
                if isinstance(value, dict) and "content" in value:
                    value["content"] = ERASED
            s.execute(text("UPDATE fact_audit SET old = :o, new = :n WHERE pk = :pk"),
                      {"o": json.dumps(values[0]) if values[0] else None,
                       "n": json.dumps(values[1]) if values[1] else None, "pk": pk})
            own += 1
        counts["fact_audit"] = counts.get("fact_audit", 0) + own
        counts["provenance"] = counts.get("provenance", 0) + forget_in(s, scope, fact_id=fact_id)
        recorded = s.execute(text("SELECT 1 FROM fact_audit WHERE fact_id = :id AND user_id = :u AND "
                                  "agent_name = :a AND action = 'erased'"), where).first()
        if recorded is None:
            s.add(FactAuditRow(fact_id=fact_id, user_id=scope.user_id, agent_name=scope.agent_name, action="erased",
                               old=None, new=None, reason=reason, at=self.clock.now(), actor=current_actor()))

    def reclaim(self, tables: list[str] | None = None) -> None:
        """Leave no erased text in the database's own files: FTS segments merged, SQLite vacuumed with its WAL
        truncated, PostgreSQL's tables rewritten (VACUUM FULL: dead row versions still hold the old text), by
        default every table that may have held it, whether or not this erase changed a row of it."""
        tables = list(TEXT_COLUMNS) + list(ALSO_RECLAIMED) if tables is None else tables
        if self.db.is_sqlite:
            with self.db.write() as s:
                for index in ("facts_fts", "chunks_fts", "facts_words", "chunks_words"):
                    exists = s.execute(text("SELECT 1 FROM sqlite_master WHERE name = :n"), {"n": index}).first()
                    if exists:
                        s.execute(text(f"INSERT INTO {index}({index}) VALUES ('optimize')"))
            with self.db.engine.connect() as conn:
                raw = conn.connection.driver_connection
                with self.db.sqlite_writer:
                    raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                    raw.execute("VACUUM")
                    raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            return
        with self.db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            _wait_for_older_snapshots(conn)
            for table in tables:
                conn.exec_driver_sql(f"VACUUM FULL {table}")


def _wait_for_older_snapshots(conn, timeout: float = HORIZON_WAIT_SECONDS) -> None:
    """Wait (at most `timeout`) until no other session of the database still sees rows as they were before now
    (an older snapshot, or a transaction begun before and still open): VACUUM keeps a dead row version that
    such a session may read, and with it the erased text."""
    horizon = int(conn.exec_driver_sql("SELECT txid_current()").scalar()) % 2 ** 32
    deadline = time.monotonic() + timeout
    while True:
        older = conn.execute(text(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
            "AND (backend_xmin::text::bigint < :h OR backend_xid::text::bigint < :h)"), {"h": horizon}).scalar()
        if not older:
            return
        if time.monotonic() > deadline:
            log.warning("%d older transaction(s) still open: their snapshots may keep erased text in dead row "
                        "versions until the next VACUUM", older)
            return
        time.sleep(0.05)

