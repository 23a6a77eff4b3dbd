"""MCP's OAuth in SQL: registered clients, and the hashed codes and tokens of people signed in through it."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, select

from memory_core.clock import Clock, utc
from memory_core.store.db import Database
from memory_core.store.models import OAuthClientRow, OAuthTokenRow


class OAuthStore:
    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock

    def save_client(self, client_id: str, info: str) -> None:
        with self.db.write(lock="oauth") as s:
            s.merge(OAuthClientRow(client_id=client_id, info=info, created_at=self.clock.now()))

    def client(self, client_id: str) -> str | None:
        with self.db.read() as s:
            row = s.get(OAuthClientRow, client_id)
        return row.info if row else None

    def clients(self) -> int:
        with self.db.read() as s:
            return len(s.execute(select(OAuthClientRow.client_id)).all())

    def add(self, token_hash: str, kind: str, family: str, client_id: str, email: str | None, data: str,
            expires_at: datetime) -> None:
        """Store a code or token; expired ones of every kind go on the way."""
        now = self.clock.now()
        with self.db.write(lock="oauth") as s:
            s.execute(delete(OAuthTokenRow).where(OAuthTokenRow.expires_at < now))
            s.add(OAuthTokenRow(token_hash=token_hash, kind=kind, family=family, client_id=client_id, email=email,
                                data=data, expires_at=expires_at, created_at=now))

    def get(self, token_hash: str, kind: str) -> OAuthTokenRow | None:
        """The live code or token of this kind with this hash, or None (unknown, revoked or expired)."""
        with self.db.read() as s:
            row = s.get(OAuthTokenRow, token_hash)
        if row is None or row.kind != kind or utc(row.expires_at) <= self.clock.now():
            return None
        return row

    def take(self, token_hash: str, kind: str) -> OAuthTokenRow | None:
        """`get`, and the row is gone: a code or a sign-in in progress is used once."""
        with self.db.write(lock="oauth") as s:
            row = s.get(OAuthTokenRow, token_hash)
            if row is None or row.kind != kind:
                return None
            s.delete(row)
        return row if utc(row.expires_at) > self.clock.now() else None

    def remove(self, token_hash: str) -> None:
        with self.db.write(lock="oauth") as s:
            s.execute(delete(OAuthTokenRow).where(OAuthTokenRow.token_hash == token_hash))

    def revoke_family(self, family: str) -> int:
        """Every code and token of one sign-in; returns how many there were."""
        with self.db.write(lock="oauth") as s:
            return s.execute(delete(OAuthTokenRow).where(OAuthTokenRow.family == family)).rowcount or 0

    def revoke_email(self, email: str) -> int:
        with self.db.write(lock="oauth") as s:
            return s.execute(delete(OAuthTokenRow).where(OAuthTokenRow.email == email)).rowcount or 0
