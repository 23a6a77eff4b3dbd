"""The chat-model adapter over the official `openai` client.

Works with OpenAI and with OpenAI-compatible servers (llama.cpp's servers, Ollama, vLLM, LM Studio, LiteLLM,
Azure-style gateways): the response format is negotiated (formats.py), every call has an overall deadline,
retries included (deadline.py), and whatever the server sends, a failure is an LLMError fit to show.
"""

from __future__ import annotations

import json
import logging
import ssl
import threading
import time
from typing import Any, Callable

import httpx
import openai

from memory_core.errors import LLMError
from memory_core.text.redact import mask_url, protect_library_logs, scrub, split_query, url_secrets
from memory_core.llm.base import ChatResult
from memory_core.llm.deadline import Deadline, DeadlineExceeded, run_with_deadline
from memory_core.llm.formats import (MODES, PROCESS_FORMATS, SETTINGS_CHOICES, FormatMemory, error_text, is_format_refusal,
                      response_format, server_key, with_schema_in_prompt)

log = logging.getLogger(__name__)

__all__ = ["MODES", "OpenAIChatModel"]

_RETRYABLE = (openai.RateLimitError, openai.APITimeoutError, openai.APIConnectionError, openai.InternalServerError)
_SSL: ssl.SSLContext | None = None
_SSL_LOCK = threading.Lock()


def _ssl_context() -> ssl.SSLContext:
    """One verifying TLS context for every call's client (building one reads the CA bundle)."""
    global _SSL
    with _SSL_LOCK:
        if _SSL is None:
            import certifi

            _SSL = ssl.create_default_context(cafile=certifi.where())
        return _SSL


