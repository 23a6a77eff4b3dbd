"""`memory.import_file`: other tools' memory and conversations, into one scope.

Facts are added through the normal path (validated, deduplicated, audited as the importer), summaries fill
sections that are empty, Markdown documents are written as they are (MEMORY.md as a new version), and
conversations go through the persisted update queue, each as one update dated when it happened, so that a
big export is processed in the background, resumably, at the usual rate. An import ledger remembers what
came in: importing the same file again adds nothing.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ..errors import QueueFullError
from ..facts import content_key, validate_category, validate_confidence, validate_content
from ..store.import_store import ImportLedger
from ..validation import check_text
from . import read_import

if TYPE_CHECKING:
    from ..scoped import ScopedMemory

log = logging.getLogger(__name__)
SAMPLE = 5


@dataclass
class ImportReport:
    format: str
    facts_added: int = 0
    facts_skipped: int = 0
    documents: int = 0
    conversations: int = 0  # queued now (or, in a dry run, that would be)
    errors: list[str] = field(default_factory=list)
    dry_run: bool = False
    summaries: int = 0
    conversations_skipped: int = 0  # already imported before
    notes: list[str] = field(default_factory=list)
    sample: list[str] = field(default_factory=list)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _conversation_hash(conversation) -> str:
    return _digest(json.dumps([(m.role, m.content) for m in conversation.messages], ensure_ascii=False))


def _bounded(messages: list[dict[str, str]], max_chars: int) -> tuple[list[dict[str, str]], bool]:
    """The latest messages that fit in `max_chars` (a very long conversation keeps its end)."""
    kept: list[dict[str, str]] = []
    used = 0
    for m in reversed(messages):
        if used + len(m["content"]) > max_chars:
            return list(reversed(kept)), True
        kept.append(m)
        used += len(m["content"])
    return list(reversed(kept)), False


def import_file(view: "ScopedMemory", path: str | Path, *, format: str | None = None, dry_run: bool = False,
                progress: Callable[[float, str], None] | None = None) -> ImportReport:
    """Import another tool's file into the view's scope (see the module docstring). ValueError for a file that
    cannot be read, before anything changes."""
    parsed = read_import(path, format)
    report = ImportReport(format=parsed.format, dry_run=bool(dry_run), errors=list(parsed.errors),
                          notes=list(parsed.notes))
    if not dry_run and not view.can_write:
        raise PermissionError(f"the {view.role} role may not import into {view.scope.key}")
    memory = view._memory
    settings = memory.settings
    step = progress or (lambda _fraction, _what: None)

    ledger = ImportLedger(memory.db, memory.clock)

    # Everything is checked before anything is written: what cannot be stored is reported and left out.
    candidates = []
    for i, fact in enumerate(parsed.facts):
        try:
            candidates.append((validate_content(fact.content, settings.max_fact_chars), validate_category(fact.category),
                               validate_confidence(fact.confidence), fact.created_at))
        except ValueError as exc:
            report.errors.append(f"fact {fact.source_id or i}: {exc}")
    summaries: dict[str, str] = {}
    for key, text in parsed.summaries.items():
        try:
            summaries[key] = check_text(text, f"summary {key}", settings.max_document_chars,
                                        setting="max_document_chars").strip()
        except ValueError as exc:
            report.errors.append(str(exc))
    documents = []
    for document in parsed.documents:
        try:
            check_text(document.text, document.path, settings.max_document_chars, setting="max_document_chars")
            existing_text = view.read_document(document.path)
        except (ValueError, KeyError) as exc:
            report.errors.append(f"{document.path}: {exc.args[0] if exc.args else exc}")
            continue
        documents.append((document, existing_text))
    report.sample += [c[0] for c in candidates[:SAMPLE]]

    # Facts: a fact imported before is not added again, even if it was superseded or forgotten here since;
    # the rest are added in one transaction (the whole lot or none of it), deduplicated as always.
    fact_keys = {f"fact:{_digest(content_key(c[0]))}": c for c in candidates}
    known_facts = ledger.known(view.scope, list(fact_keys))
    fresh_facts = [(key, c) for key, c in fact_keys.items() if key not in known_facts]
    report.facts_skipped += len(candidates) - len(fresh_facts)
    # An import never evicts: facts beyond max_facts are left out (and not remembered as imported).
    full = 0
    if dry_run:
        existing = {content_key(f.content) for f in view.facts.list()}
        room = settings.max_facts - len(existing)
        for _key, (content, _category, confidence, _when) in fresh_facts:
            ckey = content_key(content)
            if ckey in existing or confidence < settings.fact_confidence_threshold:
                report.facts_skipped += 1
            elif room <= 0:
                full += 1
            else:
                existing.add(ckey)
                room -= 1
                report.facts_added += 1
    elif fresh_facts:
        step(0.05, f"adding {len(fresh_facts)} facts")
        imported: dict[str, str] = {}
        with view._writing("import facts"), memory._store.transaction(view.scope) as tx:
            for key, (content, category, confidence, when) in fresh_facts:
                fact, reason = tx.add(content, category, confidence, source=f"import:{parsed.format}",
                                      threshold=settings.fact_confidence_threshold, max_facts=settings.max_facts,
                                      created_at=when, evict=False)
                if reason == "full":
                    full += 1
                    continue
                imported[key] = key.split(":", 1)[1]
                if fact is None:
                    report.facts_skipped += 1
                else:
                    report.facts_added += 1
        ledger.record_many(view.scope, imported)
    if full:
        report.facts_skipped += full
        report.notes.append(f"{full} fact(s) {'would be ' if dry_run else ''}left out: this scope holds max_facts "
                            f"({settings.max_facts}) valid facts, and an import never evicts any; raise max_facts "
                            "or forget some, then import again to add them")

    # Summaries fill empty sections only: memory the scope already has is never overwritten by an import.
    current = {k: v["summary"] for group in view.memory_data().values() if isinstance(group, dict)
               for k, v in group.items() if isinstance(v, dict)}
    fresh = {k: v for k, v in summaries.items() if v and not current.get(k)}
    kept = sorted(k for k, v in summaries.items() if v and current.get(k) and current[k] != v)
    if kept:
        report.notes.append(f"summaries kept as they are (already set here): {', '.join(kept)}")
    report.summaries = len(fresh)
    if fresh and not dry_run:
        view.set_summaries(fresh)

    # Documents as they are: MEMORY.md as a new version; a log or diary the scope lacks is written. A document
    # imported before is not written again (MEMORY.md may have been dreamt over since).
    doc_keys = {f"doc:{parsed.format}:{d.path}"[:300]: (d, existing) for d, existing in documents}
    known_docs = ledger.known(view.scope, list(doc_keys))
    written: dict[str, str] = {}
    for key, (document, existing_text) in doc_keys.items():
        digest = _digest(document.text)
        if known_docs.get(key) == digest or existing_text == document.text:
            continue
        if document.path == "MEMORY.md":
            report.documents += 1
            if not dry_run:
                view.write_core(document.text, reason=f"imported from {parsed.format}")
                written[key] = digest
        elif existing_text is None:
            report.documents += 1
            if not dry_run:
                with view._writing("import documents"):
                    memory.documents.write(view.scope, document.path, document.text)
                written[key] = digest
        else:
            report.notes.append(f"{document.path} exists here with other content: kept as it is")
    if written:
        ledger.record_many(view.scope, written)
        memory.index.sync_documents(view.scope)

    # Conversations through the persisted queue, each dated when it happened; the ledger makes it resumable.
    conversations = list(parsed.conversations)
    if conversations and not settings.enabled:  # queue.add would drop them, and the ledger would skip them later
        report.notes.append(f"{len(conversations)} conversation(s) not queued: memory updates are switched off "
                            "(Settings.enabled is False); import the file again once they are on")
        conversations = []
    if conversations:
        keys = [f"{parsed.format}:{c.id}"[:300] for c in conversations]
        known = ledger.known(view.scope, keys)
        report.sample += [c.title or c.id for c in conversations[:SAMPLE]]
        for n, (key, conversation) in enumerate(zip(keys, conversations)):
            digest = _conversation_hash(conversation)
            if known.get(key) == digest:
                report.conversations_skipped += 1
                continue
            messages = [{"role": m.role, "content": m.content} for m in conversation.messages
                        if m.role in ("user", "assistant") and m.content.strip()]
            if not messages:
                report.errors.append(f"conversation {conversation.id}: no user or assistant text")
                continue
            messages, cut = _bounded(messages, settings.max_conversation_chars)
            if cut:
                report.notes.append(f"conversation {conversation.id}: only its last "
                                    f"{settings.max_conversation_chars:,} characters are read")
            report.conversations += 1
            if dry_run:
                continue
            when = conversation.created_at or conversation.updated_at
            options = {"title": (conversation.title or "Imported conversation")[:120]}
            if when is not None:
                options["when"] = when.isoformat()
            try:
                view.queue.add(messages, thread_id=key[:256], options=options)
            except QueueFullError:
                report.conversations -= 1
                left = len(conversations) - n
                report.notes.append(f"the update queue is full: {left} conversation(s) not queued yet; import the "
                                    "file again later to queue them (what is queued already is skipped)")
                break
            ledger.record(view.scope, key, digest)
            if n % 50 == 0:
                step(0.1 + 0.9 * n / len(conversations), f"queued {n} of {len(conversations)} conversations")
    step(1.0, "done")
    log.info("import of %s into %s: %s", parsed.format, view.scope.key, report)
    return report

