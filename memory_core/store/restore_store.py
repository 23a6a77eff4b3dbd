"""The restore journal, in SQL: the documents a bundle import has committed to write.

A bundle's rows are written in one transaction; its documents (files, or rows of another transaction) only
after it. The journal entries are written in that first transaction, so that a process killed between the
commit and the last document leaves a list of what is missing, which the next open finishes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, func, select

from memory_core.scope import Scope
from memory_core.store.db import Database
from memory_core.store.models import RestoreJournalRow


@dataclass(frozen=True)
class JournalEntry:
    pk: int
    scope: Scope
    path: str
    content: str
    before_hash: str | None  # sha256 of the document's text when the import read it (None: there was none)


def journal_documents(session, documents: list[tuple[Scope, str, str, str | None]], now: datetime) -> None:
    """Add (scope, path, text, before_hash) entries inside the caller's transaction."""
    for scope, path, content, before_hash in documents:
        session.add(RestoreJournalRow(user_id=scope.user_id, agent_name=scope.agent_name, path=path, content=content,
                                      before_hash=before_hash, created_at=now))


def journal_entries(db: Database, limit: int = 200) -> list[JournalEntry]:
    """The oldest entries still to write, at most `limit`."""
    with db.read() as s:
        rows = s.execute(select(RestoreJournalRow).order_by(RestoreJournalRow.pk).limit(limit)).scalars().all()
    return [JournalEntry(r.pk, Scope(r.user_id, r.agent_name), r.path, r.content, r.before_hash) for r in rows]


def journal_done(db: Database, pks: list[int]) -> None:
    if pks:
        with db.write(lock="restore-journal") as s:
            s.execute(delete(RestoreJournalRow).where(RestoreJournalRow.pk.in_(pks)))


def journal_size(db: Database) -> int:
    """How many documents interrupted imports have still to write."""
    with db.read() as s:
        return s.execute(select(func.count()).select_from(RestoreJournalRow)).scalar() or 0
