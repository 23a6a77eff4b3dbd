"""An overall deadline for one blocking call whose own timeouts are per read (an HTTP client's).

A server that trickles one byte every few seconds never trips a read timeout; the call runs in a worker
thread instead, the caller waits for it at most until the deadline, and `abort` (closing the call's client)
makes the abandoned thread end at its next read."""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable, TypeVar

T = TypeVar("T")

log = logging.getLogger(__name__)


class DeadlineExceeded(Exception):
    """Internal: the call did not finish in time (the callers raise their own library error)."""


def run_with_deadline(fn: Callable[[], T], seconds: float, abort: Callable[[], None]) -> T:
    """`fn()`'s result or exception; DeadlineExceeded once `seconds` have passed (after calling `abort`)."""
    if seconds <= 0:
        raise DeadlineExceeded()
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=run, name="memory-core-deadline-call", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        try:
            abort()
        except Exception as exc:  # the deadline is what matters; the abandoned call ends on its own
            log.debug("aborting a call past its deadline failed: %s", type(exc).__name__)
        raise DeadlineExceeded()
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


class Deadline:
    """The time left of one overall budget."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = float(seconds)
        self._clock = clock
        self._end = clock() + self.seconds

    def left(self) -> float:
        return max(0.0, self._end - self._clock())

    @property
    def expired(self) -> bool:
        return self.left() <= 0.0
