"""Grants, API tokens, sandboxes and the access audit log, in SQL."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, select, update

from memory_core.clock import Clock
from memory_core.scope import Scope
from memory_core.store.db import Database
from memory_core.store.models import AccessAuditRow, ApiTokenRow, GrantRow, SandboxRow


class AccessStore:
    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock

    @staticmethod
    def _log(session, actor: str | None, action: str, detail: dict[str, Any], at: datetime) -> None:
        session.add(AccessAuditRow(at=at, actor=actor, action=action, detail=json.dumps(detail, sort_keys=True)))

    # -- grants -------------------------------------------------------------------------------------

    def put_grant(self, grant_id: str, subject: str, role: str, scope: str, actor: str | None) -> GrantRow:
        """Give `role` to `subject` on `scope`; an existing grant of the same subject and scope changes role."""
        now = self.clock.now()
        with self.db.write(lock="access") as s:
            row = s.execute(select(GrantRow).where(GrantRow.subject == subject, GrantRow.scope == scope)).scalars().first()
            if row is None:
                row = GrantRow(id=grant_id, subject=subject, role=role, scope=scope, created_at=now, created_by=actor)
                self._log(s, actor, "grant", {"grant": grant_id, "subject": subject, "role": role, "scope": scope}, now)
            else:
                self._log(s, actor, "grant_changed", {"grant": row.id, "subject": subject, "scope": scope,
                                                      "from": row.role, "to": role}, now)
                row.role = role
            s.add(row)
            s.flush()
            return row

    def delete_grant(self, grant_id: str, actor: str | None) -> GrantRow:
        now = self.clock.now()
        with self.db.write(lock="access") as s:
            row = s.execute(select(GrantRow).where(GrantRow.id == grant_id)).scalars().first()
            if row is None:
                raise KeyError(grant_id)
            self._log(s, actor, "revoke", {"grant": row.id, "subject": row.subject, "role": row.role,
                                           "scope": row.scope}, now)
            s.delete(row)
            return row

    def grants(self) -> list[GrantRow]:
        with self.db.read() as s:
            return list(s.execute(select(GrantRow).order_by(GrantRow.scope, GrantRow.subject)).scalars().all())

    def grants_for(self, subjects: list[str]) -> list[GrantRow]:
        with self.db.read() as s:
            return list(s.execute(select(GrantRow).where(GrantRow.subject.in_(subjects))).scalars().all())

    # -- tokens -------------------------------------------------------------------------------------

    def add_token(self, row: ApiTokenRow, actor: str | None) -> ApiTokenRow:
        with self.db.write(lock="access") as s:
            if s.execute(select(ApiTokenRow.id).where(ApiTokenRow.name == row.name,
                                                      ApiTokenRow.revoked.is_(False))).first():
                raise ValueError(f"an active token is already named {row.name!r}")
            s.add(row)
            self._log(s, actor, "token_created", {"token": row.id, "name": row.name, "scope": f"{row.user_id}/"
                                                  f"{row.agent_name}", "role": row.role}, row.created_at)
            s.flush()
            return row

    def token_by_hash(self, secret_hash: str) -> ApiTokenRow | None:
        with self.db.read() as s:
            return s.execute(select(ApiTokenRow).where(ApiTokenRow.secret_hash == secret_hash)).scalars().first()

    def touch_token(self, token_id: str, at: datetime) -> None:
        with self.db.write() as s:
            s.execute(update(ApiTokenRow).where(ApiTokenRow.id == token_id).values(last_used_at=at))

    def revoke_token(self, token_id: str, actor: str | None) -> ApiTokenRow:
        now = self.clock.now()
        with self.db.write(lock="access") as s:
            row = s.execute(select(ApiTokenRow).where(ApiTokenRow.id == token_id)).scalars().first()
            if row is None:
                raise KeyError(token_id)
            if not row.revoked:
                row.revoked = True
                s.add(row)
                self._log(s, actor, "token_revoked", {"token": row.id, "name": row.name}, now)
            s.flush()
            return row

    def tokens(self) -> list[ApiTokenRow]:
        with self.db.read() as s:
            return list(s.execute(select(ApiTokenRow).order_by(ApiTokenRow.created_at.desc(),
                                                               ApiTokenRow.pk.desc())).scalars().all())

    # -- sandboxes and the log ----------------------------------------------------------------------

    def add_sandbox(self, scope: Scope, key_hash: str, expires_at: datetime, *, max_live: int,
                    max_per_minute: int) -> str | None:
        """Record a new sandbox, unless `max_live` sandboxes are open or `max_per_minute` were opened in the
        last minute: then nothing is written and the limit reached is returned ("live" or "per_minute")."""
        now = self.clock.now()
        with self.db.write(lock="access") as s:  # counted and written in one transaction: no two pass at once
            live = s.execute(select(func.count()).select_from(SandboxRow).where(SandboxRow.expires_at > now)).scalar()
            if live >= max_live:
                return "live"
            recent = s.execute(select(func.count()).select_from(SandboxRow)
                               .where(SandboxRow.created_at > now - timedelta(minutes=1))).scalar()
            if recent >= max_per_minute:
                return "per_minute"
            s.add(SandboxRow(user_id=scope.user_id, agent_name=scope.agent_name, key_hash=key_hash, created_at=now,
                             expires_at=expires_at))
            self._log(s, None, "sandbox_created", {"scope": scope.key}, now)
        return None

    def sandbox_by_key(self, key_hash: str, now: datetime) -> Scope | None:
        with self.db.read() as s:
            row = s.execute(select(SandboxRow).where(SandboxRow.key_hash == key_hash,
                                                     SandboxRow.expires_at > now)).scalars().first()
        return Scope(row.user_id, row.agent_name) if row else None

    def expired_sandboxes(self, now: datetime) -> list[Scope]:
        with self.db.read() as s:
            rows = s.execute(select(SandboxRow.user_id, SandboxRow.agent_name).where(SandboxRow.expires_at < now)).all()
        return [Scope(u, a) for u, a in rows]

    def is_sandbox(self, scope: Scope) -> bool:
        with self.db.read() as s:
            return s.get(SandboxRow, (scope.user_id, scope.agent_name)) is not None

    def remove_sandbox(self, scope: Scope) -> None:
        """Forget a sandbox, its line in the access log too: a public demo's visitors leave no rows behind."""
        with self.db.write(lock="access") as s:
            s.execute(delete(SandboxRow).where(SandboxRow.user_id == scope.user_id,
                                               SandboxRow.agent_name == scope.agent_name))
            s.execute(delete(AccessAuditRow).where(AccessAuditRow.action == "sandbox_created",
                                                   AccessAuditRow.detail == json.dumps({"scope": scope.key},
                                                                                       sort_keys=True)))

    def log(self, actor: str | None, action: str, detail: dict[str, Any]) -> None:
        with self.db.write() as s:
            self._log(s, actor, action, detail, self.clock.now())

    def entries(self, limit: int = 200) -> list[AccessAuditRow]:
        with self.db.read() as s:
            return list(s.execute(select(AccessAuditRow).order_by(AccessAuditRow.at.desc(), AccessAuditRow.pk.desc())
                                  .limit(limit)).scalars().all())
