"""The update queue runs in lanes of its own: apart from the housekeeping jobs, and one scope per lane, so
that a slow dream or a scope whose LLM answers slowly never holds the other scopes' updates; an update that
times out is recorded as a failure."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from memory_core import ScriptedChatModel
from tests.conftest import make_memory

GOOD = json.dumps({"facts": [{"content": "User prefers tea", "category": "preference", "confidence": 0.9}]})


def convo(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}, {"role": "assistant", "content": "Noted."}]


def wait_for(check, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while not (found := check()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def test_a_stuck_housekeeping_job_does_not_hold_the_queue(tmp_path):
    release = threading.Event()
    with make_memory(tmp_path, llm=ScriptedChatModel(default=GOOD), debounce_seconds=0, rate_limit_seconds=0) as m:
        m.start()
        m.worker.add_job("stuck dream", 0.05, lambda: release.wait(60))  # a dream that hangs on its LLM, say
        assert wait_for(lambda: m.worker.jobs.get("stuck dream") and m.worker.jobs["stuck dream"].runs)
        m.queue.add(convo("I prefer tea."), thread_id="t1")
        try:
            assert wait_for(lambda: m.facts.list()), "the queue waited for the housekeeping job"
        finally:
            release.set()
        assert [f.content for f in m.facts.list()] == ["User prefers tea"]


@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_a_slow_scope_does_not_hold_the_others(tmp_path, database_url):
    release = threading.Event()

    def answer(messages):
        if "slowpoke" in json.dumps(messages):
            release.wait(60)  # this scope's LLM answers slowly
        return GOOD

    with make_memory(tmp_path, database_url, llm=ScriptedChatModel(default=answer), debounce_seconds=0,
                     rate_limit_seconds=0, queue_workers=2) as m:
        m.queue.add(convo("slowpoke: I prefer tea."), thread_id="s1", user_id="slow", agent_name="bot")
        m.queue.add(convo("slowpoke: I prefer tea, really."), thread_id="s2", user_id="slow", agent_name="bot")
        assert wait_for(lambda: m.status().in_flight == 1)
        for user in ("ana", "bob", "cy"):
            m.queue.add(convo("I prefer tea."), thread_id="t", user_id=user, agent_name="bot")
        try:
            assert wait_for(lambda: all(m.facts.list(user_id=u, agent_name="bot") for u in ("ana", "bob", "cy"))), \
                "the other scopes waited for the slow one"
            # the slow scope holds one lane, never two: its second key waits its turn
            # (another scope's update may still be deleting its row: in flight for a moment more)
            assert wait_for(lambda: m.queue.pending(user_id="slow", agent_name="bot") == 2
                            and m.status().in_flight == 1)
        finally:
            release.set()
        assert wait_for(lambda: m.queue.pending() == 0)


def test_one_lane_takes_the_scopes_in_turn(tmp_path, clock):
    """With a single lane, a scope's backlog (a big import) does not make another scope wait behind all of it."""
    order = []

    def answer(messages):
        order.append("importer" if "imported" in json.dumps(messages) else "ana")
        return GOOD

    with make_memory(tmp_path, llm=ScriptedChatModel(default=answer), clock=clock, rate_limit_seconds=0,
                     queue_workers=1) as m:
        for i in range(6):
            m.queue.add(convo(f"imported conversation {i}: I prefer tea."), thread_id=f"c{i}", user_id="importer",
                        agent_name="bot")
        clock.advance(1)
        m.queue.add(convo("I prefer tea."), thread_id="t", user_id="ana", agent_name="bot")
        clock.advance(60)  # all due; the importer's keys fell due first
        m.start()
        assert wait_for(lambda: len(order) == 7)
        assert order.index("ana") <= 1, order


class SilentLLM(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint that reads the request and then says nothing."""

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.asked.set()
        self.server.release.wait(30)

    def log_message(self, *args):
        pass


@pytest.fixture
def silent_llm():
    server = ThreadingHTTPServer(("127.0.0.1", 0), SilentLLM)
    server.daemon_threads = True
    server.asked, server.release = threading.Event(), threading.Event()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.release.set()
    server.shutdown()
    server.server_close()


def test_an_update_that_times_out_is_recorded_as_a_failure(tmp_path, silent_llm):
    from memory_core import Memory, Settings
    from memory_core.search.embedders import HashingEmbedder

    settings = Settings(home=tmp_path / "home", timezone="UTC", llm_api_key="sk-test",
                        llm_base_url=f"http://127.0.0.1:{silent_llm.server_address[1]}/v1", llm_timeout_seconds=0.5,
                        llm_max_retries=0, debounce_seconds=0, rate_limit_seconds=0, update_max_attempts=3,
                        retry_backoff_seconds=3600)
    with Memory(settings, embedder=HashingEmbedder()) as m:
        m.queue.add(convo("I prefer tea."), thread_id="t1")
        assert silent_llm.asked.wait(20)
        item = wait_for(lambda: [i for i in m.queue.items() if i.attempts == 1])
        assert item and item[0].status == "pending" and "timed out" in item[0].last_error.lower()
        assert m.status().last_error == item[0].last_error
        m.close(flush=False)
