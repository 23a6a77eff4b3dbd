"""`memory.scoped(...)`: the memory of one scope, as a capability.

A view is bound to one scope and one role. Its calls take no `user_id`/`agent_name`, so code that holds
only a view (a dashboard page, the MCP server) cannot name another scope at all; another scope's fact or
plan id is unknown here (`KeyError`), exactly like a made-up one. A write the role does not allow raises
`PermissionError` here, whatever the caller's widgets said. Changes made through a view are recorded with
its actor.
"""

from __future__ import annotations

from contextlib import contextmanager
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ContextManager, Iterator, Protocol

from .roles import rank, validate_role
from .actors import acting_as
from .facts import validate_fact_id
from .store.import_store import ImportLedger

if TYPE_CHECKING:
    from .facts import AuditEntry, Fact, Revision
    from .injection import InjectionReport
    from .updating import UpdateResult
    from .plans import Plan
    from .queue import QueueItem
    from .scope import Scope
    from .search.index import SearchHit
    from .tiers.context import ContextSession
    from .tiers.core import CoreVersion
    from .tiers.dream import DreamResult


class Unscoped(Protocol):
    """What a view needs of the memory it is made from (Memory is one): the parts, and the per-scope calls
    that still take `user_id=` / `agent_name=`. The view binds those; it never imports Memory."""

    settings: Any
    offline: bool
    db: Any
    clock: Any
    facts: Any
    daily: Any
    queue: Any
    plans: Any
    documents: Any
    index: Any
    dreamer: Any
    contexts: Any

    def update(self, *args: Any, **kw: Any) -> Any: ...
    def memory_data(self, *args: Any, **kw: Any) -> Any: ...
    def set_summaries(self, *args: Any, **kw: Any) -> Any: ...
    def injection_report(self, *args: Any, **kw: Any) -> Any: ...
    def format_for_injection(self, *args: Any, **kw: Any) -> Any: ...
    def injections(self, *args: Any, **kw: Any) -> Any: ...
    def injection_counts(self, *args: Any, **kw: Any) -> Any: ...
    def usage(self, *args: Any, **kw: Any) -> Any: ...
    def budget_paused(self, *args: Any, **kw: Any) -> Any: ...
    def relevant_fact_ids(self, *args: Any, **kw: Any) -> Any: ...
    def search(self, *args: Any, **kw: Any) -> Any: ...
    def doctor(self, *args: Any, **kw: Any) -> Any: ...
    def search_info(self, *args: Any, **kw: Any) -> Any: ...
    def read_core(self, *args: Any, **kw: Any) -> Any: ...
    def write_core(self, *args: Any, **kw: Any) -> Any: ...
    def core_versions(self, *args: Any, **kw: Any) -> Any: ...
    def rollback_core(self, *args: Any, **kw: Any) -> Any: ...
    def deep_dream(self, *args: Any, **kw: Any) -> Any: ...
    def dream_proposals(self, *args: Any, **kw: Any) -> Any: ...
    def approve_dream(self, *args: Any, **kw: Any) -> Any: ...
    def reject_dream(self, *args: Any, **kw: Any) -> Any: ...
    def dream_diaries(self, *args: Any, **kw: Any) -> Any: ...
    def read_document(self, *args: Any, **kw: Any) -> Any: ...
    def export_documents(self, *args: Any, **kw: Any) -> Any: ...
    def context(self, *args: Any, **kw: Any) -> Any: ...


