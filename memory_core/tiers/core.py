"""The core tier: `MEMORY.md`, rewritten atomically, every version kept for diff and rollback.

Every MEMORY.md that was ever on disk is a recorded version. A write puts the file and its version row
in one transaction where the documents live in the same database; with files, a crash between the two
(or a hand edit) leaves a file that no row records, and the next `read`, `write` or `versions` records it
("found on disk, not recorded before").
"""

from __future__ import annotations

import difflib
import hashlib
import logging
import re
from typing import TYPE_CHECKING, Callable

from memory_core.store.actors import current_actor
from memory_core.tiers.documents import DatabaseDocumentStore
from memory_core.scope import Scope
from memory_core.store.core_store import CoreStore, CoreVersion, CoreWrite
from memory_core.text.truth import Sources, sentence_key, sentences_of
from memory_core.text.validation import check_memory_text

if TYPE_CHECKING:
    from memory_core.clock import Clock
    from memory_core.tiers.documents import DocumentStore
    from memory_core.store.db import Database

log = logging.getLogger(__name__)

CORE_PATH = "MEMORY.md"
BULLET = re.compile(r"^\s*[-*]\s+(.*\S)\s*$")  # a Markdown "- " item; group 1 is its text
FOUND_ON_DISK = "found on disk, not recorded before"


def bullets(markdown: str | None) -> list[str]:
    """The `- ` items of a Markdown document."""
    if not markdown:
        return []
    return [m.group(1) for line in markdown.splitlines() if (m := BULLET.match(line))]


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class CoreTier:
    def __init__(self, store: "DocumentStore", db: "Database", clock: "Clock",
                 on_write: Callable[[Scope], None] | None = None, *, max_chars: int | None = None) -> None:
        self.store = store
        self.db = db
        self.clock = clock
        self.on_write = on_write
        self.max_chars = max_chars
        self.versions_store = CoreStore(db, clock)
        # scope -> digest of the MEMORY.md last seen to be recorded, so that a read costs no query
        # while the file is unchanged
        self._recorded: dict[Scope, bytes] = {}

    def _in_db(self) -> bool:
        """Whether the documents live in this very database, so a write can commit file and row together."""
        return isinstance(self.store, DatabaseDocumentStore) and self.store.db is self.db

    def _stored(self, tx: CoreWrite, scope: Scope) -> str | None:
        """MEMORY.md as stored, inside the caller's transaction where the documents share its database."""
        return self.store.read_in(tx.session, scope, CORE_PATH) if self._in_db() else self.store.read(scope, CORE_PATH)

    def read(self, scope: Scope) -> str | None:
        """MEMORY.md, recorded as a version first if no row records it."""
        text = self.store.read(scope, CORE_PATH)
        self._reconcile(scope, text)
        return text

    def write(self, scope: Scope, text: str, reason: str, *, sources: Sources | None = None) -> CoreVersion:
        """Replace MEMORY.md and record the new version (and the one on disk first, if no row records it).
        `sources`: what memory_core wrote its bullets from ({sentence key: Provenance}); bullets no longer there
        lose theirs, in the same transaction.

        ValueError, with nothing written, for a non-string, NUL characters, lone surrogates or more than
        `max_chars` characters."""
        text = check_memory_text(text, "MEMORY.md", self.max_chars)
        reason = check_memory_text(reason, "reason")
        # Under the scope's lock from first read to commit, so that writers take turns and a reader never
        # records a file whose row is about to be written.
        with self.versions_store.writing(scope) as tx:
            newest = tx.newest()
            number = newest.version if newest else 0
            on_disk = self._stored(tx, scope)
            if self._unrecorded(on_disk, newest):
                number += 1
                tx.add(number, on_disk, FOUND_ON_DISK)
            if self._in_db():
                self.store.write_in(tx.session, scope, CORE_PATH, text)
            else:
                # The file first (atomically: old or new), then its row: a crash in between leaves a file
                # that the next read records.
                self.store.write(scope, CORE_PATH, text)
            version = tx.add(number + 1, text, reason[:256], current_actor())
            tx.provenance({sentence_key(s) for s in sentences_of(text)}, sources)
        self._recorded[scope] = _digest(text)
        if self.on_write:
            self.on_write(scope)
        return version

    def versions(self, scope: Scope) -> list[CoreVersion]:
        """Every recorded version, newest first (the MEMORY.md on disk among them)."""
        self.read(scope)
        return self.versions_store.versions(scope)

    def _reconcile(self, scope: Scope, on_disk: str | None) -> None:
        """Record `on_disk` as a version if it is not the newest one: cheap while the file is unchanged."""
        if on_disk is None or self._recorded.get(scope) == _digest(on_disk):
            return
        recorded = not self._unrecorded(on_disk, self.versions_store.newest(scope))
        if not recorded:
            with self.versions_store.writing(scope) as tx:
                newest = tx.newest()
                # Read again under the lock: a writer may have replaced the file and recorded it meanwhile.
                on_disk = self._stored(tx, scope)
                if self._unrecorded(on_disk, newest):
                    tx.add((newest.version if newest else 0) + 1, on_disk, FOUND_ON_DISK)
                    log.warning("MEMORY.md of %s differs from its newest recorded version: recorded it (%s)",
                                scope.key, FOUND_ON_DISK)
        if on_disk is not None:
            self._recorded[scope] = _digest(on_disk)

    @staticmethod
    def _unrecorded(on_disk: str | None, newest: CoreVersion | None) -> bool:
        """Whether the document on disk is missing from the versions (an empty file is worth nothing new)."""
        if newest is None:
            return bool(on_disk)
        return on_disk is not None and on_disk != newest.content

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
