"""Issue 35: fast as memory grows. One scope filled to 1k / 10k / 100k short LoCoMo-like items, on SQLite and
PostgreSQL; every figure is a median, or a ratio of two things alternated in one run, and each call's growth
exponent from one size to the next (time ~ n^e).

`python -m bench scale [--sizes 1000,10000,100000] [--db sqlite,postgresql] [--repeat 9] [--keep DIR]`
(`--keep DIR`: SQLite's filled and embedded database of each size is kept in DIR and reused by later runs)
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sqlite3
import statistics
import subprocess
import sys
import time
import tracemalloc
import uuid
from datetime import datetime, timezone
from pathlib import Path

from bench.common import DATA, fresh_memory, row
from memory_core.facts.api import content_key
from memory_core.store.models import FactRow

PG_URL = "postgresql://postgres@127.0.0.1:5432/test"
_IDS = itertools.count(1)  # fact ids unique across the scopes of a run (random ones collide at 100k)
TOPICS = ("chess", "jazz", "tea", "golf", "opera", "kayaking", "sushi", "poetry")
_FALLBACK = ("Caroline went to the support group on Sunday", "Melanie painted a sunrise by the lake last year",
             "The user plans a camping trip with the kids in July", "John started a new job as a nurse")


def turns() -> tuple[list[str], list[str]]:
    """LoCoMo's turn texts and questions (a few built-in ones when the data set is absent)."""
    found = [p for p in (DATA, Path(__file__).resolve().parents[3] / "shared" / "data" / DATA.name) if p.exists()]
    if not found:
        return list(_FALLBACK), ["When did Caroline go to the support group?"]
    data = json.loads(found[0].read_text())
    texts, questions = [], []
    for sample in data:
        conversation = sample["conversation"]
        texts += [t["text"] for key, value in conversation.items() if key.startswith("session_")
                  and isinstance(value, list) for t in value if t.get("text")]
        questions += [q["question"] for q in sample["qa"]]
    return texts, questions


def fill(memory, user_id: str, n: int, texts: list[str]) -> None:
    now = datetime.now(timezone.utc)
    with memory.db.write() as s:
        for i in range(n):
            content = f"{texts[i % len(texts)]} (#{i})"
            s.add(FactRow(id=f"fact_{next(_IDS):08x}", user_id=user_id, agent_name="default", content=content,
                          content_key=content_key(content), category="knowledge",
                          confidence=round(0.5 + (i * 7919 % 500) / 1000, 3), created_at=now, updated_at=now,
                          source=f"D{i // 25}:{i % 25}"))


def median(fn, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def alternate(a, b, repeat: int) -> tuple[float, float]:
    """Medians of `a` and `b`, called in turns (so that the machine's load falls on both alike)."""
    sa, sb = [], []
    for _ in range(repeat):
        for fn, samples in ((a, sa), (b, sb)):
            t = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - t)
    return statistics.median(sa), statistics.median(sb)


def peak_mb(fn) -> float:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def _copy_sqlite(source, target: Path) -> None:
    """A consistent copy of a live SQLite database (its WAL included), by SQLite's backup."""
    with sqlite3.connect(target) as out:
        source.backup(out)
    out.close()


