"""The last few things an LLM got wrong in this process (unusable replies, skipped items, failed calls), for
`memory.status()` and the dashboard: what a person running a small local model needs to see."""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from datetime import datetime, timezone


@dataclass(frozen=True)
class LLMProblem:
    at: datetime
    scope: str  # "user_id/agent_name": a page shows only its scope's
    kind: str  # "call" (the LLM failed), "reply" (its reply was unusable), "item" (a fact skipped), "dream" (rejected),
    # "rerank" (a query's injection kept search's order)
    detail: str

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.scope} {self.kind}: {self.detail}"


class ProblemLog:
    def __init__(self, keep: int = 20) -> None:
        self._items: deque[LLMProblem] = deque(maxlen=keep)
        self._lock = threading.Lock()

    def add(self, scope: str, kind: str, detail: str, at: datetime | None = None) -> None:
        with self._lock:
            self._items.append(LLMProblem(at or datetime.now(timezone.utc), scope, kind, str(detail)[:500]))

    def recent(self, n: int = 10, scope: str | None = None) -> list[LLMProblem]:
        """The last `n` problems (of `scope` when given), oldest first."""
        with self._lock:
            items = [p for p in self._items if scope is None or p.scope == scope]
        return items[-n:]
