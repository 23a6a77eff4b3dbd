"""Closing live memories at interpreter exit and on SIGTERM, all together within their shutdown timeouts."""

from __future__ import annotations

import atexit
import logging
import os
import signal
import threading
import time
import weakref
from typing import Any, Protocol

log = logging.getLogger(__name__)


class Closable(Protocol):
    """What the hooks need of a memory: whether it is closed, its timeout, and a close with a deadline."""

    @property
    def closed(self) -> bool: ...

    @property
    def settings(self) -> Any: ...

    def close(self, flush: bool = True, *, timeout: float | None = None) -> None: ...


_live: "weakref.WeakSet[Any]" = weakref.WeakSet()
_exit_lock = threading.Lock()
_hooks_installed = False


def _close_all() -> None:
    """Close every live memory within the longest of their shutdown_timeout_seconds, all together: what is
    not processed by then stays queued in the database, so that a process told to stop goes in seconds."""
    memories = [m for m in list(_live) if not m.closed]
    if not memories:
        return
    deadline = time.monotonic() + max(m.settings.shutdown_timeout_seconds for m in memories)
    for memory in memories:
        try:
            memory.close(timeout=max(0.0, deadline - time.monotonic()))
        except Exception:
            log.exception("closing memory at exit failed")


def _on_sigterm(signum: int, frame: Any) -> None:
    _close_all()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def register_exit(memory: Closable) -> None:
    """Flush pending work at interpreter exit and on SIGTERM (where no one else handles SIGTERM)."""
    global _hooks_installed
    _live.add(memory)
    with _exit_lock:
        if _hooks_installed:
            return
        _hooks_installed = True
        atexit.register(_close_all)
        if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
            signal.signal(signal.SIGTERM, _on_sigterm)
