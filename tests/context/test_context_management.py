"""Context compression, boulder state (plans) and the stale-while-revalidate cache."""

from __future__ import annotations

import copy
import json
import threading
import time

import pytest

from memory_core import SWRCache, compress_messages
from tests.conftest import make_memory


def call(cid, name, args):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def turn(i, calls=(), results=(), text=None):
    msgs = [{"role": "user", "content": f"question {i}"}]
    if calls:
        msgs.append({"role": "assistant", "content": None, "tool_calls": list(calls)})
        msgs += [{"role": "tool", "tool_call_id": cid, "content": content} for cid, content in results]
    msgs.append({"role": "assistant", "content": text or f"answer {i}"})
    return msgs


def transcript():
    msgs = [{"role": "system", "content": "You are helpful."}]
    msgs += turn(1, [call("a1", "read_file", {"path": "x.py", "lines": 10})], [("a1", "contents of x")])
    msgs += turn(2, [call("b1", "run", {"cmd": "pytest " + "-v " * 200})], [("b1", "Error: 3 tests failed")])
    msgs += turn(3, [call("c1", "read_file", {"lines": 10, "path": "x.py"}), call("c2", "grep", {"q": "foo"})],
                 [("c1", "contents of x"), ("c2", "foo found")])
    for i in range(4, 9):
        msgs += turn(i)
    msgs += turn(9, [call("d1", "grep", {"q": "foo"})], [("d1", "foo found")])
    return msgs


def tool_pairs_intact(messages):
    call_ids = {c["id"] for m in messages for c in m.get("tool_calls") or []}
    result_ids = {m["tool_call_id"] for m in messages if m["role"] == "tool"}
    return call_ids == result_ids


def test_compression_dedups_purges_and_protects():
    original = transcript()
    snapshot = copy.deepcopy(original)
    result = compress_messages(original, protect_turns=2, purge_errors_after=4)
    assert original == snapshot  # never mutated
    out = result.messages
    ids = [c["id"] for m in out for c in m.get("tool_calls") or []]
    assert "a1" not in ids and "c1" in ids  # identical read_file (keys in any order): only the latest
    assert "c2" not in ids and "d1" in ids  # grep foo again in turn 9: the older c2 goes
    assert tool_pairs_intact(out)
    b1 = next(c for m in out for c in m.get("tool_calls") or [] if c["id"] == "b1")
    assert b1["function"]["arguments"] == "{}"  # old errored call lost its arguments
    assert any(m.get("content") == "Error: 3 tests failed" for m in out)  # but kept its error text
    assert result.removed == len(original) - len(out) and result.tokens_after < result.tokens_before
    assert out[0]["role"] == "system" and out[-4:] == original[-4:]


@pytest.mark.parametrize("protect", [0, 1, 3, 9, 20])
def test_every_result_keeps_its_call_and_protected_turns_untouched(protect):
    msgs = transcript()
    out = compress_messages(msgs, protect_turns=protect).messages
    assert tool_pairs_intact(out)
    if protect:
        users = [i for i, m in enumerate(msgs) if m["role"] == "user"]
        start = users[max(0, len(users) - protect)]
        assert out[-(len(msgs) - start):] == msgs[start:]


def test_parallel_duplicate_calls_and_repeated_messages():
    msgs = [{"role": "user", "content": "go"},
            {"role": "assistant", "content": None, "tool_calls": [call("p1", "ls", {}), call("p2", "ls", {})]},
            {"role": "tool", "tool_call_id": "p1", "content": "a b"}, {"role": "tool", "tool_call_id": "p2", "content": "a b"},
            {"role": "assistant", "content": "same"}, {"role": "assistant", "content": "same"}]
    msgs += turn(2) + turn(3)
    out = compress_messages(msgs, protect_turns=2).messages
    assert [c["id"] for m in out for c in m.get("tool_calls") or []] == ["p2"]
    assert sum(1 for m in out if m.get("content") == "same") == 1 and tool_pairs_intact(out)


def test_plans_resume_across_restart(tmp_path):
    with make_memory(tmp_path) as m:
        plan = m.plans.start("Ship v1", ["write docs", "tag release"], session_id="s1")
        m.plans.check(plan.id, 0)
        with pytest.raises(ValueError):
            m.plans.check(plan.id, 5)
    with make_memory(tmp_path) as m:
        session = m.context("s2")
        assert session.plan.id == plan.id and session.plan.session_ids == ["s1", "s2"]
        text = session.system_context()
        assert "tag release" in text and "write docs" not in text
        epoch = session.epoch
        assert session.changed_since(epoch) == {}
        m.plans.check(plan.id, 1)
        assert set(session.changed_since(epoch)) == {"plan"}
        m.plans.finish(plan.id)
        assert m.plans.active() is None and m.context("s3").plan is None
        with pytest.raises(KeyError):
            m.plans.finish("plan_00000000")


def test_swr_fresh_stale_missing_with_injected_clock():
    class Clock:
        t = 0.0

        def now(self):
            return self.t

    clock, calls = Clock(), []
    cache = SWRCache(10, clock=clock)

    def fetch():
        calls.append(clock.t)
        return len(calls)

    assert cache.get("t", {"a": 1, "b": 2}, fetch) == 1
    assert cache.get("t", {"b": 2, "a": 1}, fetch) == 1  # key order ignored; fresh
    clock.t = 11
    assert cache.get("t", {"a": 1, "b": 2}, fetch) == 1  # stale: served at once...
    cache.wait()
    assert cache.get("t", {"a": 1, "b": 2}, fetch) == 2  # ...refreshed in the background
    cache.switch_project("other")
    assert len(cache) == 0 and cache.get("t", {"a": 1, "b": 2}, fetch) == 3
    assert cache.invalidate("t") == 1 and len(cache) == 0


def test_swr_concurrent_readers_cause_one_refresh_and_errors_keep_stale():
    class Clock:
        t = 0.0

        def now(self):
            return self.t

    clock, gate, count = Clock(), threading.Event(), []
    cache = SWRCache(1, clock=clock)
    cache.get("t", 1, lambda: "v0")
    clock.t = 5

    def slow():
        count.append(1)
        gate.wait(5)
        return "v1"

    readers = [threading.Thread(target=lambda: cache.get("t", 1, slow)) for _ in range(16)]
    for r in readers:
        r.start()
    for r in readers:
        r.join()
    gate.set()
    cache.wait()
    assert len(count) == 1 and cache.get("t", 1, slow) == "v1"
    clock.t = 10

    def broken():
        raise RuntimeError("down")

    assert cache.get("t", 1, broken) == "v1"
    cache.wait()
    assert cache.get("t", 1, broken) == "v1"


def test_swr_bounded():
    cache = SWRCache(60, max_entries=3)
    for i in range(10):
        cache.get("t", i, lambda i=i: i)
    assert len(cache) == 3