class ScopedMemory:
    def __init__(self, memory: Unscoped, scope: "Scope", role: str = "admin", actor: str | None = None, *,
                 importer: Callable[..., Any] | None = None) -> None:
        """`importer(view, path, **options)` imports a file into a view (portability.importer.import_file,
        given by Memory so that the view does not import the importers that use it)."""
        self._memory = memory
        self._importer = importer
        self.scope = scope
        self.role = validate_role(role)
        self.actor = actor
        self.facts = ScopedFacts(self)
        self.daily = ScopedDaily(self)
        self.queue = ScopedQueue(self)
        self.plans = ScopedPlans(self)

    def __repr__(self) -> str:
        return f"ScopedMemory({self.scope.key}, role={self.role})"

    @property
    def user_id(self) -> str:
        return self.scope.user_id

    @property
    def agent_name(self) -> str:
        return self.scope.agent_name

    @property
    def can_write(self) -> bool:
        return rank(self.role) >= rank("editor")

    @property
    def can_admin(self) -> bool:
        return self.role == "admin"

    @property
    def offline(self) -> bool:
        return self._memory.offline

    @property
    def settings(self):
        return self._memory.settings

    @property
    def _kw(self) -> dict[str, str]:
        return {"user_id": self.scope.user_id, "agent_name": self.scope.agent_name}

    @contextmanager
    def writing(self, what: str = "change memory") -> Iterator[None]:
        """Refuse a write the role lacks; record the view's actor with what is written."""
        if not self.can_write:
            raise PermissionError(f"the {self.role} role may not {what} in {self.scope.key}")
        if self.actor is None:
            yield
        else:
            with acting_as(self.actor):
                yield

    # -- facts and updates --------------------------------------------------------------------------

    def update(self, messages: list[dict[str, str]], *, thread_id: str) -> "UpdateResult":
        with self.writing("update memory"):
            return self._memory.update(messages, thread_id=thread_id, **self._kw)

    def memory_data(self) -> dict[str, Any]:
        return self._memory.memory_data(**self._kw)

    def set_summaries(self, summaries: dict[str, str]) -> None:
        with self.writing("set summaries"):
            self._memory.set_summaries(summaries, **self._kw)

    def injection_report(self, *, max_tokens: int | None = None, model: str | None = None,
                         query: str | None = None, record: bool = False) -> "InjectionReport":
        return self._memory.injection_report(max_tokens=max_tokens, model=model, query=query, record=record,
                                             **self._kw)

    def format_for_injection(self, *, max_tokens: int | None = None, model: str | None = None,
                             query: str | None = None, record: bool = False) -> str:
        return self._memory.format_for_injection(max_tokens=max_tokens, model=model, query=query, record=record,
                                                 **self._kw)

    def injections(self, *, limit: int = 50) -> list:
        """The recorded injections of this scope, newest first."""
        return self._memory.injections(limit=limit, **self._kw)

    def injection_counts(self) -> dict:
        return self._memory.injection_counts(**self._kw)

    def usage(self, *, since=None) -> list:
        """The recorded LLM and embedding calls of this scope, newest first."""
        return self._memory.usage(since=since, **self._kw)

    def budget_paused(self) -> str | None:
        return self._memory.budget_paused(**self._kw)

    def relevant_fact_ids(self, query: str, **options: Any) -> list[str]:
        return self._memory.relevant_fact_ids(query, **options, **self._kw)

    def search(self, query: str, *, k: int = 10, **options: Any) -> list["SearchHit"]:
        return self._memory.search(query, k=k, **options, **self._kw)

    def doctor(self) -> list:
        """Where the copies of what this scope knows disagree (see memory_core.doctor)."""
        return self._memory.doctor(**self._kw)

    def search_info(self) -> str:
        return self._memory.search_info(**self._kw)

    # -- tiers --------------------------------------------------------------------------------------

    def read_core(self) -> str | None:
        return self._memory.read_core(**self._kw)

    def write_core(self, text: str, *, reason: str = "edited by hand") -> "CoreVersion":
        with self.writing("write MEMORY.md"):
            return self._memory.write_core(text, reason=reason, **self._kw)

    def core_versions(self) -> list["CoreVersion"]:
        return self._memory.core_versions(**self._kw)

    def rollback_core(self, version: int) -> "CoreVersion":
        with self.writing("roll back MEMORY.md"):
            return self._memory.rollback_core(version, **self._kw)

    def deep_dream(self, lookback_days: int = 1, *, force: bool = False) -> "DreamResult":
        with self.writing("run Deep Dream"):
            return self._memory.deep_dream(lookback_days, force=force, **self._kw)

    def dream_proposals(self) -> list:
        return self._memory.dream_proposals(**self._kw)

    def _proposal(self, proposal_id: str):
        proposal = self._memory.dreamer.proposals.get(proposal_id)
        if (proposal.user_id, proposal.agent_name) != (self.scope.user_id, self.scope.agent_name):
            raise KeyError(proposal_id)  # another scope's proposal is as unknown as a made-up one
        return proposal

    def approve_dream(self, proposal_id: str) -> "DreamResult":
        self._proposal(proposal_id)
        with self.writing("approve a dream"):
            return self._memory.approve_dream(proposal_id)

    def reject_dream(self, proposal_id: str) -> None:
        self._proposal(proposal_id)
        with self.writing("reject a dream"):
            self._memory.reject_dream(proposal_id)

    def dream_state(self):
        """The scope's last dream: status, reason, when (or None)."""
        return self._memory.dreamer.state(self.scope)

    def dream_diaries(self) -> list[str]:
        return self._memory.dream_diaries(**self._kw)

    def read_document(self, path: str) -> str | None:
        """One of the scope's own documents (MEMORY.md, memory/...); any other path is KeyError."""
        return self._memory.read_document(path, **self._kw)

    def export_documents(self, target: Path | str) -> list[str]:
        return self._memory.export_documents(target, **self._kw)

    def context(self, session_id: str, **options: Any) -> "ContextSession":
        with self.writing("record a session"):
            return self._memory.context(session_id, **options, **self._kw)

    def import_file(self, path: Path | str, *, format: str | None = None, dry_run: bool = False,
                    progress: Any = None):
        """Another tool's memory or conversations into this scope (see `Memory.import_file`)."""
        if self._importer is None:
            raise RuntimeError("this view was made without an importer")
        return self._importer(self, path, format=format, dry_run=dry_run, progress=progress)

    # -- for importers and bundles: what they write, through the view's role and actor ---------------

    def fact_transaction(self) -> ContextManager[Any]:
        """One transaction over the scope's facts (see Facts.transaction); wrap it in `writing(...)`."""
        return self._memory.facts.transaction(self.scope)

    def import_ledger(self) -> ImportLedger:
        """What was imported into which scope (so that importing again adds nothing)."""
        return ImportLedger(self._memory.db, self._memory.clock)

    def write_document(self, path: str, text: str, *, what: str = "write documents") -> None:
        """Write one of the scope's documents as it is (a daily log, a diary); reindex with `reindex_documents`."""
        with self.writing(what):
            self._memory.documents.write(self.scope, path, text)

    def reindex_documents(self) -> None:
        """Bring the search index up to date with the scope's documents."""
        self._memory.index.sync_documents(self.scope)

    def wait_for_flushes(self, timeout: float | None = 30.0) -> None:
        """Wait until the context flushes in flight have reached the daily log."""
        self._memory.contexts.wait(timeout)

    def sessions(self) -> list["ContextSession"]:
        """The scope's live context sessions in this process."""
        return [s for s in self._memory.contexts.sessions() if s.scope == self.scope]


