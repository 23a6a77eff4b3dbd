"""Boulder state: work-in-progress plans that survive sessions, stored as JSON in `plans`."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import select

from .clock import utc
from .errors import InvalidIdError
from .scope import Scope, make_scope
from .store.models import PlanRow
from .validation import check_memory_text, check_text

if TYPE_CHECKING:
    from .clock import Clock
    from .store.db import Database


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


class Plans:
    """`memory.plans`."""

    def __init__(self, db: "Database", clock: "Clock", max_chars: int = 200_000) -> None:
        self.db = db
        self.clock = clock
        self.max_chars = max_chars

    def start(self, name: str, steps: list[str], *, session_id: str, user_id: str = "default",
              agent_name: str = "default") -> Plan:
        """Start a plan; an active plan of the scope, if any, is finished first (one active plan per scope)."""
        scope = make_scope(user_id, agent_name)
        name = check_memory_text(name, "name", 1000, allow_empty=False)
        if not isinstance(steps, list) or not steps or len(steps) > 1000:
            raise ValueError("steps must be a non-empty list of at most 1,000 non-empty strings")
        steps = [check_memory_text(step, f"steps[{i}]", allow_empty=False) for i, step in enumerate(steps)]
        if len(name) + sum(len(s) for s in steps) > self.max_chars:
            raise ValueError(f"the plan is over {self.max_chars:,} characters (max_document_chars)")
        check_text(session_id, "session_id", 256, allow_empty=False)
        now = self.clock.now()
        with self.db.write(lock=f"plans:{scope.key}") as s:
            for row in s.execute(select(PlanRow).where(PlanRow.user_id == scope.user_id,
                                                       PlanRow.agent_name == scope.agent_name,
                                                       PlanRow.status == "active")).scalars():
                row.status, row.updated_at, row.version = "finished", now, row.version + 1
                s.add(row)
            row = PlanRow(id="plan_" + secrets.token_hex(4), user_id=scope.user_id, agent_name=scope.agent_name,
                          name=name.strip(), steps=json.dumps([{"text": t.strip(), "done": False} for t in steps]),
                          session_ids=json.dumps([session_id]), status="active", created_at=now, updated_at=now)
            s.add(row)
            s.flush()
            return _to_plan(row)

    def get(self, plan_id: str) -> Plan:
        if not isinstance(plan_id, str):
            raise InvalidIdError(f"a plan id is a string like 'plan_0a1b2c3d'; got {type(plan_id).__name__}")
        with self.db.read() as s:
            row = s.get(PlanRow, plan_id)
        if row is None:
            raise KeyError(plan_id)
        return _to_plan(row)

    def active(self, *, user_id: str = "default", agent_name: str = "default") -> Plan | None:
        scope = make_scope(user_id, agent_name)
        with self.db.read() as s:
            row = s.execute(select(PlanRow).where(PlanRow.user_id == scope.user_id, PlanRow.agent_name == scope.agent_name,
                                                  PlanRow.status == "active").order_by(PlanRow.created_at.desc())).scalars().first()
        return _to_plan(row) if row else None

    def list(self, *, user_id: str = "default", agent_name: str = "default") -> list[Plan]:
        scope = make_scope(user_id, agent_name)
        with self.db.read() as s:
            rows = s.execute(select(PlanRow).where(PlanRow.user_id == scope.user_id, PlanRow.agent_name == scope.agent_name)
                             .order_by(PlanRow.created_at.desc())).scalars().all()
        return [_to_plan(r) for r in rows]

    def _change(self, plan_id: str, change) -> Plan:
        if not isinstance(plan_id, str):
            raise InvalidIdError(f"a plan id is a string like 'plan_0a1b2c3d'; got {type(plan_id).__name__}")
        with self.db.write(lock=f"plan:{plan_id}") as s:
            row = s.get(PlanRow, plan_id)
            if row is None:
                raise KeyError(plan_id)
            change(row)
            row.updated_at, row.version = self.clock.now(), row.version + 1
            s.add(row)
            s.flush()
            return _to_plan(row)

    def check(self, plan_id: str, step_index: int) -> Plan:
        def mark(row: PlanRow) -> None:
            steps = json.loads(row.steps)
            if isinstance(step_index, bool) or not isinstance(step_index, int) or not 0 <= step_index < len(steps):
                raise ValueError(f"step_index must be between 0 and {len(steps) - 1}; got {step_index!r}")
            steps[step_index]["done"] = True
            row.steps = json.dumps(steps)
        return self._change(plan_id, mark)

    def finish(self, plan_id: str) -> Plan:
        def done(row: PlanRow) -> None:
            row.status = "finished"
        return self._change(plan_id, done)

    def record_session(self, plan_id: str, session_id: str) -> Plan:
        def record(row: PlanRow) -> None:
            ids = json.loads(row.session_ids)
            if session_id not in ids:
                ids.append(session_id)
            row.session_ids = json.dumps(ids)
        return self._change(plan_id, record)


def plan_text(plan: Plan) -> str:
    lines = [f"Active plan: {plan.name}"] + [f"- [ ] {text}" for _, text in plan.unchecked]
    return "\n".join(lines)


__all__ = ["Plan", "PlanStep", "Plans", "plan_text", "Scope"]
