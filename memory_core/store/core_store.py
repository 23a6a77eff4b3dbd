"""The SQL of MEMORY.md's versions: every version recorded, numbered per scope."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Iterator

from sqlalchemy import select

from memory_core.clock import Clock, utc
from memory_core.scope import Scope
from memory_core.text.truth import Sources
from memory_core.store.db import Database
from memory_core.store.models import CoreVersionRow
from memory_core.store.provenance_store import CORE, record_in


@dataclass(frozen=True)
class CoreVersion:
    version: int
    content: str
    reason: str
    created_at: datetime
    actor: str | None = None  # who wrote it (None: not said; the found-on-disk ones)


def _version(row: CoreVersionRow) -> CoreVersion:
    return CoreVersion(row.version, row.content, row.reason, utc(row.created_at), row.actor)


def _newest(session, scope: Scope) -> CoreVersion | None:
    row = session.execute(select(CoreVersionRow).where(
        CoreVersionRow.user_id == scope.user_id, CoreVersionRow.agent_name == scope.agent_name,
    ).order_by(CoreVersionRow.version.desc()).limit(1)).scalars().first()
    return _version(row) if row else None


class CoreWrite:
    """One write transaction on a scope's versions, under the scope's lock. `session` is the transaction, for
    a document store that writes its rows in it (DatabaseDocumentStore.read_in / write_in)."""

    def __init__(self, session: Any, scope: Scope, clock: Clock) -> None:
        self.session = session
        self.scope = scope
        self.clock = clock

    def newest(self) -> CoreVersion | None:
        return _newest(self.session, self.scope)

    def add(self, number: int, content: str, reason: str, actor: str | None = None) -> CoreVersion:
        """Record version `number` of MEMORY.md, committed with the transaction."""
        row = CoreVersionRow(user_id=self.scope.user_id, agent_name=self.scope.agent_name, version=number,
                             content=content, reason=reason, created_at=self.clock.now())
        row.actor = actor
        self.session.add(row)
        return CoreVersion(row.version, content, row.reason, utc(row.created_at), row.actor)

    def provenance(self, present: set[str], sources: Sources | None) -> None:
        """MEMORY.md's provenance follows its new text: rows of bullets gone go, `sources` of new ones come."""
        record_in(self.session, self.scope, CORE, present, sources, self.clock.now())


class CoreStore:
    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock

    def newest(self, scope: Scope) -> CoreVersion | None:
        with self.db.read() as s:
            return _newest(s, scope)

    def versions(self, scope: Scope) -> list[CoreVersion]:
        """Every recorded version of the scope, newest first."""
        with self.db.read() as s:
            rows = s.execute(select(CoreVersionRow).where(
                CoreVersionRow.user_id == scope.user_id, CoreVersionRow.agent_name == scope.agent_name,
            ).order_by(CoreVersionRow.version.desc())).scalars().all()
        return [_version(r) for r in rows]

    @contextmanager
    def writing(self, scope: Scope) -> Iterator[CoreWrite]:
        """A write transaction holding the scope's lock (writers of one scope take turns)."""
        with self.db.write(lock=f"core:{scope.key}") as s:
            yield CoreWrite(s, scope, self.clock)
