"""The SQL of the update queue: one `PendingUpdateRow` per (thread_id, user_id, agent_name) key.

The policy (debounce, retries, backoff, budget waiting, lanes) lives in `memory_core.runtime.queue`; this module only
reads and writes rows. Every state change is conditional on the row's generation, so a newer context that
replaced a key while it was processed is never overwritten or deleted by the older run.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable

from sqlalchemy import delete, func, select, update

from memory_core.scope import Scope
from memory_core.store.db import Database
from memory_core.store.models import PendingUpdateRow

# (pk, generation, thread_id, user_id, agent_name) of a pending key
KeyRow = tuple[int, int, str, str, str]


class QueueStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def enqueue(self, thread_id: str, scope: Scope, *, messages: str, options: str | None, due: datetime,
                now: datetime, actor: str | None, max_depth: int,
                also: Callable[[Any], object] | None = None) -> int | None:
        """Insert the key, or replace its pending context (a new generation, attempts reset). A new key is
        refused when its scope already holds `max_depth` unfinished keys: then nothing is written and the
        depth is returned; None when the context was queued. `also(session)` writes in the same transaction."""
        with self.db.write(lock=f"queue:{scope.key}:{thread_id}") as s:
            row = s.execute(select(PendingUpdateRow).where(
                PendingUpdateRow.thread_id == thread_id, PendingUpdateRow.user_id == scope.user_id,
                PendingUpdateRow.agent_name == scope.agent_name)).scalars().first()
            if row is None:
                depth = s.execute(select(func.count()).select_from(PendingUpdateRow).where(
                    PendingUpdateRow.user_id == scope.user_id, PendingUpdateRow.agent_name == scope.agent_name,
                    PendingUpdateRow.status != "failed")).scalar()
                if depth >= max_depth:
                    return depth
                s.add(PendingUpdateRow(thread_id=thread_id, user_id=scope.user_id, agent_name=scope.agent_name,
                                       messages=messages, status="pending", due_at=due, enqueued_at=now,
                                       actor=actor, options=options))
            else:
                row.messages, row.due_at, row.enqueued_at = messages, due, now
                row.status, row.attempts, row.last_error = "pending", 0, None
                row.actor, row.options = actor, options
                row.generation += 1
                s.add(row)
            if also is not None:
                also(s)
        return None

    def recover_stale(self, cutoff: datetime) -> None:
        """Put back to pending the keys claimed before `cutoff`."""
        with self.db.write(lock="queue:recover") as s:
            s.execute(update(PendingUpdateRow).where(
                PendingUpdateRow.status == "in_flight", PendingUpdateRow.claimed_at < cutoff,
            ).values(status="pending", claimed_by=None, claimed_at=None))

    def claim(self, pk: int, generation: int, worker_id: str, now: datetime) -> bool:
        """Mark a pending row of this generation in flight for `worker_id`; False when another took it first."""
        with self.db.write() as s:
            result = s.execute(update(PendingUpdateRow).where(
                PendingUpdateRow.pk == pk, PendingUpdateRow.status == "pending",
                PendingUpdateRow.generation == generation,
            ).values(status="in_flight", claimed_by=worker_id, claimed_at=now))
            return result.rowcount == 1

    def due(self, now: datetime | None = None, scope: Scope | None = None,
            limit: int | None = None) -> list[KeyRow]:
        """The pending keys (due by `now` when given; of one scope when given), the longest waiting first."""
        query = select(PendingUpdateRow.pk, PendingUpdateRow.generation, PendingUpdateRow.thread_id,
                       PendingUpdateRow.user_id, PendingUpdateRow.agent_name).where(PendingUpdateRow.status == "pending")
        if scope is not None:
            query = query.where(PendingUpdateRow.user_id == scope.user_id, PendingUpdateRow.agent_name == scope.agent_name)
        if now is not None:
            query = query.where(PendingUpdateRow.due_at <= now)
        query = query.order_by(PendingUpdateRow.due_at, PendingUpdateRow.pk)
        if limit is not None:
            query = query.limit(limit)
        with self.db.read() as s:
            return [tuple(r) for r in s.execute(query).all()]

    def get(self, pk: int) -> PendingUpdateRow | None:
        with self.db.read() as s:
            return s.get(PendingUpdateRow, pk)

    def done(self, pk: int, generation: int) -> None:
        """Delete a processed row, unless a newer context (a new generation) replaced it meanwhile."""
        with self.db.write() as s:
            s.execute(delete(PendingUpdateRow).where(PendingUpdateRow.pk == pk,
                                                     PendingUpdateRow.generation == generation))

    def postpone(self, pk: int, generation: int, error: str, due: datetime) -> None:
        """Put a claimed row back to pending until `due`, no attempt counted."""
        with self.db.write() as s:
            s.execute(update(PendingUpdateRow).where(
                PendingUpdateRow.pk == pk, PendingUpdateRow.generation == generation,
            ).values(status="pending", last_error=error, claimed_by=None, claimed_at=None, due_at=due))

    def fail(self, pk: int, generation: int, *, attempts: int, error: str, due: datetime, final: bool) -> None:
        """Record a failed attempt: pending again until `due`, or kept as failed when `final`."""
        with self.db.write() as s:
            s.execute(update(PendingUpdateRow).where(
                PendingUpdateRow.pk == pk, PendingUpdateRow.generation == generation,
            ).values(status="failed" if final else "pending", attempts=attempts, last_error=error,
                     due_at=due, claimed_by=None, claimed_at=None))

    def due_scopes(self, now: datetime) -> list[Scope]:
        """The scopes with a key due by `now`, the longest waiting first."""
        first = func.min(PendingUpdateRow.due_at)
        query = (select(PendingUpdateRow.user_id, PendingUpdateRow.agent_name, first)
                 .where(PendingUpdateRow.status == "pending", PendingUpdateRow.due_at <= now)
                 .group_by(PendingUpdateRow.user_id, PendingUpdateRow.agent_name).order_by(first))
        with self.db.read() as s:
            return [Scope(u, a) for u, a, _ in s.execute(query)]

    @staticmethod
    def _where_scope(query, user_id: str | None, agent_name: str | None):
        if user_id is not None:
            query = query.where(PendingUpdateRow.user_id == user_id)
        if agent_name is not None:
            query = query.where(PendingUpdateRow.agent_name == agent_name)
        return query

    def unfinished(self, user_id: str | None = None, agent_name: str | None = None) -> int:
        """How many keys are pending or in flight (of one user / agent, when named)."""
        query = select(func.count()).select_from(PendingUpdateRow).where(
            PendingUpdateRow.status.in_(("pending", "in_flight")))
        with self.db.read() as s:
            return s.execute(self._where_scope(query, user_id, agent_name)).scalar()

    def items(self, status: str | None = None, user_id: str | None = None,
              agent_name: str | None = None) -> list[PendingUpdateRow]:
        """The rows (of one status, user, agent when named), the earliest due first."""
        query = select(PendingUpdateRow)
        if status:
            query = query.where(PendingUpdateRow.status == status)
        query = self._where_scope(query, user_id, agent_name)
        with self.db.read() as s:
            return list(s.execute(query.order_by(PendingUpdateRow.due_at)).scalars().all())

    def requeue(self, now: datetime, thread_id: str | None = None, user_id: str | None = None,
                agent_name: str | None = None) -> int:
        """Put failed rows (all, or those named) back to pending, due at `now`, attempts reset; how many."""
        query = update(PendingUpdateRow).where(PendingUpdateRow.status == "failed")
        if thread_id is not None:
            query = query.where(PendingUpdateRow.thread_id == thread_id)
        query = self._where_scope(query, user_id, agent_name)
        with self.db.write() as s:
            return s.execute(query.values(status="pending", attempts=0, due_at=now)).rowcount

    def release(self, worker_id: str) -> int:
        """Put the rows in flight for `worker_id` back to pending; how many."""
        with self.db.write() as s:
            return s.execute(update(PendingUpdateRow).where(
                PendingUpdateRow.status == "in_flight", PendingUpdateRow.claimed_by == worker_id,
            ).values(status="pending", claimed_by=None, claimed_at=None)).rowcount
