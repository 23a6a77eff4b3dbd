"""Claude's data export: `conversations.json` (and `memories.json`), alone or in the export zip.

A conversation is `uuid`, `name`, `created_at`, `updated_at` (ISO 8601) and `chat_messages`; a message has
`uuid`, `sender` ("human" or "assistant"), `created_at`, and its words as `text` (older exports) and/or
`content` blocks (`{"type": "text", "text": ...}`, besides `thinking`, `tool_use`, `tool_result`). The bulk
export keeps every edit and retry in one flat list, linked by `parent_message_uuid`: the conversation as
read is the branch that ends at `current_leaf_message_uuid` or, as the export lacks it, at the latest leaf.

`memories.json` is Claude's memory of the user: `conversations_memory`, Markdown under headings such as
"Work context", "Personal context", "Top of mind" and "Brief history" ("Recent months", "Earlier context",
"Long-term background"), the very sections memory_core's summaries have. Project memories are noted, not read.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from datetime import datetime, timezone
from typing import Any

from memory_core.portability.records import (ImportedConversation, ImportedMessage, ParsedImport, bad_text,
                                             label, read_conversations, storable, to_utc)
from memory_core.portability.safety import JsonArray, Source, first_items

FORMAT = "claude"
ROOT_PARENT = "00000000-0000-4000-8000-000000000000"  # what Claude writes as the parent of a first message
_SENDERS = {"human": "user", "user": "user", "assistant": "assistant"}
_SECTION_NAMES = {
    "work context": "workContext", "personal context": "personalContext", "top of mind": "topOfMind",
    "recent months": "recentMonths", "earlier context": "earlierContext",
    "long-term background": "longTermBackground", "long term background": "longTermBackground",
    "brief history": None,  # a heading over the three history sections, with no text of its own
}
_HEADING = re.compile(r"^\s*(?:#{1,6}\s+)?(?:\*\*|__|\*|_)?\s*(?P<name>[A-Za-z][A-Za-z \-]{2,40}?)\s*:?\s*"
                      r"(?:\*\*|__|\*|_)?\s*:?\s*$")


def looks_like(value: Any) -> bool:
    """Whether a parsed JSON value is Claude's conversations (a list, or one conversation, with chat_messages)."""
    items = _conversations(value)
    first = next((v for v in first_items(items, 50) if isinstance(v, dict)), None)
    return first is not None and isinstance(first.get("chat_messages"), list)


def looks_like_memories(value: Any) -> bool:
    """Whether a parsed JSON value is Claude's memories.json."""
    entries = first_items(value, 10) if isinstance(value, (list, JsonArray)) else [value]
    return any(isinstance(e, dict) and "conversations_memory" in e for e in entries[:10])


def _conversations(value: Any) -> list[Any] | JsonArray | None:
    if isinstance(value, (list, JsonArray)):
        return value
    if isinstance(value, dict) and isinstance(value.get("chat_messages"), list):
        return [value]
    return None


def parse(source: Source) -> ParsedImport:
    """Read Claude's conversations.json and memories.json (or the export zip or folder). ValueError when not."""
    out = ParsedImport(FORMAT)
    if source.kind == "file":
        value = source.json_lazily(source.names[0])
        if looks_like_memories(value):
            _memories(list(value) if isinstance(value, JsonArray) else value, out)
            return out.finish()
        conversations_value: Any = value
    else:
        conversations_name, memories_name = source.find("conversations.json"), source.find("memories.json")
        if conversations_name is None and memories_name is None:
            raise ValueError("not a Claude export: there is no conversations.json or memories.json in it")
        if memories_name is not None:
            memories = source.json(memories_name)
            if looks_like_memories(memories):
                _memories(memories, out)
            elif conversations_name is None:
                raise ValueError("not a Claude export: memories.json is not Claude's memory")
        conversations_value = [] if conversations_name is None else source.json_lazily(conversations_name)
        if any(n == "projects.json" or n.startswith("projects/") for n in source.names):
            out.notes.append("Claude projects (their documents and instructions) were not imported")
    items = _conversations(conversations_value)
    if items is None or (items and not looks_like(items)):
        raise ValueError("not a Claude export: conversations.json should be a list of conversations, each with "
                         "'chat_messages'")
    return read_conversations(items, out, _conversation, LEFT_OUT)


# What a note says after the count of each kind of thing left out.
LEFT_OUT = {
    "empty": "conversation(s) without any user or assistant text were left out",
    "branches": "conversation(s) had edited or retried messages: only the latest branch was read",
    "not_chat": "content block(s) that are not chat text (thinking, tool use and results) were left out",
    "attachments": "attached file(s) were left out (their text is not part of the conversation)",
    "cleaned": "message(s) held NUL characters or broken Unicode, which were removed",
}


