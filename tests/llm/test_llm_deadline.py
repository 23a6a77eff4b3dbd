"""Issue 19 items 7 and 13: every LLM and embedding call has an overall deadline, against a real local server
that trickles bytes; a reply that is not UTF-8 is the library's LLM error. Real sockets, the real openai client."""

from __future__ import annotations

import time

import pytest

from memory_core import LLMError, Memory, Settings
from memory_core.errors import EmbeddingError, MemoryCoreError
from memory_core.llm.openai_chat import OpenAIChatModel
from memory_core.search.embedders import HashingEmbedder, OpenAIEmbedder
from tests.slow_server import SlowServer

KEY = "sk-test-SECRET-abcdef1234567890"
CONVO = [{"role": "user", "content": "I prefer tea."}, {"role": "assistant", "content": "Noted."}]


@pytest.mark.parametrize("phase", ["headers", "body"])
def test_a_trickling_server_meets_the_overall_deadline(phase):
    # One byte every 0.3 s never trips a per-read timeout of 1 s; the whole reply would take over 20 s.
    with SlowServer(phase, every=0.3) as server:
        model = OpenAIChatModel("m", api_key=KEY, base_url=server.url, timeout=1.0, max_retries=3,
                                backoff_seconds=0.01)
        started = time.monotonic()
        with pytest.raises(LLMError, match="timed out") as info:
            model.complete([{"role": "user", "content": "x"}])
        elapsed = time.monotonic() - started
        assert elapsed < 10, elapsed  # the deadline, not the server, ended the call
        assert isinstance(info.value, MemoryCoreError) and KEY not in str(info.value)
        assert "1 s deadline" in str(info.value) and info.value.__cause__ is None
        assert server.disconnected.wait(10)  # the abandoned request was closed, not left trickling


def test_update_through_a_trickling_server_fails_in_time_and_keeps_memory(tmp_path):
    with SlowServer("body", every=0.3) as server:
        settings = Settings(home=tmp_path / "h", llm_api_key=KEY, llm_base_url=server.url, llm_timeout_seconds=1.5,
                            llm_max_retries=2)
        with Memory(settings, embedder=HashingEmbedder()) as m:
            kept = m.facts.add("User likes jazz", "preference", 0.9)
            with pytest.raises(LLMError, match="timed out"):
                m.update(CONVO, thread_id="t")
            assert m.facts.list() == [kept]
            problems = m.status().llm_problems
            assert problems and problems[-1].kind == "call" and "timed out" in problems[-1].detail


def test_the_embedder_has_an_overall_deadline_too():
    with SlowServer("body", every=0.3) as server:
        embedder = OpenAIEmbedder("e", api_key=KEY, base_url=server.url, timeout=1.0, max_retries=2)
        with pytest.raises(EmbeddingError, match="timed out") as info:
            embedder.embed(["a", "b"])
        assert isinstance(info.value, MemoryCoreError) and KEY not in str(info.value)


@pytest.mark.parametrize("body", [
    b'{"choices": [{"message": {"role": "assistant", "content": "caf\xe9 \xff\xfe"}}]}',  # Latin-1 and junk
    b"\xff\xfe{\x00}\x00",  # UTF-16
])
def test_a_reply_that_is_not_utf8_is_the_llm_error(body):
    with SlowServer("raw", body=body) as server:
        model = OpenAIChatModel("m", api_key=KEY, base_url=server.url, timeout=5, max_retries=0)
        with pytest.raises(LLMError, match="not valid UTF-8") as info:
            model.complete([{"role": "user", "content": "x"}])
        assert "byte 0x" in str(info.value) and info.value.__cause__ is None


def test_update_with_a_non_utf8_reply_changes_nothing(tmp_path):
    body = b'{"choices": [{"message": {"role": "assistant", "content": "{\\"facts\\": [] } \xc3\x28"}}]}'
    with SlowServer("raw", body=body) as server:
        settings = Settings(home=tmp_path / "h", llm_api_key=KEY, llm_base_url=server.url, llm_max_retries=0)
        with Memory(settings, embedder=HashingEmbedder()) as m:
            with pytest.raises(LLMError, match="UTF-8"):
                m.update(CONVO, thread_id="t")
            assert m.facts.list() == []
