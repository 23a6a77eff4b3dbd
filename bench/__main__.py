"""Run the benchmarks: `python -m bench` (all) or `python -m bench injection queue ...`.

The names come first; options after them are the sections' own (`python -m bench mcp --seconds 10`)."""

import logging
import sys

from bench import (chatgpt_export, compression_bench, eval_bench, extractor_bench, facts_and_injection,
                   index_memory_bench, mcp_bench, near_duplicates_bench, pages_bench, queue_bench, scale, search_locomo,
                   search_scale, stale_memory, tiers_bench)

SECTIONS = {"injection": facts_and_injection.main, "tiers": tiers_bench.main, "queue": queue_bench.main,
            "compression": compression_bench.main, "search": search_locomo.main, "search_scale": search_scale.main,
            "pages": pages_bench.main, "near_duplicates": near_duplicates_bench.main, "mcp": mcp_bench.main,
            "index_memory": index_memory_bench.main, "chatgpt_export": chatgpt_export.main,
            "stale_memory": stale_memory.main, "eval": eval_bench.main, "extractor": extractor_bench.main,
            "scale": scale.main}

logging.basicConfig(level=logging.WARNING)
names = []
for arg in sys.argv[1:]:
    if arg.startswith("-"):
        break
    names.append(arg)
unknown = [n for n in names if n not in SECTIONS]
if unknown:
    sys.exit(f"unknown section(s) {', '.join(unknown)}; the sections are: {', '.join(SECTIONS)}")
for name in names or list(SECTIONS):
    SECTIONS[name]()
    print()
