"""A bundle's data.json checked whole before anything is loaded: every record kind, every field's type, range
and size, so that the loader only ever meets what the database can store.

Each record kind is a table of its fields (a check per field, and whether it is required); a field the table
does not know is refused too, since the loader would drop it without a word. A refusal is a ValueError that
names the file, the record kind, its index and the field: `scopes/ana/bot/data.json plans[3].version: ...`.
What passes is then made what memory_core itself would have stored (`as_stored`): bidirectional controls out,
credentials masked, as on every other way in.
"""

from __future__ import annotations

import math
import re
from datetime import date, datetime, timezone
from typing import Any, Callable

from memory_core.facts.api import CATEGORIES, SUMMARY_SECTIONS
from memory_core.text.instructions import instruction_reason
from memory_core.text.validation import check_memory_text, check_text

MODES = ("skip", "replace")  # what importing a bundle does with a scope that has memory already

MAX_INT = 2 ** 31 - 1  # an INTEGER column on PostgreSQL; SQLite's limit is higher
FACT_CHARS = 100_000
TEXT_CHARS = 16 * 1024 * 1024  # a summary, a MEMORY.md version, a plan's name or step
SHORT_CHARS = 256  # source, thread_id, actor, a MEMORY.md version's reason: VARCHAR(256) columns
PLAN_STEPS = 1_000  # what memory.plans.start and the MCP tool accept
PLAN_SESSIONS = 10_000
FACT_ID = re.compile(r"fact_[0-9a-f]{8}")
PLAN_ID = re.compile(r"plan_[0-9a-f]{8}")
ACTION = re.compile(r"[a-z_]{1,16}")  # an audit action: VARCHAR(16)
HEX64 = re.compile(r"[0-9a-f]{64}")
SECTIONS = {s for group in SUMMARY_SECTIONS.values() for s in group}
KINDS = ("facts", "audit", "summaries", "core_versions", "plans")  # lists every data.json has
OPTIONAL_KINDS = ("dream_state", "dreamt_days", "episodes")  # absent from bundles written before they existed
EPISODE_ID = re.compile(r"\d{4}-\d{2}-\d{2}-[0-9a-f]{12}")
EPISODE_TURN_CHARS = 8_000  # tiers.episodes.MAX_TURN_CHARS

Check = Callable[[Any], str | None]  # None when the value is fine, else what is wrong with it


def _under(where: str, why: str) -> str:
    """A fault found inside `where` (".steps", "[3]"), its path kept as one word: ".steps[3].text must ..."."""
    return f"{where}{why}" if why.startswith((".", "[")) else f"{where} {why}"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def text(max_chars: int | None = TEXT_CHARS, pattern: re.Pattern | None = None, empty: bool = True) -> Check:
    def check(value: Any) -> str | None:
        if not isinstance(value, str):
            return f"must be text; got {type(value).__name__}"
        if max_chars is not None and len(value) > max_chars:
            return f"is {len(value):,} characters; the limit is {max_chars:,}"
        try:
            check_text(value, "it", allow_empty=empty)
        except ValueError as exc:
            return str(exc)[3:]  # "it contains ..." -> "contains ..."
        if pattern is not None and not pattern.fullmatch(value):
            return f"is not valid ({_shown(value)})"
        return None
    return check


