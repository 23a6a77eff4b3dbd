"""The real openai client against a local OpenAI-compatible HTTP server, scripted per test."""

from __future__ import annotations

import json
import time

import pytest
from werkzeug import Response

from memory_core import LLMError, LLMReplyError, Memory, Settings
from memory_core.llm.openai_chat import OpenAIChatModel
from memory_core.search.embedders import HashingEmbedder

KEY = "sk-test-SECRET-abcdef1234567890"
GOOD = {"facts": [{"content": "User prefers tea", "category": "preference", "confidence": 0.9}]}


def completion(text):
    return {"id": "c1", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}}


def model_for(httpserver, **kw):
    return OpenAIChatModel("m", api_key=KEY, base_url=httpserver.url_for("/v1"), backoff_seconds=0.01, **kw)


def memory_for(tmp_path, httpserver, **kw):
    settings = Settings(home=tmp_path / "h", llm_api_key=KEY, llm_base_url=httpserver.url_for("/v1"),
                        llm_max_retries=kw.pop("llm_max_retries", 2), llm_timeout_seconds=kw.pop("timeout", 5), **kw)
    return Memory(settings, embedder=HashingEmbedder())


CONVO = [{"role": "user", "content": "I prefer tea."}, {"role": "assistant", "content": "Noted."}]


def test_good_reply_through_memory_update(tmp_path, httpserver):
    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_json(completion(json.dumps(GOOD)))
    with memory_for(tmp_path, httpserver) as m:
        result = m.update(CONVO, thread_id="t")
        assert [f.content for f in result.added] == ["User prefers tea"] and not m.offline
        body = json.loads(httpserver.log[0][0].get_data())
        assert body["response_format"]["type"] == "json_schema"
        assert "I prefer tea." in body["messages"][1]["content"]
        assert httpserver.log[0][0].headers["Authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize("wrapped", [
    "```json\n" + json.dumps(GOOD) + "\n```",
    "Sure! Here are the facts:\n" + json.dumps(GOOD) + "\nHope that helps.",
    json.dumps({"facts": [{"content": "User prefers tea", "category": "preference", "confidence": "0.9"}]}),
])
def test_fenced_prose_and_string_numbers(tmp_path, httpserver, wrapped):
    httpserver.expect_request("/v1/chat/completions").respond_with_json(completion(wrapped))
    with memory_for(tmp_path, httpserver) as m:
        assert [f.confidence for f in m.update(CONVO, thread_id="t").added] == [0.9]


def test_schema_refused_falls_back_to_json_mode_then_text(httpserver):
    calls = []

    def handler(request):
        body = json.loads(request.get_data())
        fmt = (body.get("response_format") or {}).get("type", "text")
        calls.append(fmt)
        if fmt in ("json_schema", "json_object"):
            return Response(json.dumps({"error": {"message": f"{fmt} not supported"}}), 400,
                            content_type="application/json")
        return Response(json.dumps(completion(json.dumps(GOOD))), 200, content_type="application/json")

    httpserver.expect_request("/v1/chat/completions").respond_with_handler(handler)
    model = model_for(httpserver)
    assert "User prefers tea" in model.complete([{"role": "user", "content": "x"}], json_schema={"type": "object"}).text
    assert calls == ["json_schema", "json_object", "text"] and model.mode == "text"
    model.complete([{"role": "user", "content": "x"}], json_schema={"type": "object"})
    assert calls[-1] == "text"  # remembered


def test_429_then_success(httpserver):
    httpserver.expect_ordered_request("/v1/chat/completions").respond_with_json({"error": {"message": "slow down"}}, status=429)
    httpserver.expect_ordered_request("/v1/chat/completions").respond_with_json(completion("ok"))
    assert model_for(httpserver).complete([{"role": "user", "content": "x"}]).text == "ok"


def test_500_exhausts_retries_with_clear_error_and_no_key(tmp_path, httpserver):
    httpserver.expect_request("/v1/chat/completions").respond_with_json(
        {"error": {"message": f"boom, your key {KEY} is fine"}}, status=500)
    with memory_for(tmp_path, httpserver, llm_max_retries=1) as m:
        before = m.facts.add("User likes jazz", "preference", 0.9)
        with pytest.raises(LLMError) as info:
            m.update(CONVO, thread_id="t")
        assert "failed after 2 attempts" in str(info.value) and "500" in str(info.value)
        assert KEY not in str(info.value) and "SECRET" not in str(info.value)
        assert m.facts.list() == [before]


