"""The chat-model adapter over the official `openai` client.

Works with OpenAI and with OpenAI-compatible servers (Azure-style gateways, Ollama, vLLM, llama.cpp):
structured output with a JSON schema first, JSON mode when the server refuses that, plain text last.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable

import openai

from ..errors import LLMError
from ..redact import mask_url, protect_library_logs, scrub, split_query, url_secrets
from .base import ChatResult

log = logging.getLogger(__name__)

MODES = ("json_schema", "json_object", "text")


class OpenAIChatModel:
    def __init__(self, model: str, *, api_key: str | None = None, base_url: str | None = None,
                 timeout: float = 60.0, max_retries: int = 3, backoff_seconds: float = 1.0,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.model_name = model
        self._api_key = api_key
        self._base_url = base_url
        self._secrets = [s for s in [api_key, *url_secrets(base_url)] if s]
        protect_library_logs(*self._secrets)
        base, query = split_query(base_url)  # "?api-key=..." (Azure-style gateways) goes on every request
        self._client = openai.OpenAI(api_key=api_key or "no-key", base_url=base, default_query=query or None,
                                     timeout=timeout, max_retries=0)
        self._max_retries = max_retries
        self._backoff = backoff_seconds
        self._sleep = sleep
        self._mode_index = 0  # the most structured mode this server has accepted
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OpenAIChatModel(model={self.model_name!r}, base_url={mask_url(self._base_url)!r})"

    @property
    def mode(self) -> str:
        return MODES[self._mode_index]

    def _error(self, what: str, exc: BaseException | None = None) -> LLMError:
        """An LLMError fit to show: secrets scrubbed from the whole text first, then cut to length."""
        detail = ""
        if exc is not None:
            status = getattr(exc, "status_code", None)
            detail = f" ({type(exc).__name__}{f', HTTP {status}' if status else ''}: {exc})"
        where = mask_url(self._base_url) or "the OpenAI API"
        message = scrub(f"LLM {what} at {where} for model {self.model_name}{detail}", *self._secrets)
        return LLMError(message[:600])

    def _failure(self, exc: Exception, mode: str, attempt: int) -> str | LLMError:
        """What to do about a failed call: "fallback" (to a less structured mode), "retry", or the error to raise."""
        if isinstance(exc, (openai.BadRequestError, openai.UnprocessableEntityError)):
            return "fallback" if mode != "text" else self._error("request rejected", exc)
        if isinstance(exc, openai.AuthenticationError):
            return self._error("authentication failed (check the API key)", exc)
        if isinstance(exc, openai.PermissionDeniedError):
            return self._error("permission denied", exc)
        if isinstance(exc, openai.NotFoundError):
            return self._error("model or endpoint not found", exc)
        if isinstance(exc, (openai.RateLimitError, openai.APITimeoutError, openai.APIConnectionError,
                            openai.InternalServerError)):
            return "retry" if attempt <= self._max_retries else self._error(f"failed after {attempt} attempts", exc)
        if isinstance(exc, openai.APIStatusError):
            return self._error("returned an error", exc)
        return self._error("call failed", exc)

    def complete(self, messages: list[dict[str, str]], *, json_schema: dict[str, Any] | None = None,
                 max_tokens: int | None = None) -> ChatResult:
        attempt = 0
        while True:
            mode = self.mode if json_schema is not None else "text"
            kwargs: dict[str, Any] = {"model": self.model_name, "messages": messages, "temperature": 0}
            if max_tokens:
                kwargs["max_tokens"] = max_tokens
            if mode == "json_schema":
                kwargs["response_format"] = {"type": "json_schema", "json_schema": {
                    "name": "reply", "schema": json_schema, "strict": False}}
            elif mode == "json_object":
                kwargs["response_format"] = {"type": "json_object"}
            failure: Exception | None = None
            try:
                response = self._client.chat.completions.create(**kwargs)
            except openai.OpenAIError as exc:
                failure = exc
            if failure is None:
                return self._result(response)
            # Decided and raised outside the except block, so that the LLMError carries no chained
            # exception (whose text and request may hold the key).
            retryable = isinstance(failure, (openai.RateLimitError, openai.APITimeoutError,
                                             openai.APIConnectionError, openai.InternalServerError))
            attempt += retryable
            action = self._failure(failure, mode, attempt)
            delay = self._retry_after(failure) if action == "retry" else None
            kind = type(failure).__name__
            failure = None
            if isinstance(action, LLMError):
                raise action
            if action == "fallback":
                with self._lock:
                    self._mode_index = min(self._mode_index + 1, len(MODES) - 1)
                log.info("LLM server refused response_format=%s; falling back to %s", mode, self.mode)
                continue
            delay = delay or self._backoff * (2 ** (attempt - 1))
            log.warning("LLM call failed (%s); retry %d/%d in %.2fs", kind, attempt, self._max_retries, delay)
            self._sleep(delay)

    def _retry_after(self, exc: BaseException) -> float | None:
        response = getattr(exc, "response", None)
        value = response.headers.get("retry-after") if response is not None else None
        try:
            return min(float(value), 30.0) if value else None
        except ValueError:
            return None

    def _result(self, response: Any) -> ChatResult:
        try:
            text = response.choices[0].message.content
            usable = True
        except (AttributeError, IndexError, TypeError, KeyError):
            text, usable = None, False
        if not usable:  # raised here, outside the except block: nothing chained
            raise self._error("returned no choices")
        usage = getattr(response, "usage", None)
        return ChatResult(text=text or "", input_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                          output_tokens=getattr(usage, "completion_tokens", 0) or 0)
