"""Run the benchmarks: `python -m bench` (all) or `python -m bench injection queue ...`."""

import logging
import sys

from bench import (compression_bench, facts_and_injection, near_duplicates_bench, pages_bench, queue_bench, search_locomo,
                   search_scale, tiers_bench)

SECTIONS = {"injection": facts_and_injection.main, "tiers": tiers_bench.main, "queue": queue_bench.main,
            "compression": compression_bench.main, "search": search_locomo.main, "search_scale": search_scale.main,
            "pages": pages_bench.main, "near_duplicates": near_duplicates_bench.main}

logging.basicConfig(level=logging.WARNING)
chosen = [a for a in sys.argv[1:] if not a.startswith("-")] or list(SECTIONS)
for name in chosen:
    SECTIONS[name]()
    print()
