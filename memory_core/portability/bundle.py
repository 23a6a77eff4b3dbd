"""Bundles: one zip with everything of the chosen scopes, and back, losslessly.

Layout:
    manifest.json                            format, version, scopes, counts, and a sha256 for every file
    scopes/<user>/<agent>/data.json          facts (validity included), audit log, summaries, every
                                             MEMORY.md version, plans, dream state
    scopes/<user>/<agent>/documents/<path>   MEMORY.md, memory/YYYY-MM-DD.md, memory/dreams/...

An import reads and checks the whole bundle first (manifest, checksums, sizes, paths, every record), then
writes the rows of all its scopes in one transaction; a damaged, tampered or foreign file raises ValueError
and changes nothing.
"""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..clock import iso_utc
from ..documents import is_document_path
from ..facts import CATEGORIES
from ..scope import Scope, make_scope
from ..store.bundle_store import bundle_scopes, dump_scope, load_scope
from ..store.fact_store import SUMMARY_SECTIONS
from ..validation import check_text
from .safety import ZipLimits, read_member, safe_members

if TYPE_CHECKING:
    from ..access import Principal
    from ..memory import Memory

FORMAT = "memory_core-bundle"
VERSION = 1
MODES = ("skip", "replace")
_FACT_ID = re.compile(r"fact_[0-9a-f]{8}")
_SECTIONS = {s for group in SUMMARY_SECTIONS.values() for s in group}
LIMITS = ZipLimits(max_members=200_000, max_member_bytes=256 * 1024 * 1024, max_total_bytes=2 * 1024 ** 3)


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, indent=1).encode("utf-8")


def _documents(memory: "Memory", scope: Scope) -> dict[str, str]:
    found = {}
    for folder in ("", "memory", "memory/dreams"):
        for path in memory.documents.list(scope, folder):
            text = memory.documents.read(scope, path)
            if text is not None:
                found[path] = text
    return found


def export_bundle(memory: "Memory", path: str | Path, scopes: list | None = None) -> dict[str, Any]:
    """Write the bundle of `scopes` (Scope, "user/agent" or (user, agent); all when None) to `path`."""
    with memory.db.read() as s:
        chosen = bundle_scopes(s) if scopes is None else [_scope_of(x) for x in scopes]
        for scope in memory.active_scopes():
            if scopes is None and scope not in chosen:
                chosen.append(scope)
        data = {scope: dump_scope(s, scope) for scope in sorted(set(chosen))}
    files: dict[str, bytes] = {}
    counts = {"scopes": len(data), "facts": 0, "audit": 0, "summaries": 0, "core_versions": 0, "plans": 0,
              "documents": 0}
    for scope, rows in data.items():
        base = f"scopes/{scope.user_id}/{scope.agent_name}"
        files[f"{base}/data.json"] = _json(rows)
        for key in ("facts", "audit", "summaries", "core_versions", "plans"):
            counts[key] += len(rows[key])
        for doc_path, text in _documents(memory, scope).items():
            files[f"{base}/documents/{doc_path}"] = text.encode("utf-8")
            counts["documents"] += 1
    manifest = {"format": FORMAT, "version": VERSION, "exported_at": iso_utc(datetime.now(timezone.utc)),
                "scopes": [s.key for s in data], "counts": counts,
                "files": {name: {"sha256": hashlib.sha256(blob).hexdigest(), "size": len(blob)}
                          for name, blob in sorted(files.items())}}
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("manifest.json", _json(manifest))
        for name, blob in sorted(files.items()):
            zf.writestr(name, blob)
    tmp.replace(target)  # a reader never sees half a bundle
    return counts


def _scope_of(value: Any) -> Scope:
    if isinstance(value, Scope):
        return make_scope(*value)
    if isinstance(value, str) and value.count("/") == 1:
        return make_scope(*value.split("/"))
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return make_scope(*value)
    raise ValueError(f"a scope is 'user/agent' or (user, agent); got {value!r:.80}")


# -- reading and checking -----------------------------------------------------------------------------


