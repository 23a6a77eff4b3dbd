"""`memory.import_file`: other tools' memory and conversations, into one scope.

Facts are added through the normal path (validated, deduplicated, audited as the importer), summaries fill
sections that are empty, Markdown documents are written as they are (MEMORY.md as a new version), and
conversations go through the persisted update queue, each as one update dated when it happened, so that a
big export is processed in the background, resumably, at the usual rate. An import ledger remembers what
came in: importing the same file again adds nothing.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from memory_core.clock import utc
from memory_core.errors import QueueFullError
from memory_core.facts.api import content_key, validate_category, validate_confidence, validate_content, validate_source_error
from memory_core.text.words import sha256_text
from memory_core.text.instructions import instruction_reason, without_instructions
from memory_core.text.validation import check_memory_text, check_text
from memory_core.portability import read_import
from memory_core.portability.records import ImportedDocument, ParsedImport

if TYPE_CHECKING:
    from memory_core.views.scoped import ScopedMemory

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


def _conversation_hash(conversation) -> str:
    return sha256_text(json.dumps([(m.role, m.content) for m in conversation.messages], ensure_ascii=False))


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
    if not dry_run and not view.can_write:
        raise PermissionError(f"the {view.role} role may not import into {view.scope.key}")
    run = _Import(view, parsed, bool(dry_run), progress or (lambda _fraction, _what: None))
    run.check()  # everything is checked before anything is written
    run.facts()
    run.summaries()
    run.documents()
    run.conversations()
    run.step(1.0, "done")
    log.info("import of %s into %s: %s", parsed.format, view.scope.key, run.report)
    return run.report


class _Import:
    """One import into one scope, step by step; what was imported goes into the ledger as it is written."""

    def __init__(self, view: "ScopedMemory", parsed: ParsedImport, dry_run: bool,
                 step: Callable[[float, str], None]) -> None:
        self.view, self.parsed, self.dry_run, self.step = view, parsed, dry_run, step
        self.settings = view.settings
        self.ledger = view.import_ledger()
        self.report = ImportReport(format=parsed.format, dry_run=dry_run, errors=list(parsed.errors),
                                   notes=list(parsed.notes))
        self.candidates: list[tuple[str, str, float, Any, str | None]] = []
        self.checked_summaries: dict[str, str] = {}
        self.checked_documents: list[tuple[ImportedDocument, str | None]] = []

    def check(self) -> None:
        """What cannot be stored is reported and left out."""
        settings, report = self.settings, self.report
        for i, fact in enumerate(self.parsed.facts):
            try:
                self.candidates.append((validate_content(fact.content, settings.max_fact_chars),
                                        validate_category(fact.category), validate_confidence(fact.confidence),
                                        fact.created_at,
                                        validate_source_error(fact.source_error, settings.max_fact_chars)))
            except ValueError as exc:
                report.errors.append(f"fact {fact.source_id or i}: {exc}")
        for key, text in self.parsed.summaries.items():
            try:
                self.checked_summaries[key] = without_instructions(check_memory_text(
                    text, f"summary {key}", settings.max_document_chars, setting="max_document_chars").strip())
            except ValueError as exc:
                report.errors.append(str(exc))
        for document in self.parsed.documents:
            try:
                check_text(document.text, document.path, settings.max_document_chars, setting="max_document_chars")
                self.checked_documents.append((document, self.view.read_document(document.path)))
            except ValueError as exc:
                report.errors.append(str(exc))
            except KeyError:
                report.errors.append(f"{document.path}: not a document memory_core keeps")
        self.leave_out_erased()
        report.sample += [c[0] for c in self.candidates[:SAMPLE]]

    def leave_out_erased(self) -> None:
        """What was erased here after it was said (or undated: a file to import was written before) is not
        brought back: such facts are left out, such passages of summaries and documents become `[erased]`."""
        guard = self.view.erasure_guard()
        if guard is None:
            return
        erased = [c for c in self.candidates if guard.refuses(c[0], _utc(c[3]))]
        passages = 0
        for key, text in self.checked_summaries.items():
            self.checked_summaries[key], n = guard.screen(text)
            passages += n
        for i, (document, existing) in enumerate(self.checked_documents):
            new, n = guard.screen(document.text)
            if n:
                self.checked_documents[i] = (ImportedDocument(document.path, new), existing)
                passages += n
        if erased or passages:
            self.report.facts_skipped += len(erased)
            self.report.notes.append(f"left out what was erased here after it was said: {len(erased)} fact(s), "
                                     f"{passages} passage(s) of summaries and documents")
            self.candidates = [c for c in self.candidates if c not in erased]

    def facts(self) -> None:
        """A fact imported before is not added again, even if it was superseded or forgotten here since; the
        rest are added in one transaction (the whole lot or none of it), deduplicated as always. An import
        never evicts: facts beyond max_facts are left out, and not remembered as imported."""
        settings, report, view = self.settings, self.report, self.view
        keyed = {f"fact:{sha256_text(content_key(c[0]))}": c for c in self.candidates}
        known = self.ledger.known(list(keyed))
        fresh = [(key, c) for key, c in keyed.items() if key not in known]
        report.facts_skipped += len(self.candidates) - len(fresh)
        full = held = 0
        if self.dry_run:
            existing = {content_key(f.content) for f in view.facts.list()}
            room = settings.max_facts - len(existing)
            for _key, (content, _category, confidence, _when, _mistake) in fresh:
                ckey = content_key(content)
                if ckey in existing or confidence < settings.fact_confidence_threshold:
                    report.facts_skipped += 1
                elif instruction_reason(content) is not None:
                    held += 1
                elif room <= 0:
                    full += 1
                else:
                    existing.add(ckey)
                    room -= 1
                    report.facts_added += 1
        elif fresh:
            self.step(0.05, f"adding {len(fresh)} facts")
            imported: dict[str, str] = {}
            with view.writing("import facts"), view.fact_transaction() as tx:
                for key, (content, category, confidence, when, mistake) in fresh:
                    fact, reason = tx.add(content, category, confidence, source=f"import:{self.parsed.format}",
                                          threshold=settings.fact_confidence_threshold,
                                          max_facts=settings.max_facts, created_at=when, evict=False,
                                          source_error=mistake)
                    if reason == "full":
                        full += 1
                        continue
                    imported[key] = key.split(":", 1)[1]
                    if fact is None:
                        report.facts_skipped += 1
                    elif fact.held:
                        held += 1
                    else:
                        report.facts_added += 1
                tx.record_imported(imported)  # the facts and their ledger entries together
        if held:
            report.facts_skipped += held
            report.notes.append(f"{held} statement(s) {'would be ' if self.dry_run else ''}held for review: they read "
                                "as instructions to the agent, not as facts about the user; release or delete them on "
                                "the Facts page")
        if full:
            report.facts_skipped += full
            report.notes.append(f"{full} fact(s) {'would be ' if self.dry_run else ''}left out: this scope holds "
                                f"max_facts ({settings.max_facts}) valid facts, and an import never evicts any; "
                                "raise max_facts or forget some, then import again to add them")

    def summaries(self) -> None:
        """Summaries fill empty sections only: what the scope has is never overwritten by an import."""
        current = {k: v["summary"] for group in self.view.memory_data().values() if isinstance(group, dict)
                   for k, v in group.items() if isinstance(v, dict)}
        fresh = {k: v for k, v in self.checked_summaries.items() if v and not current.get(k)}
        kept = sorted(k for k, v in self.checked_summaries.items() if v and current.get(k) and current[k] != v)
        if kept:
            self.report.notes.append(f"summaries kept as they are (already set here): {', '.join(kept)}")
        self.report.summaries = len(fresh)
        if fresh and not self.dry_run:
            self.view.set_summaries(fresh)

    def documents(self) -> None:
        """Documents as they are: MEMORY.md as a new version; a log or diary the scope lacks is written. A
        document imported before is not written again (MEMORY.md may have been dreamt over since)."""
        view, report, fmt = self.view, self.report, self.parsed.format
        keyed = {f"doc:{fmt}:{d.path}"[:300]: (d, existing) for d, existing in self.checked_documents}
        known = self.ledger.known(list(keyed))
        written: dict[str, str] = {}
        for key, (document, existing_text) in keyed.items():
            digest = sha256_text(document.text)
            if known.get(key) == digest or existing_text == document.text:
                continue
            if document.path != "MEMORY.md" and existing_text is not None:
                report.notes.append(f"{document.path} exists here with other content: kept as it is")
                continue
            report.documents += 1
            if self.dry_run:
                continue
            if document.path == "MEMORY.md":
                view.write_core(document.text, reason=f"imported from {fmt}")
            else:
                view.write_document(document.path, document.text, what="import documents")
            written[key] = digest
        if written:
            self.ledger.record(written)
            view.reindex_documents()

    def conversations(self) -> None:
        """Through the persisted queue, each dated when it happened; the ledger makes a big import resumable."""
        view, report, settings = self.view, self.report, self.settings
        conversations = list(self.parsed.conversations)
        if conversations and not settings.enabled:  # queue.add would drop them, and the ledger skip them later
            report.notes.append(f"{len(conversations)} conversation(s) not queued: memory updates are switched "
                                "off (Settings.enabled is False); import the file again once they are on")
            return
        if not conversations:
            return
        keys = [f"{self.parsed.format}:{c.id}"[:300] for c in conversations]
        known = self.ledger.known(keys)
        report.sample += [c.title or c.id for c in conversations[:SAMPLE]]
        cut_short = 0
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
            cut_short += cut
            report.conversations += 1
            if self.dry_run:
                continue
            when = conversation.created_at or conversation.updated_at
            options = {"title": (conversation.title or "Imported conversation")[:120]}
            if when is not None:
                options["when"] = when.isoformat()
            try:
                # The queued row and its ledger entry commit together.
                view.queue.add(messages, thread_id=key[:256], options=options,
                               also=self.ledger.recorder({key: digest}))
            except QueueFullError:
                report.conversations -= 1
                report.notes.append(f"the update queue is full: {len(conversations) - n} conversation(s) not queued "
                                    "yet; import the file again later to queue them (what is queued is skipped)")
                break
            if n % 50 == 0:
                self.step(0.1 + 0.9 * n / len(conversations), f"queued {n} of {len(conversations)} conversations")
        if cut_short:
            report.notes.append(f"{cut_short} conversation(s) longer than max_conversation_chars "
                                f"({settings.max_conversation_chars:,}): only the last part of each is read")


def _utc(when: Any) -> Any:
    """An imported fact's date in UTC (a date without a zone is read as UTC); None stays None."""
    return utc(when) if isinstance(when, datetime) else None
