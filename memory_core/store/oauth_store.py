"""MCP's OAuth in SQL: registered clients, and the hashed codes and tokens of people signed in through it."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, func, select, update

from memory_core.clock import Clock, utc
from memory_core.store.db import Database
from memory_core.store.models import OAuthClientRow, OAuthTokenRow


class OAuthStore:
    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock

    def save_client(self, client_id: str, info: str, *, max_clients: int | None = None,
                    unused_before: datetime | None = None) -> bool:
        """Register a client; clients never used that were registered before `unused_before` go first. False
        (nothing saved) when `max_clients` are registered still."""
        with self.db.write(lock="oauth") as s:
            if unused_before is not None:
                s.execute(delete(OAuthClientRow).where(OAuthClientRow.used_at.is_(None),
                                                       OAuthClientRow.created_at < unused_before))
            if max_clients is not None and (s.execute(select(func.count()).select_from(OAuthClientRow)).scalar()
                                            or 0) >= max_clients:
                return False
            s.merge(OAuthClientRow(client_id=client_id, info=info, created_at=self.clock.now()))
        return True

    def client(self, client_id: str, unused_before: datetime | None = None) -> str | None:
        """A registered client's record; None when unknown, or never used and registered before `unused_before`."""
        with self.db.read() as s:
            row = s.get(OAuthClientRow, client_id)
        if row is None or (unused_before is not None and row.used_at is None and utc(row.created_at) < unused_before):
            return None
        return row.info

    def mark_used(self, client_id: str) -> None:
        """Note that the client got tokens (the first time only)."""
        with self.db.write() as s:
            s.execute(update(OAuthClientRow).where(OAuthClientRow.client_id == client_id,
                                                   OAuthClientRow.used_at.is_(None)).values(used_at=self.clock.now()))

    def clients(self) -> int:
        with self.db.read() as s:
            return int(s.execute(select(func.count()).select_from(OAuthClientRow)).scalar() or 0)

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
        """`get`, and the row is gone: a sign-in in progress is used once."""
        with self.db.write(lock="oauth") as s:
            row = s.get(OAuthTokenRow, token_hash)
            if row is None or row.kind != kind:
                return None
            s.delete(row)
        return row if utc(row.expires_at) > self.clock.now() else None

    def spend(self, token_hash: str, kind: str) -> OAuthTokenRow | None:
        """Use a live code or refresh token once: its row the first time; None after that, and then the
        tokens of its family (those issued from it) are revoked in the same transaction. The spent row stays
        (as `<kind>_spent`) until it would have expired, so that a replay is known."""
        spent = f"{kind}_spent"
        with self.db.write(lock="oauth") as s:
            row = s.get(OAuthTokenRow, token_hash)
            if row is None or row.kind not in (kind, spent) or utc(row.expires_at) <= self.clock.now():
                return None
            if row.kind == spent:
                _revoke_issued(s, row)
                return None
            row.kind = spent
            s.add(row)
            s.flush()
            s.expunge(row)
        row.kind = kind
        return row

    def replayed(self, token_hash: str, kind: str) -> OAuthTokenRow | None:
        """The spent code or refresh token with this hash, whose family is then revoked (a replay: OAuth 2.1
        and RFC 6749 4.1.2 revoke what it issued); None when it is not one."""
        with self.db.write(lock="oauth") as s:
            row = s.get(OAuthTokenRow, token_hash)
            if row is None or row.kind != f"{kind}_spent":
                return None
            _revoke_issued(s, row)
            s.expunge(row)
        return row

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


def _revoke_issued(s, row: OAuthTokenRow) -> None:
    """Every code and token of the row's family but the row itself (kept to know further replays)."""
    s.execute(delete(OAuthTokenRow).where(OAuthTokenRow.family == row.family,
                                          OAuthTokenRow.token_hash != row.token_hash))