class ScopedFacts:
    def __init__(self, view: ScopedMemory) -> None:
        self._view = view
        self._facts = view._memory.facts

    def get(self, fact_id: str) -> "Fact":
        fact = self._facts.get(validate_fact_id(fact_id))
        if fact.scope != self._view.scope:
            raise KeyError(fact_id)  # another scope's id is as unknown as a made-up one
        return fact

    def add(self, content: str, category: str, confidence: float, *, source: str | None = None) -> "Fact | None":
        return self.add_with_reason(content, category, confidence, source=source)[0]

    def add_with_reason(self, content: str, category: str, confidence: float, *,
                        source: str | None = None) -> tuple["Fact | None", str | None]:
        with self._view.writing("add facts"):
            return self._facts.add_with_reason(content, category, confidence, source=source, **self._view._kw)

    def list(self, *, category: str | None = None, include_invalid: bool = False,
             as_of: datetime | None = None) -> list["Fact"]:
        return self._facts.list(category=category, include_invalid=include_invalid, as_of=as_of, **self._view._kw)

    def count(self) -> int:
        return self._facts.count(**self._view._kw)

    def update(self, fact_id: str, *, content: str | None = None, category: str | None = None,
               confidence: float | None = None) -> "Fact":
        self.get(fact_id)
        with self._view.writing("edit facts"):
            return self._facts.update(fact_id, content=content, category=category, confidence=confidence)

    def revise(self, fact_id: str, *, content: str | None = None, category: str | None = None,
               confidence: float | None = None, reason: str | None = None) -> "Revision":
        """Edit a fact by the one rule of `Facts.revise` (a new statement supersedes; category or confidence
        alone change it in place)."""
        self.get(fact_id)
        with self._view.writing("edit facts"):
            return self._facts.revise(fact_id, content=content, category=category, confidence=confidence,
                                      reason=reason)

    def delete(self, fact_id: str) -> None:
        self.get(fact_id)
        with self._view.writing("delete facts"):
            self._facts.delete(fact_id)

    def supersede(self, fact_id: str, content: str, *, category: str | None = None, confidence: float | None = None,
                  reason: str | None = None) -> "Fact":
        self.get(fact_id)
        with self._view.writing("supersede facts"):
            return self._facts.supersede(fact_id, content, category=category, confidence=confidence, reason=reason)

    def invalidate(self, fact_id: str, *, reason: str | None = None) -> "Fact":
        self.get(fact_id)
        with self._view.writing("invalidate facts"):
            return self._facts.invalidate(fact_id, reason=reason)

    def erase(self, fact_id: str, *, reason: str | None = None) -> dict[str, int]:
        self.get(fact_id)
        with self._view.writing("erase facts"):
            return self._facts.erase(fact_id, reason=reason)

    def merge(self, keep_id: str, drop_id: str) -> "Fact":
        self.get(keep_id)
        self.get(drop_id)
        with self._view.writing("merge facts"):
            return self._facts.merge(keep_id, drop_id)

    def near_duplicates(self, *, threshold: float = 0.9) -> list[tuple["Fact", "Fact", float]]:
        return self._facts.near_duplicates(threshold=threshold, **self._view._kw)

    def history(self, fact_id: str | None = None, *, limit: int = 500) -> list["AuditEntry"]:
        if fact_id is not None:
            entries = self._facts.history(validate_fact_id(fact_id), limit=limit)
            # A deleted fact has no row left to check: its audit entries say which scope it was in.
            return [e for e in entries if (e.user_id, e.agent_name) == tuple(self._view.scope)]
        return self._facts.history(limit=limit, **self._view._kw)


