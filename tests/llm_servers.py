"""Scripted stand-ins for the OpenAI-compatible servers people run, each answering `response_format` and
errors the way the real one does (the table of known servers in docs/local-models.md says where each behaviour is from).

A profile maps a requested format ("json_schema", "json_object", "text") to a reply: None answers normally,
else (HTTP status, JSON body) is the server's refusal, verbatim in shape."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

from werkzeug import Response

# llama-cpp-python's server: its pydantic request model allows only 'text' and 'json_object', and its route
# handler (llama_cpp/server/errors.py) answers any error it has no pattern for, a validation error included,
# with HTTP 500 {"error": {"message": str(error), "type": "internal_server_error", "param": null, "code": null}}.
LLAMA_CPP_PYTHON_REFUSAL = (500, {"error": {
    "message": "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be "
               "'text' or 'json_object'\", 'input': 'json_schema', 'ctx': {'expected': \"'text' or 'json_object'\"}}]",
    "type": "internal_server_error", "param": None, "code": None}})


@dataclass(frozen=True)
class KnownServer:
    name: str
    refusals: dict[str, tuple[int, Any]] = field(default_factory=dict)  # format -> (status, body)
    usage: bool = True  # the reply carries token usage
    fenced_unless: str | None = None  # replies wrapped in a code fence unless this format was asked (old Ollama)
    settles_on: str = "json_schema"


KNOWN_SERVERS = [
    KnownServer("openai"),
    KnownServer("llama-cpp-python", refusals={"json_schema": LLAMA_CPP_PYTHON_REFUSAL}, settles_on="json_object"),
    # llama.cpp's llama-server, builds before json_schema support: a runtime_error answered as a server error
    KnownServer("llama-server (old build)", refusals={"json_schema": (500, {"error": {
        "code": 500, "type": "server_error",
        "message": "response_format type must be one of \"text\" or \"json_object\", but got: json_schema"}})},
        settles_on="json_object"),
    KnownServer("llama-server", usage=True),
    KnownServer("ollama"),
    # Ollama before 0.5 ignored json_schema (a 200 with prose around fenced JSON); json_object was "format: json"
    KnownServer("ollama (before 0.5)", fenced_unless="json_object"),
    # vLLM: a schema its guided-decoding backend cannot compile is a 400 in its ErrorResponse shape
    KnownServer("vllm", refusals={"json_schema": (400, {
        "object": "error", "type": "BadRequestError", "param": None, "code": 400,
        "message": "The provided JSON schema contains features not supported by xgrammar."})},
        settles_on="json_object"),
    # LM Studio takes json_schema and refuses json_object; its error is a bare string
    KnownServer("lm-studio", refusals={"json_object": (400, {"error": "'response_format.type' must be 'json_schema' "
                                                                      "or 'text'"})}, usage=False),
    # LiteLLM's proxy in front of a backend that takes no response_format at all: UnsupportedParamsError, a 500
    KnownServer("litellm", refusals={fmt: (500, {"error": {
        "message": "litellm.UnsupportedParamsError: ollama does not support parameters: ['response_format'], for "
                   "model=smollm. To drop these, set `litellm.drop_params=True` or for proxy:\n\n`litellm_settings:\n "
                   "drop_params: true`\n", "type": "None", "param": "None", "code": "500"}})
        for fmt in ("json_schema", "json_object")}, settles_on="text"),
    # Azure OpenAI with an api-version before 2024-08-01-preview
    KnownServer("azure-openai (old api-version)", refusals={"json_schema": (400, {"error": {
        "code": "BadRequest", "param": None, "type": None,
        "message": "response_format value as json_schema is enabled only for api versions 2024-08-01-preview and "
                   "later"}})}, settles_on="json_object"),
]


def completion(text: str, usage: bool = True) -> dict[str, Any]:
    out = {"id": "c1", "object": "chat.completion", "created": 0, "model": "m",
           "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}
    if usage:
        out["usage"] = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    return out


def handler(server: KnownServer, reply: Callable[[dict], str], calls: list[str]):
    """A pytest-httpserver handler acting as `server`; `calls` gets the format of every request."""

    def answer(request):
        body = json.loads(request.get_data())
        fmt = (body.get("response_format") or {}).get("type", "text")
        calls.append(fmt)
        refusal = server.refusals.get(fmt)
        if refusal is not None:
            status, payload = refusal
            return Response(json.dumps(payload), status, content_type="application/json")
        text = reply(body)
        if server.fenced_unless and fmt != server.fenced_unless:
            text = f"Sure! Here is the JSON:\n```json\n{text}\n```"
        return Response(json.dumps(completion(text, server.usage)), 200, content_type="application/json")

    return answer
