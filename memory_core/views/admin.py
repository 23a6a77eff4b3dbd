"""The admin handle: what spans scopes, for the worker's jobs, the command line, the dashboard, bundles and the facade.

The list of scopes, retention, purging a scope and expiring sandboxes, the usage ledger, where scopes live, the
access policy (tokens and grants are across scopes), the clock, and the background worker's state with the
nightly dream's switch (one worker serves every scope). One scope's memory is a view (`scoped.py`);
this handle names scopes only as arguments and never hands out a scope's parts one by one. Bundles read it as
their `BundleParts` (`portability/bundle.py`): database, documents, index, clock, access and facts.
"""

from __future__ import annotations

import logging
import shutil
from contextlib import AbstractContextManager
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from memory_core.store.actors import acting_as
from memory_core.policy.usage import usage_records, usage_totals
from memory_core.scope import DEFAULT_SCOPE, Scope, make_scope
from memory_core.tiers.documents import LocalDocumentStore

if TYPE_CHECKING:
    from memory_core.policy.access import Principal
    from memory_core.runtime.worker import Worker, WorkerStatus
    from memory_core.store.usage_store import UsageRecord, UsageTotal
    from memory_core.views.parts import Parts
    from memory_core.views.scoped import ScopedMemory

log = logging.getLogger(__name__)


