"""The optional LLM rerank's cost (`llm_rerank`, context.rerank) with the local SmolLM2-135M (bench.local_model):
LoCoMo dev's conv-30 given to the memory offline, then the first N questions' injections at 2,000 tokens with the
rerank and without, side by side: answer in context, the tokens and seconds a query, replies that could not be
used. `python -m bench rerank [--questions N]` (default 40; about 8 s a question on two CPU threads).

A model that small chooses no better than search; what this measures is what a rerank costs a query, to weigh a
real model's gain (`memory-core eval` with an LLM reports its tokens apart) against it."""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.common import DATA, row
from bench.local_model import MODEL, served
from memory_core import Settings
from memory_core.clock import ManualClock
from memory_core.evaluation import answerable
from memory_core.evaluation.locomo import UNDATED, load_samples
from memory_core.evaluation.matching import answer_in_context
from memory_core.evaluation.modes import feed_sessions, scope_user


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench rerank")
    parser.add_argument("--questions", type=int, default=40)
    args, _unknown = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    from memory_core.evaluation import _eval_settings
    from memory_core.memory import Memory

    samples = [s for s in load_samples(DATA) if s.sample_id == "conv-30"]
    home = Path(tempfile.mkdtemp(prefix="mc-bench-rerank-"))
    clock = ManualClock(UNDATED)
    offline = _eval_settings(Settings.from_env({}), home, True, 20_000)
    with Memory(offline, clock=clock, worker=False) as memory:
        feed_sessions(memory, clock, samples)
    questions = answerable(samples)[:args.questions]
    user = scope_user(0)
    with served(home / "llama.log", threads=2) as base:
        llm = dataclasses.replace(offline, llm_base_url=base, llm_api_key=None, llm_model=MODEL, llm_timeout_seconds=180,
                                  llm_max_retries=0, llm_rerank=True, llm_rerank_candidates=30)
        found: dict[bool, list[bool]] = {True: [], False: []}
        seconds: list[float] = []
        unusable = 0
        with Memory(llm, clock=clock, worker=False) as memory:
            problems = memory.parts.llm_problems  # the last few kept: each query's read as it comes
            for q in questions:
                before = problems.recent(1)
                started = time.perf_counter()
                text = memory.format_for_injection(user_id=user, query=q.question, max_tokens=2000)
                seconds.append(time.perf_counter() - started)
                found[True].append(answer_in_context(q.answer, text))
                unusable += (after := problems.recent(1)) != before and after[0].kind == "rerank"
            calls = [r for r in memory.usage(user_id=user) if r.operation == "rerank"]
        with Memory(dataclasses.replace(llm, llm_rerank=False), clock=clock, worker=False) as memory:
            for q in questions:
                found[False].append(answer_in_context(q.answer, memory.format_for_injection(
                    user_id=user, query=q.question, max_tokens=2000)))
    score = {on: f"{sum(1 for x in xs if x)}/{sum(1 for x in xs if x is not None)}" for on, xs in found.items()}
    print(f"LLM rerank with {MODEL} (llama.cpp, 2 CPU threads), conv-30's first {len(questions)} questions, "
          f"2,000 tokens, 30 candidates")
    row("answer in context: with the rerank / without", score[True], score[False])
    row("a query: input / output tokens, seconds (median)", f"{statistics.mean(r.input_tokens for r in calls):.0f}",
        f"{statistics.mean(r.output_tokens for r in calls):.0f}", f"{statistics.median(seconds):.1f}")
    row("rerank calls / replies unusable (search's order kept)", len(calls), unusable)


if __name__ == "__main__":
    main()
