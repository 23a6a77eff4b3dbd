"""The SQL of plans (boulder state): one JSON row per plan, one active plan per scope."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable

from sqlalchemy import select

from memory_core.clock import utc
from memory_core.scope import Scope
from memory_core.store.db import Database
from memory_core.store.models import PlanRow


@dataclass(frozen=True)
class PlanStep:
    text: str
    done: bool = False


@dataclass(frozen=True)
class Plan:
    id: str
    name: str
    steps: list[PlanStep]
    session_ids: list[str]
    status: str
    user_id: str
    agent_name: str
    created_at: datetime
    updated_at: datetime
    version: int = field(default=1, compare=False)

    @property
    def unchecked(self) -> list[tuple[int, str]]:
        return [(i, s.text) for i, s in enumerate(self.steps) if not s.done]


def _to_plan(row: PlanRow) -> Plan:
    return Plan(id=row.id, name=row.name, steps=[PlanStep(s["text"], bool(s["done"])) for s in json.loads(row.steps)],
                session_ids=list(json.loads(row.session_ids)), status=row.status, user_id=row.user_id,
                agent_name=row.agent_name, created_at=utc(row.created_at), updated_at=utc(row.updated_at),
                version=row.version)


def _in_scope(scope: Scope) -> tuple:
    return PlanRow.user_id == scope.user_id, PlanRow.agent_name == scope.agent_name


class PlanStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def start(self, scope: Scope, name: str, steps: list[str], session_id: str, now: datetime) -> Plan:
        """Finish the scope's active plans and add a new active one, in one transaction."""
        with self.db.write(lock=f"plans:{scope.key}") as s:
            for row in s.execute(select(PlanRow).where(*_in_scope(scope), PlanRow.status == "active")).scalars():
                row.status, row.updated_at, row.version = "finished", now, row.version + 1
                s.add(row)
            row = PlanRow(id="plan_" + secrets.token_hex(4), user_id=scope.user_id, agent_name=scope.agent_name,
                          name=name, steps=json.dumps([{"text": t, "done": False} for t in steps]),
                          session_ids=json.dumps([session_id]), status="active", created_at=now, updated_at=now)
            s.add(row)
            s.flush()
            return _to_plan(row)

    def get(self, plan_id: str) -> Plan | None:
        with self.db.read() as s:
            row = s.get(PlanRow, plan_id)
        return _to_plan(row) if row else None

    def active(self, scope: Scope) -> Plan | None:
        """The scope's newest active plan."""
        with self.db.read() as s:
            row = s.execute(select(PlanRow).where(*_in_scope(scope), PlanRow.status == "active")
                            .order_by(PlanRow.created_at.desc())).scalars().first()
        return _to_plan(row) if row else None

    def list(self, scope: Scope) -> list[Plan]:
        """The scope's plans, newest first."""
        with self.db.read() as s:
            rows = s.execute(select(PlanRow).where(*_in_scope(scope))
                             .order_by(PlanRow.created_at.desc())).scalars().all()
        return [_to_plan(r) for r in rows]

    def change(self, plan_id: str, edit: Callable[[Plan], Plan], now: datetime) -> Plan:
        """Write `edit(plan)`'s steps, sessions and status, under the plan's lock; KeyError when there is no
        such plan. Whatever `edit` raises rolls the transaction back."""
        with self.db.write(lock=f"plan:{plan_id}") as s:
            row = s.get(PlanRow, plan_id)
            if row is None:
                raise KeyError(plan_id)
            plan = edit(_to_plan(row))
            row.steps = json.dumps([{"text": step.text, "done": step.done} for step in plan.steps])
            row.session_ids = json.dumps(plan.session_ids)
            row.status = plan.status
            row.updated_at, row.version = now, row.version + 1
            s.add(row)
            s.flush()
            return _to_plan(row)
