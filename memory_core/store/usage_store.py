"""The SQL of the usage ledger and of the injection record."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import JSON, cast, delete, func, select, true

from memory_core.clock import utc
from memory_core.scope import Scope
from memory_core.store.db import Database
from memory_core.store.injection_log import InjectionLog
from memory_core.store.models import BudgetReservationRow, InjectionRow, UsageRow

# How many of a scope's latest recorded injections `injection_counts` (the Facts page's "injected") counts: an agent
# that asks for its context on every turn records thousands a day (100,000 of them took 8.2 s to count in Python).
INJECTION_WINDOW = 10_000


@dataclass(frozen=True)
class UsageRecord:
    at: datetime
    user_id: str | None
    agent_name: str | None
    operation: str
    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    actor: str | None


@dataclass(frozen=True)
class UsageTotal:
    """The calls of one day (in Settings.timezone), scope, operation and model, summed."""

    day: str
    user_id: str | None
    agent_name: str | None
    operation: str
    model: str
    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None  # None when none of the calls had a price


@dataclass(frozen=True)
class Injection:
    at: datetime
    actor: str | None
    query: str | None
    tokens: int
    fact_ids: list[str]
    max_tokens: int = 0
    user_id: str = "default"
    agent_name: str = "default"


class UsageStore:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.injection_log = InjectionLog(db)

    def add(self, row: UsageRow) -> None:
        with self.db.write() as s:
            s.add(row)

    def spent(self, scope: Scope, day: str, held_since: datetime | None = None) -> int:
        """LLM tokens (input and output, embeddings excluded) the scope has spent on `day`; with `held_since`,
        also those that calls in flight hold (reserved since then: older ones are of a process that died)."""
        with self.db.read() as s:
            return _spent(s, scope, day, held_since)

    def reserve(self, scope: Scope, day: str, tokens: int, budget: int, at: datetime,
                held_since: datetime) -> tuple[int | None, int]:
        """(reservation id, tokens spent and held before it): `tokens` held against the scope's `budget` of `day`
        while what is spent and held is below it, else (None, spent). One transaction that holds the scope's
        budget lock (PostgreSQL: an advisory lock; SQLite: its one writer), so that concurrent calls, of any
        thread or process, see each other's reservations."""
        with self.db.write(lock=f"budget:{scope.key}:{day}") as s:
            spent = _spent(s, scope, day, held_since)
            if spent >= budget:
                return None, spent
            row = BudgetReservationRow(user_id=scope.user_id, agent_name=scope.agent_name, day=day, tokens=tokens,
                                       at=at)
            s.add(row)
            s.flush()
            return row.pk, spent

    def settle(self, reservation: int | None, row: UsageRow | None) -> None:
        """Replace a reservation by what the call spent (`row`; None: it spent nothing), in one transaction."""
        with self.db.write() as s:
            if reservation is not None:
                s.execute(delete(BudgetReservationRow).where(BudgetReservationRow.pk == reservation))
            if row is not None:
                s.add(row)

    def records(self, *, user_id: str | None = None, agent_name: str | None = None, since: datetime | None = None,
                limit: int = 10_000) -> list[UsageRecord]:
        query = select(UsageRow)
        if user_id is not None:
            query = query.where(UsageRow.user_id == user_id)
        if agent_name is not None:
            query = query.where(UsageRow.agent_name == agent_name)
        if since is not None:
            query = query.where(UsageRow.at >= since)
        query = query.order_by(UsageRow.at.desc(), UsageRow.pk.desc()).limit(limit)
        with self.db.read() as s:
            rows = s.execute(query).scalars().all()
        return [UsageRecord(utc(r.at), r.user_id, r.agent_name, r.operation, r.model, r.input_tokens,
                            r.output_tokens, r.cost_usd, r.actor) for r in rows]

    def totals(self, *, since: datetime | None = None) -> list[UsageTotal]:
        """Every recorded call since `since`, summed by day, scope, operation and model in the database (the records
        themselves are read at most 10,000 at a time: an API embedder records one a search)."""
        keys = (UsageRow.day, UsageRow.user_id, UsageRow.agent_name, UsageRow.operation, UsageRow.model)
        query = select(*keys, func.count(), func.coalesce(func.sum(UsageRow.input_tokens), 0),
                       func.coalesce(func.sum(UsageRow.output_tokens), 0), func.sum(UsageRow.cost_usd)).group_by(*keys)
        if since is not None:
            query = query.where(UsageRow.at >= since)
        with self.db.read() as s:
            rows = s.execute(query.order_by(*keys)).all()
        return [UsageTotal(day, user, agent, operation, model, int(calls), int(given), int(taken),
                           float(cost) if cost is not None else None)
                for day, user, agent, operation, model, calls, given, taken, cost in rows]

    def add_injection(self, scope: Scope, at: datetime, actor: str | None, query: str | None, tokens: int,
                      max_tokens: int, fact_ids: list[str]) -> None:
        """Record an injection: written behind, within a moment (store.injection_log), and before any read of it."""
        self.injection_log.add(scope, at, actor, query, tokens, max_tokens, fact_ids)

    def injections(self, scope: Scope, limit: int = 50) -> list[Injection]:
        self.injection_log.flush()
        with self.db.read() as s:
            rows = s.execute(select(InjectionRow).where(
                InjectionRow.user_id == scope.user_id, InjectionRow.agent_name == scope.agent_name)
                .order_by(InjectionRow.at.desc(), InjectionRow.pk.desc()).limit(limit)).scalars().all()
        return [Injection(utc(r.at), r.actor, r.query, r.tokens, json.loads(r.fact_ids), r.max_tokens, r.user_id,
                          r.agent_name) for r in rows]

    def injection_counts(self, scope: Scope, window: int = INJECTION_WINDOW) -> dict[str, tuple[int, datetime]]:
        """{fact id: (how often injected, when last)} in the scope's latest `window` recorded injections, counted by
        the database (the JSON lists unnested there)."""
        self.injection_log.flush()
        latest = select(InjectionRow.fact_ids, InjectionRow.at).where(
            InjectionRow.user_id == scope.user_id, InjectionRow.agent_name == scope.agent_name,
        ).order_by(InjectionRow.at.desc(), InjectionRow.pk.desc()).limit(window).subquery()
        if self.db.is_sqlite:
            each = func.json_each(latest.c.fact_ids).table_valued("value")
        else:
            each = func.json_array_elements_text(cast(latest.c.fact_ids, JSON)).table_valued("value")
        query = select(each.c.value, func.count(), func.max(latest.c.at)).select_from(latest).join(
            each, true()).group_by(each.c.value)
        with self.db.read() as s:
            return {str(fact_id): (int(n), utc(at)) for fact_id, n, at in s.execute(query)}


def _spent(s, scope: Scope, day: str, held_since: datetime | None) -> int:
    total = s.execute(select(func.sum(UsageRow.input_tokens + UsageRow.output_tokens)).where(
        UsageRow.user_id == scope.user_id, UsageRow.agent_name == scope.agent_name, UsageRow.day == day,
        UsageRow.operation != "embed")).scalar()
    held = 0
    if held_since is not None:
        held = s.execute(select(func.sum(BudgetReservationRow.tokens)).where(
            BudgetReservationRow.user_id == scope.user_id, BudgetReservationRow.agent_name == scope.agent_name,
            BudgetReservationRow.day == day, BudgetReservationRow.at >= held_since)).scalar()
    return int(total or 0) + int(held or 0)
