"""ChatGPT's data export: `conversations.json`, alone or in the export zip.

The file is a list of conversations (`id` / `conversation_id`, `title`, `create_time`, `update_time` in epoch
seconds, `current_node`, `mapping`). Messages live in `mapping`, a tree of nodes (`message`, `parent`,
`children`): an edited message or a regenerated answer is a second child. The conversation as the user last
saw it is the branch that was current: from `current_node` up through `parent` to the root, reversed.

Kept: user and assistant chat text. Left out, and counted in the notes: hidden scaffolding (system messages,
`is_visually_hidden_from_conversation`, weight 0), tool calls and tool output, reasoning (`thoughts`,
`reasoning_recap`), custom instructions (`user_editable_context`), code sent to tools, images and other
non-text parts, empty messages, and conversations the user marked "do not remember".
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from typing import Any

from memory_core.portability.records import (ImportedConversation, ImportedMessage, ParsedImport, label,
                                             read_conversations, storable, to_utc)
from memory_core.portability.safety import JsonArray, Source, first_items

FORMAT = "chatgpt"
_TEXT_TYPES = ("text", "multimodal_text")
_TEXT_PARTS = ("audio_transcription",)  # voice mode: what was said, as text
# Source markers ChatGPT leaves in answers: private-use brackets around "cite turn0search3" and the older
# 【12†source】 form. They point into browsing results the export does not hold.
_CITATION = re.compile("[ \t]*(?:\ue200[^\ue201]{0,200}\ue201|【[^】\n]{0,80}†[^】\n]{0,80}】)")


def looks_like(value: Any) -> bool:
    """Whether a parsed JSON value is ChatGPT's conversations (a list, or one conversation, with a mapping)."""
    items = _conversations(value)
    first = next((v for v in first_items(items, 50) if isinstance(v, dict)), None)
    return first is not None and isinstance(first.get("mapping"), dict)


def _conversations(value: Any) -> list[Any] | JsonArray | None:
    if isinstance(value, (list, JsonArray)):
        return value
    if isinstance(value, dict) and isinstance(value.get("mapping"), dict):
        return [value]
    return None


def parse(source: Source) -> ParsedImport:
    """Read conversations.json (or the export zip or folder). ValueError when it is not ChatGPT's."""
    name = source.names[0] if source.kind == "file" else source.find("conversations.json")
    if name is None:
        raise ValueError("not a ChatGPT export: there is no conversations.json in it")
    items = _conversations(source.json_lazily(name))
    if items is None or (items and not looks_like(items)):
        raise ValueError("not a ChatGPT export: conversations.json should be a list of conversations, each with a "
                         "'mapping' of messages")
    return read_conversations(items, ParsedImport(FORMAT), _conversation, LEFT_OUT)


# What a note says after the count of each kind of thing left out.
LEFT_OUT = {
    "do_not_remember": "conversation(s) marked 'do not remember' in ChatGPT were left out",
    "empty": "conversation(s) without any user or assistant text were left out",
    "no_current": "conversation(s) named no current message: their most recent branch was read",
    "branches": "conversation(s) had edited or regenerated branches: only the current one was read",
    "not_chat": "message(s) that are not chat text (tool calls and output, reasoning, custom instructions, "
                "hidden system messages) were left out",
    "non_text": "image(s) or other non-text part(s) of messages were left out",
    "cleaned": "message(s) held NUL characters or broken Unicode, which were removed",
}


def _stable_id(item: dict[str, Any], index: int) -> str:
    # An export without ids (hand-made, or cut by another tool) still needs the same id on every import, so
    # that importing it again adds nothing: derived from what the conversation is, not where it sits.
    basis = repr((item.get("title"), item.get("create_time"), sorted(item.get("mapping") or {})[:3])) \
        if item.get("create_time") is not None or item.get("title") else f"#{index}"
    return "chatgpt-" + hashlib.sha256(basis.encode("utf-8", "replace")).hexdigest()[:24]


