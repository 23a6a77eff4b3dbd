"""The update queue's own threads, apart from the worker's housekeeping (dreams, retention, sandboxes).

A dispatcher thread looks for scopes with due keys every tick and hands each to one of `queue_workers`
lane threads: one key at a time, never two lanes on one scope, the scope served longest ago first. So a
scope whose LLM answers slowly (or a scope with ten thousand imported conversations) holds one lane,
while the other scopes go on in the others. The lanes are daemon threads: an update still running when
the process must go never holds its exit, and its row goes back to pending (`UpdateQueue.close`).
"""

from __future__ import annotations

import logging
import queue as queues
import threading
import time
from datetime import datetime
from typing import TYPE_CHECKING, Callable

from memory_core.text.redact import scrub

if TYPE_CHECKING:
    from memory_core.runtime.queue import UpdateQueue
    from memory_core.scope import Scope

log = logging.getLogger(__name__)


class QueueLanes:
    """`memory.worker.lanes`: started and stopped by the worker."""

    def __init__(self, queue: "UpdateQueue", lanes: int, tick_seconds: float, now: Callable[[], datetime],
                 secrets: Callable[[], list[str]]) -> None:
        self.queue = queue
        self.count = max(1, int(lanes))
        self.tick_seconds = tick_seconds
        self._now = now
        self._secrets = secrets
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._jobs: queues.SimpleQueue[Scope | None] = queues.SimpleQueue()
        self._lock = threading.Lock()
        self._busy: set[Scope] = set()
        self._served: dict[Scope, float] = {}  # when each due scope last had a key processed here
        self._threads: list[threading.Thread] = []
        self.rounds = 0
        self.errors = 0
        self.last_run: datetime | None = None
        self.last_error: str | None = None

    @property
    def running(self) -> bool:
        return any(t.is_alive() for t in self._threads)

    @property
    def busy(self) -> int:
        """How many scopes a lane is working on now."""
        with self._lock:
            return len(self._busy)

    def start(self) -> None:
        if self.running and not self._stop.is_set():
            return
        # A new generation: lanes of an earlier one that still finish an update keep their own stop and jobs.
        with self._lock:
            self._stop, self._jobs, self._busy = threading.Event(), queues.SimpleQueue(), set()
            generation = (self._stop, self._jobs)
        self._threads = [threading.Thread(target=self._dispatch, args=generation, name="memory-queue-dispatch",
                                          daemon=True)]
        self._threads += [threading.Thread(target=self._lane, args=generation, name=f"memory-queue-{i}", daemon=True)
                          for i in range(self.count)]
        for thread in self._threads:
            thread.start()

    def halt(self) -> None:
        """Start nothing more; the updates running now finish in their lanes."""
        with self._lock:
            stop, jobs = self._stop, self._jobs
        stop.set()
        self._wake.set()
        for _ in range(self.count):
            jobs.put(None)

    def join(self, timeout: float | None) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        self._threads = [t for t in self._threads if t.is_alive()]

    # -- threads -------------------------------------------------------------------------------------

    def _failed(self, what: str, exc: Exception) -> None:
        self.errors += 1
        self.last_error = scrub(f"{type(exc).__name__}: {exc}", *self._secrets())[:1000]
        log.error("update queue %s failed: %s", what, self.last_error)

    def _dispatch(self, stop: threading.Event, jobs: "queues.SimpleQueue[Scope | None]") -> None:
        recovered = 0.0
        while True:
            # the first round one tick after start, as the schedule's jobs run; later ones also when a lane frees
            self._wake.wait(self.tick_seconds)
            self._wake.clear()
            if stop.is_set():
                return
            try:
                if time.monotonic() - recovered >= self.tick_seconds:
                    self.queue.recover_stale()
                    recovered = time.monotonic()
                self._hand_out(self.queue.due_scopes(), stop, jobs)
                self.rounds += 1
                self.last_run = self._now()
            except Exception as exc:  # the database is away, say: try again next tick
                self._failed("dispatch", exc)

    def _hand_out(self, due: list["Scope"], stop: threading.Event, jobs: "queues.SimpleQueue[Scope | None]") -> None:
        with self._lock:
            if stop.is_set():
                return
            wanted = set(due) | self._busy
            self._served = {s: t for s, t in self._served.items() if s in wanted}
            free = self.count - len(self._busy)
            # never-served scopes first (in the order their keys fell due), then the one served longest ago
            waiting = sorted((s for s in due if s not in self._busy), key=lambda s: self._served.get(s, -1.0))
            for scope in waiting[:max(0, free)]:
                self._busy.add(scope)
                jobs.put(scope)

    def _lane(self, stop: threading.Event, jobs: "queues.SimpleQueue[Scope | None]") -> None:
        while True:
            scope = jobs.get()
            if scope is None or stop.is_set():
                return
            try:
                self.queue.process_next(scope, stop)
            except Exception as exc:  # a failed update is the queue's to record; this is anything else
                self._failed(f"lane for {scope.key}", exc)
            finally:
                with self._lock:
                    self._busy.discard(scope)
                    self._served[scope] = time.monotonic()
                self._wake.set()