def integer(low: int, high: int = MAX_INT) -> Check:
    def check(value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            return f"must be a whole number from {low:,} to {high:,}; got {_shown(value)}"
        return None
    return check


def timestamp(value: Any) -> str | None:
    if not isinstance(value, str) or len(value) > 64:
        return f"must be an ISO 8601 timestamp; got {_shown(value)}"
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return f"is not a valid timestamp ({_shown(value)})"
    if parsed.tzinfo is None:
        return "is a timestamp without a zone"
    try:
        parsed.astimezone(timezone.utc)
    except OverflowError:
        return f"is out of range ({_shown(value)})"
    return None


def day(value: Any) -> str | None:
    try:
        if isinstance(value, str) and len(value) == 10:
            date.fromisoformat(value)
            return None
    except ValueError:
        pass
    return f"must be a date YYYY-MM-DD; got {_shown(value)}"


def confidence(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0 <= value <= 1:
        return f"must be a number from 0 to 1; got {_shown(value)}"
    return None


def choice(*allowed: Any) -> Check:
    def check(value: Any) -> str | None:
        return None if value in allowed else f"must be one of {', '.join(map(str, allowed))}; got {_shown(value)}"
    return check


def flag(value: Any) -> str | None:
    return None if isinstance(value, bool) else f"must be true or false; got {_shown(value)}"


def an_object(value: Any) -> str | None:
    return None if isinstance(value, dict) else f"must be an object; got {type(value).__name__}"


def optional(check: Check) -> Check:
    def maybe(value: Any) -> str | None:
        return None if value is None else check(value)
    return maybe


def items(check: Check, most: int) -> Check:
    """A list of at most `most` values, each passing `check`."""
    def each(value: Any) -> str | None:
        if not isinstance(value, list):
            return f"must be a list; got {type(value).__name__}"
        if len(value) > most:
            return f"has {len(value):,} entries; the limit is {most:,}"
        for i, item in enumerate(value):
            if (why := check(item)) is not None:
                return _under(f"[{i}]", why)
        return None
    return each


def shaped(fields: dict[str, tuple[Check, bool]]) -> Check:
    """An object with exactly these fields (name: (check, required)); the first fault, named by its field."""
    def check(value: Any) -> str | None:
        if not isinstance(value, dict):
            return f"must be an object; got {type(value).__name__}"
        for key in value:
            if key not in fields:
                return f"has a field this version does not know: {_shown(key)}"
        for key, (field_check, required) in fields.items():
            if key not in value:
                if required:
                    return f"lacks {key}"
                continue
            if (why := field_check(value[key])) is not None:
                return _under(f".{key}", why)
        return None
    return check


FACT = {
    "id": (text(pattern=FACT_ID), True), "content": (text(FACT_CHARS, empty=False), True),
    "category": (choice(*CATEGORIES), True), "confidence": (confidence, True),
    "created_at": (timestamp, True), "updated_at": (timestamp, True),
    "source": (optional(text(SHORT_CHARS)), False), "thread_id": (optional(text(SHORT_CHARS)), False),
    "valid_from": (optional(timestamp), False), "invalid_at": (optional(timestamp), False),
    "superseded_by": (optional(text(pattern=FACT_ID)), False), "invalid_reason": (optional(text()), False),
    "source_error": (optional(text(FACT_CHARS)), False), "held_at": (optional(timestamp), False),
}
AUDIT = {
    "fact_id": (text(pattern=FACT_ID), True), "action": (text(pattern=ACTION), True), "at": (timestamp, True),
    "reason": (optional(text()), False), "actor": (optional(text(SHORT_CHARS)), False),
    "old": (optional(an_object), False), "new": (optional(an_object), False),
}
SUMMARY = {
    "section": (choice(*sorted(SECTIONS)), True), "summary": (text(), True), "version": (integer(0), True),
    "updated_at": (timestamp, True),
}
CORE_VERSION = {
    "version": (integer(1), True), "content": (text(), True), "reason": (text(SHORT_CHARS), True),
    "actor": (optional(text(SHORT_CHARS)), False), "created_at": (timestamp, True),
}
STEP = shaped({"text": (text(), True), "done": (flag, True)})
PLAN = {
    "id": (text(pattern=PLAN_ID), True), "name": (text(), True), "status": (choice("active", "finished"), True),
    "version": (integer(0), True), "created_at": (timestamp, True), "updated_at": (timestamp, True),
    "steps": (items(STEP, PLAN_STEPS), True), "session_ids": (items(text(SHORT_CHARS), PLAN_SESSIONS), True),
}
DREAM_STATE = {
    "last_hash": (optional(text(pattern=HEX64)), False), "consolidated_through": (optional(day), False),
    "last_status": (optional(text(32)), False), "last_reason": (optional(text()), False),
    "last_run_at": (optional(timestamp), False),
}
DREAMT_DAY = {"day": (day, True), "content_hash": (text(pattern=HEX64), True), "dreamt_at": (timestamp, True)}


def resolved_date(value: Any) -> str | None:
    """One resolved date of a turn: [expression, start, end, value]."""
    if not isinstance(value, list) or len(value) != 4:
        return "must be [expression, start, end, value]"
    return (text(SHORT_CHARS)(value[0]) or integer(0)(value[1]) or integer(0)(value[2]) or text(SHORT_CHARS)(value[3]))


EPISODE_TURN = {
    "episode_id": (text(pattern=EPISODE_ID), True), "thread_id": (text(SHORT_CHARS), True),
    "turn_index": (integer(0), True), "role": (choice("user", "assistant"), True),
    "speaker": (optional(text(64)), False), "text": (text(EPISODE_TURN_CHARS, empty=False), True),
    "dates": (items(resolved_date, 1_000), True), "said_at": (timestamp, True),
}
RECORDS = {"facts": FACT, "audit": AUDIT, "summaries": SUMMARY, "core_versions": CORE_VERSION, "plans": PLAN,
           "dreamt_days": DREAMT_DAY, "episodes": EPISODE_TURN}
UNIQUE = {"facts": "id", "summaries": "section", "core_versions": "version", "plans": "id", "dreamt_days": "day"}


def counts(value: Any) -> str | None:
    if not isinstance(value, dict):
        return f"must be an object; got {type(value).__name__}"
    for key, n in value.items():
        if (why := integer(0, 2 ** 63 - 1)(n)) is not None:
            return _under(f".{key}", why)
    return None


MANIFEST = {"exported_at": timestamp, "scopes": items(text(SHORT_CHARS), 1_000_000), "counts": counts}


def check_manifest(manifest: dict[str, Any]) -> None:
    """The manifest's own fields (its format, version and files are checked where they are read)."""
    for key, check in MANIFEST.items():
        if key in manifest and (why := check(manifest[key])) is not None:
            raise ValueError(f"damaged bundle: manifest.json {_under(key, why)}")


def check_rows(data: Any, name: str) -> dict[str, Any]:
    """`data` (one scope's data.json) if every record in it can be loaded as it is; else ValueError naming the
    record kind, index and field."""
    def refuse(where: str, why: str) -> None:
        raise ValueError(f"damaged bundle: {name} {_under(where, why).strip()}")

    if not isinstance(data, dict):
        refuse("", f"must be an object; got {type(data).__name__}")
    for key in data:
        if key not in KINDS and key not in OPTIONAL_KINDS:
            refuse("", f"has a record kind this version does not know: {_shown(key)}")
    for kind in KINDS:
        if not isinstance(data.get(kind), list):
            refuse(kind, "is missing or not a list")
    for kind, fields in RECORDS.items():
        records = data.get(kind)
        if records is None and kind in OPTIONAL_KINDS:
            continue
        if not isinstance(records, list):
            refuse(kind, "is not a list")
        check = shaped(fields)
        seen: dict[Any, int] = {}
        for i, record in enumerate(records):
            if (why := check(record)) is not None:
                refuse(f"{kind}[{i}]", why)
            if kind in UNIQUE:
                key = record[UNIQUE[kind]]
                if key in seen:
                    refuse(f"{kind}[{i}].{UNIQUE[kind]}", f"repeats {kind}[{seen[key]}] ({_shown(key)})")
                seen[key] = i
    turns: dict[tuple[str, int], int] = {}
    for i, turn in enumerate(data.get("episodes") or []):
        key = (turn["episode_id"], turn["turn_index"])
        if key in turns:
            refuse(f"episodes[{i}].turn_index", f"repeats episodes[{turns[key]}] ({_shown(key)})")
        turns[key] = i
    for i, fact in enumerate(data["facts"]):
        if fact.get("superseded_by") is not None and fact.get("invalid_at") is None:
            refuse(f"facts[{i}].superseded_by", "is set on a fact that is still valid (no invalid_at)")
        if fact.get("superseded_by") == fact["id"]:
            refuse(f"facts[{i}].superseded_by", "names the fact itself")
    state = data.get("dream_state")
    if state is not None and (why := shaped(DREAM_STATE)(state)) is not None:
        refuse("dream_state", why)
    return data


def check_supersessions(rows: dict[Any, dict[str, Any]], owners: dict[str, tuple[str, str]]) -> None:
    """ValueError when a fact is `superseded_by` a fact of another scope: one the bundle holds for another scope,
    or (`owners`: {fact id: (user, agent)} in the database) another scope's fact there. A fact may only be
    replaced by one of its own scope; pointing across would retire it in favour of text it cannot see, and let
    what replaced it be read through it."""
    held = {scope: {f["id"] for f in data["facts"]} for scope, data in rows.items()}
    for scope, data in rows.items():
        for i, fact in enumerate(data["facts"]):
            target = fact.get("superseded_by")
            if target is None or target in held[scope]:
                continue
            other = next((s for s, ids in held.items() if target in ids), None) or owners.get(target)
            if other is not None and tuple(other) != tuple(scope):
                name = f"scopes/{scope[0]}/{scope[1]}/data.json"
                raise ValueError(f"damaged bundle: {name} facts[{i}].superseded_by names {target}, a fact of "
                                 "another scope; a fact can only be replaced by one of its own scope")


# The memory text of each record kind: what a person or an agent wrote, which every way into memory masks.
MEMORY_TEXT = {"facts": ("content", "source", "source_error", "invalid_reason"), "audit": ("reason",),
               "summaries": ("summary",), "core_versions": ("content", "reason"), "plans": ("name",),
               "episodes": ("text", "speaker")}


def stored_text(value: Any) -> Any:
    """Text as memory stores it (bidirectional controls removed, credentials masked); anything else as it is."""
    return check_memory_text(value, "text") if isinstance(value, str) else value


def as_stored(data: dict[str, Any]) -> dict[str, Any]:
    """A checked data.json with its memory text as memory_core would have stored it: a crafted bundle can
    carry no bidirectional control or credential past the checks that every other way in applies."""
    for kind, fields in MEMORY_TEXT.items():
        for record in data.get(kind) or []:
            for field in fields:
                if field in record:
                    record[field] = stored_text(record[field])
    for entry in data["audit"]:  # an entry's before and after hold the fact's content too
        for side in ("old", "new"):
            for field in ("content", "source"):
                if isinstance(entry.get(side), dict) and field in entry[side]:
                    entry[side][field] = stored_text(entry[side][field])
    for plan in data["plans"]:
        for step in plan["steps"]:
            step["text"] = stored_text(step["text"])
    for fact in data["facts"]:  # a valid fact that instructs the agent is held, as on every other way in
        if fact.get("held_at") is not None and fact.get("invalid_at") is None:
            fact["invalid_at"] = fact["valid_from"] = fact["held_at"]  # held is never valid
        elif fact.get("invalid_at") is None and (why := instruction_reason(fact["content"])) is not None:
            fact["invalid_at"] = fact["held_at"] = fact["valid_from"] = fact["updated_at"]
            fact["invalid_reason"] = f"held for review: {why}"
    return data