def _conversation(item: Any, index: int, out: ParsedImport, stats: Counter[str]) -> ImportedConversation | None:
    if not isinstance(item, dict):
        out.error(f"conversation #{index}: not an object")
        return None
    raw_id = item.get("uuid") or item.get("id")
    shown = label(raw_id, index)
    chat = item.get("chat_messages")
    if not isinstance(chat, list):
        out.error(f"conversation {shown}: it has no 'chat_messages' list")
        return None
    messages = [m for m in (_message(m, stats) for m in active_branch(chat, item.get("current_leaf_message_uuid"),
                                                                        stats)) if m is not None]
    if not messages:
        stats["empty"] += 1
        return None
    title = item.get("name") if isinstance(item.get("name"), str) else item.get("title")
    if isinstance(raw_id, str) and raw_id.strip():
        conversation_id = raw_id.strip()[:200]
    else:  # the same id on every import of the same export, so that importing it again adds nothing
        basis = repr((title, item.get("created_at"), messages[0].content[:200]))
        conversation_id = "claude-" + hashlib.sha256(basis.encode("utf-8", "replace")).hexdigest()[:24]
    return ImportedConversation(
        id=conversation_id, title=title.strip()[:500] if isinstance(title, str) and title.strip() else None,
        created_at=to_utc(item.get("created_at")), updated_at=to_utc(item.get("updated_at")),
        messages=tuple(messages))


_EPOCH = datetime.min.replace(tzinfo=timezone.utc)


def active_branch(chat: list[Any], leaf: Any = None, stats: Counter[str] | None = None) -> list[dict[str, Any]]:
    """The messages of the branch as last read, in order.

    Messages linked by `parent_message_uuid` form a tree: walk back from `leaf` (or the latest leaf) to the
    root. Without links the list is taken in its own order.
    """
    stats = stats if stats is not None else Counter()
    messages = [m for m in chat if isinstance(m, dict)]
    by_id = {m["uuid"]: m for m in messages if isinstance(m.get("uuid"), str)}
    parents = {m.get("parent_message_uuid") for m in messages}
    if not any(isinstance(p, str) and p in by_id for p in parents):
        return messages
    if not (isinstance(leaf, str) and leaf in by_id):
        leaves = [(to_utc(m.get("created_at")) or _EPOCH, n, m["uuid"]) for n, m in enumerate(messages)
                  if isinstance(m.get("uuid"), str) and m["uuid"] not in parents]
        leaf = max(leaves)[2] if leaves else messages[-1].get("uuid")
    chain: list[dict[str, Any]] = []
    seen: set[str] = set()
    node_id: Any = leaf
    while isinstance(node_id, str) and node_id in by_id and node_id not in seen:
        seen.add(node_id)
        chain.append(by_id[node_id])
        node_id = by_id[node_id].get("parent_message_uuid")
    if len(chain) < len(messages):
        stats["branches"] += 1
    chain.reverse()
    return chain


def _message(message: dict[str, Any], stats: Counter[str]) -> ImportedMessage | None:
    role = _SENDERS.get(message.get("sender")) if isinstance(message.get("sender"), str) else None
    if role is None:
        return None
    text = ""
    blocks = message.get("content")
    if isinstance(blocks, list) and blocks:
        texts = []
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"].strip())
            elif isinstance(block, dict):
                stats["not_chat"] += 1
        text = "\n\n".join(t for t in texts if t)
    if not text and isinstance(message.get("text"), str):
        text = message["text"].strip()
    for key in ("attachments", "files"):
        if isinstance(message.get(key), list):
            stats["attachments"] += len(message[key])
    if not text:
        return None
    text, cleaned = storable(text)
    if cleaned:
        stats["cleaned"] += 1
    return ImportedMessage(role=role, content=text, created_at=to_utc(message.get("created_at")))


def split_summary(text: str) -> tuple[dict[str, str], bool]:
    """Claude's memory text split at its headings into memory_core's summary sections, and whether any matched.

    Text under no known heading stays with the section before it; text before the first heading, or all of it
    when no heading is known, goes to personalContext (what Claude knows about the person).
    """
    sections: dict[str, list[str]] = {}
    current = "personalContext"
    matched = False
    for line in text.splitlines():
        heading = _HEADING.match(line)
        name = heading.group("name").strip().lower() if heading else None
        if name in _SECTION_NAMES:
            matched = True
            current = _SECTION_NAMES[name] or current
            continue
        sections.setdefault(current, []).append(line)
    found = {key: "\n".join(lines).strip() for key, lines in sections.items()}
    return {key: value for key, value in found.items() if value}, matched


def _memories(value: Any, out: ParsedImport) -> None:
    entries = value if isinstance(value, list) else [value]
    projects = 0
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            out.error(f"memories.json entry #{i}: not an object")
            continue
        text = entry.get("conversations_memory")
        if isinstance(text, str) and text.strip():
            if (why := bad_text(text)) is not None:
                out.error(f"memories.json entry #{i}: the memory {why}")
                continue
            sections, matched = split_summary(text)
            if not matched:
                out.notes.append("Claude's memory has none of the usual headings: all of it went to personalContext")
            for key, section in sections.items():
                out.summaries[key] = f"{out.summaries[key]}\n\n{section}" if key in out.summaries else section
        if isinstance(entry.get("project_memories"), dict):
            projects += sum(1 for v in entry["project_memories"].values() if isinstance(v, str) and v.strip())
    if projects:
        out.notes.append(f"{projects} Claude project memor{'y was' if projects == 1 else 'ies were'} not imported "
                         "(they describe projects, not the user)")
