"""SIGTERM on a real `python -m memory_core mcp` whose LLM answers slowly: the process leaves within seconds,
and every queued update it had not done is still queued in the database (none lost, none stuck in flight),
for the next start to process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from memory_core import Memory, Settings
from memory_core.search.embedders import HashingEmbedder

ROOT = Path(__file__).resolve().parents[2]
SCOPES = [("ana", "bot"), ("bob", "bot"), ("cy", "helper")]


class SlowLLM(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint that takes the request and answers only when the test ends."""

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.asked.set()
        self.server.release.wait(120)

    def log_message(self, *args):
        pass


@pytest.fixture
def slow_llm():
    server = ThreadingHTTPServer(("127.0.0.1", 0), SlowLLM)
    server.daemon_threads = True
    server.asked, server.release = threading.Event(), threading.Event()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", server
    server.release.set()
    server.shutdown()
    server.server_close()


def offline(home: Path) -> Memory:
    """This process's view of the same memory, with the offline heuristics (no LLM)."""
    return Memory(Settings(home=home, timezone="UTC", llm_api_key=None, llm_base_url=None, rate_limit_seconds=0),
                  embedder=HashingEmbedder(), worker=False)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow  # two seconds or more: left out of the quick run
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_sigterm_leaves_within_seconds_and_loses_nothing(tmp_path, slow_llm, transport):
    url, llm = slow_llm
    home = tmp_path / "home"
    memory = offline(home)
    for user, agent in SCOPES:
        for thread in ("t1", "t2"):
            memory.queue.add([{"role": "user", "content": f"I am {user} and I like sailing ({thread})."}],
                             thread_id=thread, user_id=user, agent_name=agent)
    memory.close(flush=False)

    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_CORE_", "OPENAI_"))}
    env.update(MEMORY_CORE_HOME=str(home), MEMORY_CORE_TIMEZONE="UTC", MEMORY_CORE_DEBOUNCE_SECONDS="0",
               MEMORY_CORE_RATE_LIMIT_SECONDS="0", MEMORY_CORE_DREAM_SCHEDULE_ENABLED="false",
               MEMORY_CORE_LLM_BASE_URL=url, MEMORY_CORE_LLM_API_KEY="sk-test-shutdown",
               MEMORY_CORE_LLM_TIMEOUT_SECONDS="60", MEMORY_CORE_LLM_MAX_RETRIES="0",
               MEMORY_CORE_EMBEDDING_MODEL="wordllama", PYTHONPATH=str(ROOT))
    args = [sys.executable, "-m", "memory_core", "mcp"]
    if transport == "http":
        port = free_port()
        args += ["--transport", "http", "--port", str(port)]
    proc = subprocess.Popen(args, env=env, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        assert llm.asked.wait(60), "the server never started an update"
        if transport == "http":  # and it serves while its updates hang on the LLM
            assert httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=10).status_code == 401
        proc.send_signal(signal.SIGTERM)
        started = time.monotonic()
        try:
            code = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pytest.fail(f"still running 10 s after SIGTERM: {proc.stderr.read1(100_000).decode(errors='replace')}")
        assert code == 0, proc.stderr.read().decode(errors="replace")
        assert time.monotonic() - started < 10
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    memory = offline(home)
    try:
        items = memory.queue.items()
        assert len(items) == 2 * len(SCOPES)  # nothing lost
        assert {i.status for i in items} == {"pending"} and {i.attempts for i in items} == {0}  # none stuck, none failed
        assert memory.queue.flush() == 2 * len(SCOPES)  # the next start processes them all
        for user, agent in SCOPES:
            assert memory.facts.list(user_id=user, agent_name=agent)
    finally:
        memory.close()


CHILD = """
import sys, time
from memory_core import Memory, Settings
from memory_core.search.embedders import HashingEmbedder
home, url = sys.argv[1], sys.argv[2]
m = Memory(Settings(home=home, timezone="UTC", llm_api_key="sk-test-shutdown", llm_base_url=url, llm_max_retries=0,
                    debounce_seconds=0, rate_limit_seconds=0, dream_schedule_enabled=False), embedder=HashingEmbedder())
for user in ("ana", "bob"):
    m.queue.add([{"role": "user", "content": f"I am {user} and I like sailing."}], thread_id="t", user_id=user)
time.sleep(120)
"""


@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_sigterm_on_a_library_process_leaves_within_seconds_and_loses_nothing(tmp_path, slow_llm):
    """No CLI: the library's own SIGTERM handler (a process that did not install one) closes in time."""
    url, llm = slow_llm
    home = tmp_path / "home"
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(home), url], cwd=ROOT, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert llm.asked.wait(60), "the process never started an update"
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pytest.fail("still running 10 s after SIGTERM")
        assert code == -signal.SIGTERM  # the handler closes the memory, then the signal ends the process as usual
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    memory = offline(home)
    try:
        items = memory.queue.items()
        assert len(items) == 2 and {i.status for i in items} == {"pending"} and {i.attempts for i in items} == {0}
    finally:
        memory.close(flush=False)