class OpenAIChatModel:
    """`timeout` is the overall deadline of one `complete()`, retries included. `response_format`: "auto"
    (negotiate, and remember what works per base URL and model, in this process and in `formats`), or one of
    "json_schema", "json_object", "text" (used as it is; a server refusing it is an LLMError)."""

    def __init__(self, model: str, *, api_key: str | None = None, base_url: str | None = None,
                 timeout: float = 60.0, max_retries: int = 3, backoff_seconds: float = 1.0,
                 sleep: Callable[[float], None] = time.sleep, response_format: str = "auto",
                 formats: FormatMemory | None = None) -> None:
        if response_format not in SETTINGS_CHOICES:
            raise ValueError(f"response_format must be one of {', '.join(SETTINGS_CHOICES)}")
        self.model_name = model
        self._api_key = api_key
        self._base_url = base_url
        self._secrets = [s for s in [api_key, *url_secrets(base_url)] if s]
        protect_library_logs(*self._secrets)
        self._base, self._query = split_query(base_url)  # "?api-key=..." (Azure-style) goes on every request
        self._timeout = float(timeout)
        self._max_retries = max_retries
        self._backoff = backoff_seconds
        self._sleep = sleep
        self._fixed = None if response_format == "auto" else response_format
        self._formats = formats
        self._key = server_key(base_url)
        self._recalled = False
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OpenAIChatModel(model={self.model_name!r}, base_url={mask_url(self._base_url)!r})"

    @property
    def mode(self) -> str:
        """The response format used for structured requests now."""
        return self._fixed or PROCESS_FORMATS.get(self._key, self.model_name) or MODES[0]

    def _start_mode(self) -> str:
        """The mode to try first: fixed, found in this process, or remembered in `formats` (read once)."""
        if self._fixed:
            return self._fixed
        found = PROCESS_FORMATS.get(self._key, self.model_name)
        if found is None and self._formats is not None and not self._recalled:
            with self._lock:
                self._recalled = True
            try:
                found = self._formats.recall(self._key, self.model_name)
            except Exception as exc:  # a memory of formats is a shortcut, never a reason to fail
                log.warning("reading the remembered LLM response format failed: %s", type(exc).__name__)
            if found in MODES:
                PROCESS_FORMATS.put(self._key, self.model_name, found)
        return found if found in MODES else MODES[0]

    def _settle(self, mode: str) -> None:
        PROCESS_FORMATS.put(self._key, self.model_name, mode)
        if self._formats is not None:
            try:
                self._formats.remember(self._key, self.model_name, mode)
            except Exception as exc:
                log.warning("remembering the LLM response format failed: %s", type(exc).__name__)

    def _error(self, what: str, exc: BaseException | None = None) -> LLMError:
        """An LLMError fit to show: secrets scrubbed from the whole text first, then cut to length."""
        detail = ""
        if exc is not None:
            status = getattr(exc, "status_code", None)
            said = error_text(exc) if status else str(exc)
            detail = f" ({type(exc).__name__}{f', HTTP {status}' if status else ''}: {said[:300]})"
        where = mask_url(self._base_url) or "the OpenAI API"
        message = scrub(f"LLM {what} at {where} for model {self.model_name}{detail}", *self._secrets)
        return LLMError(message[:700])

    def _failure(self, exc: Exception, mode: str, attempt: int) -> str | LLMError:
        """What to do about a failed call: "fallback" (to a less structured mode), "retry", or the error to raise."""
        if mode != "text" and is_format_refusal(exc):
            if self._fixed:
                return self._error(f"refuses response_format={mode} (Settings.llm_response_format); "
                                   "choose another or 'auto'", exc)
            return "fallback"
        if isinstance(exc, (openai.BadRequestError, openai.UnprocessableEntityError)):
            return self._error("request rejected", exc)
        if isinstance(exc, openai.AuthenticationError):
            return self._error("authentication failed (check the API key)", exc)
        if isinstance(exc, openai.PermissionDeniedError):
            return self._error("permission denied", exc)
        if isinstance(exc, openai.NotFoundError):
            return self._error("model or endpoint not found", exc)
        if isinstance(exc, _RETRYABLE):
            return "retry" if attempt <= self._max_retries else self._error(f"failed after {attempt} attempts", exc)
        if isinstance(exc, openai.APIStatusError):
            return self._error("returned an error", exc)
        return self._error("call failed", exc)

    def _timed_out(self, attempts: int) -> LLMError:
        return self._error(f"call timed out: no complete answer within the {self._timeout:g} s deadline "
                           f"(llm_timeout_seconds, retries included; {attempts} attempt(s))")

    def complete(self, messages: list[dict[str, str]], *, json_schema: dict[str, Any] | None = None,
                 max_tokens: int | None = None) -> ChatResult:
        deadline = Deadline(self._timeout)
        mode = self._start_mode() if json_schema is not None else "text"
        attempt = tries = 0
        while True:
            kwargs: dict[str, Any] = {"model": self.model_name, "temperature": 0,
                                      "messages": with_schema_in_prompt(messages, json_schema)
                                      if json_schema is not None and mode == "text" else messages}
            if max_tokens:
                kwargs[output_limit_field(self._base_url)] = max_tokens
            fmt = response_format(mode, json_schema)
            if fmt is not None:
                kwargs["response_format"] = fmt
            failure: Exception | None = None
            body: bytes | None = None
            tries += 1
            try:
                body = self._post(kwargs, deadline)
            except DeadlineExceeded:
                pass
            except openai.OpenAIError as exc:
                failure = exc
            if failure is None and body is None:
                raise self._timed_out(tries)
            if failure is None:
                return self._result(body)
            # Decided and raised outside the except block, so that the LLMError carries no chained
            # exception (whose text and request may hold the key).
            attempt += isinstance(failure, _RETRYABLE)
            action = self._failure(failure, mode, attempt)
            delay = (self._retry_after(failure) or self._backoff * (2 ** (attempt - 1))) if action == "retry" else 0.0
            kind, said = type(failure).__name__, error_text(failure)[:200]
            if action == "retry" and delay >= deadline.left():
                action = self._timed_out(tries) if isinstance(failure, openai.APITimeoutError) else self._error(f"failed after {attempt} attempts, no time left within the "
                                     f"{self._timeout:g} s deadline for another", failure)
            failure = None
            if isinstance(action, LLMError):
                raise action
            if action == "fallback":
                refused, mode = mode, MODES[MODES.index(mode) + 1]
                self._settle(mode)
                log.warning("LLM server at %s refused response_format=%s for model %s (%s: %s); using %s from now on",
                            mask_url(self._base_url) or "the OpenAI API", refused, self.model_name, kind,
                            scrub(said, *self._secrets), mode)
                continue
            log.warning("LLM call failed (%s); retry %d/%d in %.2fs", kind, attempt, self._max_retries, delay)
            self._sleep(delay)

    def _post(self, kwargs: dict[str, Any], deadline: Deadline) -> bytes:
        """One request on a client of its own, so that closing it at the deadline touches no other call."""
        left = deadline.left()
        http = openai.DefaultHttpxClient(verify=_ssl_context(), timeout=httpx.Timeout(left, connect=min(left, 10.0)))
        client = openai.OpenAI(api_key=self._api_key or "no-key", base_url=self._base, default_query=self._query or None,
                               timeout=httpx.Timeout(left, connect=min(left, 10.0)), max_retries=0, http_client=http)

        def call() -> bytes:
            try:
                return client.chat.completions.with_raw_response.create(**kwargs).http_response.content
            finally:
                http.close()

        return run_with_deadline(call, left, abort=http.close)

    def _retry_after(self, exc: BaseException) -> float | None:
        response = getattr(exc, "response", None)
        value = response.headers.get("retry-after") if response is not None else None
        try:
            return min(float(value), 30.0) if value else None
        except ValueError:
            return None

    def _result(self, body: bytes) -> ChatResult:
        """The reply read from the raw body: a reply that is not UTF-8, not JSON or has no choice is an LLMError."""
        problem, payload = _decode(body)
        if problem:
            raise self._error(problem)
        if isinstance(payload, dict) and "choices" not in payload and payload.get("error"):
            raise self._error(f"answered with an error: {scrub(_error_text_of(payload), *self._secrets)[:300]}")
        try:
            choice = payload["choices"][0]
            message = choice.get("message") or {}
            text = message.get("content")
            finish = choice.get("finish_reason")
            usable = text is None or isinstance(text, str)
        except (AttributeError, IndexError, TypeError, KeyError):
            usable, text, finish = False, None, None
        if not usable:  # raised here, outside the except block: nothing chained
            raise self._error("returned no choices")
        usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}
        return ChatResult(text=text or "", input_tokens=_count(usage.get("prompt_tokens")),
                          output_tokens=_count(usage.get("completion_tokens")),
                          finish_reason=finish if isinstance(finish, str) else None)


def output_limit_field(base_url: str | None) -> str:
    """The request field that bounds a reply: OpenAI's own API takes `max_completion_tokens` for every chat model
    (its reasoning models refuse `max_tokens`); OpenAI-compatible servers (llama.cpp, Ollama, vLLM, LM Studio,
    LiteLLM) read `max_tokens`."""
    host = (httpx.URL(base_url).host if base_url else "api.openai.com").lower()
    return "max_completion_tokens" if host == "api.openai.com" else "max_tokens"


def _decode(body: bytes) -> tuple[str | None, Any]:
    """(problem, payload): the JSON of a reply body, or what is wrong with it."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        byte = body[exc.start:exc.start + 1].hex()
        return f"reply is not valid UTF-8 (byte 0x{byte} at position {exc.start} of {len(body)})", None
    try:
        return None, json.loads(text.lstrip("\ufeff"))
    except ValueError:
        return f"reply is not JSON: {text[:80]!r}", None


def _error_text_of(payload: dict[str, Any]) -> str:
    """The message of an error object a server sent with a 200."""
    err = payload.get("error")
    if isinstance(err, dict):
        return str(err.get("message") or err)
    return str(err)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
