"""Conversations from the formats people paste or upload, as OpenAI-style messages."""

from __future__ import annotations

import json
import re
from typing import Any

from memory_core.errors import IngestError

MAX_BYTES = 5 * 1024 * 1024
ROLE_ALIASES = {"user": "user", "human": "user", "you": "user", "me": "user", "assistant": "assistant", "ai": "assistant",
                "bot": "assistant", "agent": "assistant", "system": "system", "tool": "tool"}
_SPEAKER = re.compile(r"^\s*(?:[#>*_\s]*)\b(user|human|you|assistant|ai|bot|agent|system)\b\s*(?:\*\*|__)?\s*[:：]\s*(?:\*\*|__)?\s?(.*)$", re.I)


def _from_list(items: list[Any]) -> list[dict[str, str]]:
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise IngestError(f"item {i} is not an object with role and content")
        role = ROLE_ALIASES.get(str(item.get("role", item.get("speaker", ""))).strip().lower())
        content = item.get("content", item.get("text"))
        if role is None or not isinstance(content, str):
            raise IngestError(f"item {i} needs a role (user/assistant/system/tool) and a text content")
        out.append({"role": role, "content": content})
    return out


def from_locomo(sample: dict[str, Any], session: int | None = None) -> list[dict[str, str]]:
    """A LoCoMo sample: speaker_a plays the user, speaker_b the assistant."""
    convo = sample.get("conversation", sample)
    a = convo.get("speaker_a")
    keys = sorted((k for k in convo if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1]))
    if session is not None:
        keys = [k for k in keys if k == f"session_{session}"]
    out = []
    for key in keys:
        for turn in convo[key]:
            if isinstance(turn, dict) and isinstance(turn.get("text"), str):
                out.append({"role": "user" if turn.get("speaker") == a else "assistant", "content": turn["text"]})
    if not out:
        raise IngestError("the LoCoMo conversation has no turns")
    return out


def _from_transcript(text: str) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for line in text.splitlines():
        match = _SPEAKER.match(line)
        if match:
            out.append({"role": ROLE_ALIASES[match.group(1).lower()], "content": match.group(2).strip()})
        elif out and line.strip():
            out[-1]["content"] = (out[-1]["content"] + "\n" + line.strip()).strip()
    return [m for m in out if m["content"]]


def parse_conversation(data: str | bytes, filename: str | None = None) -> list[dict[str, str]]:
    """Messages from a transcript (`User:`/`Assistant:`), Markdown, JSON messages, JSONL or LoCoMo.

    Raises IngestError with a clear message for anything else; nothing is stored by parsing.
    """
    if isinstance(data, bytes):
        if len(data) > MAX_BYTES:
            raise IngestError(f"the file is {len(data) // 1024} KiB; the limit is {MAX_BYTES // 1024} KiB")
        if b"\x00" in data[:4096]:
            raise IngestError("the file is binary, not a text conversation")
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise IngestError("the file is not UTF-8 text") from None
    if len(data) > MAX_BYTES:
        raise IngestError(f"the text is over the limit of {MAX_BYTES // 1024} KiB")
    text = data.strip()
    if not text:
        raise IngestError("the conversation is empty")
    if text[0] in "[{":
        try:
            obj = json.loads(text)
        except json.JSONDecodeError:
            obj = None
        if obj is not None:
            if isinstance(obj, list) and obj and isinstance(obj[0], dict) and "conversation" in obj[0]:
                return from_locomo(obj[0])
            if isinstance(obj, dict) and "conversation" in obj:
                return from_locomo(obj)
            if isinstance(obj, dict) and isinstance(obj.get("messages"), list):
                obj = obj["messages"]
            if isinstance(obj, list):
                messages = _from_list(obj)
                if not messages:
                    raise IngestError("the JSON holds no messages")
                return messages
            raise IngestError("JSON must be a list of messages, {\"messages\": [...]}, or a LoCoMo sample")
        lines = [l for l in text.splitlines() if l.strip()]
        try:
            return _from_list([json.loads(l) for l in lines])
        except json.JSONDecodeError:
            if (filename or "").endswith((".json", ".jsonl")):
                raise IngestError("the file is not valid JSON or JSONL") from None
    messages = _from_transcript(text)
    if not messages:
        raise IngestError("no 'User:' / 'Assistant:' lines found; paste a transcript, JSON messages, JSONL or LoCoMo")
    return messages
