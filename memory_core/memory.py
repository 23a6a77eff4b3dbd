"""The facade: `Memory(settings)` holds the parts for its lifetime and hands out views of one scope.

Everything, the worker and its schedules included, is built once by the composition root
(`memory_core.composition.compose`); `Memory` only holds it. Per-scope behaviour lives in the view
(`memory_core.views.scoped.ScopedMemory`), what spans scopes in the admin handle (`memory_core.views.admin`).
Memory's methods, the ones API.md names, are one-line calls into an admin view of the scope they name or into the
admin handle; what is left here is start, close and the names of the parts (for users' code)."""

from __future__ import annotations

import logging
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

from memory_core.clock import Clock, SystemClock, UTCClock
from memory_core.composition import compose
from memory_core.consistency.doctor import Finding
from memory_core.context.injection import InjectionReport
from memory_core.extraction.updating import UpdateResult
from memory_core.llm.base import ChatModel
from memory_core.policy.access import Principal
from memory_core.runtime.dream_schedule import DreamSchedule
from memory_core.runtime.worker import Worker, WorkerStatus
from memory_core.scope import Scope, make_scope
from memory_core.search.embedders import Embedder
from memory_core.search.index import SearchHit
from memory_core.settings import Settings
from memory_core.store.proposal_store import DreamProposal
from memory_core.store.usage_store import Injection, UsageRecord
from memory_core.tiers.context import ContextSession
from memory_core.tiers.dream import DreamResult
from memory_core.views.admin import Admin
from memory_core.views.parts import Parts
from memory_core.views.scoped import RELEVANT_FACTS, ScopedMemory

log = logging.getLogger(__name__)

__all__ = ["Memory", "RELEVANT_FACTS"]


