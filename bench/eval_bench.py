"""`memory-core eval` on the LoCoMo dev conversations: both modes side by side (offline unless --llm)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from bench.common import DATA
from memory_core import Settings
from memory_core.evaluation import format_report, load_samples, run_eval


def main() -> None:
    if not DATA.exists():
        print(f"  LoCoMo data not found at {DATA}: skipped")
        return
    llm = "--llm" in sys.argv  # the OPENAI_* / MEMORY_CORE_* settings of the environment: answers judged too
    settings = Settings.from_env() if llm else Settings(home=Path(tempfile.mkdtemp(prefix="mc-bench-")))
    print(f"memory-core eval on {DATA.name} ({'with the configured LLM' if llm else 'offline'}, k=10)")
    report = run_eval(load_samples(DATA), settings, k=10, offline=not llm)
    print("\n".join("  " + line for line in format_report(report).splitlines()))


if __name__ == "__main__":
    main()