class ScopedDaily:
    def __init__(self, view: ScopedMemory) -> None:
        self._view = view
        self._daily = view._memory.daily

    def append(self, text: str, *, title: str = "Trimmed Context", when: datetime | None = None) -> str:
        with self._view.writing("write daily logs"):
            return self._daily.append(text, title=title, when=when, **self._view._kw)

    def read(self, day: date) -> str | None:
        return self._daily.read(day, **self._view._kw)

    def days(self) -> list[date]:
        return self._daily.days(**self._view._kw)


class ScopedQueue:
    def __init__(self, view: ScopedMemory) -> None:
        self._view = view
        self._queue = view._memory.queue

    def add(self, messages: list[dict[str, str]], *, thread_id: str, options: dict[str, Any] | None = None,
            also: Callable[[Any], object] | None = None) -> None:
        """`also(session)` writes more rows in the queued row's transaction (see UpdateQueue.add)."""
        with self._view.writing("queue updates"):
            self._queue.add(messages, thread_id=thread_id, options=options, also=also, **self._view._kw)

    def add_nowait(self, messages: list[dict[str, str]], *, thread_id: str) -> None:
        with self._view.writing("queue updates"):
            self._queue.add_nowait(messages, thread_id=thread_id, **self._view._kw)

    def pending(self) -> int:
        return self._queue.pending(**self._view._kw)

    def items(self, status: str | None = None) -> list["QueueItem"]:
        return self._queue.items(status, **self._view._kw)

    def failed(self) -> list["QueueItem"]:
        return self._queue.failed(**self._view._kw)

    def retry(self, thread_id: str | None = None) -> int:
        with self._view.writing("retry updates"):
            return self._queue.retry(thread_id, **self._view._kw)


class ScopedPlans:
    def __init__(self, view: ScopedMemory) -> None:
        self._view = view
        self._plans = view._memory.plans

    def get(self, plan_id: str) -> "Plan":
        if not isinstance(plan_id, str):
            raise KeyError(plan_id)
        plan = self._plans.get(plan_id)
        if (plan.user_id, plan.agent_name) != tuple(self._view.scope):
            raise KeyError(plan_id)
        return plan

    def start(self, name: str, steps: list[str], *, session_id: str) -> "Plan":
        with self._view.writing("start plans"):
            return self._plans.start(name, steps, session_id=session_id, **self._view._kw)

    def active(self) -> "Plan | None":
        return self._plans.active(**self._view._kw)

    def list(self) -> list["Plan"]:
        return self._plans.list(**self._view._kw)

    def check(self, plan_id: str, step_index: int) -> "Plan":
        self.get(plan_id)
        with self._view.writing("check plan steps"):
            return self._plans.check(plan_id, step_index)

    def finish(self, plan_id: str) -> "Plan":
        self.get(plan_id)
        with self._view.writing("finish plans"):
            return self._plans.finish(plan_id)
