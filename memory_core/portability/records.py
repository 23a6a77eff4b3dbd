"""What an import reads, in neutral terms: facts, summaries, conversations and documents from another tool.

The parsers (one module per foreign format) turn other tools' files into these plain records; `importer.py`
decides what to do with them. Nothing here touches a database. The small helpers below are the value
conversions every parser needs alike: timestamps to aware UTC, foreign categories to memory_core's, text
that can be stored.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Mapping

from memory_core.facts.api import CATEGORIES, SUMMARY_SECTIONS

FORMATS = ("deerflow", "mem0", "chatgpt", "claude", "markdown")
ROLES = ("user", "assistant", "system", "tool")
SUMMARY_KEYS = tuple(key for keys in SUMMARY_SECTIONS.values() for key in keys)
# Tools without a confidence (mem0, a DeerFlow fact that lost its own) get this one: high enough to pass the
# default fact threshold, since a memory the user kept in another tool was worth keeping there.
DEFAULT_CONFIDENCE = 0.8
MAX_ERRORS = 1000  # a file with a million broken items reports the first thousand and a count, not a million lines


@dataclass(frozen=True)
class ImportedFact:
    content: str
    category: str  # one of memory_core.facts.api.CATEGORIES
    confidence: float
    created_at: datetime | None = None
    source_id: str | None = None  # the item's id in the other tool, for error messages and provenance
    confidence_defaulted: bool = False  # the other tool had no confidence: DEFAULT_CONFIDENCE was set
    source_error: str | None = None  # a correction's mistake to avoid (DeerFlow's sourceError), as written there


@dataclass(frozen=True)
class ImportedMessage:
    role: str  # one of ROLES
    content: str
    created_at: datetime | None = None


@dataclass(frozen=True)
class ImportedConversation:
    id: str
    title: str | None
    created_at: datetime | None
    updated_at: datetime | None
    messages: tuple[ImportedMessage, ...]


@dataclass(frozen=True)
class ImportedDocument:
    path: str  # "MEMORY.md", "memory/YYYY-MM-DD.md", or a dream diary under "memory/dreams/"
    text: str


@dataclass
class ParsedImport:
    format: str
    facts: list[ImportedFact] = field(default_factory=list)
    summaries: dict[str, str] = field(default_factory=dict)  # keys from SUMMARY_KEYS
    conversations: list[ImportedConversation] = field(default_factory=list)
    documents: list[ImportedDocument] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    _dropped_errors: int = field(default=0, repr=False)

    def error(self, message: str) -> None:
        """Record a malformed item (the rest of the file is still read); bounded to MAX_ERRORS lines."""
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(message)
        else:
            self._dropped_errors += 1

    def finish(self) -> "ParsedImport":
        """Close the error list with a count of what did not fit."""
        if self._dropped_errors:
            self.errors.append(f"... and {self._dropped_errors:,} more errors like these")
            self._dropped_errors = 0
        return self


def read_conversations(items: Iterable[Any], out: ParsedImport,
                       conversation: Callable[[Any, int, ParsedImport, Counter], "ImportedConversation | None"],
                       said: Mapping[str, str]) -> ParsedImport:
    """The conversations of an export's list into `out`, one `conversation(item, index, out, stats)` each, then a
    note per counted kind of thing left out (`said`: {stats key: what it says after the count})."""
    stats: Counter[str] = Counter()
    for i, item in enumerate(items):
        found = conversation(item, i, out, stats)
        if found is not None:
            out.conversations.append(found)
    for key, text in said.items():
        if stats[key]:
            out.notes.append(f"{stats[key]:,} {text}")
    return out.finish()


def label(value: object, index: int) -> str:
    """A short, printable name for an item in an error message: its id when it has a usable one, else #index."""
    if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
        return f"{str(value).strip()[:80]!r}"
    return f"#{index}"


