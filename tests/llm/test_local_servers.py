"""Response-format negotiation against scripted stand-ins of the known OpenAI-compatible servers
(tests/llm_servers.py), through the real openai client and Memory.update, on a real SQLite file."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta

import pytest
from werkzeug import Response

from memory_core import LLMError, ManualClock, Memory, Settings
from memory_core.llm.formats import MODES, forget_response_formats, is_format_refusal
from memory_core.search.embedders import HashingEmbedder
from tests.llm_servers import KNOWN_SERVERS, completion, handler

KEY = "sk-test-SECRET-abcdef1234567890"
GOOD = {"facts": [{"content": "User prefers tea", "category": "preference", "confidence": 0.9}]}


class api:  # noqa: N801  (a namespace)
    v1 = "/v1"


@pytest.fixture(autouse=True)
def _own_path():
    """A path of its own per test on the shared local server, so that a request a previous test left in
    flight (a slow handler's) can never reach this test's handler."""
    api.v1 = f"/{uuid.uuid4().hex[:8]}/v1"
    yield


def convo(n: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"I prefer tea. ({n})"}, {"role": "assistant", "content": "Noted."}]


def memory_for(tmp_path, httpserver, clock=None, **kw):
    settings = Settings(home=tmp_path / "h", llm_api_key=KEY, llm_base_url=httpserver.url_for(api.v1),
                        llm_max_retries=kw.pop("llm_max_retries", 1), llm_timeout_seconds=10, **kw)
    return Memory(settings, embedder=HashingEmbedder(), clock=clock)


@pytest.mark.parametrize("server", KNOWN_SERVERS, ids=lambda s: s.name)
def test_each_known_server_settles_once_and_is_remembered(tmp_path, httpserver, server):
    calls: list[str] = []
    prompts: list[str] = []

    def reply(body):
        prompts.append(body["messages"][0]["content"])
        return json.dumps(GOOD)

    httpserver.expect_request(api.v1 + "/chat/completions").respond_with_handler(handler(server, reply, calls))
    tried = list(MODES[:MODES.index(server.settles_on) + 1])
    with memory_for(tmp_path, httpserver) as m:
        result = m.update(convo(1), thread_id="t1")
        assert [f.content for f in result.added] == ["User prefers tea"]
        assert calls == tried  # each refused format once, then the one that works
        assert (result.input_tokens, result.output_tokens) == ((11, 7) if server.usage else (0, 0))
        m.facts.delete(result.added[0].id)
        m.update(convo(2), thread_id="t2")
        assert calls[len(tried):] == [server.settles_on]  # later calls go straight to it
    if server.settles_on == "text":  # no response_format at all: the JSON is asked for in the prompt
        assert "JSON schema" in prompts[-1] and '"facts"' in prompts[-1]
    forget_response_formats()  # a restart: the process forgets, the database remembers
    calls.clear()
    with memory_for(tmp_path, httpserver) as m:
        m.update(convo(3), thread_id="t3")
        assert calls == [server.settles_on]


@pytest.mark.parametrize("status,body", [
    # vLLM: the prompt is longer than the model's context
    (400, {"object": "error", "type": "BadRequestError", "param": None, "code": 400,
           "message": "This model's maximum context length is 2048 tokens. However, you requested 4100 tokens."}),
    # Azure OpenAI's content filter
    (400, {"error": {"code": "content_filter", "param": "prompt", "status": 400,
                     "message": "The response was filtered due to the prompt triggering Azure OpenAI's content "
                                "management policy."}}),
])
def test_an_unrelated_rejection_is_an_error_not_a_fallback(tmp_path, httpserver, status, body):
    calls: list[str] = []

    def answer(request):
        calls.append((json.loads(request.get_data()).get("response_format") or {}).get("type", "text"))
        return Response(json.dumps(body), status, content_type="application/json")

    httpserver.expect_request(api.v1 + "/chat/completions").respond_with_handler(answer)
    with memory_for(tmp_path, httpserver) as m:
        with pytest.raises(LLMError, match="request rejected") as info:
            m.update(convo(1), thread_id="t")
        assert calls == ["json_schema"] and m.llm.mode == "json_schema"  # nothing learnt from it
        assert body.get("message", body.get("error", {}).get("message"))[:30] in str(info.value)


def test_a_format_refused_as_a_server_error_is_not_retried_as_one(httpserver):
    """llama-cpp-python's HTTP 500 for json_schema: one fallback, not four retries of the same request."""
    server = next(s for s in KNOWN_SERVERS if s.name == "llama-cpp-python")
    calls: list[str] = []
    httpserver.expect_request(api.v1 + "/chat/completions").respond_with_handler(
        handler(server, lambda body: json.dumps(GOOD), calls))
    from memory_core.llm.openai_chat import OpenAIChatModel

    model = OpenAIChatModel("m", base_url=httpserver.url_for(api.v1), max_retries=3, backoff_seconds=0.01)
    model.complete([{"role": "user", "content": "x"}], json_schema={"type": "object"})
    assert calls == ["json_schema", "json_object"]


def test_a_chosen_format_is_used_as_it_is_and_its_refusal_named(tmp_path, httpserver):
    server = next(s for s in KNOWN_SERVERS if s.name == "lm-studio")
    calls: list[str] = []
    httpserver.expect_request(api.v1 + "/chat/completions").respond_with_handler(
        handler(server, lambda body: json.dumps(GOOD), calls))
    with memory_for(tmp_path, httpserver, llm_response_format="json_object") as m:
        with pytest.raises(LLMError) as info:
            m.update(convo(1), thread_id="t")
        assert calls == ["json_object"]
        assert "refuses response_format=json_object" in str(info.value) and "llm_response_format" in str(info.value)
        assert "'response_format.type' must be 'json_schema'" in str(info.value)
    calls.clear()
    with memory_for(tmp_path, httpserver, llm_response_format="text") as m:
        assert [f.content for f in m.update(convo(2), thread_id="t").added] == ["User prefers tea"]
        assert calls == ["text"]


def test_settings_refuse_an_unknown_format(tmp_path):
    with pytest.raises(ValueError, match="llm_response_format"):
        Settings(home=tmp_path, llm_response_format="xml")
    assert Settings(home=tmp_path, llm_response_format=" JSON_Object ").llm_response_format == "json_object"


def test_a_remembered_format_is_checked_again_after_a_week(tmp_path, httpserver):
    """A server upgraded since may take a more structured format."""
    server = next(s for s in KNOWN_SERVERS if s.name == "llama-cpp-python")
    calls: list[str] = []
    httpserver.expect_request(api.v1 + "/chat/completions").respond_with_handler(
        handler(server, lambda body: json.dumps(GOOD), calls))
    clock = ManualClock()
    with memory_for(tmp_path, httpserver, clock=clock) as m:
        m.update(convo(1), thread_id="t1")
    forget_response_formats()
    clock.advance(timedelta(days=8).total_seconds())
    calls.clear()
    with memory_for(tmp_path, httpserver, clock=clock) as m:
        m.update(convo(2), thread_id="t2")
    assert calls == ["json_schema", "json_object"]


def test_the_remembered_key_holds_no_credentials(tmp_path, httpserver):
    from sqlalchemy import create_engine, text

    server = next(s for s in KNOWN_SERVERS if s.name == "vllm")
    httpserver.expect_request(api.v1 + "/chat/completions").respond_with_handler(
        handler(server, lambda body: json.dumps(GOOD), []))
    url = httpserver.url_for(api.v1).replace("http://", "http://bob:hunter2pass@") + "?api-key=" + KEY
    settings = Settings(home=tmp_path / "h", llm_api_key=KEY, llm_base_url=url, llm_timeout_seconds=10)
    with Memory(settings, embedder=HashingEmbedder()) as m:
        m.update(convo(1), thread_id="t")
    engine = create_engine(settings.database_url)
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT base_url, model, mode FROM llm_formats")).all()
    engine.dispose()
    assert rows == [(httpserver.url_for(api.v1), "gpt-4o-mini", "json_object")]


class _Refusal(Exception):
    def __init__(self, status, body):
        self.status_code, self.body = status, body


@pytest.mark.parametrize("status,body,refused", [
    (500, {"error": {"message": "Input should be 'text' or 'json_object'"}}, True),
    (400, {"error": "'response_format.type' must be 'json_schema' or 'text'"}, True),
    (422, {"detail": [{"loc": ["body", "response_format"], "msg": "extra fields not permitted"}]}, True),
    (400, {}, True),  # says nothing: the plainer request is all there is to try
    (400, {"error": {"message": "maximum context length exceeded"}}, False),
    (500, {"error": {"message": "CUDA out of memory"}}, False),
    (401, {"error": {"message": "response_format needs a paid plan"}}, False),
    (429, {"error": {"message": "slow down"}}, False),
    # an echo of the request in a validation error names response_format without refusing it
    (422, {"detail": [{"loc": ["body", "messages"], "msg": "field required", "input": {"response_format": {}}}]}, False),
])
def test_refusals_are_told_by_their_body(status, body, refused):
    assert is_format_refusal(_Refusal(status, body)) is refused


def test_a_200_carrying_an_error_is_an_llm_error(httpserver):
    from memory_core.llm.openai_chat import OpenAIChatModel

    httpserver.expect_request(api.v1 + "/chat/completions").respond_with_json({"error": {"message": "model is loading"}})
    with pytest.raises(LLMError, match="model is loading"):
        OpenAIChatModel("m", base_url=httpserver.url_for(api.v1), max_retries=0).complete([{"role": "user", "content": "x"}])


def test_usage_is_read_when_given(httpserver):
    from memory_core.llm.openai_chat import OpenAIChatModel

    httpserver.expect_request(api.v1 + "/chat/completions").respond_with_json(completion("hi"))
    result = OpenAIChatModel("m", base_url=httpserver.url_for(api.v1)).complete([{"role": "user", "content": "x"}])
    assert (result.text, result.input_tokens, result.output_tokens, result.finish_reason) == ("hi", 11, 7, "stop")
