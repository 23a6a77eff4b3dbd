"""Bundles: one zip with everything of the chosen scopes, and back, losslessly.

Layout:
    manifest.json                            format, version, scopes, counts, and a sha256 for every file
    scopes/<user>/<agent>/data.json          facts (validity included), audit log, summaries, every
                                             MEMORY.md version, plans, dream state, episodes' turns
    scopes/<user>/<agent>/documents/<path>   MEMORY.md, memory/YYYY-MM-DD.md, memory/dreams/...

An import reads and checks the whole bundle first (manifest, checksums, sizes, paths, every record: see
bundle_check.py), then writes the rows of all its scopes in one transaction, with a journal of the documents
it will write after it; a damaged, tampered or foreign file raises ValueError and changes nothing. An import
killed after its commit is finished the next time the database is opened (`finish_restores`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import zipfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Protocol

from memory_core.clock import iso_utc
from memory_core.tiers.documents import is_document_path
from memory_core.scope import Scope, make_scope
from memory_core.store.bundle_store import bundle_scopes, dump_scope, fact_owners, load_scope
from memory_core.store.restore_store import journal_documents, journal_done, journal_entries
from memory_core.text.words import sha256_text
from memory_core.text.validation import check_memory_text
from memory_core.portability.bundle_check import MODES, as_stored, check_manifest, check_rows, check_supersessions
from memory_core.portability.safety import ZipLimits, read_member, safe_members



class BundleParts(Protocol):
    """What bundles need of a memory (the admin handle, `memory.admin`, is one; Memory has the same names): its
    database, documents, search index and clock, the scopes with activity, and (for `import_bundle_as`) the access
    policy. Bundles never import Memory."""

    db: Any
    documents: Any
    index: Any
    clock: Any
    access: Any
    facts: Any  # its `eraser` (when there is one) refuses what was erased after the bundle was made

    def active_scopes(self) -> list[Scope]: ...


class Acting(Protocol):
    """Who imports (an access.Principal): the actor recorded with the changes."""

    @property
    def actor(self) -> str | None: ...

log = logging.getLogger(__name__)

FORMAT = "memory_core-bundle"
VERSION = 1
LIMITS = ZipLimits(max_members=200_000, max_member_bytes=256 * 1024 * 1024, max_total_bytes=2 * 1024 ** 3)


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, indent=1).encode("utf-8")


def _documents(admin: BundleParts, scope: Scope) -> dict[str, str]:
    eraser = getattr(getattr(admin, "facts", None), "eraser", None)
    # An erase journaled but not finished (a full disk before its file rewrites): its passages stay out.
    screen = eraser.pending_screen(scope) if eraser is not None else None
    found = {}
    for folder in ("", "memory", "memory/dreams"):
        for path in admin.documents.list(scope, folder):
            text = admin.documents.read(scope, path)
            if text is not None:
                found[path] = screen(text) if screen is not None else text
    return found


def export_bundle(admin: BundleParts, path: str | Path, scopes: list | None = None) -> dict[str, Any]:
    """Write the bundle of `scopes` (Scope, "user/agent" or (user, agent); all when None) to `path`."""
    with admin.db.read() as s:
        chosen = bundle_scopes(s) if scopes is None else [_scope_of(x) for x in scopes]
        for scope in admin.active_scopes():
            if scopes is None and scope not in chosen:
                chosen.append(scope)
        data = {scope: dump_scope(s, scope) for scope in sorted(set(chosen))}
    files: dict[str, bytes] = {}
    counts = {"scopes": len(data), "facts": 0, "audit": 0, "summaries": 0, "core_versions": 0, "plans": 0,
              "documents": 0, "episode_turns": 0}
    for scope, rows in data.items():
        base = f"scopes/{scope.user_id}/{scope.agent_name}"
        files[f"{base}/data.json"] = _json(rows)
        for key in ("facts", "audit", "summaries", "core_versions", "plans"):
            counts[key] += len(rows[key])
        counts["episode_turns"] += len(rows["episodes"])
        for doc_path, text in _documents(admin, scope).items():
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
        check_manifest(manifest)
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
            rows[scope] = as_stored(check_rows(_load_json(blob, name), name))
        elif rest.startswith("documents/") and is_document_path(rest[len("documents/"):]):
            try:
                text = blob.decode("utf-8")
            except UnicodeDecodeError:
                raise ValueError(f"damaged bundle: {name!r:.120} is not UTF-8 text") from None
            documents.setdefault(scope, {})[rest[len("documents/"):]] = check_memory_text(text, name)
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


def import_bundle(admin: BundleParts, path: str | Path, mode: str = "skip", dry_run: bool = False,
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
    refused = _refuse_erased(admin, manifest, rows, documents)
    if refused:
        counts["erased_refused"] = refused  # statements erased since the bundle was made: not brought back
    doc_writes: list[tuple[Scope, str, str, str | None]] = []
    for scope in sorted(rows):
        for doc_path, text in sorted(documents.get(scope, {}).items()):
            current = admin.documents.read(scope, doc_path)
            if current == text or (current is not None and mode == "skip"):
                counts["documents_skipped"] = counts.get("documents_skipped", 0) + 1
            else:
                doc_writes.append((scope, doc_path, text, None if current is None else sha256_text(current)))
    counts["documents"] = len(doc_writes)

    def apply(session) -> None:
        targets = [f["superseded_by"] for data in rows.values() for f in data["facts"] if f.get("superseded_by")]
        check_supersessions(rows, fact_owners(session, targets))  # before any write: a refusal changes nothing
        for scope in sorted(rows):
            for key, n in load_scope(session, scope, rows[scope], mode).items():
                counts[key] = counts.get(key, 0) + n
        # The documents are written after the commit: journaled with the rows, so a kill in between is
        # finished on the next open (finish_restores).
        journal_documents(session, doc_writes, admin.clock.now())

    admin.db.run_in_transaction(apply, locks=[f"facts:{s.key}" for s in sorted(rows)], commit=not dry_run)
    if not dry_run:
        finish_restores(admin, leftover=False)
        for scope in rows:
            admin.index.touch(scope)
    totals.update(counts)
    totals["manifest_counts"] = manifest.get("counts", {})
    return totals


def _refuse_erased(admin: BundleParts, manifest: dict[str, Any], rows: dict[Scope, dict[str, Any]],
                   documents: dict[Scope, dict[str, str]]) -> int:
    """Leave out of the bundle what was erased after it was exported (its facts, their audit, the passages of
    its texts that state them); returns how many facts and passages were left out."""
    eraser = getattr(getattr(admin, "facts", None), "eraser", None)
    try:
        exported = datetime.fromisoformat(str(manifest.get("exported_at")).replace("Z", "+00:00"))
    except ValueError:
        exported = None  # undated: every erasure is after it
    left_out = 0
    for scope, data in rows.items():
        guard = eraser.guard(scope, exported) if eraser is not None else None
        if guard is None:
            continue
        gone = {f["id"] for f in data.get("facts", []) if isinstance(f.get("content"), str)
                and guard.refuses(f["content"])}
        left_out += len(gone)
        data["facts"] = [f for f in data.get("facts", []) if f.get("id") not in gone]
        data["audit"] = [a for a in data.get("audit", []) if a.get("fact_id") not in gone]
        for table, column in (("summaries", "summary"), ("core_versions", "content")):
            for row in data.get(table, []):
                if isinstance(row.get(column), str):
                    row[column], n = guard.screen(row[column])
                    left_out += n
        for doc_path, text in list(documents.get(scope, {}).items()):
            documents[scope][doc_path], n = guard.screen(text)
            left_out += n
    return left_out


def import_bundle_as(admin: BundleParts, principal: Acting, path: str | Path, *, mode: str = "skip",
                     dry_run: bool = False) -> dict[str, Any]:
    """Import a bundle for a person or token: every scope in it must be one the principal may write
    (PermissionError before anything changes otherwise); changes are recorded as the principal's."""
    from memory_core.store.actors import acting_as

    with acting_as(principal.actor):
        return import_bundle(admin, path, mode=mode, dry_run=dry_run,
                             allowed=lambda scope: admin.access.allows(principal, "write", scope))


