"""Facts by source, for search's neighbouring turns (see memory_core.search.neighbours)."""

from __future__ import annotations

from sqlalchemy import select

from memory_core.scope import Scope
from memory_core.store.db import Database
from memory_core.store.models import FactRow


def _valid(scope: Scope) -> tuple:
    return FactRow.user_id == scope.user_id, FactRow.agent_name == scope.agent_name, FactRow.invalid_at.is_(None)


def facts_with_sources(db: Database, scope: Scope, sources: list[str], limit: int = 1_000) -> list[tuple[str, str, str]]:
    """(fact id, source, content) of the scope's valid facts whose source is one of `sources`, at most
    `limit` of them (a source that thousands of facts share is no turn, and must not make search slow)."""
    if not sources:
        return []
    with db.read() as s:
        rows = s.execute(select(FactRow.id, FactRow.source, FactRow.content).where(
            *_valid(scope), FactRow.source.in_(sources)).limit(limit)).all()
    return [(fact_id, source, content) for fact_id, source, content in rows]
