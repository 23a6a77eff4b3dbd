"""Reading files, folders and zips that come from elsewhere, without trusting them.

Everything refused here is refused with a ValueError that says why, before anything else of the file is
read: zip entries with absolute paths, `..`, backslashes or NUL in their names, duplicate names, links,
encrypted entries, nested zips, too many entries, a member whose declared or actual size is over the cap
(read in a streaming way with a hard cap; the header is not trusted), a declared total over the cap, a
compression ratio typical of zip bombs, files over the size cap, text that is not UTF-8 and JSON that is
not JSON or is nested absurdly deep. Nothing is ever extracted to disk.
"""

from __future__ import annotations

import json
import os
import stat
import zipfile
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any, Iterator

MiB = 1024 ** 2
GiB = 1024 ** 3
# The largest single file read (a JSON export, a member of a zip, a gunzipped stream). A heavy ChatGPT account's
# conversations.json (several thousand conversations over years) is 50 to 300 MiB; 512 MiB passes that with room
# and still bounds memory, since parsing JSON takes several times the size of the text.
MAX_FILE_BYTES = 512 * MiB
# A ChatGPT or Claude export zip also holds every uploaded and generated image: several GiB for some accounts.
# Those members are listed, never read, so the archive itself may be large.
MAX_ARCHIVE_BYTES = 16 * GiB
_CHUNK = 1 * MiB
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class ZipLimits:
    max_members: int = 100_000  # entries listed; an export with years of images has thousands
    max_member_bytes: int = MAX_FILE_BYTES  # one member, declared and actually read
    max_total_bytes: int = 8 * GiB  # all members as declared (the images included, though never read)
    max_ratio: float = 200.0  # text compresses 5-20x, padded JSON up to ~100x; a zip bomb ~1000x
    ratio_floor: int = 1 * MiB  # below this a member may compress as well as it likes: it costs nothing


IMPORT_LIMITS = ZipLimits()


def _refuse_name(name: str) -> str | None:
    if "\x00" in name:
        return "has a NUL character in its name"
    if "\\" in name:
        return "has a backslash in its name (a Windows path trick)"
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return "has an absolute path"
    if ".." in PurePosixPath(name).parts:
        return "has '..' in its path"
    return None


def safe_members(zf: zipfile.ZipFile, limits: ZipLimits = IMPORT_LIMITS) -> dict[str, zipfile.ZipInfo]:
    """The zip's files by name (folders left out), once every entry has passed the checks; else ValueError."""
    infos = zf.infolist()
    if len(infos) > limits.max_members:
        raise ValueError(f"the zip has {len(infos):,} entries; at most {limits.max_members:,} are accepted")
    members: dict[str, zipfile.ZipInfo] = {}
    seen: set[str] = set()
    total = 0
    for info in infos:
        name = info.filename
        shown = f"{name!r:.120}"
        why = _refuse_name(name)
        if why:
            raise ValueError(f"unsafe zip: entry {shown} {why}")
        if name in seen:
            raise ValueError(f"unsafe zip: entry {shown} appears twice")
        seen.add(name)
        if stat.S_ISLNK(info.external_attr >> 16):
            raise ValueError(f"unsafe zip: entry {shown} is a symbolic link")
        if info.is_dir():
            continue
        if info.flag_bits & 0x1:
            raise ValueError(f"the zip is encrypted (entry {shown}); export it again without a password")
        if name.lower().endswith(".zip"):
            raise ValueError(f"the zip holds another zip ({shown}); unpack it and import the inner file instead")
        if info.file_size > limits.max_member_bytes:
            raise ValueError(f"zip entry {shown} declares {info.file_size:,} bytes; the limit is "
                             f"{limits.max_member_bytes:,}")
        if info.file_size > limits.ratio_floor and info.file_size > limits.max_ratio * max(info.compress_size, 1):
            raise ValueError(f"zip entry {shown} compresses {info.file_size / max(info.compress_size, 1):,.0f} to 1, "
                             "as zip bombs do; refused")
        total += info.file_size
        if total > limits.max_total_bytes:
            raise ValueError(f"the zip's entries add up to more than {limits.max_total_bytes:,} bytes")
        members[name] = info
    return members


