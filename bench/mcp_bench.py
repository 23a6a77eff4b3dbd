"""Issue 13: the MCP server's cost. A tool call's round trip over stdio and over streamable HTTP against the
same operation called in-process (ratios, one run), then 4 concurrent HTTP clients, each with its own token
and scope, for a while: calls/s, p50/p99 latency, errors (which must be zero).

`python -m bench.mcp_bench [--seconds N]` (or MEMORY_CORE_BENCH_SECONDS); the concurrent part runs 60 s by
default. The servers are real subprocesses (`python -m memory_core mcp`) on a fresh SQLite file.
"""

from __future__ import annotations

import argparse
import itertools
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Callable, Sequence

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from bench.common import row
from memory_core import Memory, Settings

CLIENTS = 4
FACTS = 20
ROUND_TRIPS = 200
_SAID = itertools.count()  # numbers the fresh queries of every round
TOPICS = ("tea", "jazz", "Rust", "Porto", "cycling", "chess", "sourdough", "climbing", "Python", "sailing")


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_CORE_", "OPENAI_"))}
    env.update(MEMORY_CORE_HOME=str(home), MEMORY_CORE_TIMEZONE="UTC", MEMORY_CORE_DREAM_SCHEDULE_ENABLED="false",
               MEMORY_CORE_DEBOUNCE_SECONDS="3600")
    return env


def _seed(memory: Memory, user_id: str, agent_name: str) -> None:
    for i in range(FACTS):
        memory.facts.add(f"User likes {TOPICS[i % len(TOPICS)]} ({i})", "preference", 0.6 + i / 100,
                         user_id=user_id, agent_name=agent_name)


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _in_process(memory: Memory, n: int) -> tuple[float, float]:
    """Median seconds of list_facts and of remember, called on a scoped view in this process."""
    view = memory.scoped(user_id="bench", agent_name="inproc", role="editor", actor="bench")
    _seed(memory, "bench", "inproc")
    reads, writes = [], []
    for _ in range(n):
        t = time.perf_counter()
        [f.to_dict() for f in view.facts.list()]
        reads.append(time.perf_counter() - t)
    for i in range(n):
        t = time.perf_counter()
        view.facts.add_with_reason(f"User noted item {i}", "context", 0.8, source="mcp")
        writes.append(time.perf_counter() - t)
    return statistics.median(reads), statistics.median(writes)


async def _over_mcp(client: Client, n: int, tag: str) -> tuple[float, float]:
    """Median seconds of the list_facts (of FACTS facts) and remember tools' round trips."""
    reads, writes = [], []
    for _ in range(n):
        t = time.perf_counter()
        result = await client.call_tool("list_facts", {})
        reads.append(time.perf_counter() - t)
        assert not result.is_error and result.structured_content["count"] == FACTS
    for i in range(n):
        t = time.perf_counter()
        result = await client.call_tool("remember", {"content": f"User noted {tag} item {i}", "category": "context"})
        writes.append(time.perf_counter() - t)
        assert not result.is_error and result.structured_content["stored"]
    return statistics.median(reads), statistics.median(writes)


@asynccontextmanager
async def _http_client(url: str, secret: str):
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {secret}"},
                                  timeout=httpx2.Timeout(30, read=300)) as http:
        async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
            yield client


def _start_http(env: dict[str, str], log: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "memory_core", "mcp", "--transport", "http", "--port", str(port)],
                                env=env, stderr=out)
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx2.get(url, timeout=2).status_code == 401:
                return proc, url
        except httpx2.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"the HTTP server did not start: {log.read_text()[-2000:]}")


async def _load(url: str, secrets: list[str], seconds: float) -> tuple[list[float], int, int]:
    """CLIENTS sessions calling a mix of tools (3 reads to 1 write) until the time is up."""
    latencies: list[float] = []
    errors = [0]
    stop_at = time.monotonic() + seconds

    async def one(index: int, secret: str) -> None:
        calls: list[tuple[str, Callable[[int], dict]]] = [
            ("list_facts", lambda i: {}),
            ("search_memory", lambda i: {"query": f"what does the user think of {TOPICS[i % len(TOPICS)]}", "k": 5}),
            ("get_memory_context", lambda i: {"max_tokens": 500}),
            ("remember", lambda i: {"content": f"User mentioned load item {index}-{i}", "category": "context"}),
        ]
        async with _http_client(url, secret) as client:
            i = 0
            while time.monotonic() < stop_at:
                name, args = calls[i % len(calls)]
                t = time.perf_counter()
                try:
                    result = await client.call_tool(name, args(i))
                    if result.is_error:
                        errors[0] += 1
                except Exception:
                    errors[0] += 1
                latencies.append(time.perf_counter() - t)
                i += 1

    async with anyio.create_task_group() as tg:
        for index, secret in enumerate(secrets):
            tg.start_soon(one, index, secret)
    return latencies, errors[0], len(latencies)


