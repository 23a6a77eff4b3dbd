"""The parts of a view: its facts, daily logs, queue, plans and import ledger, each bound to the view's scope and role.

Another scope's fact or plan id is unknown here (`KeyError`), exactly like a made-up one; a write the view's role
does not allow raises `PermissionError` before anything changes."""

from __future__ import annotations

from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Callable, ContextManager

from memory_core.facts.api import validate_fact_id

if TYPE_CHECKING:
    from memory_core.facts.api import AuditEntry, Fact, Facts, Revision
    from memory_core.context.plans import Plan, Plans
    from memory_core.runtime.queue import QueueItem, UpdateQueue
    from memory_core.scope import Scope
    from memory_core.store.import_store import ImportLedger
    from memory_core.tiers.daily import DailyTier

# A view's `writing(what)`: PermissionError when its role may not change memory, else records its actor.
Writing = Callable[[str], ContextManager[None]]


class _Bound:
    """A part bound to a view: its scope, and its `writing` that refuses what the view's role may not do and
    records its actor."""

    def __init__(self, scope: "Scope", writing: Writing) -> None:
        self._scope = scope
        self._writing = writing
        self._kw = {"user_id": scope.user_id, "agent_name": scope.agent_name}


class ScopedFacts(_Bound):
    def __init__(self, scope: "Scope", writing: Writing, facts: "Facts") -> None:
        super().__init__(scope, writing)
        self._facts = facts

    def get(self, fact_id: str) -> "Fact":
        fact = self._facts.get(validate_fact_id(fact_id))
        if fact.scope != self._scope:
            raise KeyError(fact_id)  # another scope's id is as unknown as a made-up one
        return fact

    def add(self, content: str, category: str, confidence: float, *, source: str | None = None) -> "Fact | None":
        return self.add_with_reason(content, category, confidence, source=source)[0]

    def add_with_reason(self, content: str, category: str, confidence: float, *,
                        source: str | None = None) -> tuple["Fact | None", str | None]:
        with self._writing("add facts"):
            return self._facts.add_with_reason(content, category, confidence, source=source, **self._kw)

    def list(self, *, category: str | None = None, include_invalid: bool = False,
             as_of: datetime | None = None, include_held: bool = False, limit: int | None = None) -> list["Fact"]:
        return self._facts.list(category=category, include_invalid=include_invalid, as_of=as_of,
                                include_held=include_held, limit=limit, **self._kw)

    def duplicate_of(self, content: str) -> "Fact | None":
        """The valid fact that `add` skips `content` for as a duplicate (the same normalised content), or None."""
        return self._facts.duplicate_of(content, **self._kw)

    def count(self) -> int:
        return self._facts.count(**self._kw)

    def update(self, fact_id: str, *, content: str | None = None, category: str | None = None,
               confidence: float | None = None) -> "Fact":
        self.get(fact_id)
        with self._writing("edit facts"):
            return self._facts.update(fact_id, content=content, category=category, confidence=confidence)

    def revise(self, fact_id: str, *, content: str | None = None, category: str | None = None,
               confidence: float | None = None, reason: str | None = None,
               made_on: datetime | None = None) -> "Revision":
        """Edit a fact by the one rule of `Facts.revise` (a new statement supersedes; category or confidence
        alone change it in place; an edit made on an older version of the fact is refused)."""
        self.get(fact_id)
        with self._writing("edit facts"):
            return self._facts.revise(fact_id, content=content, category=category, confidence=confidence,
                                      reason=reason, made_on=made_on)

    def delete(self, fact_id: str) -> None:
        self.get(fact_id)
        with self._writing("delete facts"):
            self._facts.delete(fact_id)

    def supersede(self, fact_id: str, content: str, *, category: str | None = None, confidence: float | None = None,
                  reason: str | None = None) -> "Fact":
        self.get(fact_id)
        with self._writing("supersede facts"):
            return self._facts.supersede(fact_id, content, category=category, confidence=confidence, reason=reason)

    def invalidate(self, fact_id: str, *, reason: str | None = None) -> "Fact":
        self.get(fact_id)
        with self._writing("invalidate facts"):
            return self._facts.invalidate(fact_id, reason=reason)

    def erase_plan(self, fact_id: str) -> Any:
        self.get(fact_id)
        return self._facts.erase_plan(fact_id, **self._kw)

    def erase(self, fact_id: str, *, reason: str | None = None, also: Any = ()) -> dict[str, int]:
        self.get(fact_id)
        if isinstance(also, str):
            raise ValueError("also is a list of fact ids, not one id")
        also = list(also)
        for other in also:
            self.get(other)
        with self._writing("erase facts"):
            return self._facts.erase(fact_id, reason=reason, also=also, **self._kw)

    def merge(self, keep_id: str, drop_id: str) -> "Fact":
        self.get(keep_id)
        self.get(drop_id)
        with self._writing("merge facts"):
            return self._facts.merge(keep_id, drop_id)

    def held(self) -> list["Fact"]:
        """The scope's statements held for review (see `Facts.held`)."""
        return self._facts.held(**self._kw)

    def release(self, fact_id: str) -> "Fact":
        """Release a held statement: it becomes an ordinary fact (an editor's right)."""
        self.get(fact_id)
        with self._writing("release held facts"):
            return self._facts.release(fact_id, **self._kw)

    def hold_instructions(self) -> list["Fact"]:
        """Hold the valid facts that instruct the agent, stored before they were held on the way in."""
        with self._writing("hold facts for review"):
            return self._facts.hold_instructions(**self._kw)

    def near_duplicates(self, *, threshold: float = 0.9) -> list[tuple["Fact", "Fact", float]]:
        return self._facts.near_duplicates(threshold=threshold, **self._kw)

    def history(self, fact_id: str | None = None, *, limit: int = 500) -> list["AuditEntry"]:
        if fact_id is not None:
            entries = self._facts.history(validate_fact_id(fact_id), limit=limit)
            # A deleted fact has no row left to check: its audit entries say which scope it was in.
            return [e for e in entries if (e.user_id, e.agent_name) == tuple(self._scope)]
        return self._facts.history(limit=limit, **self._kw)


