"""Removing a whole scope from the database (an expired sandbox): every table that holds scoped rows."""

from __future__ import annotations

from sqlalchemy import text

from ..scope import Scope
from .db import Database

# Every table with user_id/agent_name columns. fact_counts goes last: the facts' delete triggers update it.
SCOPED_TABLES = ("embeddings", "chunks", "indexed_docs", "token_stats", "facts", "fact_audit", "scope_summaries",
                 "documents", "core_versions", "dream_state", "dream_runs", "pending_updates", "plans",
                 "restore_journal", "sandboxes",
                 "imported_items", "dreamt_days", "fact_counts")


def purge_scope(db: Database, scope: Scope) -> dict[str, int]:
    """Delete every row of `scope`, in one transaction; return how many rows went per table."""
    removed: dict[str, int] = {}
    with db.write(lock=f"facts:{scope.key}") as s:
        for table in SCOPED_TABLES:
            result = s.execute(text(f"DELETE FROM {table} WHERE user_id = :u AND agent_name = :a"),
                               {"u": scope.user_id, "a": scope.agent_name})
            if result.rowcount:
                removed[table] = result.rowcount
    return removed
