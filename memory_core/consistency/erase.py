"""Erase: for what must be gone, not just retired (a person's right to have something forgotten).

The fact is invalidated (so the summaries and MEMORY.md stop stating it, as for any retired fact), then its text
leaves everything memory_core keeps: the fact row and its audit snapshots become `[erased]`; in the summaries,
MEMORY.md and every earlier version, the daily logs, dream diaries, search chunks, pending queued conversations and
plans, each passage that states it becomes `[erased]`; each turn of an episode that states it is removed; its embeddings go; the database's own leftovers are
reclaimed. One audit row records that an erasure happened (who, when, why, which id), never the text."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Callable

from memory_core.tiers.documents import DatabaseDocumentStore
from memory_core.consistency.truth import erase_marks, erase_passages, proper_names

if TYPE_CHECKING:
    from memory_core.tiers.documents import DocumentStore
    from memory_core.scope import Scope
    from memory_core.search.index import SearchIndex
    from memory_core.store.episode_store import EpisodeStore
    from memory_core.store.erase_store import EraseStore
    from memory_core.store.fact_store import FactStore

log = logging.getLogger(__name__)

FOLDERS = ("", "memory", "memory/dreams")


class Eraser:
    def __init__(self, store: "FactStore", erase_store: "EraseStore", documents: "DocumentStore",
                 index: "SearchIndex", sessions: Callable[[], list] | None = None,
                 episodes: "EpisodeStore | None" = None) -> None:
        self.store = store
        self.episodes = episodes  # the conversations kept as episodes: a turn that states the fact is removed
        self.erase_store = erase_store
        self.documents = documents
        self.index = index
        self.sessions = sessions  # the live context sessions (their messages are memory too)

    def erase(self, fact_id: str, reason: str | None = None) -> dict[str, int]:
        """Erase one fact everywhere; returns how many rows, files and passages changed per place."""
        fact = self.store.get(fact_id)
        scope = fact.scope
        if fact.valid:
            with self.store.transaction(scope) as tx:
                tx.invalidate(fact.id, reason="erased", action="invalidated")
        marks, names = erase_marks(fact.content), proper_names(fact.content)

        def scrub(text: str) -> tuple[str, int]:
            return erase_passages(text, marks, names)

        turns = self._turns(scope, scrub)
        counts = self.erase_store.erase(scope, fact.id, scrub, reason)
        if turns:
            counts["episode_turns"] = turns
        if not isinstance(self.documents, DatabaseDocumentStore):
            files = self._files(scope, scrub)
            if files:
                counts["files"] = files
        live = self._sessions(scope, scrub)
        if live:
            counts["context_sessions"] = live
        self.index.touch(scope)
        self.index.sync_documents(scope)
        self.erase_store.reclaim(sorted(set(counts) & {"facts", "fact_audit", "scope_summaries", "documents",
                                                       "core_versions", "pending_updates", "plans", "chunks",
                                                       "embeddings", "dream_runs", "dream_state", "episode_turns"}
                                                      | {"facts"}))
        log.info("erased %s in %s (%s)", fact.id, scope.key, ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
        return counts

    def _turns(self, scope: "Scope", scrub: Callable[[str], tuple[str, int]]) -> int:
        """Remove the episode turns that state the fact (with their search chunks and vectors)."""
        if self.episodes is None:
            return 0
        return self.episodes.remove_stating(scope, lambda text: scrub(text)[1] > 0)

    def _sessions(self, scope: "Scope", scrub: Callable[[str], tuple[str, int]]) -> int:
        changed = 0
        for session in self.sessions() if self.sessions else ():
            if session.scope != scope:
                continue
            n = 0
            for message in session.messages:
                if isinstance(message.get("content"), str):
                    message["content"], k = scrub(message["content"])
                    n += k
            session.summary, k = scrub(session.summary or "")
            changed += bool(n + k)
        return changed

    def _files(self, scope: "Scope", scrub: Callable[[str], tuple[str, int]]) -> int:
        """MEMORY.md, the daily logs and the dream diaries on disk, each rewritten whole where it stated the fact."""
        changed = 0
        for folder in FOLDERS:
            for path in self.documents.list(scope, folder):
                text = self.documents.read(scope, path)
                if not text:
                    continue
                new, n = scrub(text)
                if n:
                    self.documents.write(scope, path, new)
                    changed += 1
        return changed
