"""Issue 4: add() latency from 8 threads against queue.Queue.put; debounce; throughput."""

from __future__ import annotations

import json
import queue
import statistics
import threading
import time

from memory_core import ScriptedChatModel
from bench.common import fresh_memory, row

GOOD = json.dumps({"facts": [{"content": "User prefers tea", "category": "preference", "confidence": 0.9}]})
MESSAGES = [{"role": "user", "content": "I prefer tea."}, {"role": "assistant", "content": "Noted."}]


def latencies(call, threads: int = 8, per_thread: int = 200) -> list[float]:
    out: list[float] = []
    lock = threading.Lock()

    def work(t: int) -> None:
        mine = []
        for i in range(per_thread):
            start = time.perf_counter()
            call(t, i)
            mine.append(time.perf_counter() - start)
        with lock:
            out.extend(mine)

    ts = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return sorted(out)


def main() -> None:
    print("queue.add from 8 threads (200 each), against queue.Queue.put in the same run")
    q: queue.Queue = queue.Queue()
    base = latencies(lambda t, i: q.put((t, i, MESSAGES)))
    memory = fresh_memory(llm=ScriptedChatModel(default=GOOD), debounce_seconds=3600)
    ours = latencies(lambda t, i: memory.queue.add(MESSAGES, thread_id=f"t{t}-{i % 20}"))
    p = lambda xs, q: xs[min(len(xs) - 1, int(q * len(xs)))] * 1e6
    row("queue.Queue.put  median / p99 us", f"{p(base, .5):.1f}", f"{p(base, .99):.1f}")
    row("memory.queue.add median / p99 us", f"{p(ours, .5):.1f}", f"{p(ours, .99):.1f}",
        f"ratio median {p(ours, .5) / p(base, .5):.0f}x")
    memory.close(flush=False)

    llm = ScriptedChatModel(default=GOOD)
    memory = fresh_memory(llm=llm, debounce_seconds=3600, rate_limit_seconds=0)
    for i in range(1000):
        memory.queue.add(MESSAGES + [{"role": "user", "content": f"turn {i}"}], thread_id="one-key")
    memory.worker.stop()
    memory.queue.flush()
    row("1,000 add() for one key inside the window -> LLM calls", llm.calls)
    memory.close()

    llm = ScriptedChatModel(default=GOOD)
    memory = fresh_memory(llm=llm, debounce_seconds=3600, rate_limit_seconds=0)
    for i in range(300):
        memory.queue.add(MESSAGES, thread_id=f"k{i}")
    memory.worker.stop()
    start = time.perf_counter()
    done = memory.queue.flush()
    elapsed = time.perf_counter() - start
    row("updates/s, zero-latency LLM, rate limit 0", f"{done / elapsed:.0f}", f"({done} updates)")
    memory.close()


if __name__ == "__main__":
    main()
