"""The response format each LLM server takes, per base URL and model, kept across restarts (llm/formats.py)."""

from __future__ import annotations

from datetime import timedelta

from memory_core.clock import Clock
from memory_core.store.db import Database
from memory_core.store.models import LLMFormatRow

RECHECK_AFTER = timedelta(days=7)  # a server upgraded since then may take a more structured format


class FormatStore:
    """A FormatMemory in the database: what was found is recalled for `RECHECK_AFTER`, then found again."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock

    def recall(self, base_url: str, model: str) -> str | None:
        with self.db.read() as s:
            row = s.get(LLMFormatRow, (base_url[:500], model[:200]))
        if row is None:
            return None
        decided = row.decided_at if row.decided_at.tzinfo else row.decided_at.replace(tzinfo=self.clock.now().tzinfo)
        return row.mode if self.clock.now() - decided < RECHECK_AFTER else None

    def remember(self, base_url: str, model: str, mode: str) -> None:
        with self.db.write(lock=f"llm_formats:{base_url}") as s:
            row = s.get(LLMFormatRow, (base_url[:500], model[:200]))
            if row is None:
                row = LLMFormatRow(base_url=base_url[:500], model=model[:200], mode=mode, decided_at=self.clock.now())
            else:
                row.mode, row.decided_at = mode, self.clock.now()
            s.add(row)
