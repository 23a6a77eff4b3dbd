"""Issue 11: the extra memory of indexing one 200,000-character daily document (goal: under 100 MB).

Each variant runs in a fresh process: a Memory on SQLite with the offline WordLlama embedder, warmed up
(weights loaded, a small scope indexed), then the document is appended and the first search, which
chunks it, embeds the chunks and queries, is measured. Two figures, since numpy, the tokenizer and SQLite
allocate outside Python's tracing: the tracemalloc peak, and the growth of the process's peak RSS over
its RSS just before (Linux resets the peak through /proc/self/clear_refs; elsewhere ru_maxrss stands in).

    python -m bench.index_memory_bench
"""

from __future__ import annotations

import json
import random
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

from sqlalchemy import func, select

from bench.common import fresh_memory, row
from bench.facts_and_injection import WORDS
from memory_core.store.models import ChunkRow

DOCUMENT_CHARS = 199_000  # the default max_document_chars is 200,000: a block's heading fits beside it
VARIANTS = {
    "small document (2,000 characters), the baseline": ("blocks", 2_000),
    "200,000 characters in 100 blocks": ("blocks", DOCUMENT_CHARS),
    "200,000 characters in one block of paragraphs": ("block", DOCUMENT_CHARS),
    "200,000 characters in one line": ("line", DOCUMENT_CHARS),
}


def prose(chars: int, seed: int, *, lines: bool = True) -> str:
    """Sentences of 12 words, two to a line and six lines to a paragraph (or all on one line)."""
    rnd = random.Random(seed)
    parts, size, words = [], 0, 0
    while size < chars:
        words += 1
        sep = " "
        if words % 12 == 0:
            sep = ".\n" if lines and words % 24 == 0 else ". "
            if lines and words % 144 == 0:
                sep = ".\n\n"
        parts.append(rnd.choice(WORDS) + sep)
        size += len(parts[-1])
    return "".join(parts)[:chars].strip()


def _rss_kib(field: str) -> int | None:
    status = Path("/proc/self/status")
    if not status.exists():
        return None
    for line in status.read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return None


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM, the peak RSS
        return True
    except OSError:
        return False


def measure(shape: str, chars: int) -> dict:
    """In this process: append the document, then measure the first search (which indexes it)."""
    memory = fresh_memory()
    memory.daily.append(prose(2_000, seed=0), user_id="warm")  # load everything once, in another scope
    memory.search("coffee garden", user_id="warm")
    if shape == "blocks":
        for n in range(max(1, chars // 2_000)):
            memory.daily.append(prose(min(chars, 2_000) - 30, seed=n + 1))
    else:
        memory.daily.append(prose(chars, seed=1, lines=shape == "block"))
    before = _rss_kib("VmRSS")
    precise = _reset_peak() and before is not None
    before_max = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    start = time.perf_counter()
    hits = memory.search("coffee garden deadline", k=5)
    seconds = time.perf_counter() - start
    traced_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    if precise:
        rss_growth = (_rss_kib("VmHWM") - before) * 1024
    else:
        rss_growth = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before_max) * 1024
    with memory.db.read() as s:
        chunks, longest = s.execute(select(func.count(), func.max(func.length(ChunkRow.text))).where(
            ChunkRow.user_id == "default")).one()
    memory.close()
    return {"tracemalloc_mb": traced_peak / 1e6, "rss_mb": rss_growth / 1e6, "seconds": seconds,
            "chunks": chunks, "longest": longest, "hits": len(hits), "rss_precise": precise}


def main() -> None:
    print("indexing one daily document: extra memory of the first search after it (goal: < 100 MB); "
          "WordLlama, SQLite, each in a fresh process")
    row("document", "tracemalloc MB", "peak RSS MB", "seconds", "chunks (longest)")
    for label, (shape, chars) in VARIANTS.items():
        out = subprocess.run([sys.executable, "-m", "bench.index_memory_bench", "--child", shape, str(chars)],
                             capture_output=True, text=True, check=True, cwd=Path(__file__).resolve().parents[1])
        result = json.loads(out.stdout.strip().splitlines()[-1])
        rss = f"{result['rss_mb']:.1f}" + ("" if result["rss_precise"] else " (ru_maxrss)")
        row(label, f"{result['tracemalloc_mb']:.1f}", rss, f"{result['seconds']:.2f}",
            f"{result['chunks']} ({result['longest']:,} chars)")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(measure(sys.argv[2], int(sys.argv[3]))))
    else:
        main()