class ScopedDaily(_Bound):
    def __init__(self, scope: "Scope", writing: Writing, daily: "DailyTier") -> None:
        super().__init__(scope, writing)
        self._daily = daily

    def append(self, text: str, *, title: str = "Trimmed Context", when: datetime | None = None) -> str:
        with self._writing("write daily logs"):
            return self._daily.append(text, title=title, when=when, **self._kw)

    def read(self, day: date) -> str | None:
        return self._daily.read(day, **self._kw)

    def days(self) -> list[date]:
        return self._daily.days(**self._kw)


class ScopedQueue(_Bound):
    def __init__(self, scope: "Scope", writing: Writing, queue: "UpdateQueue") -> None:
        super().__init__(scope, writing)
        self._queue = queue

    def add(self, messages: list[dict[str, str]], *, thread_id: str, options: dict[str, Any] | None = None,
            also: Callable[[Any], object] | None = None) -> None:
        """`also(session)` writes more rows in the queued row's transaction (see UpdateQueue.add)."""
        with self._writing("queue updates"):
            self._queue.add(messages, thread_id=thread_id, options=options, also=also, **self._kw)

    def add_nowait(self, messages: list[dict[str, str]], *, thread_id: str) -> None:
        with self._writing("queue updates"):
            self._queue.add_nowait(messages, thread_id=thread_id, **self._kw)

    def pending(self) -> int:
        return self._queue.pending(**self._kw)

    def flush(self, *, timeout: float | None = None) -> int:
        """Process the scope's pending updates now, in this thread (each as the actor who queued it); how many
        were applied (see UpdateQueue.flush)."""
        with self._writing("process queued updates"):
            return self._queue.flush(timeout=timeout, **self._kw)

    def items(self, status: str | None = None) -> list["QueueItem"]:
        return self._queue.items(status, **self._kw)

    def failed(self) -> list["QueueItem"]:
        return self._queue.failed(**self._kw)

    def retry(self, thread_id: str | None = None) -> int:
        with self._writing("retry updates"):
            return self._queue.retry(thread_id, **self._kw)


class ScopedPlans(_Bound):
    def __init__(self, scope: "Scope", writing: Writing, plans: "Plans") -> None:
        super().__init__(scope, writing)
        self._plans = plans

    def get(self, plan_id: str) -> "Plan":
        if not isinstance(plan_id, str):
            raise KeyError(plan_id)
        plan = self._plans.get(plan_id)
        if (plan.user_id, plan.agent_name) != tuple(self._scope):
            raise KeyError(plan_id)
        return plan

    def start(self, name: str, steps: list[str], *, session_id: str) -> "Plan":
        with self._writing("start plans"):
            return self._plans.start(name, steps, session_id=session_id, **self._kw)

    def active(self) -> "Plan | None":
        return self._plans.active(**self._kw)

    def list(self) -> list["Plan"]:
        return self._plans.list(**self._kw)

    def check(self, plan_id: str, step_index: int) -> "Plan":
        self.get(plan_id)
        with self._writing("check plan steps"):
            return self._plans.check(plan_id, step_index)

    def finish(self, plan_id: str) -> "Plan":
        self.get(plan_id)
        with self._writing("finish plans"):
            return self._plans.finish(plan_id)


class ScopedImports(_Bound):
    """The import ledger of the view's scope: which items of other tools' exports it already has."""

    def __init__(self, scope: "Scope", writing: Writing, ledger: "ImportLedger") -> None:
        super().__init__(scope, writing)
        self._ledger = ledger

    def known(self, keys: list[str]) -> dict[str, str]:
        """{source_key: content_hash} of those of `keys` already imported into this scope."""
        return self._ledger.known(self._scope, keys)

    def record(self, items: dict[str, str]) -> None:
        """Remember {source_key: content_hash} as imported, in one transaction."""
        self._ledger.record_many(self._scope, items)

    def recorder(self, items: dict[str, str]) -> Callable[[Any], None]:
        """`record` as a write for the queue to run in the transaction of a queued row (`queue.add(also=...)`)."""
        return self._ledger.recorder(self._scope, items)
