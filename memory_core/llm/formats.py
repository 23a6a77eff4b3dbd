"""Response-format negotiation: which `response_format` an OpenAI-compatible server takes, told from its errors.

"OpenAI-compatible" servers differ most in structured output (see the table of known servers in docs/local-models.md):
llama-cpp-python's server answers `json_schema` with HTTP 500 (a request validation error), LM Studio refuses
`json_object` with a 400, LiteLLM's UnsupportedParamsError may come as a 500, Azure refuses `json_schema` on old
API versions. No server has an endpoint to ask, so the mode is found by trying, in order json_schema ->
json_object -> text (the JSON then asked for in the prompt), and remembered per base URL and model: for the
process here, across restarts through a `FormatMemory` (the database's, store/format_store.py).
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

MODES = ("json_schema", "json_object", "text")
SETTINGS_CHOICES = ("auto", *MODES)

# What a refusal of the response format says, whatever the status code: the field's name, or a value of it
# named as unsupported. A body about anything else (a context length, a bad key) is no refusal.
_FORMAT_WORDS = re.compile(r"response_format|response format|json_schema|json_object|json schema|structured output|"
                           r"guided_json|guided decoding|'text' or|\"text\" or", re.IGNORECASE)


class FormatMemory(Protocol):
    """Where the mode that works for a (base URL, model) is kept across restarts."""

    def recall(self, base_url: str, model: str) -> str | None:
        """The remembered mode, or None."""
        ...

    def remember(self, base_url: str, model: str, mode: str) -> None:
        ...


def server_key(base_url: str | None) -> str:
    """The base URL as a key: scheme, host, port and path only (never credentials nor the query)."""
    if not base_url:
        return "https://api.openai.com/v1"
    try:
        parts = urlsplit(base_url.strip())
        host = parts.hostname or ""
        netloc = f"{host}:{parts.port}" if parts.port else host
        return urlunsplit((parts.scheme.lower(), netloc.lower(), parts.path.rstrip("/"), "", ""))[:500]
    except ValueError:
        return "unparsable-url"


def error_text(exc: BaseException) -> str:
    """What an API error says: the message of its JSON body (any of the shapes servers use), else its text."""
    body = getattr(exc, "body", None)
    parts: list[str] = []

    def walk(value: Any, depth: int = 0) -> None:
        if depth > 4 or len(parts) > 20:
            return
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, dict):
            for key in ("message", "msg", "error", "detail", "loc", "param", "type", "code"):  # not "input": an echo
                if key in value:
                    walk(value[key], depth + 1)
        elif isinstance(value, (list, tuple)):
            for item in value[:10]:
                walk(item, depth + 1)

    walk(body)
    if not parts:
        response = getattr(exc, "response", None)
        try:
            text = response.text if response is not None else ""
        except Exception:  # a body that cannot even be read says nothing
            text = ""
        try:
            walk(json.loads(text))
        except ValueError:
            parts.append(text)
    if not parts:
        parts.append(str(exc))
    return " ".join(str(p) for p in parts)[:2000]


def is_format_refusal(exc: BaseException) -> bool:
    """True when an HTTP error refuses the request's response_format (any status: servers answer 400, 422, 500).

    A 400 or 422 whose body says nothing at all is taken as one too (there is nothing else to go on, and a
    plainer request is the only thing left to try)."""
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int) or status < 400:
        return False
    if status in (401, 403, 404, 408, 429):
        return False
    text = error_text(exc)
    if _FORMAT_WORDS.search(text):
        return True
    return status in (400, 422) and not text.strip(" {}[]\"'null")


class ProcessFormats:
    """The modes found in this process, per (server key, model)."""

    def __init__(self) -> None:
        self._modes: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()

    def get(self, key: str, model: str) -> str | None:
        with self._lock:
            return self._modes.get((key, model))

    def put(self, key: str, model: str, mode: str) -> None:
        with self._lock:
            self._modes[(key, model)] = mode

    def clear(self) -> None:
        with self._lock:
            self._modes.clear()


PROCESS_FORMATS = ProcessFormats()


def forget_response_formats() -> None:
    """Forget what this process found about servers (tests; a server upgraded while the process runs)."""
    PROCESS_FORMATS.clear()


def response_format(mode: str, schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """The request's response_format for a mode. JSON mode carries the schema too, as llama.cpp's servers
    read it (they then constrain the output to it); other servers ignore the extra key."""
    if schema is None or mode == "text":
        return None
    if mode == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema, "strict": False}}
    return {"type": "json_object", "schema": schema}


def with_schema_in_prompt(messages: list[dict[str, str]], schema: dict[str, Any]) -> list[dict[str, str]]:
    """The messages with the JSON asked for in the prompt: for servers that take no response_format."""
    ask = ("\n\nAnswer with one JSON object that follows this JSON schema, and nothing else (no prose, no code "
           f"fence):\n{json.dumps(schema, ensure_ascii=False)}")
    out = [dict(m) for m in messages]
    for m in out:
        if m.get("role") == "system":
            m["content"] = f"{m.get('content', '')}{ask}"
            return out
    return [{"role": "system", "content": ask.strip()}, *out]