def to_utc(value: object) -> datetime | None:
    """An aware UTC datetime from epoch seconds or an ISO 8601 string; None for anything else.

    Naive times are taken as UTC (what the tools that write them mean); "Z" is accepted on every Python.
    Values outside what a datetime can hold, NaN or booleans give None rather than an error: a missing time
    never makes an item unreadable.
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            return None
        seconds = float(value)
        if seconds > 1e11:  # milliseconds, as JavaScript writes them
            seconds /= 1000.0
        try:
            return datetime.fromtimestamp(seconds, timezone.utc)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str):
        text = value.strip()
        if not text or len(text) > 64:
            return None
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            parsed = _loose_iso(text)
            if parsed is None:
                return None
        try:
            return parsed.replace(tzinfo=timezone.utc) if parsed.tzinfo is None else parsed.astimezone(timezone.utc)
        except (OverflowError, ValueError):
            return None
    return None


_FRACTION = re.compile(r"(\.\d{1,6})\d+")  # Python 3.10 reads at most six digits of a fraction


def _loose_iso(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(_FRACTION.sub(r"\1", text).replace(" ", "T", 1))
    except ValueError:
        return None


_SURROGATE = re.compile("[\ud800-\udfff]")


def storable(text: str) -> tuple[str, bool]:
    """`text` without NUL characters and with lone surrogates replaced, and whether anything changed.

    Conversation text goes through the update queue, which refuses both (PostgreSQL cannot store NUL; a lone
    surrogate is not UTF-8). Neither carries meaning in a chat message, so they are cleaned rather than costing
    the user a whole conversation.
    """
    cleaned = _SURROGATE.sub("\ufffd", text.replace("\x00", ""))
    return cleaned, cleaned != text


def bad_text(text: str) -> str | None:
    """Why `text` cannot be stored as it is (NUL, lone surrogate), or None when it can."""
    if "\x00" in text:
        return "contains a NUL character"
    if _SURROGATE.search(text):
        return "contains a lone surrogate (not valid Unicode text)"
    return None


def confidence_of(value: object) -> float | None:
    """A confidence in [0, 1] from a number or a numeric string; None when there is none; ValueError when bad."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise ValueError(f"confidence must be a number between 0 and 1; got {value!r}")
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise ValueError(f"confidence must be a number between 0 and 1; got {value[:40]!r}") from None
    if not isinstance(value, (int, float)) or not math.isfinite(value) or not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"confidence must be a number between 0 and 1; got {value!r:.40}")
    return float(value)


# Other tools' category names, lower-cased with spaces and dashes as underscores, and the category that means
# the same here. DeerFlow's own (identity, constraint, decision), mem0's platform defaults (personal_details,
# professional_details, user_preferences, misc, ...) and OpenMemory's (personal, work, preferences, goals, ...).
CATEGORY_SYNONYMS = {
    **{c: c for c in CATEGORIES},
    "preferences": "preference", "user_preferences": "preference", "likes": "preference", "dislikes": "preference",
    "favorites": "preference", "favourites": "preference", "food": "preference", "music": "preference",
    "entertainment": "preference", "fashion": "preference", "hobbies": "preference", "shopping": "preference",
    "product_feedback": "preference", "constraint": "preference", "constraints": "preference",
    "style": "preference", "interests": "preference",
    "behaviour": "behavior", "behaviors": "behavior", "behaviours": "behavior", "habits": "behavior",
    "habit": "behavior", "routine": "behavior", "routines": "behavior", "sports": "behavior",
    "goals": "goal", "objectives": "goal", "plans": "goal", "aspirations": "goal",
    "corrections": "correction", "mistakes": "correction", "lessons": "correction",
    "technology": "knowledge", "ai_ml_technology": "knowledge", "ai,_ml_&_technology": "knowledge",
    "technical_support": "knowledge", "education": "knowledge", "skills": "knowledge", "expertise": "knowledge",
    "news": "knowledge", "facts": "knowledge",
    "identity": "context", "decision": "context", "decisions": "context", "personal": "context",
    "personal_details": "context", "personal_info": "context", "professional_details": "context",
    "professional": "context", "work": "context", "career": "context", "family": "context",
    "relationships": "context", "health": "context", "travel": "context", "finance": "context",
    "legal": "context", "milestones": "context", "projects": "context", "organization": "context",
    "messages": "context", "customer_support": "context", "location": "context", "misc": "context",
    "other": "context", "general": "context",
}
# When a memory has several categories, the most specific one wins; "context" is what is left.
_PRECEDENCE = ("correction", "goal", "preference", "behavior", "knowledge", "context")
_SEPARATORS = re.compile(r"[\s\-/]+")


def map_category(names: object) -> tuple[str, list[str]]:
    """memory_core's category for one foreign category name or a list of them, and the names not understood.

    Unknown names fall back to "context" (the broadest); the caller notes them so the user can see the mapping.
    """
    items = names if isinstance(names, (list, tuple)) else [names]
    found: set[str] = set()
    unknown: list[str] = []
    for name in items:
        if not isinstance(name, str) or not name.strip():
            continue
        key = _SEPARATORS.sub("_", name.strip().lower())
        mapped = CATEGORY_SYNONYMS.get(key) or CATEGORY_SYNONYMS.get(key.rstrip("s"))
        if mapped is None:
            unknown.append(name.strip()[:40])
        else:
            found.add(mapped)
    for category in _PRECEDENCE:
        if category in found:
            return category, unknown
    return "context", unknown
