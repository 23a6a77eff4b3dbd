"""Starting and closing one memory's background work: the worker (and its queue lanes) on first need, and, on
close, the live sessions flushed, the queue drained (or left in the database), the index and the database let go.

Registered for interpreter exit and SIGTERM (`exit_hooks`) when it first starts. Given its parts; it never sees
the facade.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any

from memory_core.runtime.exit_hooks import register_exit

if TYPE_CHECKING:
    from memory_core.runtime.queue import UpdateQueue
    from memory_core.runtime.worker import Worker

log = logging.getLogger(__name__)


class Lifecycle:
    """`start()` (also on first need) and `close()` of one memory. Never a thread in `__init__`."""

    def __init__(self, settings: Any, worker: "Worker", queue: "UpdateQueue", *, contexts: Any, index: Any,
                 db: Any) -> None:
        self.settings = settings
        self.worker = worker
        self.queue = queue
        self.contexts = contexts  # live sessions: flushed first, so that what they hold reaches the daily log
        self.index = index
        self.db = db
        self._closed = False
        self._start_lock = threading.Lock()

    @property
    def closed(self) -> bool:
        return self._closed

    def start(self) -> None:
        """Start the background worker unless it runs; RuntimeError once closed."""
        if self._closed:
            raise RuntimeError("this Memory is closed")
        with self._start_lock:
            if not self.worker.running:
                self.worker.start()
                register_exit(self)

    def close(self, flush: bool = True, *, timeout: float | None = None) -> None:
        """Flush what is pending (unless `flush=False`: it then stays queued in the database for any
        process to pick up), stop the background threads, and release the database. With `timeout`, return
        within about that many seconds: updates not done by then stay queued (SIGTERM closes this way)."""
        if self._closed:
            return
        self._closed = True
        deadline = None if timeout is None else time.monotonic() + timeout

        def left(default: float | None) -> float | None:
            return default if deadline is None else max(0.0, deadline - time.monotonic())

        self.worker.halt()  # no new jobs or updates; those running finish meanwhile
        try:
            self.contexts.close()
            if flush and self.settings.enabled:
                self.queue.flush(timeout=left(None))
        except Exception:
            log.exception("flushing pending memory updates on close failed; they stay queued in the database")
        finally:
            self.worker.join(left(30.0))
            self.queue.close(timeout=left(None))
            self.index.close(left(30.0))
            self.db.dispose()
