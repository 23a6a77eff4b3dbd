"""Removing a whole scope from the database (an expired sandbox): every table that holds scoped rows."""

from __future__ import annotations

from sqlalchemy import text

from memory_core.scope import Scope
from memory_core.store.db import Database

# Every table with user_id/agent_name columns but api_tokens (who may reach a scope is access's, revoked there).
# fact_counts and scope_versions go last: the delete triggers of the tables before them write them.
SCOPED_TABLES = ("embeddings", "chunks", "indexed_docs", "token_stats", "facts", "fact_audit", "scope_summaries",
                 "documents", "core_versions", "dream_state", "dream_runs", "pending_updates", "plans",
                 "restore_journal", "sandboxes",
                 "imported_items", "dreamt_days", "agent_items", "dream_proposals", "usage", "injections",
                 "provenance", "episode_turns", "erase_journal", "erase_tombstones", "budget_reservations",
                 "fact_counts", "scope_versions")


def reclaim_space(db: Database) -> None:
    """Give the pages of deleted rows back to the file system (SQLite; PostgreSQL's autovacuum does that).

    The first time, VACUUM rewrites the file with auto_vacuum=INCREMENTAL (new files start that way); after
    that an incremental vacuum frees just the empty pages. Outside any transaction (VACUUM refuses one);
    other writers wait through busy_timeout. The WAL is checkpointed so the main file shrinks now.
    """
    if not db.is_sqlite:
        return
    db.ensure_ready()
    raw = db.engine.raw_connection()  # autocommit: the engine's connections leave BEGIN to SQLAlchemy
    try:
        cursor = raw.cursor()
        if cursor.execute("PRAGMA auto_vacuum").fetchone()[0] != 2:
            cursor.execute("PRAGMA auto_vacuum=INCREMENTAL")
            cursor.execute("VACUUM")
        else:
            cursor.executescript("PRAGMA incremental_vacuum")  # steps it to the end (execute() frees one page)
        cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        cursor.close()
    finally:
        raw.close()


def purge_scope(db: Database, scope: Scope) -> dict[str, int]:
    """Delete every row of `scope`, in one transaction; return how many rows went per table."""
    removed: dict[str, int] = {}
    db.flush_buffered()  # rows held back (the injection record) go too
    with db.write(lock=f"facts:{scope.key}") as s:
        for table in SCOPED_TABLES:
            result = s.execute(text(f"DELETE FROM {table} WHERE user_id = :u AND agent_name = :a"),
                               {"u": scope.user_id, "a": scope.agent_name})
            if result.rowcount:
                removed[table] = result.rowcount
    return removed
