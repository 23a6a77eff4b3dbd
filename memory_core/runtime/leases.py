"""Named, expiring leases in the database: one holder at a time across every process."""

from __future__ import annotations

from datetime import datetime, timezone

from memory_core.store.db import Database
from memory_core.store.lease_store import LeaseStore


class Leases:
    def __init__(self, db: Database, clock, holder: str) -> None:
        self.db = db
        self.clock = clock
        self.holder = holder
        self.store = LeaseStore(db)

    def acquire(self, name: str, until: datetime) -> bool:
        """Take the lease `name` until `until`; False when it is held (by anyone, this holder included) and has not expired."""
        now = self.clock.now()
        until = until.astimezone(timezone.utc)  # SQLite keeps no zone: store everything in UTC
        return self.store.take(name, self.holder, until, now)
