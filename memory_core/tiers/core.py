"""The core tier: `MEMORY.md`, rewritten atomically, every version kept for diff and rollback."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Callable

from sqlalchemy import func, select

from ..clock import utc
from ..scope import Scope
from ..store.models import CoreVersionRow

if TYPE_CHECKING:
    from ..clock import Clock
    from ..documents import DocumentStore
    from ..store.db import Database

CORE_PATH = "MEMORY.md"
BULLET = re.compile(r"^\s*[-*]\s+(.*\S)\s*$")  # a Markdown "- " item; group 1 is its text


@dataclass(frozen=True)
class CoreVersion:
    version: int
    content: str
    reason: str
    created_at: datetime


def bullets(markdown: str | None) -> list[str]:
    """The `- ` items of a Markdown document."""
    if not markdown:
        return []
    return [m.group(1) for line in markdown.splitlines() if (m := BULLET.match(line))]


class CoreTier:
    def __init__(self, store: "DocumentStore", db: "Database", clock: "Clock",
                 on_write: Callable[[Scope], None] | None = None) -> None:
        self.store = store
        self.db = db
        self.clock = clock
        self.on_write = on_write

    def read(self, scope: Scope) -> str | None:
        return self.store.read(scope, CORE_PATH)

    def write(self, scope: Scope, text: str, reason: str) -> CoreVersion:
        """Replace MEMORY.md and record the new version (and the first, hand-made one, if untracked)."""
        previous = self.store.read(scope, CORE_PATH)
        # The file first (atomically: old or new), then its version row. The stores may share the
        # database, so the two are not nested in one transaction.
        self.store.write(scope, CORE_PATH, text)
        with self.db.write(lock=f"core:{scope.key}") as s:
            last = s.execute(select(func.max(CoreVersionRow.version)).where(
                CoreVersionRow.user_id == scope.user_id, CoreVersionRow.agent_name == scope.agent_name)).scalar()
            version = last or 0
            if version == 0 and previous:
                version = 1
                s.add(CoreVersionRow(user_id=scope.user_id, agent_name=scope.agent_name, version=1,
                                     content=previous, reason="found before the first tracked write",
                                     created_at=self.clock.now()))
            row = CoreVersionRow(user_id=scope.user_id, agent_name=scope.agent_name, version=version + 1,
                                 content=text, reason=reason[:256], created_at=self.clock.now())
            s.add(row)
        if self.on_write:
            self.on_write(scope)
        return CoreVersion(row.version, text, row.reason, utc(row.created_at))

    def versions(self, scope: Scope) -> list[CoreVersion]:
        """Every recorded version, newest first."""
        with self.db.read() as s:
            rows = s.execute(select(CoreVersionRow).where(
                CoreVersionRow.user_id == scope.user_id, CoreVersionRow.agent_name == scope.agent_name,
            ).order_by(CoreVersionRow.version.desc())).scalars().all()
        return [CoreVersion(r.version, r.content, r.reason, utc(r.created_at)) for r in rows]

    def version(self, scope: Scope, number: int) -> CoreVersion:
        for v in self.versions(scope):
            if v.version == number:
                return v
        raise KeyError(f"MEMORY.md version {number}")

    def rollback(self, scope: Scope, number: int) -> CoreVersion:
        target = self.version(scope, number)
        return self.write(scope, target.content, f"rollback to version {number}")

    @staticmethod
    def diff(old: str | None, new: str | None, old_name: str = "previous", new_name: str = "current") -> str:
        return "".join(difflib.unified_diff((old or "").splitlines(keepends=True), (new or "").splitlines(keepends=True),
                                            fromfile=old_name, tofile=new_name))