def _start_noop(log: Path) -> tuple[subprocess.Popen, str]:
    """bench.mcp_noop in a subprocess: the same SDK and tool names, answering at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "bench.mcp_noop", str(port)], stderr=out,
                                cwd=Path(__file__).resolve().parents[1])
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx2.get(url, timeout=2)
            return proc, url
        except httpx2.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"the no-op server did not start: {log.read_text()[-2000:]}")


async def _context_load(url: str, secrets: list[str], seconds: float, fresh: bool = False) -> tuple[list[float], int]:
    """CLIENTS sessions calling get_memory_context (with a query) and search_memory in turn for `seconds`, their
    queries cycling through TOPICS; `fresh`: each query said once (a number after the topic), so that none is
    answered from what the server kept of an earlier one (search.answers)."""
    latencies: list[float] = []
    errors = [0]
    stop_at = time.monotonic() + seconds

    async def one(secret: str) -> None:
        async with _http_client(url, secret) as client:
            i = 0
            while time.monotonic() < stop_at:
                topic = TOPICS[i % len(TOPICS)] + (f" {next(_SAID)}" if fresh else "")
                name, args = (("get_memory_context", {"max_tokens": 500, "query": f"what about {topic}?"}) if i % 2 == 0
                              else ("search_memory", {"query": f"what does the user think of {topic}", "k": 5}))
                t = time.perf_counter()
                try:
                    if (await client.call_tool(name, args)).is_error:
                        errors[0] += 1
                except Exception:
                    errors[0] += 1
                latencies.append(time.perf_counter() - t)
                i += 1

    async with anyio.create_task_group() as tg:
        for secret in secrets:
            tg.start_soon(one, secret)
    return latencies, errors[0]


def _side_by_side(url: str, secrets: list[str], home: Path, seconds: float, scopes: str, fresh: bool = False) -> None:
    """get_memory_context and search_memory against the no-op floor, in alternating rounds of one run, after half a
    second of each (the first query of a process loads what it keeps: 0.7 s here)."""
    proc, noop_url = _start_noop(home / "noop.log")
    try:
        for target in (noop_url, url):  # a call of each kind first: what a process loads once is not a call's cost
            anyio.run(_context_load, target, secrets, 0.5, fresh)
        rounds = 4
        got: dict[str, tuple[list[float], int, float]] = {"noop": ([], 0, 0.0), "memory_core": ([], 0, 0.0)}
        for _ in range(rounds):
            for name, target in (("noop", noop_url), ("memory_core", url)):
                start = time.perf_counter()
                latencies, errors = anyio.run(_context_load, target, secrets, seconds / (2 * rounds), fresh)
                lat, err, spent = got[name]
                got[name] = (lat + latencies, err + errors, spent + time.perf_counter() - start)
    finally:
        proc.terminate()
        proc.wait(30)
    queries = "each query new" if fresh else f"queries of {len(TOPICS)} topics in turn"
    print(f"{CLIENTS} HTTP clients, get_memory_context(query) and search_memory in turn ({queries}), on {scopes}, against a "
          f"no-op server of the same SDK and tool names ({rounds} alternating rounds, {seconds:g} s in all)")
    rate = {name: len(lat) / spent for name, (lat, _err, spent) in got.items()}
    for name, (lat, err, _spent) in got.items():
        row(f"{name:<12} calls/s  p50 ms  p99 ms  errors", f"{rate[name]:.0f}", f"{_pct(lat, .5) * 1e3:.1f}",
            f"{_pct(lat, .99) * 1e3:.1f}", err)
    ours, floor = got["memory_core"][0], got["noop"][0]
    row("memory_core / no-op: calls/s (goal >= 0.5x), p99 (<= 3x)", f"{rate['memory_core'] / rate['noop']:.2f}x",
        f"{_pct(ours, .99) / _pct(floor, .99):.2f}x")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.mcp_bench")
    parser.add_argument("--seconds", type=float, default=float(os.environ.get("MEMORY_CORE_BENCH_SECONDS", 60)),
                        help="how long the 4 concurrent HTTP clients run (default 60)")
    args, _unknown = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    home = Path(tempfile.mkdtemp(prefix="mc-bench-mcp-"))
    env = _env(home)
    memory = Memory(Settings.from_env(env))
    try:
        _run(memory, env, home, args.seconds)
    finally:
        memory.close(flush=False)


def _run(memory: Memory, env: dict[str, str], home: Path, seconds: float) -> None:
    print(f"MCP server: one tool call's round trip (median of {ROUND_TRIPS}), {FACTS} facts in the scope")
    read, write = _in_process(memory, ROUND_TRIPS)
    row("in-process   list_facts / remember  ms", f"{read * 1e3:.2f}", f"{write * 1e3:.2f}")

    _seed(memory, "bench", "stdio")
    stdio = StdioServerParameters(command=sys.executable, env=env,
                                  args=["-m", "memory_core", "mcp", "--user", "bench", "--agent", "stdio"])

    async def over_stdio() -> tuple[float, float]:
        async with Client(stdio, mode="legacy") as client:
            await client.call_tool("list_facts", {})  # warm-up
            return await _over_mcp(client, ROUND_TRIPS, "stdio")

    s_read, s_write = anyio.run(over_stdio)
    row("stdio        list_facts / remember  ms", f"{s_read * 1e3:.2f}", f"{s_write * 1e3:.2f}",
        f"ratio {s_read / read:.1f}x / {s_write / write:.1f}x")

    secrets, small = [], []
    for i in range(CLIENTS + 1):
        _seed(memory, "bench", f"http-{i}")
        secrets.append(memory.access.create_token(f"bench-{i}", user_id="bench", agent_name=f"http-{i}")[1])
    for i in range(CLIENTS):  # scopes the load below leaves alone: facts that all fit in the context's 500 tokens
        _seed(memory, "bench", f"small-{i}")
        small.append(memory.access.create_token(f"small-{i}", user_id="bench", agent_name=f"small-{i}")[1])
    proc, url = _start_http(env, home / "http.log")
    try:
        async def over_http() -> tuple[float, float]:
            async with _http_client(url, secrets[CLIENTS]) as client:
                await client.call_tool("list_facts", {})  # warm-up
                return await _over_mcp(client, ROUND_TRIPS, "http")

        h_read, h_write = anyio.run(over_http)
        row("HTTP         list_facts / remember  ms", f"{h_read * 1e3:.2f}", f"{h_write * 1e3:.2f}",
            f"ratio {h_read / read:.1f}x / {h_write / write:.1f}x")

        print(f"{CLIENTS} concurrent HTTP clients (own token and scope each; list_facts, search_memory, "
              f"get_memory_context, remember in turn) for {seconds:g} s")
        latencies, errors, calls = anyio.run(_load, url, secrets[:CLIENTS], seconds)
        row("calls/s  p50 ms  p99 ms  errors", f"{calls / seconds:.0f}", f"{_pct(latencies, .5) * 1e3:.1f}",
            f"{_pct(latencies, .99) * 1e3:.1f}", errors)
        if errors:
            print(f"  ERRORS: {errors} of {calls} calls failed; see {home / 'http.log'}")
        filled = memory.scoped(user_id="bench", agent_name="http-0").facts.count()
        _side_by_side(url, secrets[:CLIENTS], home, seconds, f"the scopes the load filled ({filled} facts in the "
                      "first: a query chooses which fit in 500 tokens)")
        _side_by_side(url, secrets[:CLIENTS], home, seconds / 2, f"the same {filled}-fact scopes", fresh=True)
        _side_by_side(url, small, home, seconds / 2, f"scopes of {FACTS} facts (all fit: the context needs no search)",
                      fresh=True)
    finally:
        proc.terminate()
        proc.wait(30)


if __name__ == "__main__":
    main()
