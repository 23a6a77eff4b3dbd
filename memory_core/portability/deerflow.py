"""DeerFlow's `memory.json`: facts with categories and confidence, and the user and history summaries.

The shapes its code has written: version 1.0 holds `user`, `history` and `facts` (a fact is `id`, `content`,
`category`, `confidence`, `createdAt`, `source`; later ones add `sourceError` for corrections and
`categoryExtension` when the category is `other`; `sourceError` is kept as the fact's `source_error`); early files miss fields, and confidence may be null or
a numeric string. Version 2.0's `memory.json` holds the summaries only (each fact is a Markdown file beside
it); DeerFlow's `GET /api/memory/export` still returns the 1.0 shape with the facts, which is what to import.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from memory_core.portability.records import (DEFAULT_CONFIDENCE, SUMMARY_SECTIONS, ImportedFact, ParsedImport, bad_text, confidence_of, label,
                      map_category, to_utc)
from memory_core.portability.safety import Source

FORMAT = "deerflow"


def looks_like(value: Any) -> bool:
    """Whether a parsed JSON value has DeerFlow's memory shape."""
    return isinstance(value, dict) and (
        isinstance(value.get("facts"), list)
        or (isinstance(value.get("user"), dict) and isinstance(value.get("history"), dict)))


def _document(source: Source) -> Any:
    name = source.names[0] if source.kind == "file" else source.find("memory.json")
    if name is None:
        raise ValueError("not a DeerFlow memory: there is no memory.json in it")
    return source.json(name)


def parse(source: Source) -> ParsedImport:
    """Read a DeerFlow memory.json (or a folder or zip holding one). ValueError when it is not one."""
    data = _document(source)
    if not looks_like(data):
        raise ValueError("not a DeerFlow memory.json: expected an object with 'facts' or 'user' and 'history'")
    out = ParsedImport(FORMAT)
    _summaries(data, out)
    facts = data.get("facts")
    if facts is None:
        out.notes.append("this memory.json holds summaries only (DeerFlow 2.0 keeps each fact in its own Markdown "
                         "file); to bring the facts too, save DeerFlow's GET /api/memory/export response and "
                         "import that file")
    elif not isinstance(facts, list):
        out.error(f"facts: expected a list, got {type(facts).__name__}")
    else:
        stats: Counter[str] = Counter()
        unknown: Counter[str] = Counter()
        for i, item in enumerate(facts):
            fact = _fact(item, i, out, stats, unknown)
            if fact is not None:
                out.facts.append(fact)
        if stats["defaulted"]:
            out.notes.append(f"{stats['defaulted']} fact(s) had no confidence; {DEFAULT_CONFIDENCE} was set")
        if stats["inactive"]:
            out.notes.append(f"{stats['inactive']} fact(s) not marked active were left out")
        if unknown:
            names = ", ".join(f"{name} ({n})" for name, n in unknown.most_common(10))
            out.notes.append(f"categories memory_core does not have were filed as context: {names}")
    return out.finish()


def _summaries(data: dict[str, Any], out: ParsedImport) -> None:
    for group, keys in SUMMARY_SECTIONS.items():
        section = data.get(group)
        if section is None:
            continue
        if not isinstance(section, dict):
            out.error(f"{group}: expected an object of summaries, got {type(section).__name__}")
            continue
        for key in keys:
            entry = section.get(key)
            summary = entry.get("summary") if isinstance(entry, dict) else entry  # very early files: a bare string
            if summary is None or summary == "":
                continue
            if not isinstance(summary, str):
                out.error(f"{group}.{key}: the summary is not text")
            elif (why := bad_text(summary)) is not None:
                out.error(f"{group}.{key}: the summary {why}")
            elif summary.strip():
                out.summaries[key] = summary.strip()


def _fact(item: Any, index: int, out: ParsedImport, stats: Counter[str], unknown: Counter[str]) -> ImportedFact | None:
    if not isinstance(item, dict):
        out.error(f"fact #{index}: not an object")
        return None
    raw_id = item.get("id")
    shown = label(raw_id, index)
    content = item.get("content")
    if not isinstance(content, str) or not content.strip():
        out.error(f"fact {shown}: it has no content")
        return None
    if (why := bad_text(content)) is not None:
        out.error(f"fact {shown}: its content {why}")
        return None
    if item.get("status") not in (None, "active"):
        stats["inactive"] += 1
        return None
    raw_category = item.get("category")
    if raw_category in (None, ""):
        category, strange = "context", []  # DeerFlow's own default
    else:
        extension = item.get("categoryExtension")
        named = extension if raw_category == "other" and isinstance(extension, str) and extension.strip() \
            else raw_category
        category, strange = map_category(named)
        if not isinstance(named, str):
            strange = [repr(named)[:40]]
    unknown.update(strange)
    try:
        confidence = confidence_of(item.get("confidence"))
    except ValueError as exc:
        out.error(f"fact {shown}: {exc}")
        return None
    defaulted = confidence is None
    if defaulted:
        stats["defaulted"] += 1
    mistake = item.get("sourceError")  # what was wrong is half of a correction: kept beside the content
    if mistake is not None and not (isinstance(mistake, str) and bad_text(mistake) is None):
        out.error(f"fact {shown}: its sourceError is not storable text; the fact is imported without it")
        mistake = None
    return ImportedFact(
        content=content.strip(), category=category, confidence=DEFAULT_CONFIDENCE if defaulted else confidence,
        source_error=(mistake.strip() or None) if mistake is not None else None,
        created_at=to_utc(item.get("createdAt", item.get("created_at"))),
        source_id=str(raw_id)[:200] if isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool) else None,
        confidence_defaulted=defaulted)