def read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limits: ZipLimits = IMPORT_LIMITS) -> bytes:
    """The bytes of one member, read in chunks and stopped at the cap whatever its header says; else ValueError."""
    shown = f"{info.filename!r:.120}"
    cap = min(limits.max_member_bytes, info.file_size)
    out = bytearray()
    try:
        with zf.open(info) as stream:
            while True:
                chunk = stream.read(_CHUNK)
                if not chunk:
                    break
                out += chunk
                if len(out) > cap:
                    raise ValueError(f"zip entry {shown} holds more than the {cap:,} bytes it may have; refused")
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError) as exc:
        raise ValueError(f"zip entry {shown} cannot be read: {type(exc).__name__}: {str(exc)[:200]}") from None
    if len(out) != info.file_size:
        raise ValueError(f"zip entry {shown} is {len(out):,} bytes, not the {info.file_size:,} its header says")
    return bytes(out)


def read_file(path: Path, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """A regular file's bytes (no links followed), refused when over `max_bytes` however it grows meanwhile."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise ValueError(f"cannot read {path.name!r:.120}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"{path.name!r:.120} is not a regular file")
        if info.st_size > max_bytes:
            raise ValueError(f"{path.name!r:.120} is {info.st_size:,} bytes; the limit is {max_bytes:,}")
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ValueError(f"{path.name!r:.120} is over the {max_bytes:,}-byte limit")
    return data


def gunzip(data: bytes, what: str, max_bytes: int = MAX_FILE_BYTES, limits: ZipLimits = IMPORT_LIMITS) -> bytes:
    """Decompress gzip data (several members allowed) in bounded steps; a bomb or an over-cap stream is refused."""
    out = bytearray()
    rest = data
    try:
        while rest:
            inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
            pending = rest
            while not inflater.eof:  # output may still be held after the last input is taken: drain it too
                produced = inflater.decompress(pending, _CHUNK)
                pending = inflater.unconsumed_tail
                out += produced
                if len(out) > max_bytes:
                    raise ValueError(f"{what} unpacks to more than {max_bytes:,} bytes; refused")
                if not produced and not pending:
                    break
            if not inflater.eof:
                raise ValueError(f"{what} is a truncated gzip stream")
            rest = inflater.unused_data
    except zlib.error as exc:
        raise ValueError(f"{what} is not valid gzip data: {exc}") from None
    if len(out) > limits.ratio_floor and len(out) > limits.max_ratio * max(len(data), 1):
        raise ValueError(f"{what} unpacks {len(out) / max(len(data), 1):,.0f} times its size, as bombs do; refused")
    return bytes(out)


def decode_text(data: bytes, what: str) -> str:
    """UTF-8 text (a byte-order mark is dropped); ValueError naming `what` when it is not UTF-8."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{what} is not UTF-8 text (byte {exc.start:,})") from None