def _conversation(item: Any, index: int, out: ParsedImport, stats: Counter[str]) -> ImportedConversation | None:
    if not isinstance(item, dict):
        out.error(f"conversation #{index}: not an object")
        return None
    raw_id = item.get("conversation_id") or item.get("id")
    shown = label(raw_id, index)
    mapping = item.get("mapping")
    if not isinstance(mapping, dict) or not mapping:
        out.error(f"conversation {shown}: it has no messages ('mapping')")
        return None
    if item.get("is_do_not_remember") is True:
        stats["do_not_remember"] += 1
        return None
    branch = current_branch(mapping, item.get("current_node"), stats)
    messages = [m for m in (_message(node.get("message"), stats) for node in branch) if m is not None]
    if not messages:
        stats["empty"] += 1
        return None
    title = item.get("title")
    return ImportedConversation(
        id=raw_id.strip()[:200] if isinstance(raw_id, str) and raw_id.strip() else _stable_id(item, index),
        title=title.strip()[:500] if isinstance(title, str) and title.strip() else None,
        created_at=to_utc(item.get("create_time")), updated_at=to_utc(item.get("update_time")),
        messages=tuple(messages))


def current_branch(mapping: dict[str, Any], current: Any, stats: Counter[str] | None = None) -> list[dict[str, Any]]:
    """The nodes of the branch the user last saw, root first: from `current` up through `parent`, reversed.

    Without a usable `current`, the most recent leaf stands in for it. A parent that is missing or a loop
    ends the walk there, so a damaged tree still gives what it can.
    """
    stats = stats if stats is not None else Counter()
    if not (isinstance(current, str) and isinstance(mapping.get(current), dict)):
        current = _latest_leaf(mapping)
        stats["no_current"] += 1
    chain: list[dict[str, Any]] = []
    seen: set[str] = set()
    node_id: Any = current
    while isinstance(node_id, str) and node_id not in seen and isinstance(mapping.get(node_id), dict):
        seen.add(node_id)
        node = mapping[node_id]
        chain.append(node)
        node_id = node.get("parent")
    if any(isinstance(n.get("children"), list) and len(n["children"]) > 1 for n in chain):
        stats["branches"] += 1
    chain.reverse()
    return chain


def _latest_leaf(mapping: dict[str, Any]) -> str | None:
    best: tuple[float, int] | None = None
    chosen = None
    for n, (node_id, node) in enumerate(mapping.items()):
        if not isinstance(node, dict) or node.get("children"):
            continue
        message = node.get("message") if isinstance(node.get("message"), dict) else {}
        when = message.get("create_time")
        key = (float(when) if isinstance(when, (int, float)) and not isinstance(when, bool) else 0.0, n)
        if best is None or key > best:
            best, chosen = key, node_id
    return chosen if chosen is not None else next(iter(mapping), None)


def _message(message: Any, stats: Counter[str]) -> ImportedMessage | None:
    if not isinstance(message, dict):
        return None  # the root and other empty nodes
    author = message.get("author") if isinstance(message.get("author"), dict) else {}
    role = author.get("role")
    metadata = message.get("metadata") if isinstance(message.get("metadata"), dict) else {}
    content = message.get("content") if isinstance(message.get("content"), dict) else {}
    if role not in ("user", "assistant") or metadata.get("is_visually_hidden_from_conversation") \
            or metadata.get("is_user_system_message") or message.get("weight") == 0 \
            or (role == "assistant" and message.get("recipient") not in (None, "all")) \
            or content.get("content_type") not in _TEXT_TYPES:
        stats["not_chat"] += 1
        return None
    parts = content.get("parts") if isinstance(content.get("parts"), list) else []
    texts = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and part.get("content_type") in _TEXT_PARTS and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif part is not None:
            stats["non_text"] += 1
    text = "\n".join(t for t in texts if t.strip())
    if role == "assistant":
        text = _CITATION.sub("", text)
    text = text.strip()
    if not text:
        return None
    text, cleaned = storable(text)
    if cleaned:
        stats["cleaned"] += 1
    return ImportedMessage(role=role, content=text, created_at=to_utc(message.get("create_time")))
