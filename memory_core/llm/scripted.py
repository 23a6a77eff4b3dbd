"""A deterministic chat model for tests and demos: replies are enqueued, calls are recorded."""

from __future__ import annotations

import threading
from typing import Any

from memory_core.errors import LLMError
from memory_core.llm.base import ChatResult


class ScriptedChatModel:
    """Answers with enqueued replies, in order. A reply may be a string, an Exception to raise, or a
    callable taking the messages. With nothing enqueued, `default` answers (or LLMError is raised)."""

    def __init__(self, replies: list[Any] | None = None, *, default: Any = None, model_name: str = "scripted") -> None:
        self.model_name = model_name
        self.history: list[dict[str, Any]] = []
        self._replies: list[Any] = list(replies or [])
        self._default = default
        self._lock = threading.Lock()

    def enqueue(self, replies: list[Any]) -> "ScriptedChatModel":
        with self._lock:
            self._replies.extend(replies)
        return self

    def complete(self, messages: list[dict[str, str]], *, json_schema: dict[str, Any] | None = None,
                 max_tokens: int | None = None) -> ChatResult:
        with self._lock:
            self.history.append({"messages": messages, "json_schema": json_schema})
            reply = self._replies.pop(0) if self._replies else self._default
        if reply is None:
            raise LLMError("scripted model has no reply left")
        if isinstance(reply, BaseException):
            raise reply
        if callable(reply):
            reply = reply(messages)
        text = str(reply)
        return ChatResult(text=text, input_tokens=sum(len(m.get("content", "")) // 4 for m in messages),
                          output_tokens=len(text) // 4)

    @property
    def calls(self) -> int:
        return len(self.history)
