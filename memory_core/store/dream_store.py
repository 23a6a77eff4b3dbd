"""The SQL of Deep Dream's bookkeeping: the last run's state per scope, every run, and the days dreams read."""

from __future__ import annotations

from datetime import datetime
from typing import Mapping

from sqlalchemy import func, select

from memory_core.scope import Scope
from memory_core.store.db import Database
from memory_core.store.models import DreamRunRow, DreamStateRow, DreamtDayRow


def _mark_read(session, scope: Scope, read: Mapping[str, str], now: datetime) -> None:
    """Record each day of `read` ({YYYY-MM-DD: hash of the log's text}) as dreamt at `now`."""
    for day, content_hash in read.items():
        row = session.get(DreamtDayRow, (scope.user_id, scope.agent_name, day))
        if row is None:
            row = DreamtDayRow(user_id=scope.user_id, agent_name=scope.agent_name, day=day,
                               content_hash=content_hash, dreamt_at=now)
        row.content_hash, row.dreamt_at = content_hash, now
        session.add(row)


class DreamStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def dreamt_days(self, scope: Scope) -> dict[str, str]:
        """{YYYY-MM-DD: hash of the log's text when a dream last read it} of the scope."""
        with self.db.read() as s:
            return dict(s.execute(select(DreamtDayRow.day, DreamtDayRow.content_hash).where(
                DreamtDayRow.user_id == scope.user_id, DreamtDayRow.agent_name == scope.agent_name)).all())

    def state(self, scope: Scope) -> DreamStateRow | None:
        """The scope's last run: status, reason, when, the hash of what it read, the last day consolidated."""
        with self.db.read() as s:
            return s.get(DreamStateRow, (scope.user_id, scope.agent_name))

    def tokens_since(self, scope: Scope, start: datetime) -> int:
        """Tokens (in and out) the scope's dreams have used since `start`."""
        with self.db.read() as s:
            total = s.execute(select(func.sum(DreamRunRow.input_tokens + DreamRunRow.output_tokens)).where(
                DreamRunRow.user_id == scope.user_id, DreamRunRow.agent_name == scope.agent_name,
                DreamRunRow.at >= start)).scalar()
        return int(total or 0)

    def record_read(self, scope: Scope, read: Mapping[str, str], now: datetime) -> None:
        """Record the days `read` ({YYYY-MM-DD: text hash}) as dreamt."""
        with self.db.write(lock=f"dream:{scope.key}") as s:
            _mark_read(s, scope, read, now)

    def record_run(self, scope: Scope, *, status: str, reason: str | None, input_tokens: int, output_tokens: int,
                   now: datetime, digest: str | None = None, through: str | None = None,
                   read: Mapping[str, str] | None = None) -> None:
        """Record a run and the scope's state after it, in one transaction. With a `digest` (the logs were
        consolidated): the hash of what was read, the last day consolidated (`through`, kept if later than
        before) and the days `read`."""
        with self.db.write(lock=f"dream:{scope.key}") as s:
            state = s.get(DreamStateRow, (scope.user_id, scope.agent_name)) or DreamStateRow(
                user_id=scope.user_id, agent_name=scope.agent_name)
            state.last_status, state.last_reason, state.last_run_at = status, reason, now
            if digest is not None:
                state.last_hash = digest
                if through and (not state.consolidated_through or through > state.consolidated_through):
                    state.consolidated_through = through
                _mark_read(s, scope, read or {}, now)
            s.add(state)
            s.add(DreamRunRow(user_id=scope.user_id, agent_name=scope.agent_name, status=status, reason=reason,
                              input_tokens=input_tokens, output_tokens=output_tokens, at=now))
