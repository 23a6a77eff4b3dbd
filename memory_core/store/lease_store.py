"""The SQL of named, expiring leases: one holder at a time across every process."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import update
from sqlalchemy.exc import IntegrityError

from memory_core.store.db import Database
from memory_core.store.models import LeaseRow


class LeaseStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def take(self, name: str, holder: str, until: datetime, now: datetime) -> bool:
        """Give the lease `name` to `holder` until `until` (UTC) if nobody holds it or it expired before `now`."""
        try:
            with self.db.write(lock=f"lease:{name}") as s:
                row = s.get(LeaseRow, name)
                if row is None:
                    s.add(LeaseRow(name=name, holder=holder, expires_at=until))
                    return True
                result = s.execute(update(LeaseRow).where(LeaseRow.name == name, LeaseRow.expires_at < now)
                                   .values(holder=holder, expires_at=until)
                                   .execution_options(synchronize_session=False))
                return result.rowcount == 1
        except IntegrityError:  # another process created the row between our read and our insert
            return False
