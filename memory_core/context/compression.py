"""Context compression for OpenAI-format transcripts, in the style of dynamic context pruning.

- range dedup: of identical tool calls (same name, same arguments in any key order) only the latest
  is kept; adjacent identical messages collapse into one;
- purge errors: an errored tool call older than `purge_errors_after` user turns keeps its error text
  but loses its (often bulky) arguments;
- turn protection: the messages of the last `protect_turns` user turns are never touched, a tool
  call and its result go together or not at all, and system messages always stay.
The input is never mutated.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from typing import Any

from memory_core.text.tokens import get_encoding

_ERROR = re.compile(r"^\s*(error|exception|traceback)\b|\b(error|exception|traceback|failed|failure)\b[:\s]", re.I)
PURGED_ARGUMENTS = "{}"


@dataclass
class CompressionResult:
    messages: list[dict[str, Any]]
    removed: int
    tokens_before: int
    tokens_after: int
    purged: int = 0

    @property
    def tokens_saved(self) -> int:
        return self.tokens_before - self.tokens_after


def message_tokens(messages: list[dict[str, Any]], model: str | None = None) -> int:
    """Tokens of a transcript: contents, tool names and arguments, plus 4 per message of framing."""
    enc = get_encoding(model)
    total = 0
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):  # content parts
            content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
        if content:
            total += len(enc.encode(str(content), disallowed_special=()))
        for call in m.get("tool_calls") or []:
            fn = call.get("function", {}) if isinstance(call, dict) else {}
            total += len(enc.encode(f"{fn.get('name', '')}{fn.get('arguments', '')}", disallowed_special=())) + 3
        total += 4
    return total


def _call_key(call: dict[str, Any]) -> tuple[str, str]:
    fn = call.get("function") or {}
    raw = fn.get("arguments", "")
    try:
        args = json.dumps(json.loads(raw) if isinstance(raw, str) else raw, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError):
        args = str(raw)
    return str(fn.get("name", "")), args


def _is_error(message: dict[str, Any]) -> bool:
    if message.get("is_error") is True:
        return True
    content = message.get("content")
    return isinstance(content, str) and bool(_ERROR.search(content[:500]))


def compress_messages(messages: list[dict[str, Any]], *, protect_turns: int = 4, purge_errors_after: int = 4,
                      model: str | None = None) -> CompressionResult:
    """Compress a transcript. Returns a new list; `messages` is left exactly as it was."""
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise ValueError("messages must be a list of dicts")
    if protect_turns < 0 or purge_errors_after < 0:
        raise ValueError("protect_turns and purge_errors_after must not be negative")
    work = copy.deepcopy(messages)
    tokens_before = message_tokens(messages, model)

    turn_of: list[int] = []
    turn = 0
    for m in work:
        if m.get("role") == "user":
            turn += 1
        turn_of.append(turn)
    total_turns = turn
    first_protected_turn = total_turns - protect_turns + 1 if protect_turns else total_turns + 1

    def protected(i: int) -> bool:
        return turn_of[i] >= first_protected_turn or work[i].get("role") == "system"

    # Where each tool call's result is.
    result_at: dict[str, int] = {}
    for i, m in enumerate(work):
        if m.get("role") == "tool" and m.get("tool_call_id"):
            result_at.setdefault(str(m["tool_call_id"]), i)

    drop: set[int] = set()
    dropped_calls: set[str] = set()

    # Range dedup of identical tool calls: walk from the end, keep the latest of each key.
    seen: set[tuple[str, str]] = set()
    for i in range(len(work) - 1, -1, -1):
        m = work[i]
        if m.get("role") != "assistant" or not m.get("tool_calls"):
            continue
        for call in reversed(m["tool_calls"]):
            key = _call_key(call)
            call_id = str(call.get("id", ""))
            res = result_at.get(call_id)
            if key in seen and not protected(i) and (res is None or not protected(res)):
                dropped_calls.add(call_id)
                if res is not None:
                    drop.add(res)
            seen.add(key)
    for i, m in enumerate(work):
        if m.get("role") == "assistant" and m.get("tool_calls") and dropped_calls:
            remaining = [c for c in m["tool_calls"] if str(c.get("id", "")) not in dropped_calls]
            if len(remaining) != len(m["tool_calls"]):
                if remaining:
                    m["tool_calls"] = remaining
                elif m.get("content"):
                    del m["tool_calls"]
                else:
                    drop.add(i)

    # Adjacent identical plain messages collapse into the later one.
    for i in range(len(work) - 1):
        a, b = work[i], work[i + 1]
        if (i not in drop and not protected(i) and not a.get("tool_calls") and not b.get("tool_calls")
                and a.get("role") in ("user", "assistant") and a.get("role") == b.get("role")
                and a.get("content") == b.get("content")):
            if a.get("role") == "user":
                turn_of[i + 1] = turn_of[i]
            drop.add(i)

    # Purge the arguments of old errored tool calls.
    purged = 0
    call_at: dict[str, tuple[int, dict[str, Any]]] = {}
    for i, m in enumerate(work):
        for call in m.get("tool_calls") or []:
            call_at[str(call.get("id", ""))] = (i, call)
    for call_id, res in result_at.items():
        if res in drop or call_id not in call_at:
            continue
        i, call = call_at[call_id]
        old_enough = total_turns - turn_of[i] >= purge_errors_after
        fn = call.get("function") or {}
        if old_enough and not protected(i) and _is_error(work[res]) and fn.get("arguments") not in (None, PURGED_ARGUMENTS):
            fn["arguments"] = PURGED_ARGUMENTS
            purged += 1

    out = [m for i, m in enumerate(work) if i not in drop]
    return CompressionResult(out, len(messages) - len(out), tokens_before, message_tokens(out, model), purged)
