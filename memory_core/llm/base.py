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


def output_bound(expected: int, ceiling: int) -> int:
    """The `max_tokens` of one call: what it expects back, never more than the configured ceiling."""
    return max(1, min(int(expected), int(ceiling)))


def complete_within(result: ChatResult, bound: int) -> ChatResult:
    """`result`, unless the model was cut off at the call's bound: then a reply error that says so (a model that
    rambles or loops stops at the bound, and its half reply is never used)."""
    if result.finish_reason == "length":
        from memory_core.errors import LLMReplyError

        raise LLMReplyError(f"the model's reply was cut off at the call's bound of {bound} output tokens "
                            f"({result.output_tokens or bound} generated); raise llm_max_output_tokens if its "
                            "replies are that long")
    return result


class ChatModel(Protocol):
    model_name: str

    def complete(self, messages: list[dict[str, str]], *, json_schema: dict[str, Any] | None = None,
                 max_tokens: int | None = None) -> ChatResult:
        """Answer a chat. `json_schema` asks for structured output where the server supports it.

        Raises LLMError when the model cannot be reached or answers with an error.
        """
        ...

