"""Chat messages: the one home of their roles, their validation, and the scheduler pairs stripped before memory."""

from __future__ import annotations

from typing import Any

from memory_core.text.validation import check_memory_text

ROLES = ("user", "assistant", "system", "tool")
SCHEDULED = "[SCHEDULED]"
MAX_MESSAGES = 10_000


def _text_of(content: Any, where: str) -> Any:
    """A content given as parts, as OpenAI's and Anthropic's APIs and LangChain write it (`[{"type": "text", "text":
    ...}, {"type": "image_url", ...}]`, or strings), as the text of its text parts, one a line; other parts (images,
    tool calls) carry no text to remember. Anything else is returned as it is, for the checks that follow."""
    if not isinstance(content, list):
        return content
    texts = []
    for n, part in enumerate(content):
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("type"), str):
            if part["type"] in ("text", "input_text", "output_text") and isinstance(part.get("text"), str):
                texts.append(part["text"])
        else:
            raise ValueError(f"{where}[{n}] must be a string or a {{'type', ...}} content part")
    return "\n".join(t for t in texts if t)


def validate_messages(messages: Any, max_chars: int = 1_000_000) -> list[dict[str, str]]:
    """`[{"role", "content"}]` checked and copied (other keys dropped but a string `name`, the speaker, which
    episodes keep; a None content read as ""; a content of parts read as their text, see `_text_of`).

    Raises ValueError, naming the message, for a wrong shape, an unknown role, content that is not storable
    text (NUL, lone surrogates), more than MAX_MESSAGES messages or more than `max_chars` characters in all.
    """
    if not isinstance(messages, list):
        raise ValueError("messages must be a list of {'role', 'content'} dicts")
    if len(messages) > MAX_MESSAGES:
        raise ValueError(f"{len(messages):,} messages; the limit is {MAX_MESSAGES:,} per conversation")
    out = []
    total = 0
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ROLES:
            raise ValueError(f"messages[{i}] must be a dict with a role among {ROLES}")
        content = _text_of(m.get("content"), f"messages[{i}].content")
        if content is None:
            content = ""
        content = check_memory_text(content, f"messages[{i}].content")  # no credential goes further
        total += len(content)
        if total > max_chars:
            raise ValueError(f"the conversation is over {max_chars:,} characters (max_conversation_chars)")
        name = m.get("name")
        if isinstance(name, str) and name.strip():
            out.append({"role": m["role"], "content": content,
                        "name": check_memory_text(" ".join(name.split())[:64], f"messages[{i}].name")})
        else:
            out.append({"role": m["role"], "content": content})
    return out


def strip_scheduled_pairs(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Drop each scheduler-injected user message and the replies that answer it (up to the next user message)."""
    out: list[dict[str, Any]] = []
    skipping = False
    for m in messages:
        if m.get("role") == "user":
            skipping = str(m.get("content", "")).lstrip().startswith(SCHEDULED)
            if skipping:
                continue
        elif skipping and m.get("role") in ("assistant", "tool"):
            continue
        out.append(m)
    return out