class Admin:
    """`memory.admin`: what spans scopes. Built once by the composition root."""

    def __init__(self, parts: "Parts", worker: "Worker", view: Callable[..., "ScopedMemory"]) -> None:
        self._parts = parts
        self._worker = worker
        self._view = view
        # What bundles (and token commands) read: the same objects as the parts.
        self.settings = parts.settings
        self.clock = parts.clock
        self.db = parts.db
        self.documents = parts.documents
        self.index = parts.index
        self.access = parts.access
        self.facts = parts.facts  # its `eraser` refuses, in a bundle, what was erased after the bundle was made

    def view_as(self, principal: "Principal", scope: Scope, *, actor: str | None = None) -> "ScopedMemory":
        """A view of `scope` with the principal's role there (as `access.role` decides), recording `actor` (the
        principal's own by default) with every change; PermissionError if it may not even read."""
        role = self.access.role(principal, scope)
        if role is None:
            raise PermissionError(f"no access to {scope.key}")
        return self._view(scope, role, actor or principal.actor)

    def now(self) -> datetime:
        return self.clock.now()

    @property
    def offline(self) -> bool:
        """True when no LLM is configured: heuristic extraction, extractive summaries, deterministic dreams."""
        return self._parts.offline

    def acting_as(self, actor: str | None) -> AbstractContextManager[None]:
        """`with admin.acting_as("dashboard:ana@acme.com"):` records that actor with every change made inside the
        block, in this thread (audit entries, MEMORY.md versions, queued updates, grants and tokens)."""
        return acting_as(actor)

    # -- the background worker and the nightly dream (one for every scope) -----------------------

    def status(self) -> "WorkerStatus":
        """The worker's state, with the documents an interrupted bundle import has still to write, the last LLM
        problems and the scopes whose daily token budget is spent."""
        from memory_core.store.restore_store import journal_size

        parts = self._parts
        status = self._worker.status()
        status.restores_pending = journal_size(self.db)
        status.llm_problems = parts.llm_problems.recent()
        if not parts.offline and self.settings.daily_token_budget is not None:
            status.budget_paused = {scope.key: why for scope in self.active_scopes()
                                    if (why := parts.ledger.paused(scope))}
        return status

    @property
    def dreams_enabled(self) -> bool:
        """Whether the nightly dream runs (for every scope)."""
        return self._worker.dream_enabled

    def next_dream(self) -> datetime | None:
        """When the nightly dream runs next; None when it is off."""
        return self._worker.next_dream()

    def set_dreams_enabled(self, enabled: bool, *, principal: "Principal") -> None:
        """Switch the nightly dream on or off for every scope. It acts on everyone, so it is the right of an admin
        of all scopes (`access.is_global_admin`: an admin on `*/*`, or the single local operator); anyone else
        gets PermissionError. The switch is recorded in the access log with the principal as actor."""
        if not isinstance(enabled, bool):
            raise ValueError(f"enabled must be True or False; got {enabled!r:.40}")
        if not self.access.is_global_admin(principal):
            raise PermissionError("switching the nightly dream (all scopes) needs the admin role on */*")
        if enabled != self._worker.dream_enabled:
            self._worker.dream_enabled = enabled
            with acting_as(principal.actor):
                self.access.record("worker_switch", job="nightly dream", enabled=enabled)

    # -- scopes and where they live --------------------------------------------------------------

    def scopes(self) -> list[Scope]:
        return sorted(set(self._parts.store.scopes()) | set(self.active_scopes()))

    def active_scopes(self) -> list[Scope]:
        """Scopes with daily logs or facts: the ones a scheduled dream looks at."""
        found = set(self._parts.store.scopes())
        settings = self.settings
        if isinstance(self.documents, LocalDocumentStore):
            if (settings.home / "memory").is_dir():
                found.add(DEFAULT_SCOPE)
            root = settings.home / "scopes"
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

    def workspace(self, scope: Scope) -> Path | str:
        """Where the scope's MEMORY.md and memory/ live: a directory, or a database description."""
        if isinstance(self.documents, LocalDocumentStore):
            return self._parts.workspace_path(scope)
        return self.documents.describe(scope)

    def storage_description(self) -> str:
        settings = self.settings
        docs = "database" if settings.documents_in_database else str(Path(settings.home).resolve())
        return f"facts in {settings.safe_database_url()}; documents in {docs}"

    def usage(self, *, user_id: str | None = None, agent_name: str | None = None,
              since: datetime | None = None) -> list["UsageRecord"]:
        """Every recorded LLM and embedding call (of one user, agent or scope when given), newest first."""
        return usage_records(self._parts.ledger.store, user_id=user_id, agent_name=agent_name, since=since)

    def usage_totals(self, *, since: datetime | None = None) -> list["UsageTotal"]:
        """Every recorded call since `since`, summed by day, scope, operation and model (all of them, however many)."""
        return usage_totals(self._parts.ledger.store, since=since)

    # -- what the worker runs --------------------------------------------------------------------

    def apply_retention(self) -> list[str]:
        """Remove daily logs older than daily_retention_days that a dream has read as they are, and invalid facts
        older than invalid_fact_retention_days (0 keeps them forever)."""
        parts, settings = self._parts, self.settings
        removed = []
        for scope in self.active_scopes():
            removed += parts.daily.remove_older_than(scope, settings.daily_retention_days,
                                                     parts.dreamer.dreamt_days(scope))
        if settings.episode_retention_days is not None:
            episodes = parts.episodes
            for scope in episodes.store.scopes():
                gone = episodes.remove_older_than(scope, settings.episode_retention_days, self.clock.now())
                if gone:
                    removed.append(f"{gone} episode turn(s) of {scope.key} older than "
                                   f"{settings.episode_retention_days} days")
        days = settings.invalid_fact_retention_days
        if days:
            purged = parts.store.purge_invalid(self.clock.now() - timedelta(days=days))
            if purged:
                removed.append(f"{purged} invalid fact(s) older than {days} days")
        return removed

    def purge_scope(self, scope: Scope) -> dict[str, int]:
        """Remove everything of one scope, for good (an expired sandbox): its rows in every table and its
        workspace folder. The default scope's workspace is the home folder, which is never removed."""
        from memory_core.store.purge import purge_scope

        removed = purge_scope(self.db, scope)
        if isinstance(self.documents, LocalDocumentStore) and scope != DEFAULT_SCOPE:
            folder = self._parts.workspace_path(scope)
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
        from memory_core.store.purge import reclaim_space

        gone = []
        for scope in self.access.expired_sandboxes():
            self.purge_scope(scope)
            self.access.sandbox_removed(scope)
            gone.append(scope.key)
        if gone:
            reclaim_space(self.db)
        return gone
