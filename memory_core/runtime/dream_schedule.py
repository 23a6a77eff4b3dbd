"""The nightly dream's schedule: today's slot in the configured zone, one run per scope and slot across all
processes (a lease in the database), the daily token cap and the scope's budget. Given the callables it
needs; the worker runs `due` as one of its jobs."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from typing import Any, Callable

from memory_core.errors import BudgetExceeded
from memory_core.scope import Scope

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DreamParts:
    """What the schedule needs of the rest, as callables."""

    now: Callable[[], datetime]
    scopes: Callable[[], list[Scope]]  # the scopes with activity
    lease: Callable[[str, datetime], bool]  # (name, until): True for the one process that gets it
    tokens_today: Callable[[Scope], int]  # what the scope's dreams spent today
    paused: Callable[[Scope], str | None]  # why the scope's LLM work waits (its daily budget), or None
    dream: Callable[[Scope], Any]  # run the scope's dream over the last day; the result has a `status`


class DreamSchedule:
    def __init__(self, settings: Any, parts: DreamParts) -> None:
        self.settings = settings
        self.parts = parts
        self.enabled = settings.dream_schedule_enabled

    def slot(self, now: datetime | None = None) -> datetime:
        """Today's dream slot, in the configured zone (it may already be past)."""
        settings = self.settings
        now = (now or self.parts.now()).astimezone(settings.tz)
        hour, minute = (int(x) for x in settings.dream_schedule_time.split(":"))
        return datetime.combine(now.date(), time(hour, minute), tzinfo=settings.tz)

    def next_dream(self) -> datetime | None:
        if not self.enabled:
            return None
        now = self.parts.now()
        slot = self.slot(now)
        return slot if slot > now else slot + timedelta(days=1)

    def due(self) -> str:
        """Run the dream of each active scope once per slot (whichever process gets the lease)."""
        if not self.enabled:
            return "disabled"
        now = self.parts.now()
        slot = self.slot(now)
        if now < slot:
            return "not yet"
        ran = []
        for scope in self.parts.scopes():
            if not self.parts.lease(f"dream:{scope.key}:{slot.date().isoformat()}", slot + timedelta(days=1)):
                continue
            if self.parts.tokens_today(scope) >= self.settings.dream_daily_cost_cap_tokens:
                log.warning("dream of %s skipped: daily token cap reached", scope.key)
                continue
            if self.parts.paused(scope):
                log.info("dream of %s waits: its daily token budget is spent", scope.key)
                continue
            try:
                result = self.parts.dream(scope)
            except BudgetExceeded as exc:  # spent meanwhile by other calls (each reserves before it runs)
                log.info("dream of %s waits: %s", scope.key, exc)
                continue
            ran.append(f"{scope.key}={result.status}")
        return ", ".join(ran) or "nothing to do"
