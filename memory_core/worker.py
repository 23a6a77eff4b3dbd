"""One background worker per Memory: a private `schedule.Scheduler` ticking in a daemon thread, and the
update queue's lanes (`lanes.py`) in threads of their own, so that a slow dream never holds the queue.

Jobs: the daily Deep Dream of every scope with activity (at
`dream_schedule_time` in the configured zone, once per scope and day across all processes, thanks to a
lease in the database), daily-file retention, and embedding back-fill. A job that raises is recorded
and the worker goes on. Nothing here touches Streamlit: the dashboard reads `status()`.
"""

from __future__ import annotations

import logging
import threading
import time as time_
import traceback
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta
from typing import TYPE_CHECKING, Callable

import schedule

from .actors import acting_as
from .lanes import QueueLanes
from .redact import scrub

if TYPE_CHECKING:
    from .memory import Memory

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


class Worker:
    def __init__(self, memory: "Memory", tick_seconds: float = 1.0) -> None:
        self.memory = memory
        self.tick_seconds = tick_seconds
        self.scheduler = schedule.Scheduler()  # private: never the module-level default
        self.jobs: dict[str, JobStatus] = {}
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self.dream_enabled = memory.settings.dream_schedule_enabled
        self.lanes = QueueLanes(memory.queue, memory.settings.queue_workers, tick_seconds, memory.clock.now,
                                memory.settings.secrets)

    def _job(self, name: str, fn: Callable[[], object]) -> Callable[[], None]:
        status = self.jobs.setdefault(name, JobStatus(name))

        def run() -> None:
            status.runs += 1
            status.last_run = self.memory.clock.now()
            try:
                with acting_as(f"worker:{name}"):
                    result = fn()
                status.last_result = None if result is None else str(result)[:500]
            except Exception as exc:  # the worker survives any job
                status.errors += 1
                secrets = self.memory.settings.secrets()
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
            self.add_job("dream", 60, self.dream_due)
            self.add_job("retention", 3600, self.memory.apply_retention)
            self.add_job("embeddings", 10, self.memory.index.backfill)
            self.add_job("sandboxes", 600, self.memory.remove_expired_sandboxes)
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

    # -- the scheduled dream ----------------------------------------------------------------------

    def slot(self, now: datetime | None = None) -> datetime:
        """Today's dream slot, in the configured zone (it may already be past)."""
        settings = self.memory.settings
        now = (now or self.memory.clock.now()).astimezone(settings.tz)
        hour, minute = (int(x) for x in settings.dream_schedule_time.split(":"))
        return datetime.combine(now.date(), time(hour, minute), tzinfo=settings.tz)

    def next_dream(self) -> datetime | None:
        if not self.dream_enabled:
            return None
        now = self.memory.clock.now()
        slot = self.slot(now)
        return slot if slot > now else slot + timedelta(days=1)

    def dream_due(self) -> str:
        """Run the dream of each active scope once per slot (whichever process gets the lease)."""
        if not self.dream_enabled:
            return "disabled"
        now = self.memory.clock.now()
        slot = self.slot(now)
        if now < slot:
            return "not yet"
        ran = []
        for scope in self.memory.active_scopes():
            if not self.memory.leases.acquire(f"dream:{scope.key}:{slot.date().isoformat()}", slot + timedelta(days=1)):
                continue
            if self.memory.dreamer.tokens_today(scope) >= self.memory.settings.dream_daily_cost_cap_tokens:
                log.warning("dream of %s skipped: daily token cap reached", scope.key)
                continue
            if self.memory.budget_paused(user_id=scope.user_id, agent_name=scope.agent_name):
                log.info("dream of %s waits: its daily token budget is spent", scope.key)
                continue
            result = self.memory.deep_dream(1, user_id=scope.user_id, agent_name=scope.agent_name)
            ran.append(f"{scope.key}={result.status}")
        return ", ".join(ran) or "nothing to do"

    def status(self) -> WorkerStatus:
        queue, lanes = self.memory.queue, self.lanes
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
