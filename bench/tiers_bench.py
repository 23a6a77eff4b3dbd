"""Issue 3: appending daily blocks, and assembling the dream input, as sizes grow."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

from memory_core import ManualClock, count_tokens
from memory_core.scope import DEFAULT_SCOPE
from bench.common import fresh_memory, row


def appends() -> None:
    print("daily.append: 10,000 blocks into one day's file (fsync on each append)")
    memory = fresh_memory()
    when = datetime(2026, 1, 1, 12, tzinfo=timezone.utc)
    marks = []
    start = time.perf_counter()
    for i in range(10_000):
        memory.daily.append(f"- block {i}: the user talked about topic {i % 97} at some length", when=when)
        if (i + 1) % 2_500 == 0:
            marks.append(time.perf_counter() - start)
    per = [marks[0]] + [b - a for a, b in zip(marks, marks[1:])]
    row("total s", f"{marks[-1]:.2f}", f"{10_000 / marks[-1]:.0f} appends/s")
    row("ms/append per quarter (growth)", *(f"{p / 2.5:.3f}" for p in per))
    memory.close()


def dream_input() -> None:
    print("dream input assembly: read + bound the last N days of 300 blocks each")
    clock = ManualClock(datetime(2026, 3, 1, 12, tzinfo=timezone.utc))
    memory = fresh_memory(clock=clock, dream_max_input_tokens=10**9)
    for day in range(30):
        when = clock.now() - timedelta(days=day)
        for i in range(300):
            memory.daily.append(f"- day {day} block {i}: the user mentioned item {i}", when=when)
    count_tokens("warm up")  # load the encoding once, outside the timings
    for days in (3, 10, 30):
        start = time.perf_counter()
        recent = memory.daily.recent(days, DEFAULT_SCOPE)
        bounded = memory.dreamer._bounded(recent)
        elapsed = time.perf_counter() - start
        row(f"{days} days ({days * 300} blocks)", f"{elapsed * 1000:.0f} ms",
            f"{elapsed / (days * 300) * 1e6:.0f} us/block", f"{sum(len(t) for _, t in bounded) // 1024} KiB")
    memory.close()


def main() -> None:
    appends()
    dream_input()


if __name__ == "__main__":
    main()