def read_bundle(path: str | Path) -> tuple[dict[str, Any], dict[Scope, dict[str, Any]], dict[Scope, dict[str, str]]]:
    """Open and check a bundle whole: (manifest, rows per scope, documents per scope). ValueError if it is
    not one, is damaged or was tampered with."""
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ValueError(f"not a memory_core bundle: {type(exc).__name__}: {exc}") from None
    with zf:
        members = safe_members(zf, LIMITS)
        if "manifest.json" not in members:
            raise ValueError("not a memory_core bundle: it has no manifest.json")
        manifest = _load_json(read_member(zf, members["manifest.json"], LIMITS), "manifest.json")
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise ValueError("not a memory_core bundle: its manifest names another format")
        if manifest.get("version") != VERSION:
            raise ValueError(f"bundle format version {manifest.get('version')!r} is not supported (this is {VERSION})")
        listed = manifest.get("files")
        if not isinstance(listed, dict):
            raise ValueError("damaged bundle: the manifest lists no files")
        extra = set(members) - set(listed) - {"manifest.json"}
        missing = set(listed) - set(members)
        if extra or missing:
            raise ValueError(f"damaged or tampered bundle: {len(missing)} file(s) missing, {len(extra)} not listed")
        blobs: dict[str, bytes] = {}
        for name, meta in listed.items():
            blob = read_member(zf, members[name], LIMITS)
            if not isinstance(meta, dict) or len(blob) != meta.get("size") or \
                    hashlib.sha256(blob).hexdigest() != meta.get("sha256"):
                raise ValueError(f"damaged or tampered bundle: {name} does not match its checksum")
            blobs[name] = blob
    rows: dict[Scope, dict[str, Any]] = {}
    documents: dict[Scope, dict[str, str]] = {}
    for name, blob in blobs.items():
        parts = name.split("/")
        if len(parts) < 4 or parts[0] != "scopes":
            raise ValueError(f"damaged bundle: unexpected file {name!r:.120}")
        try:
            scope = make_scope(parts[1], parts[2])
        except ValueError:
            raise ValueError(f"damaged bundle: {name!r:.120} names no valid scope") from None
        rest = "/".join(parts[3:])
        if rest == "data.json":
            rows[scope] = _check_rows(_load_json(blob, name), name)
        elif rest.startswith("documents/") and is_document_path(rest[len("documents/"):]):
            try:
                text = blob.decode("utf-8")
            except UnicodeDecodeError:
                raise ValueError(f"damaged bundle: {name!r:.120} is not UTF-8 text") from None
            documents.setdefault(scope, {})[rest[len("documents/"):]] = check_text(text, name)
        else:
            raise ValueError(f"damaged bundle: unexpected file {name!r:.120}")
    for scope in documents:
        rows.setdefault(scope, {"facts": [], "audit": [], "summaries": [], "core_versions": [], "plans": [],
                                "dream_state": None})
    return manifest, rows, documents


def is_bundle(path: str | Path) -> bool:
    """Whether `path` looks like a memory_core bundle (a zip whose manifest names our format); it is checked
    whole only when imported."""
    try:
        with zipfile.ZipFile(path) as zf:
            members = safe_members(zf, LIMITS)
            if "manifest.json" not in members:
                return False
            manifest = _load_json(read_member(zf, members["manifest.json"], LIMITS), "manifest.json")
    except (zipfile.BadZipFile, OSError, ValueError):
        return False
    return isinstance(manifest, dict) and manifest.get("format") == FORMAT


def _load_json(blob: bytes, name: str) -> Any:
    try:
        return json.loads(blob.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"damaged bundle: {name} is not JSON ({type(exc).__name__})") from None


def _time(value: Any, where: str, optional: bool = False) -> None:
    if value is None and optional:
        return
    try:
        parsed = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise ValueError(f"damaged bundle: {where} has no valid timestamp") from None
    if parsed.tzinfo is None:
        raise ValueError(f"damaged bundle: {where} has a timestamp without a zone")


