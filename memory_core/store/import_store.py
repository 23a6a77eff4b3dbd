"""The import ledger: which items of other tools' exports a scope already has."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable

from sqlalchemy import select

from memory_core.clock import Clock
from memory_core.scope import Scope
from memory_core.store.db import Database
from memory_core.store.models import ImportedItemRow


class ImportLedger:
    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock

    def known(self, scope: Scope, keys: list[str]) -> dict[str, str]:
        """{source_key: content_hash} of those of `keys` already imported into `scope`."""
        found: dict[str, str] = {}
        with self.db.read() as s:
            for i in range(0, len(keys), 500):
                part = keys[i:i + 500]
                found.update(s.execute(select(ImportedItemRow.source_key, ImportedItemRow.content_hash).where(
                    ImportedItemRow.user_id == scope.user_id, ImportedItemRow.agent_name == scope.agent_name,
                    ImportedItemRow.source_key.in_(part))).all())
        return found

    def record(self, scope: Scope, key: str, content_hash: str) -> None:
        self.record_many(scope, {key: content_hash})

    def record_many(self, scope: Scope, items: dict[str, str]) -> None:
        """Remember {source_key: content_hash} as imported into `scope`, in one transaction."""
        if not items:
            return
        with self.db.write(lock=f"imports:{scope.key}") as s:
            self.record_in(s, scope, items)

    def record_in(self, session, scope: Scope, items: dict[str, str]) -> None:
        """`record_many` inside the caller's transaction (the queued row of a conversation and its ledger
        entry commit together: a kill between them can leave neither trailing the other)."""
        record_imported(session, scope, items, self.clock.now())

    def recorder(self, scope: Scope, items: dict[str, str]) -> Callable[[Any], None]:
        """`record_in` as a write for another store's transaction to run (`UpdateQueue.add(also=...)`), so that
        the caller never holds the session."""
        return lambda session: self.record_in(session, scope, items)


def record_imported(session, scope: Scope, items: dict[str, str], now: datetime) -> None:
    """Remember {source_key: content_hash} as imported into `scope`, in the session's transaction."""
    for key, content_hash in items.items():
        row = session.get(ImportedItemRow, (scope.user_id, scope.agent_name, key))
        if row is None:
            session.add(ImportedItemRow(user_id=scope.user_id, agent_name=scope.agent_name, source_key=key,
                                        content_hash=content_hash, imported_at=now))
        else:
            row.content_hash, row.imported_at = content_hash, now
            session.add(row)
