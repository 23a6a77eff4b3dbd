"""Boulder state: work-in-progress plans that survive sessions, stored as JSON in `plans`."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Callable

from memory_core.errors import InvalidIdError
from memory_core.scope import Scope, make_scope
from memory_core.store.plan_store import Plan, PlanStep, PlanStore
from memory_core.text.validation import check_memory_text, check_text

if TYPE_CHECKING:
    from memory_core.clock import Clock
    from memory_core.store.db import Database


class Plans:
    """`memory.plans`."""

    def __init__(self, db: "Database", clock: "Clock", max_chars: int = 200_000) -> None:
        self.db = db
        self.clock = clock
        self.max_chars = max_chars
        self.store = PlanStore(db)

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
        return self.store.start(scope, name.strip(), [t.strip() for t in steps], session_id, self.clock.now())

    def get(self, plan_id: str) -> Plan:
        if not isinstance(plan_id, str):
            raise InvalidIdError(f"a plan id is a string like 'plan_0a1b2c3d'; got {type(plan_id).__name__}")
        plan = self.store.get(plan_id)
        if plan is None:
            raise KeyError(plan_id)
        return plan

    def active(self, *, user_id: str = "default", agent_name: str = "default") -> Plan | None:
        scope = make_scope(user_id, agent_name)
        return self.store.active(scope)

    def list(self, *, user_id: str = "default", agent_name: str = "default") -> list[Plan]:
        scope = make_scope(user_id, agent_name)
        return self.store.list(scope)

    def _change(self, plan_id: str, edit: Callable[[Plan], Plan]) -> Plan:
        if not isinstance(plan_id, str):
            raise InvalidIdError(f"a plan id is a string like 'plan_0a1b2c3d'; got {type(plan_id).__name__}")
        return self.store.change(plan_id, edit, self.clock.now())

    def check(self, plan_id: str, step_index: int) -> Plan:
        def mark(plan: Plan) -> Plan:
            steps = plan.steps
            if isinstance(step_index, bool) or not isinstance(step_index, int) or not 0 <= step_index < len(steps):
                raise ValueError(f"step_index must be between 0 and {len(steps) - 1}; got {step_index!r}")
            return replace(plan, steps=[replace(step, done=True) if i == step_index else step
                                        for i, step in enumerate(steps)])
        return self._change(plan_id, mark)

    def finish(self, plan_id: str) -> Plan:
        return self._change(plan_id, lambda plan: replace(plan, status="finished"))

    def record_session(self, plan_id: str, session_id: str) -> Plan:
        def record(plan: Plan) -> Plan:
            ids = plan.session_ids
            return replace(plan, session_ids=ids if session_id in ids else [*ids, session_id])
        return self._change(plan_id, record)


def plan_text(plan: Plan) -> str:
    lines = [f"Active plan: {plan.name}"] + [f"- [ ] {text}" for _, text in plan.unchecked]
    return "\n".join(lines)


__all__ = ["Plan", "PlanStep", "Plans", "plan_text", "Scope"]
