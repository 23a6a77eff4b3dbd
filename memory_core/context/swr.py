"""A stale-while-revalidate cache for tool results.

Fresh entries are served as they are; a stale entry is served at once while one background call of
`fetch()` refreshes it (one refresh per key at a time); a missing entry is fetched. Keys are
(tool, a hash of params that ignores dict key order). Bounded (least recently used go first),
thread-safe; a failed refresh keeps the stale value and is logged.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable

log = logging.getLogger(__name__)


class _MonotonicClock:
    def now(self) -> float:
        return time.monotonic()


def params_hash(params: Any) -> str:
    blob = json.dumps(params, sort_keys=True, default=repr, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:32]


@dataclass
class _Entry:
    value: Any
    stored_at: float
    project: str | None


class SWRCache:
    def __init__(self, ttl_seconds: float, *, max_entries: int = 1024, clock: Any = None) -> None:
        if ttl_seconds < 0 or max_entries < 1:
            raise ValueError("ttl_seconds must be >= 0 and max_entries >= 1")
        self.ttl = ttl_seconds
        self.max_entries = max_entries
        self.clock = clock or _MonotonicClock()
        self.project: str | None = None
        self._entries: OrderedDict[tuple[str, str], _Entry] = OrderedDict()
        self._refreshing: set[tuple[str, str]] = set()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self.fetches = 0

    def _now(self) -> float:
        now = self.clock.now() if hasattr(self.clock, "now") else self.clock()
        return now.timestamp() if hasattr(now, "timestamp") else float(now)

    def get(self, tool: str, params: Any, fetch: Callable[[], Any]) -> Any:
        key = (tool, params_hash(params))
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                if self._now() - entry.stored_at <= self.ttl:
                    return entry.value
                if key not in self._refreshing:
                    self._refreshing.add(key)
                    thread = threading.Thread(target=self._refresh, args=(key, fetch), daemon=True,
                                              name=f"swr-refresh-{tool}")
                    self._threads = [t for t in self._threads if t.is_alive()] + [thread]
                    thread.start()
                return entry.value
        value = fetch()
        with self._lock:
            self.fetches += 1
            self._store(key, value)
        return value

    def _store(self, key: tuple[str, str], value: Any) -> None:
        self._entries[key] = _Entry(value, self._now(), self.project)
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def _refresh(self, key: tuple[str, str], fetch: Callable[[], Any]) -> None:
        project = self.project
        try:
            value = fetch()
        except Exception:
            log.exception("refresh of %s failed; the stale value stays", key[0])
            with self._lock:
                self._refreshing.discard(key)
            return
        with self._lock:
            self.fetches += 1
            self._refreshing.discard(key)
            if self.project == project:  # a refresh started before a project switch is dropped
                self._store(key, value)

    def switch_project(self, name: str) -> None:
        """Make `name` the current project, dropping every entry of the previous one."""
        with self._lock:
            if name != self.project:
                self._entries.clear()
                self.project = name

    def invalidate(self, tool: str | None = None) -> int:
        with self._lock:
            keys = [k for k in self._entries if tool is None or k[0] == tool]
            for k in keys:
                del self._entries[k]
            return len(keys)

    def wait(self, timeout: float = 10.0) -> None:
        """Wait for background refreshes (for tests and orderly shutdown)."""
        for t in list(self._threads):
            t.join(timeout)

    def __len__(self) -> int:
        return len(self._entries)