def finish_restores(admin: BundleParts, *, leftover: bool = True) -> int:
    """Write the documents that committed bundle imports have not written yet (see store/restore_store.py);
    returns how many. A document changed since its import read it is kept as it is (and said so in the log).
    `leftover`: these are an interrupted import's, found on opening (logged as such)."""
    written, kept, touched = 0, [], set()
    while entries := journal_entries(admin.db):
        done: list[int] = []
        try:
            for entry in entries:
                current = admin.documents.read(entry.scope, entry.path)
                if current != entry.content:
                    if (None if current is None else sha256_text(current)) == entry.before_hash:
                        admin.documents.write(entry.scope, entry.path, entry.content)
                        written += 1
                        touched.add(entry.scope)
                    else:
                        kept.append(f"{entry.scope.key}/{entry.path}")
                done.append(entry.pk)
        finally:
            journal_done(admin.db, done)
    for scope in touched:
        admin.index.touch(scope)
    if kept:
        log.warning("a bundle import did not write %d document(s) changed since it read them: %s", len(kept),
                    ", ".join(kept[:10]))
    if leftover and written:
        log.warning("finished an interrupted bundle import: wrote its %d missing document(s)", written)
    return written


def finish_restores_on_open(admin: BundleParts) -> None:
    """`finish_restores` when a database is first used; a failure is logged (and shown by `memory.status()`),
    never in the way of opening."""
    try:
        finish_restores(admin)
    except Exception:
        log.exception("an interrupted bundle import could not be finished; its documents stay in the journal "
                      "(the next open or bundle import tries again)")


def bundle_bytes(admin: BundleParts, scopes: list | None = None) -> bytes:
    """A bundle in memory, for a download button."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "bundle.zip"
        export_bundle(admin, target, scopes)
        return target.read_bytes()

