"""Time as a small protocol, so that tests and benchmarks can drive it."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(timezone.utc)


class ManualClock:
    """A clock that only moves when told to. Thread-safe."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> datetime:
        with self._lock:
            self._now += timedelta(seconds=seconds)
            return self._now

    def set(self, when: datetime) -> None:
        with self._lock:
            self._now = when


class UTCClock:
    """Adapts whatever clock a user passes (an object with now(), or a callable; naive or aware) to UTC."""

    def __init__(self, clock: object) -> None:
        self._now = clock.now if hasattr(clock, "now") else clock
        if not callable(self._now):
            raise ValueError("clock must have a now() method or be callable")

    def now(self) -> datetime:
        value = self._now()
        if isinstance(value, (int, float)):
            return datetime.fromtimestamp(value, timezone.utc)
        return utc(value)


def utc(dt: datetime) -> datetime:
    """Attach UTC to a naive datetime read back from a database that drops the zone (SQLite)."""
    return dt.replace(tzinfo=timezone.utc) if dt.tzinfo is None else dt.astimezone(timezone.utc)


def iso_utc(dt: datetime) -> str:
    return utc(dt).isoformat().replace("+00:00", "Z")
