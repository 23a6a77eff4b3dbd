"""`format_for_injection(query=...)` at 5,000 items (2,500 facts, 2,500 turns of dated conversations): the median
time of a query, once what is new is embedded (the first query embeds a batch, the background the rest), and the
budget kept. `python -m bench evidence`."""

from __future__ import annotations

import statistics
import time
from datetime import datetime, timedelta, timezone

from bench.common import fresh_memory, row
from memory_core.text.tokens import count_tokens

TOPICS = ["hiking", "pottery", "violin", "sourdough", "chess", "camping", "painting", "marathons", "jazz", "birds"]
QUERIES = ["When did the user go hiking?", "What does Caroline paint?", "Did the user go camping last summer?",
           "What instrument does the user play?", "Where did the user run a marathon?"]


def main() -> None:
    memory = fresh_memory(max_facts=10_000)
    with memory.parts.store.transaction(memory.scoped(user_id="default", agent_name="default").scope) as tx:
        for i in range(2_500):
            tx.add(f"User mentioned {TOPICS[i % 10]} with friend number {i}", "context", 0.5 + (i % 50) / 100)
    start = datetime(2023, 1, 1, 10, tzinfo=timezone.utc)
    for day in range(125):  # 125 conversations of 20 turns
        turns = [{"role": "user" if t % 2 == 0 else "assistant", "name": "Caroline" if t % 2 == 0 else "Melanie",
                  "content": f"Yesterday I did some {TOPICS[(day + t) % 10]} again, part {day}-{t}, it was lovely."}
                 for t in range(20)]
        memory.parts.episodes.record(memory.scoped(user_id="default", agent_name="default").scope, turns,
                                     thread_id=f"t{day}", said_at=start + timedelta(days=day))
    memory.format_for_injection(query=QUERIES[0])  # embeds what is new: the first batch here, the rest in the background
    memory.index.upkeep.wait(timeout=600)  # what is timed is a settled scope, not one the background still embeds
    times, sizes = [], []
    for _ in range(3):
        for query in QUERIES:
            began = time.perf_counter()
            text = memory.format_for_injection(query=query)
            times.append(time.perf_counter() - began)
            sizes.append(count_tokens(text))
    print("format_for_injection(query=...) at 5,000 items (2,500 facts, 2,500 episode turns), budget 2000")
    row("median ms", f"{statistics.median(times) * 1000:.1f}", f"(p90 {sorted(times)[int(len(times) * 0.9)] * 1000:.1f})")
    row("tokens: mean / max", f"{statistics.mean(sizes):.0f} / {max(sizes)}")
    memory.close()


if __name__ == "__main__":
    main()
