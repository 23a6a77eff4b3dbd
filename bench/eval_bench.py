"""`memory-core eval` on the LoCoMo dev conversations: both modes side by side, at 2,000 and 1,000 injected tokens, by
category with the tokens injected, each conversation on its own and both together, beside a plain baseline: BM25 over
the raw turns, each prefixed with its session's date, packed into the same budget (offline unless --llm)."""

from __future__ import annotations

import math
from dataclasses import replace
import statistics
import sys
import tempfile
from collections import Counter
from pathlib import Path

from bench.common import DATA
from memory_core import Settings
from memory_core.evaluation import answerable, format_report, load_samples, run_eval
from memory_core.evaluation.locomo import CATEGORIES, Sample
from memory_core.evaluation.matching import answer_in_context
from memory_core.text.dates import day_text
from memory_core.text.tokens import count_tokens
from memory_core.text.words import STOPWORDS, stem, words

BUDGETS = (2000, 1000)


def _terms(text: str) -> list[str]:
    return [stem(w) for w in words(text) if w not in STOPWORDS]


def bm25_baseline(samples: list[Sample], budget: int, k1: float = 1.2, b: float = 0.75) -> dict[str, float]:
    """Answer in context when the question's best BM25 turns ("[8 May 2023] Caroline: ...") fill the budget."""
    rows = []
    for n, sample in enumerate(samples):
        lines = [f"[{day_text(s.when)}] {t.speaker}: {t.text}" for s in sample.sessions for t in s.turns if t.text.strip()]
        docs = [Counter(_terms(line)) for line in lines]
        df = Counter(term for d in docs for term in d)
        avg = statistics.mean(sum(d.values()) for d in docs)
        for q in answerable([sample]):
            terms = set(_terms(q.question))

            def score(d: Counter) -> float:
                size = sum(d.values())
                return sum(math.log(1 + (len(docs) - df[t] + 0.5) / (df[t] + 0.5)) * d[t] * (k1 + 1)
                           / (d[t] + k1 * (1 - b + b * size / avg)) for t in terms if t in d)

            ranked = sorted(range(len(docs)), key=lambda i: score(docs[i]), reverse=True)
            kept, used = [], 0
            for i in ranked:
                cost = count_tokens(lines[i]) + 1
                if used + cost > budget:
                    continue
                kept.append(lines[i])
                used += cost
            rows.append((q.category, answer_in_context(q.answer, "\n".join(kept))))
    mean = lambda rs: round(statistics.mean([r[1] for r in rs if r[1] is not None] or [0]), 3)  # noqa: E731
    return {"all": mean(rows), **{CATEGORIES[c]: mean([r for r in rows if r[0] == c]) for c in (1, 2, 3, 4)}}


def main() -> None:
    if not DATA.exists():
        print(f"  LoCoMo data not found at {DATA}: skipped")
        return
    llm = "--llm" in sys.argv  # the OPENAI_* / MEMORY_CORE_* settings of the environment: answers judged too
    settings = Settings.from_env() if llm else Settings(home=Path(tempfile.mkdtemp(prefix="mc-bench-")))
    samples = load_samples(DATA)
    alone = [replace(s, questions=tuple(replace(q, sample=0) for q in s.questions)) for s in samples]  # its own file
    parts = [("both conversations", samples)] + ([(s.sample_id, [s]) for s in alone] if "--each" in sys.argv else [])
    for budget in BUDGETS:
        for name, chosen in parts:
            print(f"memory-core eval on {DATA.name}, {name} ({'with the configured LLM' if llm else 'offline'}, "
                  f"k=10, {budget:,} tokens)")
            report = run_eval(chosen, settings, k=10, offline=not llm, max_tokens=budget)
            print("\n".join("  " + line for line in format_report(report).splitlines()))
            base = bm25_baseline(chosen, budget)
            print("  baseline, BM25 over the dated raw turns: answer in context "
                  + ", ".join(f"{k} {v:.3f}" for k, v in base.items()))


if __name__ == "__main__":
    main()
