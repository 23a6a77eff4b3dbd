"""Requirement set 2: the debounced, persisted update queue and the worker."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from memory_core import LLMError, QueueFullError, ScriptedChatModel
from tests.conftest import make_memory

GOOD = json.dumps({"facts": [{"content": "User prefers tea", "category": "preference", "confidence": 0.9}]})


def convo(text="I prefer tea."):
    return [{"role": "user", "content": text}, {"role": "assistant", "content": "Noted."}]


def test_debounce_replaces_and_resets_timer(tmp_path, clock):
    llm = ScriptedChatModel(default=GOOD)
    with make_memory(tmp_path, llm=llm, clock=clock, rate_limit_seconds=0) as m:
        m.queue.add(convo("first"), thread_id="t1")
        assert m.queue.pending() == 1 and m.queue.tick() == 0
        clock.advance(29)
        m.queue.add(convo("second"), thread_id="t1")  # same key: replaces, timer resets
        assert m.queue.pending() == 1
        clock.advance(29)
        assert m.queue.tick() == 0 and llm.calls == 0
        clock.advance(2)
        assert m.queue.tick() == 1 and m.queue.pending() == 0
        assert llm.calls == 1 and "second" in llm.history[0]["messages"][1]["content"]
        assert "first" not in llm.history[0]["messages"][1]["content"]


def test_keys_are_thread_user_agent(tmp_path, clock):
    llm = ScriptedChatModel(default=GOOD)
    with make_memory(tmp_path, llm=llm, clock=clock, rate_limit_seconds=0) as m:
        m.queue.add(convo(), thread_id="t1")
        m.queue.add(convo(), thread_id="t1", user_id="alice")
        m.queue.add(convo(), thread_id="t1", agent_name="other")
        m.queue.add(convo(), thread_id="t2")
        assert m.queue.pending() == 4
        assert m.queue.flush() == 4 and llm.calls == 4


def test_add_returns_before_the_llm_runs(tmp_path):
    release = threading.Event()

    def slow(_messages):
        release.wait(10)
        return GOOD

    llm = ScriptedChatModel(default=slow)
    with make_memory(tmp_path, llm=llm, debounce_seconds=0.0, rate_limit_seconds=0) as m:
        m.queue.add(convo(), thread_id="t1")
        assert m.facts.list() == []  # add() came back while nothing was processed
        deadline = time.monotonic() + 10
        while llm.calls == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert llm.calls == 1 and m.facts.list() == []  # the worker thread is inside the LLM call
        release.set()
        while not m.facts.list() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert [f.content for f in m.facts.list()] == ["User prefers tea"]


def test_add_nowait_processes_at_once_in_background(tmp_path):
    llm = ScriptedChatModel(default=GOOD)
    with make_memory(tmp_path, llm=llm, debounce_seconds=3600) as m:
        m.queue.add_nowait(convo(), thread_id="t1")
        m.queue.wait()
        assert m.queue.pending() == 0 and llm.calls == 1


def test_disabled_makes_add_a_noop(tmp_path):
    llm = ScriptedChatModel(default=GOOD)
    with make_memory(tmp_path, llm=llm, enabled=False) as m:
        m.queue.add(convo(), thread_id="t1")
        m.queue.add_nowait(convo(), thread_id="t2")
        assert m.queue.pending() == 0 and m.queue.flush() == 0 and llm.calls == 0
        assert not m.worker.running


def test_rate_limit_between_updates(tmp_path):
    stamps = []

    def record(_messages):
        stamps.append(time.monotonic())
        return GOOD

    with make_memory(tmp_path, llm=ScriptedChatModel(default=record), rate_limit_seconds=0.2) as m:
        for i in range(3):
            m.queue.add(convo(), thread_id=f"t{i}")
        m.worker.stop()
        assert m.queue.flush() == 3
        assert all(b - a >= 0.19 for a, b in zip(stamps, stamps[1:]))


def test_llm_fails_five_times_then_recovers(tmp_path, clock):
    llm = ScriptedChatModel([LLMError("down")] * 5 + [GOOD])
    with make_memory(tmp_path, llm=llm, clock=clock, update_max_attempts=6, retry_backoff_seconds=1,
                     rate_limit_seconds=0) as m:
        m.queue.add(convo(), thread_id="t1")
        clock.advance(31)
        for _ in range(6):
            m.queue.tick()
            clock.advance(60)
        assert llm.calls == 6 and m.queue.pending() == 0 and len(m.facts.list()) == 1


def test_failed_update_kept_with_error_and_retryable(tmp_path, clock):
    llm = ScriptedChatModel([LLMError("boom sk-abcdef1234567890")] * 2)
    with make_memory(tmp_path, llm=llm, clock=clock, update_max_attempts=2, retry_backoff_seconds=1,
                     rate_limit_seconds=0) as m:
        m.queue.add(convo(), thread_id="t1")
        clock.advance(31)
        m.queue.tick()
        clock.advance(5)
        m.queue.tick()
        failed = m.queue.failed()
        assert len(failed) == 1 and failed[0].attempts == 2 and "boom" in failed[0].last_error
        assert "sk-abcdef1234567890" not in failed[0].last_error
        assert m.status().failed == 1
        llm.enqueue([GOOD])
        assert m.queue.retry() == 1
        m.worker.stop()
        m.queue.flush()
        assert m.queue.failed() == [] and len(m.facts.list()) == 1


def test_bounded_depth(tmp_path):
    with make_memory(tmp_path, queue_max_depth=2) as m:
        m.queue.add(convo(), thread_id="a")
        m.queue.add(convo(), thread_id="b")
        with pytest.raises(QueueFullError):
            m.queue.add(convo(), thread_id="c")
        m.queue.add(convo("newer"), thread_id="a")  # replacing a pending key is always allowed


def test_depth_is_counted_per_scope(tmp_path, database_url):
    """One scope's import filling its own share leaves every other scope's next conversation welcome."""
    with make_memory(tmp_path, database_url, queue_max_depth=2) as m:
        m.worker.stop()
        for thread in ("a", "b"):
            m.queue.add(convo(), thread_id=thread, user_id="importer", agent_name="bot")
        with pytest.raises(QueueFullError, match="importer/bot"):
            m.queue.add(convo(), thread_id="c", user_id="importer", agent_name="bot")
        m.queue.add(convo(), thread_id="a", user_id="ana", agent_name="bot")  # another scope: its own share
        m.queue.add(convo(), thread_id="b", user_id="ana", agent_name="bot")
        with pytest.raises(QueueFullError):
            m.queue.add(convo(), thread_id="c", user_id="ana", agent_name="bot")
        assert m.queue.pending(user_id="importer", agent_name="bot") == m.queue.pending(user_id="ana", agent_name="bot") == 2


def test_worker_survives_a_job_that_raises(tmp_path):
    with make_memory(tmp_path) as m:
        m.start()

        def boom():
            raise RuntimeError("job exploded")

        m.worker.add_job("boom", 0.05, boom)
        deadline = time.monotonic() + 5
        while m.worker.jobs.get("boom") is None or m.worker.jobs["boom"].errors < 2:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert m.worker.running and "job exploded" in m.status().jobs["boom"].last_error
        assert m.status().jobs["queue"].runs >= 0


def test_scheduled_dream_runs_once_per_slot(tmp_path, clock):
    from datetime import datetime, timezone

    clock.set(datetime(2026, 11, 22, 2, 0, tzinfo=timezone.utc))
    with make_memory(tmp_path, clock=clock, dream_schedule_time="03:00") as m:
        m.daily.append("- User likes surfing")
        assert m.worker.dream_due() == "not yet"
        clock.advance(3600 * 1.5)
        assert "default/default=updated" in m.worker.dream_due()
        assert m.worker.dream_due() == "nothing to do"  # the slot's lease is taken
        with make_memory(tmp_path, clock=clock) as other:  # another process on the same database
            assert other.worker.dream_due() == "nothing to do"


CHILD = textwrap.dedent("""
    import os, sys, time
    from memory_core import Memory, Settings
    from memory_core.search.embedders import HashingEmbedder
    home, url, mode = sys.argv[1], sys.argv[2] or None, sys.argv[3]
    m = Memory(Settings(home=home, database_url=url, debounce_seconds=30, rate_limit_seconds=0),
               embedder=HashingEmbedder())
    if mode in ("kill", "term"):
        m.start()
        m.queue.add([{"role": "user", "content": "I love sailing in Greece."}], thread_id="crash")
        print("queued", flush=True)
        time.sleep(60)
    else:  # share: process every pending key, logging which ones this process applied
        real = m.extractor.extract
        def extract(messages, current, **options):  # "I like item number 7." is thread t7's conversation
            with open(sys.argv[4], "a") as f:
                f.write("t" + messages[0]["content"].split()[-1].rstrip(".") + "\\n")
            return real(messages, current, **options)
        m.extractor.extract = extract
        m.queue.flush()
        m.close()
