"""mem0 memories: OpenMemory's export zip, or the memory dicts mem0's `get_all` / `search` return.

OpenMemory's export (`POST /api/v1/backup/export`) is a zip of `memories.json` (its tables: `memories` with
`content`, `state`, `created_at` and `category_ids`, plus `categories` and `memory_categories`) and
`memories.jsonl.gz` (one memory a line with `content`, `state` and category names). mem0's own memory dicts
carry the text as `memory` (very early versions `text`), with `id`, `created_at` and `metadata`; the platform
adds `categories`. They come as a plain list or as `{"results": [...]}`. mem0 has no confidence: every fact
gets DEFAULT_CONFIDENCE with `confidence_defaulted` set (unless its metadata carries one), and a note says so.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable

from memory_core.portability.records import (DEFAULT_CONFIDENCE, ImportedFact, ParsedImport, bad_text, confidence_of, label, map_category,
                      to_utc)
from memory_core.portability.safety import GZIP_MAGIC, Source, gunzip, iter_json_lines

FORMAT = "mem0"
TEXT_KEYS = ("memory", "content", "text", "data")
SKIPPED_STATES = ("deleted", "archived", "paused")  # taken out of use in OpenMemory: not brought back here


def looks_like_item(value: Any) -> bool:
    """Whether one JSON value reads like a mem0 memory: text under a mem0 key, and an id or a time."""
    return isinstance(value, dict) and any(isinstance(value.get(k), str) for k in TEXT_KEYS) and \
        any(k in value for k in ("id", "hash", "created_at", "user_id"))


def looks_like(value: Any) -> bool:
    """Whether a parsed JSON value is a list of mem0 memories, `{"results": [...]}` or OpenMemory's memories.json."""
    items = _items(value)
    sample = [v for v in (items or [])[:20] if isinstance(v, dict)]
    return bool(sample) and 2 * sum(looks_like_item(v) for v in sample) > len(sample)  # one bad item is an error


def _items(value: Any) -> list[Any] | None:
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        for key in ("results", "memories"):
            if isinstance(value.get(key), list):
                return value[key]
    return None


def _jsonl(data: bytes, name: str, out: ParsedImport) -> list[Any]:
    if data[:2] == GZIP_MAGIC:
        data = gunzip(data, name)
    items: list[Any] = []
    for number, value, error in iter_json_lines(data, name):
        if error:
            out.error(f"{name} line {number}: {error}")
        else:
            items.append(value)
    return items


def _category_names(data: dict[str, Any]) -> dict[str, list[str]]:
    """OpenMemory's memories.json keeps category names in a table: memory id -> names."""
    names = {str(c.get("id")): c.get("name") for c in data.get("categories") or [] if isinstance(c, dict)}
    found: dict[str, list[str]] = {}
    for memory in data.get("memories") or []:
        if isinstance(memory, dict) and isinstance(memory.get("category_ids"), list):
            found.setdefault(str(memory.get("id")), []).extend(
                names[str(c)] for c in memory["category_ids"] if isinstance(names.get(str(c)), str))
    for link in data.get("memory_categories") or []:
        if isinstance(link, dict) and isinstance(names.get(str(link.get("category_id"))), str):
            listed = found.setdefault(str(link.get("memory_id")), [])
            name = names[str(link.get("category_id"))]
            if name not in listed:
                listed.append(name)
    return found


def parse(source: Source) -> ParsedImport:
    """Read OpenMemory's export (zip or folder), a JSON list of mem0 memories, or JSON Lines. ValueError if not."""
    out = ParsedImport(FORMAT)
    categories: dict[str, list[str]] = {}
    if source.kind == "file":
        name = source.names[0]
        if name.lower().endswith((".jsonl", ".gz")) or source.head(name, 2) == GZIP_MAGIC:
            items: list[Any] | None = _jsonl(source.read(name), name, out)
        else:
            value = source.json(name)
            items = _items(value)
            if isinstance(value, dict) and "memories" in value:
                categories = _category_names(value)
    else:
        lines, tables = source.find("memories.jsonl.gz"), source.find("memories.json")
        if lines is None and tables is None:
            raise ValueError("not a mem0 export: there is no memories.json or memories.jsonl.gz in it")
        if lines is not None:  # one memory a line, with category names inline: the simpler of the two
            items = _jsonl(source.read(lines), lines, out)
        else:
            value = source.json(tables)
            items = _items(value)
            if isinstance(value, dict):
                categories = _category_names(value)
    if items is None or (items and not any(looks_like_item(v) for v in items[:50])):
        raise ValueError("not a mem0 export: expected memories (objects with 'memory' or 'content' text), as a list, "
                         "{'results': [...]}, OpenMemory's memories.json or JSON Lines")
    _read(items, categories, out)
    return out.finish()


def _read(items: Iterable[Any], categories: dict[str, list[str]], out: ParsedImport) -> None:
    stats: Counter[str] = Counter()
    unknown: Counter[str] = Counter()
    for i, item in enumerate(items):
        fact = _fact(item, i, categories, out, stats, unknown)
        if fact is not None:
            out.facts.append(fact)
    if stats["defaulted"]:
        out.notes.append(f"mem0 keeps no confidence: {stats['defaulted']} fact(s) were given {DEFAULT_CONFIDENCE} "
                         "(marked as defaulted)")
    left = [f"{stats[s]} {s}" for s in SKIPPED_STATES if stats[s]]
    if left:
        out.notes.append(f"memories no longer in use in OpenMemory were left out: {', '.join(left)}")
    if stats["uncategorised"]:
        n = stats["uncategorised"]
        out.notes.append(f"{n} memor{'y' if n == 1 else 'ies'} had no category and {'was' if n == 1 else 'were'} filed "
                         "as context")
    if unknown:
        names = ", ".join(f"{name} ({n})" for name, n in unknown.most_common(10))
        out.notes.append(f"categories memory_core does not have were filed as context: {names}")


def _fact(item: Any, index: int, categories: dict[str, list[str]], out: ParsedImport, stats: Counter[str],
          unknown: Counter[str]) -> ImportedFact | None:
    if not isinstance(item, dict):
        out.error(f"memory #{index}: not an object")
        return None
    raw_id = item.get("id")
    shown = label(raw_id, index)
    text = next((item[k] for k in TEXT_KEYS if isinstance(item.get(k), str) and item[k].strip()), None)
    if text is None:
        out.error(f"memory {shown}: it has no text")
        return None
    if (why := bad_text(text)) is not None:
        out.error(f"memory {shown}: its text {why}")
        return None
    state = item.get("state")
    if state in SKIPPED_STATES:
        stats[state] += 1
        return None
    metadata = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
    named: list[Any] = []
    for value in (item.get("categories"), categories.get(str(raw_id)), metadata.get("categories"),
                  metadata.get("category")):
        named.extend(value if isinstance(value, list) else [value] if value else [])
    category, strange = map_category(named)
    unknown.update(strange)
    if not any(isinstance(n, str) and n.strip() for n in named):
        stats["uncategorised"] += 1
    try:
        confidence = confidence_of(metadata.get("confidence"))
    except ValueError:
        confidence = None  # metadata is free-form: a strange value there is not the memory's fault
    if confidence is None:
        stats["defaulted"] += 1
    return ImportedFact(
        content=text.strip(), category=category,
        confidence=DEFAULT_CONFIDENCE if confidence is None else confidence,
        created_at=to_utc(item.get("created_at")) or to_utc(item.get("updated_at")),
        source_id=str(raw_id)[:200] if isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool) else None,
        confidence_defaulted=confidence is None)