def measure(url: str | None, n: int, repeat: int, texts: list[str], questions: list[str],
            keep: Path | None = None) -> dict[str, float]:
    """`keep` (SQLite): a folder where the filled and embedded database of each size is kept and reused (a 100k
    scope takes minutes to fill and embed)."""
    from memory_core.context.injection import build_injection

    memory = fresh_memory(max_facts=10**7, **({"database_url": url} if url else {}))
    out: dict[str, float] = {}
    kept = keep / f"scale-{n}.db" if keep is not None and url is None else None
    reused = kept is not None and kept.exists()
    try:
        if reused:  # the file before the database is first opened
            with sqlite3.connect(kept) as source:
                _copy_sqlite(source, memory.settings.home / "memory.db")
            source.close()
        view = memory.scoped(user_id="big")
        other = memory.scoped(user_id="other")
        if not reused:
            fill(memory, "big", n, texts)
            fill(memory, "other", 50, texts)
            start = time.perf_counter()
            memory.index.ensure_embeddings(view.scope, force=True)
            out["embed all (s, off the request path)"] = time.perf_counter() - start
            if url:  # what autovacuum does within a minute of such a fill: statistics, GIN's pending list merged
                with memory.db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                    for table in ("facts", "chunks", "embeddings"):
                        conn.exec_driver_sql(f"VACUUM ANALYZE {table}")
            if kept is not None:
                kept.parent.mkdir(parents=True, exist_ok=True)
                with memory.db.engine.connect() as conn:
                    _copy_sqlite(conn.connection.driver_connection, kept)
        qs = iter(questions * 100)
        view.search(next(qs))  # warm

        out["format_for_injection(query) ms"] = median(lambda: view.format_for_injection(query=next(qs)), repeat) * 1e3

        def old_injection() -> None:  # the path before issue 35: the whole scope read and converted
            q = next(qs)
            build_injection(view.memory_data(), 2000, priority=view.relevant_fact_ids(q))

        new, old = alternate(lambda: view.format_for_injection(query=next(qs)), old_injection, max(3, repeat // 3))
        out["injection: old path / new path"] = old / new
        out["injection peak MB (tracemalloc)"] = peak_mb(lambda: view.format_for_injection(query=next(qs)))
        out["hybrid search ms"] = median(lambda: view.search(next(qs)), repeat) * 1e3
        out["keyword search ms"] = median(lambda: view.search(next(qs), mode="keyword", neighbours=False), repeat) * 1e3
        out["vector search ms"] = median(lambda: view.search(next(qs), mode="vector", neighbours=False), repeat) * 1e3

        counter = iter(range(10**6))

        def after_then_warm(write) -> float:
            """A search right after `write()` against a warm one, medians of `repeat` pairs."""
            after, warm = [], []
            for _ in range(repeat):
                write(next(counter))
                for samples in (after, warm):
                    t = time.perf_counter()
                    view.search(next(qs))
                    samples.append(time.perf_counter() - t)
            return statistics.median(after) / statistics.median(warm)

        out["search after an add / warm search"] = after_then_warm(
            lambda n: view.facts.add(f"The user adopted a cat named Whiskers number {n}", "knowledge", 0.7))
        out["search after an update() / warm search"] = after_then_warm(  # its conversation becomes an episode
            lambda n: view.update([{"role": "user", "content": f"Our cat Whiskers number {n} hid under the porch."}],
                                  thread_id=f"after-{n}"))
        out["search after a daily-log append / warm search"] = after_then_warm(  # the log is chunked again
            lambda n: view.daily.append(f"- The user saw a heron number {n} on the pond."))
        memory.index.upkeep.wait()
        out["search after a write in another scope / warm"] = after_then_warm(
            lambda n: other.facts.add(f"Another scope's fact {n}", "knowledge", 0.7))

        empty = memory.scoped(user_id="empty")
        said = iter(range(10**6))

        def adding(v) -> None:  # a new fact each time, superseding nothing
            i = next(said)
            v.update([{"role": "user", "content": f"I love {TOPICS[i % len(TOPICS)]} number {i}."}], thread_id=f"t{i}")

        def moving(v) -> None:  # supersedes where the user lived
            i = next(said)
            v.update([{"role": "user", "content": f"I moved to Lisbon in {1900 + i % 100} and I love sailing {i}."}],
                     thread_id=f"t{i}")

        big_update, empty_update = alternate(lambda: adding(view), lambda: adding(empty), repeat)
        out["update() adding a fact: this scope / an empty one"] = big_update / empty_update
        big_update, empty_update = alternate(lambda: moving(view), lambda: moving(empty), repeat)
        out["update() superseding one: this scope / an empty one"] = big_update / empty_update
    finally:
        memory.close()
    return out


def cache_bound(scopes: int = 1000) -> tuple[float, float]:
    """The search cache's bytes and RSS growth after `scopes` small scopes were each searched once."""
    import resource

    memory = fresh_memory(max_facts=10**7, search_cache_mb=32)
    texts, _ = turns()
    try:
        for i in range(scopes):
            fill(memory, f"u{i}", 20, texts[i % len(texts):] or texts)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        for i in range(scopes):
            memory.scoped(user_id=f"u{i}").search("support group")
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before
        return memory.index.cache.bytes / 2**20, rss
    finally:
        memory.close()


def import_seconds() -> float:
    code = "import time; t = time.perf_counter(); import memory_core; print(time.perf_counter() - t)"
    samples = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
               for _ in range(3)]
    return statistics.median(samples)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="python -m bench scale")
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--db", default="sqlite,postgresql")
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--scopes", type=int, default=1000)
    parser.add_argument("--keep", type=Path, default=None, help="keep and reuse SQLite's filled databases here")
    args, _ = parser.parse_known_args([a for a in argv if a != "scale"])
    sizes = [int(s) for s in args.sizes.split(",")]
    texts, questions = turns()
    print(f"import memory_core: {import_seconds():.2f} s (goal <= 1 s)")
    for db in args.db.split(","):
        results = {}
        for n in sizes:
            if db == "postgresql":
                from sqlalchemy import create_engine, text

                schema = f"bench_{uuid.uuid4().hex[:8]}"
                engine = create_engine(PG_URL)
                with engine.begin() as conn:
                    conn.execute(text(f"CREATE SCHEMA {schema}"))
                try:
                    results[n] = measure(f"{PG_URL}?options=-csearch_path%3D{schema}", n, args.repeat, texts, questions)
                finally:
                    with engine.begin() as conn:
                        conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
                    engine.dispose()
            else:
                results[n] = measure(None, n, args.repeat, texts, questions, args.keep)
        print(f"{db}: one scope of " + " / ".join(f"{n:,}" for n in sizes) + " items" +
              ("; growth exponent between the last two sizes" if len(sizes) > 1 else ""))
        for key in results[sizes[0]]:
            if any(key not in results[n] for n in sizes):
                continue  # the embedding time of a database reused from --keep
            values = [results[n][key] for n in sizes]
            shown = " / ".join(f"{v:.2f}" if v < 100 else f"{v:,.0f}" for v in values)
            growth = ""
            if len(sizes) > 1 and key.endswith("ms") and values[-2] > 0:
                growth = f"n^{math.log(values[-1] / values[-2]) / math.log(sizes[-1] / sizes[-2]):.2f}"
            row(key, shown, growth)
    cache_mb, rss_mb = cache_bound(args.scopes)
    print(f"{args.scopes:,} scopes searched once each, search_cache_mb=32")
    row("search cache MB (bound 32)", f"{cache_mb:.1f}")
    row("max RSS growth MB", f"{rss_mb:.1f}")


if __name__ == "__main__":
    main()