""")


def run_child(tmp_path, url, mode, log=""):
    return subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path / "home"), url or "", mode, log],
                            stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})


@pytest.mark.parametrize("sig,mode", [(signal.SIGKILL, "kill"), (signal.SIGTERM, "term")])
def test_crash_or_sigterm_inside_the_debounce_window_loses_nothing(tmp_path, sig, mode):
    proc = run_child(tmp_path, None, mode)
    assert proc.stdout.readline().strip() == b"queued"
    proc.send_signal(sig)
    proc.wait(timeout=30)
    with make_memory(tmp_path) as m:
        if sig == signal.SIGKILL:
            assert m.queue.pending() == 1  # the update survived in the database
            assert m.queue.flush() == 1
        else:
            assert m.queue.pending() == 0  # SIGTERM flushed it before the process went
        assert [f.content for f in m.facts.list()] == ["User loves sailing in Greece"]


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_two_processes_share_one_queue_each_update_once(tmp_path, backend, request):
    url = None if backend == "sqlite" else request.getfixturevalue("pg_url")
    m = make_memory(tmp_path, url, rate_limit_seconds=0)
    for i in range(30):
        m.queue.add([{"role": "user", "content": f"I like item number {i}."}], thread_id=f"t{i}")
    m.close(flush=False)
    logs = [tmp_path / "a.log", tmp_path / "b.log"]
    procs = [run_child(tmp_path, url, "share", str(log)) for log in logs]
    for p in procs:
        assert p.wait(timeout=120) == 0
    applied = [line for log in logs if log.exists() for line in log.read_text().split()]
    assert sorted(applied) == sorted(f"t{i}" for i in range(30))  # every key exactly once
    with make_memory(tmp_path, url) as m:
        assert m.queue.pending() == 0 and len(m.facts.list()) == 30


def test_async_variants_do_not_block_the_loop(tmp_path):
    import asyncio

    llm = ScriptedChatModel(default=GOOD)
    with make_memory(tmp_path, llm=llm) as m:
        async def main():
            ticks = 0

            async def ticker():
                nonlocal ticks
                while True:
                    ticks += 1
                    await asyncio.sleep(0)

            task = asyncio.create_task(ticker())
            result = await m.aupdate(convo(), thread_id="t")
            await m.queue.aadd(convo("x"), thread_id="t2")
            task.cancel()
            return result, ticks

        result, ticks = asyncio.run(main())
        assert len(result.added) == 1 and ticks > 0 and m.queue.pending() == 1


def test_worker_false_leaves_queued_updates_to_another_process(tmp_path, clock):
    from memory_core import Memory, Settings
    from memory_core.search.embedders import HashingEmbedder

    settings = Settings(home=tmp_path / "home", rate_limit_seconds=0, llm_api_key=None, llm_base_url=None)
    with Memory(settings, clock=clock, embedder=HashingEmbedder(), worker=False) as m:
        m.queue.add(convo(), thread_id="t1")
        assert not m.status().running and m.queue.pending() == 1
        m.close(flush=False)
    with make_memory(tmp_path, clock=clock, rate_limit_seconds=0) as other:
        assert other.queue.pending() == 1
        other.queue.add(convo("I prefer coffee."), thread_id="t2")
        assert other.status().running  # the default: queuing starts this process's worker


def test_flush_of_one_scope_leaves_the_others(tmp_path, database_url, clock):
    with make_memory(tmp_path, database_url, clock=clock, rate_limit_seconds=0) as m:
        m.queue.add(convo(), thread_id="t", user_id="ana", agent_name="bot")
        m.queue.add(convo(), thread_id="t", user_id="bob", agent_name="bot")
        assert m.queue.flush(user_id="ana", agent_name="bot") == 1
        assert m.queue.pending(user_id="ana", agent_name="bot") == 0
        assert m.queue.pending(user_id="bob", agent_name="bot") == 1
        assert m.queue.flush() == 1 and m.queue.pending() == 0