def _text(value: Any, where: str, optional: bool = False, max_chars: int | None = None) -> None:
    if value is None and optional:
        return
    try:
        check_text(value, where, max_chars)
    except ValueError as exc:
        raise ValueError(f"damaged bundle: {exc}") from None


def _check_rows(data: Any, name: str) -> dict[str, Any]:
    """Every record of a scope's data.json has the shape and types that loading needs."""
    keys = ("facts", "audit", "summaries", "core_versions", "plans")
    if not isinstance(data, dict) or not all(isinstance(data.get(k), list) for k in keys):
        raise ValueError(f"damaged bundle: {name} lacks {', '.join(keys)}")
    for i, f in enumerate(data["facts"]):
        where = f"{name} facts[{i}]"
        if not isinstance(f, dict) or not isinstance(f.get("id"), str) or not _FACT_ID.fullmatch(f["id"]):
            raise ValueError(f"damaged bundle: {where} has no valid id")
        _text(f.get("content"), where + ".content", max_chars=100_000)
        if f.get("category") not in CATEGORIES:
            raise ValueError(f"damaged bundle: {where} has an unknown category")
        confidence = f.get("confidence")
        if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 <= confidence <= 1:
            raise ValueError(f"damaged bundle: {where} has no confidence between 0 and 1")
        for key in ("created_at", "updated_at"):
            _time(f.get(key), f"{where}.{key}")
        for key in ("valid_from", "invalid_at"):
            _time(f.get(key), f"{where}.{key}", optional=True)
        for key in ("source", "thread_id", "invalid_reason"):
            _text(f.get(key), f"{where}.{key}", optional=True, max_chars=None if key == "invalid_reason" else 256)
        if f.get("superseded_by") is not None and not (isinstance(f["superseded_by"], str)
                                                       and _FACT_ID.fullmatch(f["superseded_by"])):
            raise ValueError(f"damaged bundle: {where} has an invalid superseded_by")
    for i, a in enumerate(data["audit"]):
        where = f"{name} audit[{i}]"
        if not isinstance(a, dict) or not isinstance(a.get("fact_id"), str) or not isinstance(a.get("action"), str):
            raise ValueError(f"damaged bundle: {where} is not an audit entry")
        _time(a.get("at"), where)
        for key in ("reason", "actor"):
            _text(a.get(key), f"{where}.{key}", optional=True)
        for key in ("old", "new"):
            if a.get(key) is not None and not isinstance(a[key], dict):
                raise ValueError(f"damaged bundle: {where}.{key} is not an object")
    for i, s in enumerate(data["summaries"]):
        where = f"{name} summaries[{i}]"
        if not isinstance(s, dict) or s.get("section") not in _SECTIONS or not isinstance(s.get("version"), int):
            raise ValueError(f"damaged bundle: {where} is not a summary")
        _text(s.get("summary"), where)
        _time(s.get("updated_at"), where)
    for i, v in enumerate(data["core_versions"]):
        where = f"{name} core_versions[{i}]"
        if not isinstance(v, dict) or isinstance(v.get("version"), bool) or not isinstance(v.get("version"), int):
            raise ValueError(f"damaged bundle: {where} is not a MEMORY.md version")
        _text(v.get("content"), where)
        _text(v.get("reason"), where, max_chars=256)
        _text(v.get("actor"), where, optional=True, max_chars=256)
        _time(v.get("created_at"), where)
    for i, p in enumerate(data["plans"]):
        where = f"{name} plans[{i}]"
        if not isinstance(p, dict) or not isinstance(p.get("id"), str) or not re.fullmatch(r"plan_[0-9a-f]{8}", p["id"]):
            raise ValueError(f"damaged bundle: {where} has no valid id")
        steps = p.get("steps")
        if not isinstance(steps, list) or not all(isinstance(x, dict) and isinstance(x.get("text"), str)
                                                  and isinstance(x.get("done"), bool) for x in steps):
            raise ValueError(f"damaged bundle: {where} has malformed steps")
        if not isinstance(p.get("session_ids"), list) or p.get("status") not in ("active", "finished"):
            raise ValueError(f"damaged bundle: {where} is not a plan")
        _text(p.get("name"), where)
        for key in ("created_at", "updated_at"):
            _time(p.get(key), where)
    state = data.get("dream_state")
    if state is not None:
        allowed = {"last_hash", "consolidated_through", "last_status", "last_reason", "last_run_at"}
        if not isinstance(state, dict) or set(state) - allowed:
            raise ValueError(f"damaged bundle: {name} dream_state is malformed")
        _time(state.get("last_run_at"), f"{name} dream_state", optional=True)
    dreamt = data.get("dreamt_days")
    if dreamt is not None:  # bundles written before dreamt_days existed lack it
        if not isinstance(dreamt, list):
            raise ValueError(f"damaged bundle: {name} dreamt_days is not a list")
        for i, d in enumerate(dreamt):
            where = f"{name} dreamt_days[{i}]"
            if not isinstance(d, dict) or not isinstance(d.get("day"), str) or \
                    not re.fullmatch(r"\d{4}-\d{2}-\d{2}", d["day"]) or not isinstance(d.get("content_hash"), str) or \
                    not re.fullmatch(r"[0-9a-f]{64}", d["content_hash"]):
                raise ValueError(f"damaged bundle: {where} is malformed")
            _time(d.get("dreamt_at"), where)
    return data


