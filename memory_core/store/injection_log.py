"""The injection record, written behind: every context call records one row (who asked, the query, the facts that
went in), and a write per call was a tenth of an MCP `get_memory_context` (a transaction of its own, and the
connection's read snapshot given up for it). The rows wait here, in this process, and go to the database together:
at most FLUSH_SECONDS after the first of them, when MAX_PENDING wait, before any read of the record, before an
erase or a purge (`Database.flush_buffered`), when the memory closes, and at the process's exit (a script that never
closes its memory). A process killed outright loses the rows of its last FLUSH_SECONDS; nothing else.

An erase in another process cannot reach rows still waiting here: each query is passed, when written, through
`screen` (composition: what the scope's tombstones made since the row was recorded leave of it), as a live
session's summary is.
"""

from __future__ import annotations

import atexit
import json
import logging
import threading
import weakref
from datetime import datetime
from typing import Callable

from sqlalchemy import insert

from memory_core.scope import Scope
from memory_core.store.db import Database
from memory_core.store.models import InjectionRow

log = logging.getLogger(__name__)

FLUSH_SECONDS = 0.5  # the longest a recorded injection waits before it is written
MAX_PENDING = 500  # rows that wait at most: the one that fills the buffer writes them all
MAX_KEPT = 10_000  # rows kept for a retry while the database refuses them (the oldest go first)
_ADD = insert(InjectionRow.__table__)  # built once

# (scope, since) -> what takes out of a text the statements erased in the scope since then, or None when nothing was
Screen = Callable[[Scope, datetime], "Callable[[str], str] | None"]
_LOGS: "weakref.WeakSet[InjectionLog]" = weakref.WeakSet()  # this process's logs, written at its exit if not before


@atexit.register
def _flush_at_exit() -> None:
    for injection_log in list(_LOGS):
        injection_log._flush_quietly()


class InjectionLog:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.screen: Screen | None = None  # set by composition once the eraser exists
        self._pending: list[tuple[Scope, dict]] = []
        self._lock = threading.Lock()  # the list and the timer
        self._writing = threading.Lock()  # one flush at a time: rows are written in the order they were recorded
        self._timer: threading.Timer | None = None
        db.buffered.append(self.flush)
        _LOGS.add(self)

    def add(self, scope: Scope, at: datetime, actor: str | None, query: str | None, tokens: int, max_tokens: int,
            fact_ids: list[str]) -> None:
        row = {"at": at, "user_id": scope.user_id, "agent_name": scope.agent_name, "actor": actor, "query": query,
               "tokens": tokens, "max_tokens": max_tokens, "fact_ids": json.dumps(fact_ids)}
        with self._lock:
            self._pending.append((scope, row))
            full = len(self._pending) >= MAX_PENDING
            if not full and self._timer is None:
                self._timer = threading.Timer(FLUSH_SECONDS, self._flush_quietly)
                self._timer.daemon = True
                self._timer.start()
        if full:
            self.flush()

    def pending(self) -> int:
        with self._lock:
            return len(self._pending)

    def flush(self) -> None:
        """Write every waiting row, in one transaction; on failure they wait again (the error is raised)."""
        with self._writing:
            with self._lock:
                rows, self._pending = self._pending, []
                timer, self._timer = self._timer, None
            if timer is not None:
                timer.cancel()
            if not rows:
                return
            try:
                values = self._screened(rows)
                with self.db.write_rows() as conn:
                    conn.execute(_ADD, values)
            except BaseException:
                with self._lock:
                    self._pending[:0] = rows
                    del self._pending[:max(0, len(self._pending) - MAX_KEPT)]
                raise

    def _screened(self, rows: list[tuple[Scope, dict]]) -> list[dict]:
        """The rows, each query without what an erase since the scope's first waiting row took (see the module)."""
        if self.screen is None or not any(row["query"] for _scope, row in rows):
            return [row for _scope, row in rows]
        since: dict[Scope, datetime] = {}
        for scope, row in rows:
            since[scope] = min(since.get(scope, row["at"]), row["at"])
        drops = {scope: self.screen(scope, at) for scope, at in since.items()}  # one read of a scope's tombstones
        return [{**row, "query": drop(row["query"])} if row["query"] and (drop := drops[scope]) is not None else row
                for scope, row in rows]

    def _flush_quietly(self) -> None:
        try:
            self.flush()
        except Exception as exc:  # noqa: BLE001 - a timer's thread: the rows wait for the next flush
            log.warning("the injection record could not be written yet (%s); %d rows wait", type(exc).__name__,
                        self.pending())
