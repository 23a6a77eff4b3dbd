"""Helpers shared by the benchmarks."""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Callable

from memory_core import Memory, Settings

# The LoCoMo dev conversations: ../shared/data beside the checkout, or where MEMORY_CORE_LOCOMO_DEV says (a worktree)
DATA = Path(os.environ.get("MEMORY_CORE_LOCOMO_DEV") or Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev.json")


def timed(fn: Callable[[], object], repeat: int = 5) -> float:
    """Median seconds of `repeat` calls."""
    samples = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def fresh_memory(**settings) -> Memory:
    home = Path(tempfile.mkdtemp(prefix="mc-bench-"))
    settings.setdefault("timezone", "UTC")
    llm = settings.pop("llm", None)
    clock = settings.pop("clock", None)
    embedder = settings.pop("embedder", None)
    return Memory(Settings(home=home, llm_api_key=None, llm_base_url=None, **settings), llm=llm, clock=clock,
                  embedder=embedder)


def row(label: str, *values: object) -> None:
    print(f"  {label:<58}" + "  ".join(f"{v}" for v in values))
