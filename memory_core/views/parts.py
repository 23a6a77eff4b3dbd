"""`Parts`: what memory is made of, as one frozen set that `compose()` builds once and a view binds to a scope.

Per-scope parts take the scope on each call; a view (`scoped.py`) binds it, the admin handle (`admin.py`) works
across scopes. The background work (worker, schedules) is not here: it belongs to the composition, not to views.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory_core.scope import DEFAULT_SCOPE, Scope

if TYPE_CHECKING:
    from memory_core.clock import Clock
    from memory_core.consistency.propagation import Propagation
    from memory_core.context.plans import Plans
    from memory_core.facts.api import Facts
    from memory_core.llm.base import ChatModel
    from memory_core.llm.problems import ProblemLog
    from memory_core.policy.access import Access
    from memory_core.policy.usage import Ledger
    from memory_core.runtime.leases import Leases
    from memory_core.runtime.queue import UpdateQueue
    from memory_core.search.embedders import Embedder
    from memory_core.search.index import SearchIndex
    from memory_core.settings import Settings
    from memory_core.store.db import Database
    from memory_core.store.fact_store import FactStore
    from memory_core.tiers.context import ContextManager
    from memory_core.tiers.core import CoreTier
    from memory_core.tiers.daily import DailyTier
    from memory_core.tiers.documents import DatabaseDocumentStore, LocalDocumentStore
    from memory_core.tiers.dream import DeepDream
    from memory_core.tiers.episodes import Episodes


@dataclass(frozen=True)
class Parts:
    """What memory is made of. Per-scope parts take the scope on each call; the views bind it."""

    settings: "Settings"
    clock: "Clock"
    db: "Database"  # opened, and migrated, on first use
    llm: "ChatModel | None"  # metered: every answered call goes into the ledger; None offline
    ledger: "Ledger"
    llm_problems: "ProblemLog"
    extractor: Any  # LLMExtractor or, offline, HeuristicExtractor
    summarizer: Any  # LLMSummarizer or ExtractiveSummarizer
    embedder: "Embedder"
    store: "FactStore"  # the facts' rows; `store.transaction(scope)` is the one transaction over a scope's facts
    facts: "Facts"
    documents: "LocalDocumentStore | DatabaseDocumentStore"
    index: "SearchIndex"
    episodes: "Episodes"
    daily: "DailyTier"
    core: "CoreTier"
    propagation: "Propagation"
    dreamer: "DeepDream"
    plans: "Plans"
    access: "Access"
    contexts: "ContextManager"
    queue: "UpdateQueue"
    leases: "Leases"

    @property
    def offline(self) -> bool:
        return self.llm is None

    def workspace_path(self, scope: Scope) -> Path:
        """Where a scope's files live when documents are files: the home for the default scope."""
        return workspace_path(self.settings, scope)


def workspace_path(settings: "Settings", scope: Scope) -> Path:
    if scope == DEFAULT_SCOPE:
        return settings.home
    return settings.home / "scopes" / scope.user_id / scope.agent_name
