"""Issue 6: hybrid query latency at 100,000 facts against its two parts run alone; `--items 5000` for
issue 22's bound (median under 50 ms at 5,000 items). Every 25 facts are one conversation's turns
(source `D<n>:<turn>`), so that search also looks up their neighbouring turns."""

from __future__ import annotations

import random
import statistics
import sys
import time
from datetime import datetime, timezone

from memory_core.facts.api import content_key
from memory_core.scope import DEFAULT_SCOPE
from memory_core.store.models import FactRow
from bench.common import fresh_memory, row
from bench.facts_and_injection import WORDS


def embedder_throughput(n: int = 20_000) -> None:
    """The offline default embedder on short texts, plain mean and IDF-weighted (the goal: >= 1,000/s)."""
    import numpy as np

    from memory_core.search.embedders import WordLlamaEmbedder

    rnd = random.Random(3)
    texts = [" ".join(rnd.choice(WORDS) for _ in range(rnd.randint(5, 12))) for _ in range(n)]
    embedder = WordLlamaEmbedder()
    weights = np.random.default_rng(3).random(embedder.vocab_size, dtype=np.float32)
    embedder.embed(texts[:100])  # load the weights
    print(f"offline embedder {embedder.model_name}, {n:,} short texts")
    for label, w in (("plain mean", None), ("IDF-weighted", weights)):
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            embedder.embed(texts, weights=w)
            best = min(best, time.perf_counter() - start)
        rate = n / best
        row(f"{label}: texts/s (goal 1,000)", f"{rate:,.0f}", f"{rate / 1000:.1f}x the goal")


def main(n: int | None = None) -> None:
    if n is None:
        n = int(sys.argv[sys.argv.index("--items") + 1]) if "--items" in sys.argv else 100_000
    embedder_throughput()
    memory = fresh_memory(max_facts=10**7)
    rnd = random.Random(5)
    now = datetime.now(timezone.utc)
    with memory.db.write() as s:
        for i in range(n):
            content = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(5, 12))) + f" #{i}"
            s.add(FactRow(id=f"fact_{i:08x}", user_id="default", agent_name="default", content=content,
                          content_key=content_key(content), category="knowledge", confidence=0.8, created_at=now,
                          updated_at=now, source=f"D{i // 25}:{i % 25}"))
    start = time.perf_counter()
    memory.index.ensure_embeddings(DEFAULT_SCOPE)
    print(f"search at {n:,} facts (embedding them took {time.perf_counter() - start:.1f}s, off the request path)")
    queries = [" ".join(rnd.choice(WORDS) for _ in range(3)) for _ in range(40)]
    memory.search(queries[0])  # warm the vector cache
    results = {}
    modes = {"keyword": {"mode": "keyword", "neighbours": False}, "vector": {"mode": "vector", "neighbours": False},
             "hybrid": {}, "hybrid without neighbouring turns": {"neighbours": False}}
    for mode, options in modes.items():
        samples = []
        for q in queries:
            t = time.perf_counter()
            memory.search(q, k=10, **options)
            samples.append(time.perf_counter() - t)
        samples.sort()
        results[mode] = (statistics.median(samples), samples[int(0.95 * len(samples)) - 1])
        row(f"{mode} median / p95 ms", f"{results[mode][0] * 1000:.1f}", f"{results[mode][1] * 1000:.1f}")
    for n, stat in enumerate(("median", "p95")):
        slower = max(results["keyword"][n], results["vector"][n])
        row(f"hybrid {stat} / slower part's {stat} (goal <= 1.5x)", f"{results['hybrid'][n] / slower:.2f}x")
    memory.close()


if __name__ == "__main__":
    main()
