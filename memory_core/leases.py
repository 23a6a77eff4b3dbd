"""Named, expiring leases in the database: one holder at a time across every process."""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import update
from sqlalchemy.exc import IntegrityError

from .store.db import Database
from .store.models import LeaseRow


class Leases:
    def __init__(self, db: Database, clock, holder: str) -> None:
        self.db = db
        self.clock = clock
        self.holder = holder

    def acquire(self, name: str, until: datetime) -> bool:
        """Take the lease `name` until `until`; False when it is held (by anyone, this holder included) and has not expired."""
        now = self.clock.now()
        until = until.astimezone(timezone.utc)  # SQLite keeps no zone: store everything in UTC
        try:
            with self.db.write(lock=f"lease:{name}") as s:
                row = s.get(LeaseRow, name)
                if row is None:
                    s.add(LeaseRow(name=name, holder=self.holder, expires_at=until))
                    return True
                result = s.execute(update(LeaseRow).where(LeaseRow.name == name, LeaseRow.expires_at < now)
                                   .values(holder=self.holder, expires_at=until)
                                   .execution_options(synchronize_session=False))
                return result.rowcount == 1
        except IntegrityError:
            return False
