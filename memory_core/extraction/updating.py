"""Applying an extraction reply: the policy of one update (removals, new facts, supersessions, summaries), inside
the scope's transaction. The facade extracts; this module decides what the reply changes."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

from memory_core.extraction.candidates import ExtractionReply
from memory_core.facts.api import Fact, content_key, validate_category, validate_confidence, validate_content
from memory_core.text.truth import sentences_of, tie_all
from memory_core.text.instructions import instruction_reason, without_instructions
from memory_core.text.validation import check_memory_text

if TYPE_CHECKING:
    from memory_core.consistency.erase import Guard
    from memory_core.settings import Settings
    from memory_core.store.fact_store import FactTransaction

log = logging.getLogger(__name__)


@dataclass
class UpdateResult:
    added: list[Fact] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (content, duplicate|low_confidence|invalid)
    removed: list[str] = field(default_factory=list)  # ids invalidated (factsToRemove)
    superseded: list[tuple[str, str]] = field(default_factory=list)  # (old id, new id)
    held: list[Fact] = field(default_factory=list)  # instruction-like statements kept for a person's review
    summaries_updated: list[str] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)  # (content, how a loosely written item was read)
    offline: bool = False
    input_tokens: int = 0
    output_tokens: int = 0
    episode_id: str | None = None  # the conversation as kept (tiers.episodes), None when it had no turn


def apply_reply(tx: "FactTransaction", reply: ExtractionReply, thread_id: str, result: UpdateResult,
                settings: "Settings", guard: "Guard | None" = None) -> None:
    """The writes of one update (an extraction reply applied to the scope's facts), inside its transaction.
    `guard`: the erasures made since the conversation was taken in; what states them is refused ("erased")."""
    source = f"thread:{thread_id}"[:256]
    for fact_id in reply.remove_ids:
        try:
            if tx.row(fact_id).invalid_at is None:
                tx.invalidate(fact_id, reason=f"contradicted in thread {thread_id}"[:1000])
                result.removed.append(fact_id)
        except KeyError:
            continue  # another scope's id, or made up: ignored
    stored: dict[int, str] = {}  # candidate index -> the id of the fact that now says it
    for index, candidate in enumerate(reply.facts):
        try:
            content = validate_content(candidate.content, settings.max_fact_chars)
            category = validate_category(candidate.category)
            confidence = validate_confidence(candidate.confidence)
        except ValueError:
            result.skipped.append((str(candidate.content)[:200], "invalid"))
            continue
        if guard is not None and guard.refuses(content):
            log.info("refused a fact erased since its conversation was taken in (%s)", tx.scope.key)
            result.skipped.append((content, "erased"))
            continue
        if confidence < settings.fact_confidence_threshold:
            log.info("skipped low-confidence fact (%.2f) in %s: %.80s", confidence, tx.scope.key, content)
            result.skipped.append((content, "low_confidence"))
            continue
        targets = valid_targets(tx, getattr(candidate, "supersedes", ()), stored)
        if targets and instruction_reason(content) is not None:
            targets = []  # an instruction replaces nothing: it is held below, and what it would replace stays
        if targets:
            first, rest = targets[0], targets[1:]
            try:
                new, created = tx.supersede(first, content, category=category, confidence=confidence,
                                            reason=f"corrected in thread {thread_id}"[:1000], source=source,
                                            thread_id=thread_id, max_facts=settings.max_facts)
            except ValueError:  # the same text as the fact it would replace: nothing to change
                result.skipped.append((content, "duplicate"))
                stored[index] = first
                continue
            result.superseded.append((first, new.id))
            for other in rest:
                tx.end(tx.row(other), "superseded", f"corrected in thread {thread_id}"[:1000], superseded_by=new.id)
                result.superseded.append((other, new.id))
            if created:
                result.added.append(new)
            stored[index] = new.id
            continue
        fact, reason = tx.add(content, category, confidence, source=source, thread_id=thread_id,
                              max_facts=settings.max_facts)
        if fact is not None and fact.held:
            result.held.append(fact)
        elif fact is not None:
            result.added.append(fact)
            stored[index] = fact.id
        else:
            result.skipped.append((content, reason or "duplicate"))
            existing = tx.valid_with_key(content_key(content))
            if existing is not None:
                stored[index] = existing.id
    summaries = {}
    for key, text in reply.summaries.items():
        if guard is not None:
            text = guard.drop(text)
        try:
            # a sentence that instructs the agent is held as a fact above, never copied into a summary
            summaries[key] = without_instructions(check_memory_text(text, f"summary {key}", settings.max_document_chars,
                                                                    setting="max_document_chars"))
        except ValueError as exc:
            log.info("skipped an unusable extracted summary: %s", exc)
    if summaries:
        facts = written_from(tx, summaries.values())
        tx.set_summaries(summaries, tie_all(summaries, facts))
        result.summaries_updated = sorted(summaries)


# Above this many valid facts, a summary's provenance is looked up by key (see `written_from`), not over them all:
# an extraction sees at most this many of a scope's facts (views.scoped.EXTRACTION_FACTS), so that a summary it writes
# quotes no more (keying 2,000 facts' sentences made an update into a scope of 1,000 facts 2.9x one into an empty one).
WRITTEN_FROM_ALL = 200


def written_from(tx: "FactTransaction", texts: Iterable[str] | None = None) -> dict[str, str]:
    """{id: content} of the facts a summary of this update may be written from: the scope's valid facts (those it
    stored among them) and those it ended. A sentence that is such a fact's text states it, exactly.

    Given the summaries' `texts`, a scope of more than WRITTEN_FROM_ALL facts gives only the valid facts whose
    whole text is one of their sentences (by dedup key, with or without its end punctuation), so that an update
    costs the same at any scope size; a sentence that is one sentence of a longer fact is then left untied."""
    retired = {fact_id: content for fact_id, (content, _new) in tx.retired.items()}
    if texts is None or tx.count() <= WRITTEN_FROM_ALL:
        return retired | tx.valid_texts()
    keys = set()
    for text in texts:
        for sentence in sentences_of(text):
            bare = sentence.rstrip(".!?…").rstrip()
            keys.update(content_key(v) for v in (sentence, bare, bare + ".") if v.strip())
    return retired | tx.valid_texts(keys)


def valid_targets(tx: "FactTransaction", supersedes: Iterable[str], stored: dict[int, str]) -> list[str]:
    """The ids a candidate supersedes that are valid facts of the scope ("#n": the n-th candidate)."""
    targets: list[str] = []
    for ref in supersedes or ():
        if isinstance(ref, str) and ref.startswith("#") and ref[1:].isdigit():
            ref = stored.get(int(ref[1:]), "")
        if not isinstance(ref, str) or not ref or ref in targets:
            continue
        try:
            if tx.row(ref).invalid_at is None:
                targets.append(ref)
        except KeyError:
            continue
    return targets