def import_bundle(memory: "Memory", path: str | Path, mode: str = "skip", dry_run: bool = False,
                  allowed: Callable[[Scope], bool] | None = None) -> dict[str, Any]:
    """Import a bundle. Returns counts of what was (or, with `dry_run`, would be) written. With `allowed`,
    PermissionError before anything is written when the bundle holds a scope it refuses."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r:.40}")
    manifest, rows, documents = read_bundle(path)
    refused = sorted(s.key for s in rows if allowed is not None and not allowed(s))
    if refused:
        shown = ", ".join(refused[:5]) + (f" and {len(refused) - 5} more" if len(refused) > 5 else "")
        raise PermissionError(f"this bundle holds scopes you may not change: {shown}")
    totals: dict[str, Any] = {"scopes": sorted(s.key for s in rows), "dry_run": bool(dry_run), "mode": mode}
    counts: dict[str, int] = {}
    doc_writes: list[tuple[Scope, str, str]] = []
    for scope in sorted(rows):
        for doc_path, text in sorted(documents.get(scope, {}).items()):
            current = memory.documents.read(scope, doc_path)
            if current == text or (current is not None and mode == "skip"):
                counts["documents_skipped"] = counts.get("documents_skipped", 0) + 1
            else:
                doc_writes.append((scope, doc_path, text))
    counts["documents"] = len(doc_writes)

    def apply(session) -> None:
        for scope in sorted(rows):
            for key, n in load_scope(session, scope, rows[scope], mode).items():
                counts[key] = counts.get(key, 0) + n

    memory.db.run_in_transaction(apply, locks=[f"facts:{s.key}" for s in sorted(rows)], commit=not dry_run)
    if not dry_run:
        for scope, doc_path, text in doc_writes:
            memory.documents.write(scope, doc_path, text)
        for scope in rows:
            memory.index.touch(scope)
    totals.update(counts)
    totals["manifest_counts"] = manifest.get("counts", {})
    return totals


def import_bundle_as(memory: "Memory", principal: "Principal", path: str | Path, *, mode: str = "skip",
                     dry_run: bool = False) -> dict[str, Any]:
    """Import a bundle for a person or token: every scope in it must be one the principal may write
    (PermissionError before anything changes otherwise); changes are recorded as the principal's."""
    from ..actors import acting_as

    with acting_as(principal.actor):
        return import_bundle(memory, path, mode=mode, dry_run=dry_run,
                             allowed=lambda scope: memory.access.allows(principal, "write", scope))


def bundle_bytes(memory: "Memory", scopes: list | None = None) -> bytes:
    """A bundle in memory, for a download button."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "bundle.zip"
        export_bundle(memory, target, scopes)
        return target.read_bytes()