def test_401_error_never_shows_key(httpserver):
    httpserver.expect_request("/v1/chat/completions").respond_with_json(
        {"error": {"message": f"Incorrect API key provided: {KEY[:10]}...{KEY[-4:]}"}}, status=401)
    with pytest.raises(LLMError) as info:
        model_for(httpserver).complete([{"role": "user", "content": "x"}])
    assert "authentication" in str(info.value) and KEY[:10] not in str(info.value) and KEY not in repr(info.value)


def test_timeout(httpserver):
    def slow(request):
        time.sleep(1.5)
        return Response(json.dumps(completion("late")), 200, content_type="application/json")

    httpserver.expect_request("/v1/chat/completions").respond_with_handler(slow)
    model = OpenAIChatModel("m", api_key=KEY, base_url=httpserver.url_for("/v1"), timeout=0.3, max_retries=1,
                            backoff_seconds=0.01)
    with pytest.raises(LLMError, match="timed out"):  # the deadline, retries included (issue 19 item 7)
        model.complete([{"role": "user", "content": "x"}])


def test_dead_endpoint(tmp_path):
    settings = Settings(home=tmp_path, llm_api_key=KEY, llm_base_url="http://127.0.0.1:9/v1", llm_max_retries=0,
                        llm_timeout_seconds=2)
    with Memory(settings, embedder=HashingEmbedder()) as m:
        with pytest.raises(LLMError, match="APIConnectionError"):
            m.update(CONVO, thread_id="t")


def test_unusable_reply_changes_nothing(tmp_path, httpserver):
    httpserver.expect_request("/v1/chat/completions").respond_with_json(completion("I cannot help with that."))
    with memory_for(tmp_path, httpserver) as m:
        with pytest.raises(LLMReplyError):
            m.update(CONVO, thread_id="t")
        assert m.facts.list() == []


@pytest.mark.parametrize("failure", ["500", "timeout", "empty"])
def test_dream_through_a_failing_server_leaves_memory_unchanged(tmp_path, httpserver, failure):
    if failure == "500":
        httpserver.expect_request("/v1/chat/completions").respond_with_json({"error": {"message": "down"}}, status=500)
    elif failure == "timeout":
        httpserver.expect_request("/v1/chat/completions").respond_with_handler(
            lambda r: (time.sleep(1.5), Response("{}", 200))[1])
    else:
        httpserver.expect_request("/v1/chat/completions").respond_with_json(completion(""))
    with memory_for(tmp_path, httpserver, llm_max_retries=0, timeout=0.5) as m:
        m.write_core("- User lives in Porto\n")
        m.daily.append("- User started a new job")
        result = m.deep_dream(1)
        assert result.status == "rejected" and result.reason
        assert KEY not in result.reason
        assert m.read_core() == "- User lives in Porto\n"


@pytest.mark.parametrize("base_url, field", [
    (None, "max_completion_tokens"), ("https://api.openai.com/v1", "max_completion_tokens"),
    ("http://127.0.0.1:8080/v1", "max_tokens"), ("http://localhost:11434/v1", "max_tokens"),
    ("https://gateway.example.com/openai/v1?api-key=x", "max_tokens"),
])
def test_the_reply_bound_goes_in_the_field_the_server_reads(base_url, field):
    from memory_core.llm.openai_chat import output_limit_field

    assert output_limit_field(base_url) == field


def test_the_bound_reaches_the_server_and_a_cut_reply_says_so(httpserver):
    """The adapter sends max_tokens to an OpenAI-compatible server and reports finish_reason "length"."""
    from memory_core.llm.openai_chat import OpenAIChatModel

    seen = []

    def handler(request):
        from werkzeug import Response

        seen.append(json.loads(request.data))
        return Response(json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                                    "choices": [{"index": 0, "message": {"role": "assistant", "content": "aaa"},
                                                 "finish_reason": "length"}],
                                    "usage": {"prompt_tokens": 3, "completion_tokens": 7}}),
                        content_type="application/json")

    httpserver.expect_request("/v1/chat/completions").respond_with_handler(handler)
    model = OpenAIChatModel("m", base_url=httpserver.url_for("/v1"), max_retries=0)
    result = model.complete([{"role": "user", "content": "hi"}], max_tokens=7)
    mine = [body for body in seen if body["messages"] == [{"role": "user", "content": "hi"}]]
    assert mine[0]["max_tokens"] == 7 and "max_completion_tokens" not in mine[0]
    assert (result.finish_reason, result.output_tokens) == ("length", 7)
