"""Run the benchmarks: `python -m bench` (all), `python -m bench injection queue ...` (some), `python -m bench -h`.

The names come first; options after them are the sections' own (`python -m bench mcp --seconds 10`)."""

import importlib
import logging
import sys

# name: (module, what it measures, its options)
SECTIONS = {
    "injection": ("facts_and_injection", "budgeted injection against the floor; facts.add as the store grows", ""),
    "tiers": ("tiers_bench", "daily appends and the dream's input as sizes grow", ""),
    "queue": ("queue_bench", "queue.add latency from 8 threads, debounce, updates per second", ""),
    "compression": ("compression_bench", "compressing a 2,000-message agent transcript", ""),
    "search": ("search_locomo", "turn recall@k on the LoCoMo dev conversations", "--e5, --all"),
    "search_scale": ("search_scale", "hybrid search latency at 100,000 facts against its parts", "--items N"),
    "pages": ("pages_bench", "each dashboard page's first render in chromium, 10,000 facts against 100", ""),
    "near_duplicates": ("near_duplicates_bench", "near-duplicate precision and recall on labelled pairs", ""),
    "mcp": ("mcp_bench", "MCP tool calls per second against a no-op server of the same SDK", "--seconds S"),
    "index_memory": ("index_memory_bench", "the memory that indexing a 200,000-character document takes", ""),
    "chatgpt_export": ("chatgpt_export", "reading a large synthetic ChatGPT export", ""),
    "stale_memory": ("stale_memory", "one truth: stale statements after corrections, offline and scripted", ""),
    "eval": ("eval_bench", "memory-core eval on the LoCoMo dev conversations, both modes", "--llm"),
    "extractor": ("extractor_bench", "the offline extractor on its labelled statements", "-v, --verbose"),
    "rerank": ("rerank_bench", "the optional LLM rerank's cost with the local SmolLM2, on LoCoMo dev questions",
               "--questions N"),
    "evidence": ("evidence_speed", "format_for_injection(query=...) with passages at 5,000 items", ""),
    "scale": ("scale", "injection, search, update and caches at 1k / 10k / 100k items: ratios and growth",
              "--sizes N,N,N, --db sqlite|postgresql, --keep DIR"),
}


def usage() -> str:
    width = max(map(len, SECTIONS))
    lines = [__doc__.strip(), "", "sections:"]
    for name, (_module, what, options) in SECTIONS.items():
        lines.append(f"  {name:<{width}}  {what}" + (f"  [options: {options}]" if options else ""))
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if "-h" in argv or "--help" in argv:
        print(usage())
        return 0
    names = []
    for arg in argv:
        if arg.startswith("-"):
            break
        names.append(arg)
    unknown = [n for n in names if n not in SECTIONS]
    if unknown:
        print(f"unknown section(s) {', '.join(unknown)}\n\n{usage()}", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.WARNING)
    for name in names or list(SECTIONS):
        importlib.import_module(f"bench.{SECTIONS[name][0]}").main()
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
