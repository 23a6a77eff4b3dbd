"""The SQL of erase's journal (an erase under way: fact ids and passage keys, never text) and of its tombstones
(keyed hashes of what was erased, and when), with the database's own key for those hashes."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError

from memory_core.clock import Clock, utc
from memory_core.scope import Scope
from memory_core.store.db import Database
from memory_core.store.models import EraseJournalRow, EraseSecretRow, EraseTombstoneRow

SECRET = "tombstones"


@dataclass(frozen=True)
class JournalEntry:
    pk: int
    scope: Scope
    fact_ids: tuple[str, ...]
    passage_keys: frozenset[str]
    reason: str | None
    actor: str | None
    created_at: datetime


@dataclass(frozen=True)
class Tombstone:
    statement_key: str
    marks: dict  # erase_match.Marks.to_json(), each root a keyed hash
    erased_at: datetime


class TombstoneStore:
    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock
        self._secret: bytes | None = None

    def secret(self) -> bytes:
        """The database's key for the keyed hashes (made once, by whichever process needs it first)."""
        if self._secret is None:
            with self.db.read() as s:
                row = s.get(EraseSecretRow, SECRET)
            if row is None:
                try:
                    with self.db.write(lock="erase:secret") as s:
                        if s.get(EraseSecretRow, SECRET) is None:
                            s.add(EraseSecretRow(name=SECRET, secret=secrets.token_hex(32)))
                except IntegrityError:
                    pass  # another process made it at the same moment: read theirs
                with self.db.read() as s:
                    row = s.get(EraseSecretRow, SECRET)
            self._secret = bytes.fromhex(row.secret)
        return self._secret

    def begin(self, scope: Scope, fact_ids: list[str], passage_keys: set[str],
              tombstones: list[tuple[str, dict]], reason: str | None, actor: str | None) -> JournalEntry:
        """In one transaction, before anything is erased: the journal entry and the tombstones."""
        now = self.clock.now()
        with self.db.write(lock=f"facts:{scope.key}") as s:
            row = EraseJournalRow(user_id=scope.user_id, agent_name=scope.agent_name, fact_ids=json.dumps(fact_ids),
                                  passage_keys=json.dumps(sorted(passage_keys)), reason=reason, actor=actor,
                                  created_at=now)
            s.add(row)
            for key, marks in tombstones:
                s.add(EraseTombstoneRow(user_id=scope.user_id, agent_name=scope.agent_name, statement_key=key,
                                        marks=json.dumps(marks), erased_at=now))
            s.flush()
            return _entry(row)

    def pending(self, scope: Scope | None = None) -> list[JournalEntry]:
        query = select(EraseJournalRow).order_by(EraseJournalRow.pk)
        if scope is not None:
            query = query.where(EraseJournalRow.user_id == scope.user_id,
                                EraseJournalRow.agent_name == scope.agent_name)
        with self.db.read() as s:
            return [_entry(row) for row in s.execute(query).scalars().all()]

    def done(self, pk: int) -> None:
        with self.db.write() as s:
            s.execute(delete(EraseJournalRow).where(EraseJournalRow.pk == pk))

    def of(self, entry: JournalEntry) -> list[Tombstone]:
        """The tombstones written with a journal entry (in its transaction, at its time)."""
        return [t for t in self.since(entry.scope, None) if t.erased_at == entry.created_at]

    def since(self, scope: Scope, after: datetime | None) -> list[Tombstone]:
        """The scope's tombstones made after `after` (all of them for None)."""
        query = select(EraseTombstoneRow).where(EraseTombstoneRow.user_id == scope.user_id,
                                                EraseTombstoneRow.agent_name == scope.agent_name)
        if after is not None:
            query = query.where(EraseTombstoneRow.erased_at > after)
        with self.db.read() as s:
            rows = s.execute(query).scalars().all()
        return [Tombstone(r.statement_key, json.loads(r.marks), utc(r.erased_at)) for r in rows]


def _entry(row: EraseJournalRow) -> JournalEntry:
    return JournalEntry(row.pk, Scope(row.user_id, row.agent_name), tuple(json.loads(row.fact_ids)),
                        frozenset(json.loads(row.passage_keys)), row.reason, row.actor, utc(row.created_at))
