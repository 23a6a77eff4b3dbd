"""One background worker per Memory: a private `schedule.Scheduler` ticking in a daemon thread, and the
update queue's lanes (`lanes.py`) in threads of their own, so that a slow dream never holds the queue.

The worker runs the jobs it is given (a name, an interval and a callable each: Memory registers the nightly
dream of `dream_schedule.py`, retention, embedding back-fill and sandbox expiry). A job that raises is
recorded and the worker goes on. Nothing here touches Streamlit: the dashboard reads `status()`.
"""

from __future__ import annotations

import logging
import threading
import time as time_
import traceback
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Sequence

import schedule

from memory_core.store.actors import acting_as
from memory_core.runtime.lanes import QueueLanes
from memory_core.text.redact import scrub

if TYPE_CHECKING:
    from memory_core.runtime.dream_schedule import DreamSchedule
    from memory_core.runtime.queue import UpdateQueue

log = logging.getLogger(__name__)


@dataclass
class JobStatus:
    name: str
    runs: int = 0
    errors: int = 0
    last_run: datetime | None = None
    last_error: str | None = None
    last_result: str | None = None


@dataclass
class WorkerStatus:
    running: bool
    pending: int
    in_flight: int
    failed: int
    processed: int
    jobs: dict[str, JobStatus] = field(default_factory=dict)
    next_dream: datetime | None = None
    dream_enabled: bool = True
    last_error: str | None = None
    restores_pending: int = 0  # documents an interrupted bundle import has still to write (see finish_restores)
    llm_problems: list = field(default_factory=list)
    budget_paused: dict = field(default_factory=dict)  # scope key -> why its LLM work waits (daily_token_budget)  # the last LLMProblems of this process (llm/problems.py)


@dataclass(frozen=True)
class Job:
    """A job the worker runs every `every_seconds`."""

    name: str
    every_seconds: float
    run: Callable[[], object]


class Worker:
    def __init__(self, queue: "UpdateQueue", settings: Any, now: Callable[[], datetime], *,
                 jobs: Sequence[Job] = (), dream: "DreamSchedule | None" = None, tick_seconds: float = 1.0) -> None:
        """`jobs` are (re)scheduled on every start; `dream` is the schedule whose state `status()` reports."""
        self.queue = queue
        self.settings = settings
        self.now = now
        self.registered = list(jobs)
        self.dream = dream
        self.tick_seconds = tick_seconds
        self.scheduler = schedule.Scheduler()  # private: never the module-level default
        self.jobs: dict[str, JobStatus] = {}
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self.lanes = QueueLanes(queue, settings.queue_workers, tick_seconds, now, settings.secrets)

    def _job(self, name: str, fn: Callable[[], object]) -> Callable[[], None]:
        status = self.jobs.setdefault(name, JobStatus(name))

        def run() -> None:
            status.runs += 1
            status.last_run = self.now()
            try:
                with acting_as(f"worker:{name}"):
                    result = fn()
                status.last_result = None if result is None else str(result)[:500]
            except Exception as exc:  # the worker survives any job
                status.errors += 1
                secrets = self.settings.secrets()
                status.last_error = scrub(f"{type(exc).__name__}: {exc}", *secrets)[:1000]
                log.error("worker job %s failed: %s\n%s", name, status.last_error,
                          scrub(traceback.format_exc(), *secrets))

        return run

    def add_job(self, name: str, every_seconds: float, fn: Callable[[], object]) -> None:
        self.scheduler.every(every_seconds).seconds.do(self._job(name, fn)).tag(name)

    def start(self) -> None:
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self._stop.clear()
            self.scheduler.clear()
            for job in self.registered:
                self.add_job(job.name, job.every_seconds, job.run)
            self._thread = threading.Thread(target=self._loop, name="memory-core-worker", daemon=True)
            self._thread.start()
            self.lanes.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.scheduler.run_pending()
            self._stop.wait(min(0.25, self.tick_seconds))

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def halt(self) -> None:
        """Start no more jobs or updates; what runs now finishes (see `join`)."""
        self._stop.set()
        self.lanes.halt()

    def join(self, timeout: float | None = 30.0) -> None:
        """Wait for the running job and updates, at most `timeout` seconds (they are daemon threads)."""
        deadline = None if timeout is None else time_.monotonic() + timeout
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        self._thread = None
        self.lanes.join(None if deadline is None else max(0.0, deadline - time_.monotonic()))

    def stop(self, timeout: float = 30.0) -> None:
        self.halt()
        self.join(timeout)

    # -- the scheduled dream (its state lives in DreamSchedule; these read and set it) ------------

    @property
    def dream_enabled(self) -> bool:
        return self.dream is not None and self.dream.enabled

    @dream_enabled.setter
    def dream_enabled(self, value: bool) -> None:
        if self.dream is not None:
            self.dream.enabled = value

    def next_dream(self) -> datetime | None:
        return self.dream.next_dream() if self.dream is not None else None

    def dream_due(self) -> str:
        """Run the nightly dream now if its slot has come (see DreamSchedule.due)."""
        return self.dream.due() if self.dream is not None else "disabled"

    def status(self) -> WorkerStatus:
        queue, lanes = self.queue, self.lanes
        items = queue.items()
        jobs = {k: JobStatus(**vars(v)) for k, v in self.jobs.items()}
        jobs["queue"] = JobStatus("queue", runs=lanes.rounds, errors=lanes.errors, last_run=lanes.last_run,
                                  last_error=lanes.last_error,
                                  last_result=f"{lanes.busy} of {lanes.count} lanes busy, {queue.processed} processed")
        return WorkerStatus(
            running=self.running, pending=sum(1 for i in items if i.status == "pending"),
            in_flight=sum(1 for i in items if i.status == "in_flight"),
            failed=sum(1 for i in items if i.status == "failed"), processed=queue.processed,
            jobs=jobs, next_dream=self.next_dream(),
            dream_enabled=self.dream_enabled, last_error=queue.last_error)