class _Part:
    """`memory.index` and the like: a part, read from `memory.parts` (they are the same objects)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, memory: "Memory | None", owner: type) -> Any:
        return self if memory is None else getattr(memory.parts, self.name)


class Memory:
    """Long-term memory for agents. `with Memory(Settings()) as memory: ...`"""

    # The parts by name, for users' code (docs/API.md names memory.facts, memory.queue, ...) and tests. Clients of
    # the library hold a view (`scoped`, `view`) or the admin handle (`admin`) instead.
    db = _Part()
    clock = _Part()
    llm = _Part()
    offline = _Part()
    ledger = _Part()
    llm_problems = _Part()
    extractor = _Part()
    summarizer = _Part()
    embedder = _Part()
    facts = _Part()
    documents = _Part()
    index = _Part()
    daily = _Part()
    core = _Part()
    propagation = _Part()
    dreamer = _Part()
    plans = _Part()
    access = _Part()
    contexts = _Part()
    queue = _Part()
    leases = _Part()

    def __init__(self, settings: Settings | None = None, *, llm: ChatModel | None = None,
                 embedder: Embedder | None = None, clock: Clock | None = None, worker: bool = True) -> None:
        """`worker=False`: queuing an update does not start the background worker in this process (a
        command-line import leaves what it queued to the app's or the MCP server's worker); `start()` still does."""
        self.settings = settings or Settings()
        built = compose(self.settings, clock=UTCClock(clock) if clock is not None else SystemClock(), llm=llm,
                        embedder=embedder, start_on_enqueue=worker)
        self.parts: Parts = built.parts
        self.admin: Admin = built.admin  # what spans scopes
        self.worker: Worker = built.worker
        self.dream_schedule: DreamSchedule = built.dream_schedule
        self._view = built.view
        self._lifecycle = built.lifecycle

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> "Memory":
        """Start the background worker (also done on first need). Never at import or in __init__."""
        self._lifecycle.start()
        return self

    def close(self, flush: bool = True, *, timeout: float | None = None) -> None:
        """Flush what is pending (unless `flush=False`: it then stays queued in the database for any
        process to pick up), stop the background threads, and release the database. With `timeout`, return
        within about that many seconds: updates not done by then stay queued (SIGTERM closes this way)."""
        self._lifecycle.close(flush, timeout=timeout)

    @property
    def closed(self) -> bool:
        return self._lifecycle.closed

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def status(self) -> WorkerStatus:
        """The worker's state (see `Admin.status`)."""
        return self.admin.status()

    def acting_as(self, actor: str | None) -> AbstractContextManager[None]:
        """`with memory.acting_as("dashboard:ana@acme.com"):` records that actor with every change made inside
        the block, in this thread (audit entries, MEMORY.md versions, queued updates)."""
        return self.admin.acting_as(actor)

    def scoped(self, *, user_id: str = "default", agent_name: str = "default", role: str = "admin",
               actor: str | None = None) -> ScopedMemory:
        """The memory of one scope, with no way to reach another. `role` (viewer, editor, admin) limits what
        the view may change (a write it lacks the right for raises PermissionError); `actor`, when given, is
        recorded with every change made through the view."""
        return self._view(make_scope(user_id, agent_name), role, actor)

    def view(self, principal: Principal, *, user_id: str, agent_name: str) -> ScopedMemory:
        """A view of one scope with the principal's role there (as `access.role` decides); PermissionError if
        it may not even read."""
        return self.admin.view_as(principal, make_scope(user_id, agent_name))

    def _at(self, user_id: str, agent_name: str) -> ScopedMemory:
        """The admin view that Memory's per-scope methods call into (ValueError for a malformed scope)."""
        return self._view(make_scope(user_id, agent_name))

    # -- scopes and workspaces -------------------------------------------------------------------

    def workspace(self, *, user_id: str = "default", agent_name: str = "default") -> Path | str:
        """Where the scope's MEMORY.md and memory/ live: a directory, or a database description."""
        return self.admin.workspace(make_scope(user_id, agent_name))

    def storage_description(self) -> str:
        return self.admin.storage_description()

    def scopes(self) -> list[Scope]:
        return self.admin.scopes()

    def active_scopes(self) -> list[Scope]:
        """Scopes with daily logs or facts: the ones a scheduled dream looks at."""
        return self.admin.active_scopes()

    # -- one scope's memory (see ScopedMemory for what each does) ----------------------------------

    def update(self, messages: list[dict[str, str]], *, thread_id: str, user_id: str = "default",
               agent_name: str = "default", when: datetime | None = None) -> UpdateResult:
        """Extract facts from a conversation with the LLM (or offline heuristics) and persist them.

        Applied whole or not at all: invalidations, new facts, supersessions and summaries go in one
        transaction. Raises ValueError for bad input (before any LLM call), LLMError when the LLM fails and
        LLMReplyError when its reply is unusable; in every case nothing stored changes.
        """
        return self._at(user_id, agent_name).update(messages, thread_id=thread_id, when=when)

    async def aupdate(self, messages: list[dict[str, str]], *, thread_id: str, user_id: str = "default",
                      agent_name: str = "default", when: datetime | None = None) -> UpdateResult:
        """`update()` for async agents: runs in the queue's thread pool, never blocking the event loop."""
        return await self._at(user_id, agent_name).aupdate(messages, thread_id=thread_id, when=when)

    def set_summaries(self, summaries: dict[str, str], *, user_id: str = "default", agent_name: str = "default") -> None:
        """Set user-context/history summaries by hand (workContext, personalContext, topOfMind, ...)."""
        self._at(user_id, agent_name).set_summaries(summaries)

    def memory_data(self, *, user_id: str = "default", agent_name: str = "default") -> dict[str, Any]:
        return self._at(user_id, agent_name).memory_data()

    def injection_report(self, *, user_id: str = "default", agent_name: str = "default", max_tokens: int | None = None,
                         model: str | None = None, query: str | None = None, record: bool = False) -> InjectionReport:
        """What `format_for_injection` gives, with what was kept and dropped (see ScopedMemory.injection_report)."""
        return self._at(user_id, agent_name).injection_report(max_tokens=max_tokens, model=model, query=query,
                                                               record=record)

    def format_for_injection(self, *, user_id: str = "default", agent_name: str = "default",
                             max_tokens: int | None = None, model: str | None = None, query: str | None = None,
                             record: bool = False) -> str:
        """The memory text for a system prompt, within `max_tokens` (see `injection_report`)."""
        return self._at(user_id, agent_name).format_for_injection(max_tokens=max_tokens, model=model, query=query,
                                                                  record=record)

    def injections(self, *, user_id: str = "default", agent_name: str = "default", limit: int = 50) -> list[Injection]:
        """The recorded injections of the scope, newest first."""
        return self._at(user_id, agent_name).injections(limit=limit)

    def injection_counts(self, *, user_id: str = "default", agent_name: str = "default") -> dict:
        """{fact id: (how often injected, when last)} of the scope, from the recorded injections."""
        return self._at(user_id, agent_name).injection_counts()

    def usage(self, *, user_id: str | None = None, agent_name: str | None = None,
              since: datetime | None = None) -> list[UsageRecord]:
        """Every recorded LLM and embedding call (of one user, agent or scope when given), newest first."""
        return self.admin.usage(user_id=user_id, agent_name=agent_name, since=since)

    def budget_paused(self, *, user_id: str = "default", agent_name: str = "default") -> str | None:
        """Why the scope's LLM work waits today (its daily_token_budget is spent), or None."""
        return self._at(user_id, agent_name).budget_paused()

    def relevant_fact_ids(self, query: str, *, k: int = RELEVANT_FACTS, user_id: str = "default",
                          agent_name: str = "default") -> list[str]:
        """The ids of the scope's valid facts most relevant to `query`, best first."""
        return self._at(user_id, agent_name).relevant_fact_ids(query, k=k)

    def search(self, query: str, *, k: int = 10, user_id: str = "default", agent_name: str = "default",
               **options: Any) -> list[SearchHit]:
        """Facts, daily logs and MEMORY.md, best first, one hit per statement (a fact stands for the bullet or
        log line that says the same)."""
        return self._at(user_id, agent_name).search(query, k=k, **options)

    def doctor(self, *, user_id: str = "default", agent_name: str = "default") -> list[Finding]:
        """Where the copies of what the scope knows disagree (see memory_core.consistency.doctor)."""
        return self._at(user_id, agent_name).doctor()

    def search_info(self, *, user_id: str = "default", agent_name: str = "default") -> str:
        """One line on how the scope's search vectors are made (model, token-frequency snapshot)."""
        return self._at(user_id, agent_name).search_info()

    def read_core(self, *, user_id: str = "default", agent_name: str = "default") -> str | None:
        return self._at(user_id, agent_name).read_core()

    def write_core(self, text: str, *, reason: str = "edited by hand", user_id: str = "default",
                   agent_name: str = "default"):
        """Replace the scope's MEMORY.md (a new recorded version, with the current actor). ValueError, with
        nothing written, for non-text, NUL characters, lone surrogates or more than max_document_chars."""
        return self._at(user_id, agent_name).write_core(text, reason=reason)

    def core_versions(self, *, user_id: str = "default", agent_name: str = "default"):
        return self._at(user_id, agent_name).core_versions()

    def rollback_core(self, version: int, *, user_id: str = "default", agent_name: str = "default"):
        return self._at(user_id, agent_name).rollback_core(version)

    def context(self, session_id: str, *, user_id: str = "default", agent_name: str = "default",
                on_flush: Callable[[str], None] | None = None, budget_tokens: int | None = None) -> ContextSession:
        """The live session `session_id`; a new one resumes the scope's active plan."""
        return self._at(user_id, agent_name).context(session_id, on_flush=on_flush, budget_tokens=budget_tokens)

    def deep_dream(self, lookback_days: int = 1, *, force: bool = False, user_id: str = "default",
                   agent_name: str = "default") -> DreamResult:
        return self._at(user_id, agent_name).deep_dream(lookback_days, force=force)

    def dream_proposals(self, *, user_id: str = "default", agent_name: str = "default") -> list[DreamProposal]:
        """The scope's open dream proposals (Settings.dream_review), newest first, each with its diff against the
        current MEMORY.md."""
        return self._at(user_id, agent_name).dream_proposals()

    def approve_dream(self, proposal_id: str) -> DreamResult:
        """Write a proposal as MEMORY.md's new version. KeyError if unknown; ValueError if MEMORY.md changed since
        the proposal (or it is no longer open)."""
        return self._of_proposal(proposal_id).approve_dream(proposal_id)

    def reject_dream(self, proposal_id: str) -> None:
        """Drop a proposal (KeyError if unknown or no longer open)."""
        self._of_proposal(proposal_id).reject_dream(proposal_id)

    def _of_proposal(self, proposal_id: str) -> ScopedMemory:
        """The admin view of the scope a proposal belongs to (KeyError if the proposal is unknown)."""
        proposal = self.dreamer.proposals.get(proposal_id)
        return self._at(proposal.user_id, proposal.agent_name)

    def dream_diaries(self, *, user_id: str = "default", agent_name: str = "default") -> list[str]:
        return self._at(user_id, agent_name).dream_diaries()

    def read_document(self, path: str, *, user_id: str = "default", agent_name: str = "default") -> str | None:
        """One of the scope's own documents (`MEMORY.md`, `memory/...`), or None if it does not exist yet.
        Any other path (another scope's files, the database file, ..) raises KeyError."""
        return self._at(user_id, agent_name).read_document(path)

    def export_documents(self, target: Path | str, *, user_id: str = "default", agent_name: str = "default") -> list[str]:
        """Write the scope's documents (from whichever store holds them) out as files under `target`."""
        return self._at(user_id, agent_name).export_documents(target)

    def import_file(self, path: Path | str, *, format: str | None = None, user_id: str = "default",
                    agent_name: str = "default", dry_run: bool = False, progress: Callable | None = None):
        """Import another tool's memory or conversations into a scope: `deerflow`, `mem0`, `chatgpt`,
        `claude` or `markdown` (recognised when `format` is None). Returns an ImportReport; re-importing adds
        nothing; a file that cannot be read raises ValueError and changes nothing."""
        return self._at(user_id, agent_name).import_file(path, format=format, dry_run=dry_run, progress=progress)

    # -- what spans scopes -----------------------------------------------------------------------

    def set_dreams_enabled(self, enabled: bool, *, principal: Principal) -> None:
        """Switch the nightly dream on or off for every scope: an admin of all scopes' right (PermissionError for
        anyone else), recorded in the access log with the principal as actor."""
        self.admin.set_dreams_enabled(enabled, principal=principal)

    def apply_retention(self) -> list[str]:
        """Remove daily logs older than daily_retention_days that a dream has read as they are, and invalid facts
        older than invalid_fact_retention_days (0 keeps them forever)."""
        return self.admin.apply_retention()

    def purge_scope(self, *, user_id: str, agent_name: str) -> dict[str, int]:
        """Remove everything of one scope, for good (an expired sandbox): its rows in every table and its
        workspace folder. The default scope's workspace is the home folder, which is never removed."""
        return self.admin.purge_scope(make_scope(user_id, agent_name))

    def remove_expired_sandboxes(self) -> list[str]:
        """What the worker runs: the sandboxes of anonymous visitors whose day is over go, data and all, and
        an SQLite file gives their space back."""
        return self.admin.remove_expired_sandboxes()

    def export_bundle(self, path: Path | str, *, scopes: list | None = None) -> dict[str, Any]:
        """One zip with everything of `scopes` ("user/agent" strings or (user, agent) pairs; all when None):
        facts with validity and audit history, summaries, MEMORY.md and all its versions, daily logs, dream
        diaries, plans. Returns the counts written."""
        from memory_core.portability.bundle import export_bundle

        return export_bundle(self.admin, path, scopes)

    def import_bundle(self, path: Path | str, *, mode: str = "skip", dry_run: bool = False) -> dict[str, Any]:
        """Import a bundle: `skip` keeps what exists, `replace` lets the bundle win; the same bundle twice
        changes nothing the second time. A damaged or foreign file raises ValueError and changes nothing."""
        from memory_core.portability.bundle import import_bundle

        return import_bundle(self.admin, path, mode=mode, dry_run=dry_run)

