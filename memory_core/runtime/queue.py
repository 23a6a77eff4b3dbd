"""The debounced update queue, persisted in the database so that nothing queued is lost.

One row per (thread_id, user_id, agent_name) key. `add()` replaces the pending context of its key and
pushes its due time to now + debounce_seconds; the worker processes due keys. A key is claimed with a
conditional UPDATE, so among several processes on one database exactly one processes it. A failed
update is retried with exponential backoff, then kept as `failed` with its error until retried. Each row
remembers who queued it, and the update is applied as that actor.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Callable

from memory_core.store.actors import acting_as, current_actor
from memory_core.clock import utc
from memory_core.errors import BudgetExceeded, QueueFullError
from memory_core.text.messages import validate_messages
from memory_core.text.redact import scrub
from memory_core.scope import Scope, make_scope
from memory_core.store.queue_store import QueueStore
from memory_core.text.validation import check_text

if TYPE_CHECKING:
    from memory_core.clock import Clock
    from memory_core.settings import Settings
    from memory_core.store.db import Database
    from memory_core.store.models import PendingUpdateRow

log = logging.getLogger(__name__)
WORKER_ACTOR = "worker"
BUDGET_RECHECK_SECONDS = 300  # a scope whose daily token budget is spent looks again this often (a raise, a new day)


@dataclass(frozen=True)
class QueueItem:
    thread_id: str
    user_id: str
    agent_name: str
    status: str
    attempts: int
    last_error: str | None
    due_at: datetime
    enqueued_at: datetime
    messages: int
    actor: str | None = None


def validate_thread_id(thread_id: Any) -> str:
    check_text(thread_id, "thread_id", 256)
    if not thread_id.strip():
        raise ValueError("thread_id must be a non-empty string of at most 256 characters")
    return thread_id


# apply(messages, thread_id=..., user_id=..., agent_name=..., options=...) runs one update.
Apply = Callable[..., object]


class UpdateQueue:
    """`memory.queue`."""

    def __init__(self, settings: "Settings", db: "Database", clock: "Clock", apply: Apply,
                 on_enqueue: Callable[[], object] = lambda: None, store: QueueStore | None = None) -> None:
        self.settings = settings
        self.db = db
        self.store = store or QueueStore(db)  # the SQL; this module keeps the policy
        self.clock = clock
        self._apply = apply
        self._on_enqueue = on_enqueue  # starts the worker on first need
        self.worker_id = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self._executor: ThreadPoolExecutor | None = None
        self._executor_lock = threading.Lock()
        self._process_lock = threading.Lock()
        self._stop = threading.Event()
        self._pace_lock = threading.Lock()
        self._next_start = 0.0  # time.monotonic() before which no update starts (rate_limit_seconds)
        self._threads: set[threading.Thread] = set()
        self._claimed = False  # whether this queue ever claimed a key (close() then has claims to put back)
        self.in_flight = 0
        self.processed = 0
        self.last_error: str | None = None

    @property
    def executor(self) -> ThreadPoolExecutor:
        """The pool that synchronous LLM calls are offloaded to (created on first need)."""
        with self._executor_lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="memory-llm")
            return self._executor

    # -- enqueueing ------------------------------------------------------------------------------

    def _upsert(self, messages: Any, thread_id: str, scope: Scope, delay: float,
                options: dict[str, Any] | None = None, also: Callable[[Any], object] | None = None) -> None:
        thread_id = validate_thread_id(thread_id)
        payload = json.dumps(validate_messages(messages, self.settings.max_conversation_chars))
        extra = json.dumps(options) if options else None
        now = self.clock.now()
        due = now + timedelta(seconds=delay)
        # The depth is counted per scope: one scope's big import fills its own share, never another scope's.
        depth = self.store.enqueue(thread_id, scope, messages=payload, options=extra, due=due, now=now,
                                   actor=current_actor(), max_depth=self.settings.queue_max_depth, also=also)
        if depth is not None:
            raise QueueFullError(f"the update queue holds {depth} keys of {scope.key} (queue_max_depth, "
                                 "per scope); new keys of this scope are refused until they drain, while "
                                 "pending keys can still be replaced")

    def add(self, messages: list[dict[str, str]], *, thread_id: str, user_id: str = "default",
            agent_name: str = "default", options: dict[str, Any] | None = None,
            also: Callable[[Any], object] | None = None) -> None:
        """Queue a conversation context; it is processed once its key has been quiet for debounce_seconds.
        `also(session)` writes more rows in the same transaction (an import's ledger entry: both or neither)."""
        if not self.settings.enabled:
            return
        self._upsert(messages, thread_id, make_scope(user_id, agent_name), self.settings.debounce_seconds, options,
                     also)
        self._on_enqueue()

    def add_nowait(self, messages: list[dict[str, str]], *, thread_id: str, user_id: str = "default",
                   agent_name: str = "default") -> None:
        """Queue a context and start processing it at once, in a background thread."""
        if not self.settings.enabled:
            return
        scope = make_scope(user_id, agent_name)
        self._upsert(messages, thread_id, scope, 0.0)
        thread = threading.Thread(target=self._run_keys, args=([(thread_id, scope.user_id, scope.agent_name)],),
                                  name=f"memory-update-{thread_id[:40]}", daemon=True)
        with self._process_lock:
            self._threads.add(thread)
        thread.start()

    async def aadd(self, messages: list[dict[str, str]], *, thread_id: str, user_id: str = "default",
                   agent_name: str = "default") -> None:
        """`add()` for async agents: the database write runs in the executor, the event loop never waits."""
        actor = current_actor()

        def add() -> None:
            with acting_as(actor):
                self.add(messages, thread_id=thread_id, user_id=user_id, agent_name=agent_name)

        await asyncio.get_running_loop().run_in_executor(self.executor, add)

    # -- processing ------------------------------------------------------------------------------

    def _recover_stale(self, now: datetime) -> None:
        self.store.recover_stale(now - timedelta(seconds=self.settings.claim_timeout_seconds))

    def _claim(self, pk: int, generation: int) -> bool:
        claimed = self.store.claim(pk, generation, self.worker_id, self.clock.now())
        self._claimed = self._claimed or claimed
        return claimed

    def _keys(self, due_only: bool, keys: list[tuple[str, str, str]] | None = None,
              scope: Scope | None = None, limit: int | None = None) -> list[tuple[int, int]]:
        rows = self.store.due(self.clock.now() if due_only else None, scope=scope, limit=limit)
        if keys is not None:
            wanted = set(keys)
            rows = [r for r in rows if r[2:] in wanted]
        return [(pk, generation) for pk, generation, *_ in rows]

    def _run_one(self, row: "PendingUpdateRow") -> None:
        with acting_as(row.actor or WORKER_ACTOR):
            options = json.loads(row.options) if row.options else {}
            options["taken_in"] = utc(row.enqueued_at).isoformat()  # what an erase since then refuses (erase.Guard)
            self._apply(json.loads(row.messages), thread_id=row.thread_id, user_id=row.user_id,
                        agent_name=row.agent_name, options=options)

    def _process(self, pk: int, generation: int) -> bool:
        """Process one claimed row; True when the update was applied."""
        if not self._claim(pk, generation):
            return False
        row = self.store.get(pk)
        if row is None:
            return False
        with self._process_lock:
            self.in_flight += 1
        try:
            # In this thread: the queue's lanes are daemon threads, so an update still running when the
            # process must go (SIGTERM) never holds its exit; its row is put back to pending by close().
            self._run_one(row)
        except Exception as exc:  # a timeout too: every failure is recorded, retried, then kept as failed
            self._failed(row, exc)
            return False
        finally:
            with self._process_lock:
                self.in_flight -= 1
        self.store.done(pk, generation)  # a newer context that arrived meanwhile (a new generation) stays
        self.processed += 1
        return True

    def _failed(self, row: "PendingUpdateRow", exc: Exception) -> None:
        if isinstance(exc, BudgetExceeded):  # the scope's daily budget is spent: it waits, no attempt counted
            log.info("memory update of thread %s waits: %s", row.thread_id, exc)
            self.store.postpone(row.pk, row.generation, str(exc)[:2000],
                                self.clock.now() + timedelta(seconds=BUDGET_RECHECK_SECONDS))
            return
        error = scrub(f"{type(exc).__name__}: {exc}", *self.settings.secrets())[:2000]
        self.last_error = error
        attempts = row.attempts + 1
        now = self.clock.now()
        final = attempts >= self.settings.update_max_attempts
        backoff = min(self.settings.retry_backoff_seconds * 2 ** (attempts - 1), 3600.0)
        log.warning("memory update of thread %s failed (attempt %d/%d): %s", row.thread_id, attempts,
                    self.settings.update_max_attempts, error)
        self.store.fail(row.pk, row.generation, attempts=attempts, error=error,
                        due=now if final else now + timedelta(seconds=backoff), final=final)

    def _pace(self, stop: threading.Event) -> bool:
        """Wait for this process's next start slot (rate_limit_seconds after the last start, and after the
        last end, whichever thread ran it); False when `stop` was set meanwhile."""
        rate = self.settings.rate_limit_seconds
        if stop.is_set():
            return False
        if not rate:
            return True
        with self._pace_lock:
            now = time.monotonic()
            start = max(now, self._next_start)
            self._next_start = start + rate
        return not stop.wait(start - now) if start > now else True

    def _paced(self, pk: int, generation: int) -> bool:
        try:
            return self._process(pk, generation)
        finally:
            with self._pace_lock:
                self._next_start = max(self._next_start, time.monotonic() + self.settings.rate_limit_seconds)

    def _run_batch(self, items: list[tuple[int, int]], stop: threading.Event, done: list[int] | None = None,
                   deadline: float | None = None) -> int:
        done = [] if done is None else done
        for pk, generation in items:
            if not self._pace(stop) or (deadline is not None and time.monotonic() >= deadline):
                break
            if self._paced(pk, generation):
                done.append(pk)
        return len(done)

    def _run_keys(self, keys: list[tuple[str, str, str]]) -> None:
        try:
            self._run_batch(self._keys(False, keys), self._stop)
        finally:
            with self._process_lock:
                self._threads.discard(threading.current_thread())

    def tick(self) -> int:
        """Process the keys whose debounce window has passed, in the caller's thread."""
        self._recover_stale(self.clock.now())
        return self._run_batch(self._keys(True), self._stop)

    def recover_stale(self) -> None:
        """Put back to pending the keys whose claim is older than claim_timeout_seconds (a process that died)."""
        self._recover_stale(self.clock.now())

    def due_scopes(self) -> list[Scope]:
        """The scopes with a key whose debounce window has passed, the longest waiting first."""
        return self.store.due_scopes(self.clock.now())

    def process_next(self, scope: Scope, stop: threading.Event) -> bool:
        """Process the scope's longest-waiting due key (after its rate-limit slot); False when it had none or
        `stop` was set first."""
        keys = self._keys(True, scope=scope, limit=1)
        if not keys or not self._pace(stop):
            return False
        self._paced(*keys[0])
        return True

    def flush(self, *, user_id: str | None = None, agent_name: str | None = None,
              timeout: float | None = None) -> int:
        """Process everything pending now (of one scope, when both are given), in the caller's thread; return
        how many updates were applied. With `timeout`, stop starting updates after that many seconds and
        return then (an update still running goes on in a daemon thread; what is left stays queued)."""
        scope = make_scope(user_id, agent_name) if user_id is not None and agent_name is not None else None
        deadline = None if timeout is None else time.monotonic() + timeout
        self._recover_stale(self.clock.now())
        self.wait(60.0 if timeout is None else timeout)
        keys = self._keys(False, scope=scope)
        if deadline is None:
            return self._run_batch(keys, self._stop)
        halt, done = threading.Event(), []
        thread = threading.Thread(target=self._run_batch, args=(keys, halt, done, deadline), name="memory-flush",
                                  daemon=True)
        try:
            thread.start()
        except RuntimeError:  # no new threads at interpreter exit (Python 3.12+): in this one, between updates
            return self._run_batch(keys, halt, done, deadline)
        thread.join(max(0.0, deadline - time.monotonic()))
        halt.set()
        if thread.is_alive():
            log.warning("flushing the update queue stopped after %.1f s: %d update(s) applied, the rest stay queued",
                        timeout, len(done))
        return len(done)

    def wait(self, timeout: float | None = 60.0) -> None:
        """Wait for `add_nowait` threads in flight."""
        with self._process_lock:
            threads = list(self._threads)
        for t in threads:
            t.join(timeout)

    # -- inspection ------------------------------------------------------------------------------

    def pending(self, *, user_id: str | None = None, agent_name: str | None = None) -> int:
        """How many keys wait to be processed (of one scope, when named)."""
        return self.store.unfinished(user_id, agent_name)

    def items(self, status: str | None = None, *, user_id: str | None = None,
              agent_name: str | None = None) -> list[QueueItem]:
        rows = self.store.items(status, user_id, agent_name)
        return [QueueItem(r.thread_id, r.user_id, r.agent_name, r.status, r.attempts, r.last_error, utc(r.due_at),
                          utc(r.enqueued_at), len(json.loads(r.messages)), r.actor) for r in rows]

    def failed(self, *, user_id: str | None = None, agent_name: str | None = None) -> list[QueueItem]:
        return self.items("failed", user_id=user_id, agent_name=agent_name)

    def retry(self, thread_id: str | None = None, *, user_id: str | None = None, agent_name: str | None = None) -> int:
        """Put failed updates back in the queue (all, one scope's, or one key); return how many."""
        count = self.store.requeue(self.clock.now(), thread_id, user_id, agent_name)
        if count:
            self._on_enqueue()
        return count

    def release_claims(self) -> int:
        """Put this process's unfinished claims back to pending (at close: the next start processes them)."""
        if not self._claimed:
            return 0
        return self.store.release(self.worker_id)

    def close(self, timeout: float | None = None) -> None:
        """Start no more updates; wait for `add_nowait` threads (at most `timeout` seconds when given), and
        leave any update still running queued for the next start."""
        self._stop.set()
        self.wait(60.0 if timeout is None else timeout)
        try:
            released = self.release_claims()
        except Exception:
            log.exception("putting unfinished updates back in the queue failed; they are recovered after "
                          "claim_timeout_seconds")
            released = 0
        if released:
            log.warning("%d update(s) still running at close stay queued for the next start", released)
        with self._executor_lock:
            if self._executor is not None:
                self._executor.shutdown(wait=timeout is None, cancel_futures=timeout is not None)
                self._executor = None
