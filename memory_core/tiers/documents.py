"""Where the Markdown documents live: a local directory, or the database.

A scope's documents are its `MEMORY.md` and the Markdown files under `memory/`: daily logs
`memory/YYYY-MM-DD.md` and dream diaries `memory/dreams/YYYY-MM-DD.md`. Nothing else in a workspace is
a document (the default scope's workspace also holds the database and every other scope), so any other
path is refused with KeyError by both stores, whoever calls them.

Both stores give the same guarantees: `write` replaces a document atomically (old or new, never half),
`append` adds a block that is whole or absent after a crash, and concurrent appends from threads or
processes never interleave.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Protocol

from memory_core.store.document_paths import FOLDERS, check_folder, check_path, is_document_path
from memory_core.scope import Scope
from memory_core.store.document_store import DatabaseDocumentStore
from memory_core.text.validation import check_memory_text

__all__ = ["FOLDERS", "DatabaseDocumentStore", "DocumentStore", "LocalDocumentStore", "atomic_write", "check_folder",
           "check_path", "export_documents", "is_document_path"]


class DocumentStore(Protocol):
    """Where daily logs and MEMORY.md live. A store may also offer `stamp(scope, path)`: a value that changes
    whenever what `read` gives changes, cheaper than a read (search then reads only what changed)."""

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
    file's whole blocks and the file's inode: bytes past that length are the remains of an append cut
    short, never shown and cut off by the next append. The sidecar is written before the first byte
    of any append, so a file that has none (or one of another inode: `write` replaced the file) has
    no torn tail. Appends, writes and deletes hold an exclusive `flock` on the file, reads a shared one.
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

    @contextmanager
    def _locked(self, target: Path, flags: int, lock: int) -> Iterator[int | None]:
        """An fd of `target` under `flock(lock)`, re-opened until it is still the file at that path (a
        `write` may have replaced it while we waited); None if there is no file."""
        while True:
            try:
                fd = os.open(target, flags, 0o644)
            except FileNotFoundError:
                yield None
                return
            try:
                fcntl.flock(fd, lock)
                try:
                    current = os.stat(target).st_ino == os.fstat(fd).st_ino
                except FileNotFoundError:
                    current = False
                if current:
                    yield fd
                    return
            finally:
                os.close(fd)  # closing releases the flock

    def _committed(self, target: Path, st: os.stat_result) -> int | None:
        """The length of the whole blocks, from a sidecar that belongs to this very file; else None."""
        try:
            fields = self._sidecar(target).read_text().split()
            length = int(fields[0])
            inode = int(fields[1]) if len(fields) > 1 else st.st_ino  # a sidecar of the older, length-only format
        except (FileNotFoundError, ValueError, IndexError):
            return None
        return length if inode == st.st_ino and 0 <= length <= st.st_size else None

    def _commit(self, target: Path, length: int, inode: int, durable: bool) -> None:
        atomic_write(self._sidecar(target), f"{length} {inode}", durable)

    def read(self, scope: Scope, path: str) -> str | None:
        target = self._path(scope, path)
        with self._locked(target, os.O_RDONLY, fcntl.LOCK_SH) as fd:
            if fd is None:
                return None
            st = os.fstat(fd)
            committed = self._committed(target, st)
            with os.fdopen(os.dup(fd), "rb") as f:
                data = f.read(st.st_size if committed is None else committed)
        return data.decode("utf-8", errors="replace")

    def write(self, scope: Scope, path: str, text: str) -> None:
        target = self._path(scope, path)
        text = check_memory_text(text, f"document {path}")
        with self._thread_lock(target), self._locked(target, os.O_RDONLY, fcntl.LOCK_EX) as fd:
            if fd is None or self._committed(target, os.fstat(fd)) is None:
                # A sidecar left by a write or delete cut short names an inode that may be free again:
                # drop it before the new file can be given that inode.
                self._sidecar(target).unlink(missing_ok=True)
            atomic_write(target, text, self.durable)
            self._sidecar(target).unlink(missing_ok=True)  # if a crash keeps it, its inode no longer matches

    def append(self, scope: Scope, path: str, block: str, header: str) -> None:
        target = self._path(scope, path)
        block, header = check_memory_text(block, f"block of {path}"), check_memory_text(header, f"header of {path}")
        target.parent.mkdir(parents=True, exist_ok=True)
        with self._thread_lock(target), self._locked(target, os.O_RDWR | os.O_CREAT, fcntl.LOCK_EX) as fd:
            st = os.fstat(fd)
            size = self._committed(target, st)
            if size is None:
                # No sidecar for this file, so it has no torn tail: record its length before writing,
                # so that a crash during this append leaves a tail that is cut off, never shown.
                size = st.st_size
                self._commit(target, size, st.st_ino, self.durable)
            elif size < st.st_size:
                os.ftruncate(fd, size)  # the tail of an append that a crash cut short
            data = ((header if size == 0 else "") + block).encode("utf-8")
            os.lseek(fd, size, os.SEEK_SET)
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if self.durable:
                os.fsync(fd)
            self._commit(target, size + len(data), st.st_ino, durable=False)

    def stamp(self, scope: Scope, path: str) -> tuple | None:
        """What changes whenever the text `read` gives changes (the file's and its sidecar's inode, size and
        modification time; a write replaces the file, an append grows it), from two stats and no read; None
        when the file is missing."""
        target = self._path(scope, path)
        try:
            st = os.stat(target)
        except FileNotFoundError:
            return None
        try:
            side = os.stat(self._sidecar(target))
            side_stamp: tuple = (side.st_ino, side.st_size, side.st_mtime_ns)
        except FileNotFoundError:
            side_stamp = ()
        return (st.st_ino, st.st_size, st.st_mtime_ns) + side_stamp

    def list(self, scope: Scope, prefix: str) -> list[str]:
        """The documents directly in `prefix` ("", "memory" or "memory/dreams"), nothing else."""
        base = self.workspace(scope)
        folder = check_folder(prefix)
        paths = []
        for path in (base / folder).iterdir() if (base / folder).is_dir() else ():
            relative = f"{folder}/{path.name}" if folder else path.name
            if is_document_path(relative) and path.is_file():
                paths.append(relative)
        return sorted(paths)

    def delete(self, scope: Scope, path: str) -> None:
        target = self._path(scope, path)
        with self._thread_lock(target), self._locked(target, os.O_RDONLY, fcntl.LOCK_EX):
            target.unlink(missing_ok=True)
            self._sidecar(target).unlink(missing_ok=True)

    def describe(self, scope: Scope) -> str:
        return str(self.workspace(scope).resolve())


def export_documents(source: DocumentStore, target: LocalDocumentStore, scope: Scope,
                     screen: Callable[[str | None], str | None] = lambda text: text) -> list[str]:
    """Copy every document of `scope` (MEMORY.md and memory/..., nothing else) from `source` into files, each
    through `screen`; return the paths written."""
    written = []
    for folder in FOLDERS:
        for path in source.list(scope, folder):
            text = screen(source.read(scope, path))
            if text is not None:
                target.write(scope, path, text)
                written.append(path)
    return written