@contextmanager
def _json_errors(what: str) -> Iterator[None]:
    """The parser's errors as ValueErrors that name `what`."""
    try:
        yield
    except json.JSONDecodeError as exc:
        raise ValueError(f"{what} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise ValueError(f"{what} is JSON nested absurdly deep; refused") from None


def load_json(data: bytes, what: str) -> Any:
    """Parse JSON from bytes: UTF-8 only, and refused when nested so deep the parser gives up."""
    text = decode_text(data, what)
    with _json_errors(what):
        return json.loads(text)


class JsonArray:
    """A top-level JSON array read lazily from its text: `head(n)` parses the first `n` elements, iterating
    parses them all, one at a time, so that a large export is never held whole as Python objects (about seven
    times the size of its JSON). A malformed element raises ValueError, naming `what`, when it is reached."""

    def __init__(self, text: str, start: int, what: str) -> None:
        self.text, self.start, self.what = text, start, what  # start: just after the opening bracket

    def __bool__(self) -> bool:
        return bool(self.head(1))

    def head(self, n: int) -> list[Any]:
        out = []
        for item in self:
            if len(out) >= n:
                break
            out.append(item)
        return out

    def __iter__(self) -> Iterator[Any]:
        text, decode = self.text, json.JSONDecoder().raw_decode
        i = _skip_space(text, self.start)
        if text.startswith("]", i):
            return self._end(i + 1)
        while True:
            with _json_errors(self.what):
                item, i = decode(text, i)
            yield item
            i = _skip_space(text, i)
            if text.startswith(",", i):
                i = _skip_space(text, i + 1)
            elif text.startswith("]", i):
                return self._end(i + 1)
            else:
                line = text.count("\n", 0, i) + 1
                raise ValueError(f"{self.what} is not valid JSON (line {line}: expected ',' or ']' in its list)")

    def _end(self, i: int) -> None:
        if _skip_space(self.text, i) != len(self.text):
            line = self.text.count("\n", 0, i) + 1
            raise ValueError(f"{self.what} is not valid JSON (line {line}: extra data after its list)")


def first_items(items: Any, n: int) -> list[Any]:
    """The first `n` elements of a list or a JsonArray ([] for None)."""
    if isinstance(items, JsonArray):
        return items.head(n)
    return list(items[:n]) if items else []


def _skip_space(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in " \t\r\n":
        i += 1
    return i


def load_json_lazily(data: bytes, what: str) -> Any:
    """Like `load_json`, but a top-level array comes back as a JsonArray (parsed when iterated)."""
    text = decode_text(data, what)
    del data
    start = _skip_space(text, 0)
    if text.startswith("[", start):
        return JsonArray(text, start + 1, what)
    with _json_errors(what):
        return json.loads(text)


def iter_json_lines(data: bytes, what: str) -> Iterator[tuple[int, Any, str | None]]:
    """(line number, value, error) for each non-empty line of JSON Lines; a bad line is an error, not a stop."""
    text = decode_text(data, what)
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line), None
        except json.JSONDecodeError as exc:
            yield number, None, f"not valid JSON ({exc.msg})"
        except RecursionError:
            yield number, None, "JSON nested absurdly deep"


def is_zip(path: Path) -> bool:
    """Whether the file starts like a zip archive (by its bytes, not its name)."""
    try:
        with open(path, "rb") as f:
            return f.read(4) in _ZIP_MAGIC
    except OSError:
        return False


def _walk(root: Path, limits: ZipLimits) -> tuple[list[str], list[str]]:
    """A folder's regular files as relative POSIX names, links neither followed nor listed; over the cap, refused."""
    names: list[str] = []
    links = 0
    for folder, dirs, files in os.walk(root, followlinks=False):
        base = Path(folder)
        for d in [d for d in dirs if (base / d).is_symlink()]:
            dirs.remove(d)
            links += 1
        for f in files:
            full = base / f
            if full.is_symlink() or not full.is_file():
                links += 1
                continue
            names.append(full.relative_to(root).as_posix())
            if len(names) > limits.max_members:
                raise ValueError(f"the folder holds more than {limits.max_members:,} files; point at the export or "
                                 "workspace folder itself")
    notes = [f"{links} link(s) or special file(s) in the folder were not followed"] if links else []
    return sorted(names), notes


class Source:
    """What the user pointed at, a file, a folder or a zip, as names (relative, POSIX) and bytes by name.

    Open one with `Source.open(path)`: a zip is checked whole then (`safe_members`), a folder is walked without
    following links and within the same entry limit. Every read is capped. `json(name)` parses once and
    remembers, so detection and parsing do not read a large export twice.
    """

    def __init__(self, path: Path, kind: str, names: list[str], limits: ZipLimits = IMPORT_LIMITS, *,
                 archive: zipfile.ZipFile | None = None, members: dict[str, zipfile.ZipInfo] | None = None,
                 notes: list[str] | None = None) -> None:
        self.path, self.kind, self.names, self.limits = path, kind, names, limits
        self._known = set(names)
        self.notes = notes or []
        self._zip = archive
        self._members = members or {}
        self._parsed: dict[str, Any] = {}
        self._lazy: dict[str, Any] = {}

    @classmethod
    def open(cls, path: str | Path, limits: ZipLimits = IMPORT_LIMITS) -> "Source":
        """Open a file, folder or zip for reading; ValueError when it is missing or fails the checks."""
        given = Path(path)
        if not given.exists():
            raise ValueError(f"cannot read {str(given)!r:.200}: no such file or folder")
        resolved = given.resolve()  # the path the user chose may be a link; links inside it are not followed
        if resolved.is_dir():
            names, notes = _walk(resolved, limits)
            return cls(resolved, "folder", names, limits, notes=notes)
        if not resolved.is_file():
            raise ValueError(f"{given.name!r:.120} is not a regular file or folder")
        if not is_zip(resolved):
            return cls(resolved, "file", [resolved.name], limits)
        size = resolved.stat().st_size
        if size > MAX_ARCHIVE_BYTES:
            raise ValueError(f"{given.name!r:.120} is {size:,} bytes; the limit for a zip is {MAX_ARCHIVE_BYTES:,}")
        try:
            archive = zipfile.ZipFile(resolved)
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            raise ValueError(f"{given.name!r:.120} is not a readable zip: {str(exc)[:200]}") from None
        try:
            members = safe_members(archive, limits)
        except ValueError:
            archive.close()
            raise
        return cls(resolved, "zip", sorted(members), limits, archive=archive, members=members)

    def read(self, name: str, max_bytes: int = MAX_FILE_BYTES) -> bytes:
        """The bytes of `name` (one of `names`), within the caps; ValueError when over them or unreadable."""
        if name not in self._known:
            raise KeyError(name)
        if self.kind == "zip":
            assert self._zip is not None
            limits = replace(self.limits, max_member_bytes=min(max_bytes, self.limits.max_member_bytes))
            if self._members[name].file_size > limits.max_member_bytes:
                raise ValueError(f"{name!r:.120} is {self._members[name].file_size:,} bytes; the limit is "
                                 f"{limits.max_member_bytes:,}")
            return read_member(self._zip, self._members[name], limits)
        return read_file(self.path if self.kind == "file" else self.path / name, max_bytes)

    def head(self, name: str, n: int = 64) -> bytes:
        """The first `n` bytes of `name`, to tell formats apart without reading a large file whole."""
        if name not in self._known:
            raise KeyError(name)
        try:
            if self.kind == "zip":
                assert self._zip is not None
                with self._zip.open(self._members[name]) as stream:
                    return stream.read(n)
            flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
            fd = os.open(self.path if self.kind == "file" else self.path / name, flags)
            with os.fdopen(fd, "rb") as f:
                return f.read(n)
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError) as exc:
            raise ValueError(f"{name!r:.120} cannot be read: {type(exc).__name__}") from None

    def json(self, name: str) -> Any:
        """`name` parsed as JSON (gunzipped first when it is gzip), parsed once per source."""
        if name not in self._parsed:
            self._parsed[name] = load_json(self._unzipped(name), name)
        return self._parsed[name]

    def json_lazily(self, name: str) -> Any:
        """`name` as JSON, a top-level array as a JsonArray (see there): for the files that can be large, the
        conversations of ChatGPT and Claude exports."""
        if name in self._parsed:
            return self._parsed[name]
        if name not in self._lazy:
            self._lazy[name] = load_json_lazily(self._unzipped(name), name)
        return self._lazy[name]

    def _unzipped(self, name: str) -> bytes:
        """The bytes of `name`, gunzipped when it is gzip."""
        data = self.read(name)
        return gunzip(data, name, limits=self.limits) if data[:2] == GZIP_MAGIC else data

    def find(self, basename: str) -> str | None:
        """The shallowest name whose last part is `basename` (exports are sometimes zipped inside a folder)."""
        matches = [n for n in self.names if n.rsplit("/", 1)[-1] == basename]
        return min(matches, key=lambda n: (n.count("/"), n)) if matches else None

    def close(self) -> None:
        self._parsed.clear()
        if self._zip is not None:
            self._zip.close()
            self._zip = None

    def __enter__(self) -> "Source":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
