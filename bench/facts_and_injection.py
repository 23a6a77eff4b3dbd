"""Issue 2: budgeted injection against the floor and the literal approach; facts.add as the store grows."""

from __future__ import annotations

import random
import secrets
import time
from datetime import datetime, timezone

from memory_core import build_injection, count_tokens, format_memory_for_injection
from memory_core.facts.api import content_key
from memory_core.context.injection import fact_line
from memory_core.store.models import FactRow
from bench.common import fresh_memory, row, timed

WORDS = ("user prefers likes works lives plans project team coffee python travel music weekend morning "
         "family garden running reading cooking meeting deadline budget laptop guitar language").split()


def make_facts(n: int, seed: int = 7) -> list[dict]:
    rnd = random.Random(seed)
    return [{"id": f"fact_{i:08x}", "content": " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(6, 16))),
             "category": "knowledge", "confidence": round(rnd.random(), 3)} for i in range(n)]


def literal(data: dict, budget: int) -> str:
    """Re-render and re-count the whole text after each dropped fact (the approach to beat)."""
    facts = sorted(data["facts"], key=lambda f: f["confidence"], reverse=True)
    while True:
        text = "Facts:\n" + "\n".join(fact_line(f) for f in facts)
        if count_tokens(text) <= budget or not facts:
            return text
        facts.pop()


def injection() -> None:
    print("format_for_injection, budget 2000 (median of 5)")
    row("facts", "ours ms", "floor ms", "ours/floor", "literal ms", "literal/ours", "with report ms")
    for n in (500, 10_000):
        data = {"facts": make_facts(n)}
        text = format_memory_for_injection(data, 2000)
        ours = timed(lambda: format_memory_for_injection(data, 2000))
        report = timed(lambda: build_injection(data, 2000))
        floor = timed(lambda: count_tokens(text))
        lit = timed(lambda: literal(data, 2000), repeat=1) if n <= 500 else None
        row(str(n), f"{ours * 1000:.2f}", f"{floor * 1000:.2f}", f"{ours / floor:.1f}x",
            f"{lit * 1000:.0f}" if lit else "(too slow)", f"{lit / ours:.0f}x" if lit else "-", f"{report * 1000:.2f}")


def add_scaling() -> None:
    print("facts.add: mean over 200 adds, on an empty store and with 20,000 facts stored (same scope)")
    results = {}
    for stored in (0, 20_000):
        memory = fresh_memory(max_facts=1_000_000)
        if stored:
            now = datetime.now(timezone.utc)
            with memory.db.write() as s:
                for i in range(stored):
                    content = f"stored fact {i} " + secrets.token_hex(6)
                    s.add(FactRow(id=f"fact_{i:08x}", user_id="default", agent_name="default", content=content,
                                  content_key=content_key(content), category="knowledge", confidence=0.7,
                                  created_at=now, updated_at=now))
        for i in range(20):  # warm-up, not timed
            memory.facts.add(f"warm-up fact {i} {secrets.token_hex(4)}", "knowledge", 0.8)
        start = time.perf_counter()
        for i in range(200):
            memory.facts.add(f"new fact {i} {secrets.token_hex(4)}", "knowledge", 0.8)
        results[stored] = (time.perf_counter() - start) / 200
        memory.close()
    row("empty store ms/add", f"{results[0] * 1000:.2f}")
    row("20,000 stored ms/add", f"{results[20_000] * 1000:.2f}", f"ratio {results[20_000] / results[0]:.2f}x")


def main() -> None:
    injection()
    add_scaling()


if __name__ == "__main__":
    main()
