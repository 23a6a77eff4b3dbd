"""The chat-model protocol: one method."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class ChatResult:
    text: str
    input_tokens: int = 0
    output_tokens: int = 0


class ChatModel(Protocol):
    model_name: str

    def complete(self, messages: list[dict[str, str]], *, json_schema: dict[str, Any] | None = None,
                 max_tokens: int | None = None) -> ChatResult:
        """Answer a chat. `json_schema` asks for structured output where the server supports it.

        Raises LLMError when the model cannot be reached or answers with an error.
        """
        ...


_KEYLIKE = re.compile(r"\b(sk|rk|pk|key|api[-_]?key)[-_][A-Za-z0-9_\-\*\.]{4,}", re.IGNORECASE)
_BEARER = re.compile(r"(Bearer\s+)\S+", re.IGNORECASE)


def scrub(text: str, *secrets: str | None) -> str:
    """Remove API keys (the configured ones, and anything shaped like a key) from a message."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
            if len(secret) > 8:
                text = text.replace(secret[:8], "***").replace(secret[-6:], "***")
    text = _BEARER.sub(r"\1***", text)
    return _KEYLIKE.sub("***", text)
