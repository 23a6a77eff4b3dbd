"""Where the Markdown documents live: a local directory, or the database.

Paths are relative to a scope's workspace: `MEMORY.md`, `memory/YYYY-MM-DD.md`,
`memory/dreams/YYYY-MM-DD.md`. Both stores give the same guarantees: `write` replaces a document
atomically (old or new, never half), `append` adds a block that is whole or absent after a crash,
and concurrent appends from threads or processes never interleave.
"""

from __future__ import annotations

import fcntl
import os
import re
import tempfile
import threading
from pathlib import Path
from typing import Callable, Protocol

from sqlalchemy import select

from .clock import Clock
from .scope import Scope
from .store.db import Database
from .store.models import DocumentRow

_SAFE_PATH = re.compile(r"(?:[A-Za-z0-9_.\-]+/)*[A-Za-z0-9_\-][A-Za-z0-9_.\-]*")


def check_path(path: str) -> str:
    if not _SAFE_PATH.fullmatch(path) or ".." in path.split("/"):
        raise ValueError(f"invalid document path {path!r}")
    return path


class DocumentStore(Protocol):
    kind: str

    def read(self, scope: Scope, path: str) -> str | None: ...
    def write(self, scope: Scope, path: str, text: str) -> None: ...
    def append(self, scope: Scope, path: str, block: str, header: str) -> None: ...
    def list(self, scope: Scope, prefix: str) -> list[str]: ...
    def delete(self, scope: Scope, path: str) -> None: ...
    def describe(self, scope: Scope) -> str: ...


def atomic_write(target: Path, text: str, durable: bool = True) -> None:
    """Write `text` to `target` so that a reader or a crash sees the old file or the new, never half."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            if durable:
                os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    if durable:
        dir_fd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


class LocalDocumentStore:
    """Documents as files under each scope's workspace directory.

    Appends are made crash-safe with a tiny sidecar (`.NAME.committed`) holding the length of the
    file's last whole block: bytes past it are the remains of an append cut short and are ignored,
    then cut off by the next append.
    """

    kind = "files"

    def __init__(self, workspace: Callable[[Scope], Path], durable: bool = True) -> None:
        self.workspace = workspace
        self.durable = durable
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def _path(self, scope: Scope, path: str) -> Path:
        return self.workspace(scope) / check_path(path)

    @staticmethod
    def _sidecar(target: Path) -> Path:
        return target.with_name(f".{target.name}.committed")

    def _thread_lock(self, target: Path) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(str(target), threading.Lock())

    def _committed(self, target: Path) -> int | None:
        try:
            return int(self._sidecar(target).read_text().strip())
        except (FileNotFoundError, ValueError):
            return None

    def read(self, scope: Scope, path: str) -> str | None:
        target = self._path(scope, path)
        try:
            data = target.read_bytes()
        except FileNotFoundError:
            return None
        committed = self._committed(target)
        if committed is not None and committed < len(data):
            data = data[:committed]
        return data.decode("utf-8", errors="replace")

    def write(self, scope: Scope, path: str, text: str) -> None:
        target = self._path(scope, path)
        with self._thread_lock(target):
            atomic_write(target, text, self.durable)
            self._sidecar(target).unlink(missing_ok=True)

    def append(self, scope: Scope, path: str, block: str, header: str) -> None:
        target = self._path(scope, path)
        target.parent.mkdir(parents=True, exist_ok=True)
        with self._thread_lock(target):
            fd = os.open(target, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                size = os.fstat(fd).st_size
                committed = self._committed(target)
                if committed is not None and committed < size:
                    os.ftruncate(fd, committed)  # the tail of an append that a crash cut short
                    size = committed
                data = ((header if size == 0 else "") + block).encode("utf-8")
                os.lseek(fd, size, os.SEEK_SET)
                view = memoryview(data)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
                if self.durable:
                    os.fsync(fd)
                atomic_write(self._sidecar(target), str(size + len(data)), durable=False)
            finally:
                os.close(fd)  # closing releases the flock

    def list(self, scope: Scope, prefix: str) -> list[str]:
        base = self.workspace(scope)
        folder = base / check_path(prefix.rstrip("/")) if prefix.strip("/") else base
        if not folder.is_dir():
            return []
        return sorted(str(p.relative_to(base)) for p in folder.iterdir()
                      if p.is_file() and not p.name.startswith("."))

    def delete(self, scope: Scope, path: str) -> None:
        target = self._path(scope, path)
        target.unlink(missing_ok=True)
        self._sidecar(target).unlink(missing_ok=True)

    def describe(self, scope: Scope) -> str:
        return str(self.workspace(scope).resolve())


class DatabaseDocumentStore:
    """Documents as rows, for hosts whose disk does not survive a reboot (Streamlit Community Cloud)."""

    kind = "database"

    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock

    def _get(self, session, scope: Scope, path: str) -> DocumentRow | None:
        return session.get(DocumentRow, (scope.user_id, scope.agent_name, check_path(path)))

    def read(self, scope: Scope, path: str) -> str | None:
        with self.db.read() as s:
            row = self._get(s, scope, path)
            return row.content if row else None

    def write(self, scope: Scope, path: str, text: str) -> None:
        with self.db.write(lock=f"doc:{scope.key}:{path}") as s:
            row = self._get(s, scope, path)
            if row is None:
                s.add(DocumentRow(user_id=scope.user_id, agent_name=scope.agent_name, path=path, content=text,
                                  updated_at=self.clock.now()))
            else:
                row.content, row.updated_at = text, self.clock.now()
                s.add(row)

    def append(self, scope: Scope, path: str, block: str, header: str) -> None:
        with self.db.write(lock=f"doc:{scope.key}:{path}") as s:
            row = self._get(s, scope, path)
            if row is None:
                s.add(DocumentRow(user_id=scope.user_id, agent_name=scope.agent_name, path=path,
                                  content=header + block, updated_at=self.clock.now()))
            else:
                row.content, row.updated_at = row.content + block, self.clock.now()
                s.add(row)

    def list(self, scope: Scope, prefix: str) -> list[str]:
        prefix = prefix.strip("/")
        with self.db.read() as s:
            paths = s.execute(select(DocumentRow.path).where(
                DocumentRow.user_id == scope.user_id, DocumentRow.agent_name == scope.agent_name)).scalars().all()
        depth = prefix.count("/") + 1 if prefix else 0
        return sorted(p for p in paths if (not prefix or p.startswith(prefix + "/")) and p.count("/") == depth)

    def delete(self, scope: Scope, path: str) -> None:
        with self.db.write(lock=f"doc:{scope.key}:{path}") as s:
            row = self._get(s, scope, path)
            if row is not None:
                s.delete(row)

    def describe(self, scope: Scope) -> str:
        from sqlalchemy.engine import make_url

        return f"database {make_url(self.db.url).render_as_string(hide_password=True)} ({scope.key})"


def export_documents(source: DocumentStore, target: LocalDocumentStore, scope: Scope) -> list[str]:
    """Copy every document of `scope` from `source` into files; return the paths written."""
    written = []
    for folder in ("", "memory", "memory/dreams"):
        for path in source.list(scope, folder):
            text = source.read(scope, path)
            if text is not None:
                target.write(scope, path, text)
                written.append(path)
    return written
