"""The SQL of erasure: every text column of a scope's rows put through a scrub, in one transaction, and the
database's own leftovers (SQLite's free pages and WAL, full-text segments, PostgreSQL's dead tuples) reclaimed."""

from __future__ import annotations

import json
import logging
from typing import Any, Callable

from sqlalchemy import text

from memory_core.policy.actors import current_actor
from memory_core.clock import Clock
from memory_core.scope import Scope
from memory_core.store.db import Database
from memory_core.store.models import FactAuditRow
from memory_core.store.provenance_store import forget_in

log = logging.getLogger(__name__)

Scrub = Callable[[str], "tuple[str, int]"]  # text -> (scrubbed text, passages erased)

# table -> (key columns, plain text columns, JSON columns). Every scoped table that keeps text of memory.
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
    "episode_turns": (("pk",), ("text",), ()),  # the turns that state it are removed first (Eraser._turns)
    "injections": (("pk",), ("query",), ()),
    "agent_items": (("pk",), (), ("value",)),
}
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

    def erase(self, scope: Scope, fact_id: str, scrub: Scrub, reason: str | None) -> dict[str, int]:
        """In one transaction: the fact's own text and its audit snapshots become `[erased]`, every other text
        column of the scope goes through `scrub`, stale embeddings go, and one audit row says it happened.
        Returns {table: rows changed}."""
        counts: dict[str, int] = {}
        where = {"u": scope.user_id, "a": scope.agent_name}
        with self.db.write(lock=f"facts:{scope.key}") as s:
            found = s.execute(text("UPDATE facts SET content = :e WHERE id = :id AND user_id = :u AND agent_name = :a"),
                              {"e": ERASED, "id": fact_id, **where}).rowcount
            counts["facts"] = found or 0
            own = 0
            for pk, old, new in s.execute(text("SELECT pk, old, new FROM fact_audit WHERE fact_id = :id AND "
                                               "user_id = :u AND agent_name = :a"), {"id": fact_id, **where}).all():
                values = [json.loads(v) if v else None for v in (old, new)]
                for value in values:
                    if isinstance(value, dict) and "content" in value:
                        value["content"] = ERASED
                s.execute(text("UPDATE fact_audit SET old = :o, new = :n WHERE pk = :pk"),
                          {"o": json.dumps(values[0]) if values[0] else None,
                           "n": json.dumps(values[1]) if values[1] else None, "pk": pk})
                own += 1
            counts["fact_audit"] = own
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
            owners = [f"f:{fact_id}"] + [f"c:{pk}" for pk in changed_chunks]
            gone = 0
            for owner in owners:
                gone += s.execute(text("DELETE FROM embeddings WHERE owner = :o AND user_id = :u AND agent_name = :a"),
                                  {"o": owner, **where}).rowcount or 0
            counts["embeddings"] = gone
            counts["provenance"] = forget_in(s, scope, fact_id=fact_id)  # no sentence is said to come from it
            s.add(FactAuditRow(fact_id=fact_id, user_id=scope.user_id, agent_name=scope.agent_name, action="erased",
                               old=None, new=None, reason=reason, at=self.clock.now(), actor=current_actor()))
        return {k: v for k, v in counts.items() if v}

    def reclaim(self, tables: list[str]) -> None:
        """Leave no erased text in the database's own files: FTS segments merged, SQLite vacuumed with its WAL
        truncated, PostgreSQL's tables rewritten (VACUUM FULL: dead row versions still hold the old text)."""
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
            for table in tables:
                conn.exec_driver_sql(f"VACUUM FULL {table}")

