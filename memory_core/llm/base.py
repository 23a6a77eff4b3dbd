"""The chat-model protocol: one method."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from memory_core.text.redact import scrub  # noqa: F401  (re-exported: the adapters scrub their errors with it)


@dataclass(frozen=True)
class ChatResult:
    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    finish_reason: str | None = None  # "length": the reply was cut off at max_tokens


class ChatModel(Protocol):
    model_name: str

    def complete(self, messages: list[dict[str, str]], *, json_schema: dict[str, Any] | None = None,
                 max_tokens: int | None = None) -> ChatResult:
        """Answer a chat. `json_schema` asks for structured output where the server supports it.

        Raises LLMError when the model cannot be reached or answers with an error.
        """
        ...

