"""Scoped views: one scope, no way to reach another; roles refused at the view; actors recorded."""

from __future__ import annotations

import pytest

from memory_core import LLMError, ScriptedChatModel
from tests.conftest import make_memory

CONVO = [{"role": "user", "content": "I live in Porto and I love surfing."}]


def test_a_view_sees_and_changes_only_its_scope(memory):
    ana = memory.scoped(user_id="ana", agent_name="bot")
    bob = memory.scoped(user_id="bob", agent_name="bot")
    mine = ana.facts.add("User likes tea", "preference", 0.9)
    theirs = bob.facts.add("User likes coffee", "preference", 0.9)
    assert [f.id for f in ana.facts.list()] == [mine.id]
    for call in (lambda: ana.facts.get(theirs.id), lambda: ana.facts.update(theirs.id, confidence=0.5),
                 lambda: ana.facts.delete(theirs.id), lambda: ana.facts.supersede(theirs.id, "User likes milk"),
                 lambda: ana.facts.invalidate(theirs.id), lambda: ana.facts.merge(mine.id, theirs.id),
                 lambda: ana.facts.get("fact_00000000")):
        with pytest.raises(KeyError):
            call()
    assert ana.facts.history(theirs.id) == []
    assert bob.facts.get(theirs.id).confidence == 0.9 and bob.facts.get(theirs.id).valid
    ana.update(CONVO, thread_id="t")
    assert "surfing" in " ".join(f.content for f in ana.facts.list())
    assert not any("surfing" in f.content for f in bob.facts.list())
    assert "coffee" not in ana.format_for_injection() and "tea" in ana.format_for_injection()
    assert all(h.ref != theirs.id for h in ana.search("coffee"))


def test_plans_and_documents_of_another_scope_are_unknown(memory):
    ana = memory.scoped(user_id="ana", agent_name="bot")
    bob = memory.scoped(user_id="bob", agent_name="bot")
    plan = bob.plans.start("Ship", ["write", "test"], session_id="s1")
    for call in (lambda: ana.plans.get(plan.id), lambda: ana.plans.check(plan.id, 0), lambda: ana.plans.finish(plan.id)):
        with pytest.raises(KeyError):
            call()
    assert ana.plans.active() is None and bob.plans.get(plan.id).status == "active"
    bob.write_core("- User is Bob\n")
    bob.daily.append("- Bob's day")
    assert ana.read_core() is None and ana.daily.days() == []
    assert bob.read_core() == "- User is Bob\n" and len(bob.daily.days()) == 1
    assert "Bob's day" in bob.daily.read(bob.daily.days()[0]) and ana.daily.read(bob.daily.days()[0]) is None


def test_roles_are_refused_at_the_view(memory):
    memory.facts.add("User likes tea", "preference", 0.9, user_id="ana", agent_name="bot")
    viewer = memory.scoped(user_id="ana", agent_name="bot", role="viewer")
    fact = viewer.facts.list()[0]
    assert viewer.facts.get(fact.id) == fact and viewer.memory_data()["facts"] and viewer.search("tea")
    assert not viewer.can_write
    for call in (lambda: viewer.facts.add("x", "goal", 0.9), lambda: viewer.facts.update(fact.id, confidence=0.2),
                 lambda: viewer.facts.delete(fact.id), lambda: viewer.facts.invalidate(fact.id),
                 lambda: viewer.update(CONVO, thread_id="t"), lambda: viewer.queue.add(CONVO, thread_id="t"),
                 lambda: viewer.write_core("- x"), lambda: viewer.deep_dream(), lambda: viewer.daily.append("x"),
                 lambda: viewer.plans.start("p", ["a"], session_id="s"), lambda: viewer.queue.retry(),
                 lambda: viewer.set_summaries({"workContext": "x"}), lambda: viewer.context("s")):
        with pytest.raises(PermissionError):
            call()
    assert memory.facts.get(fact.id).confidence == 0.9 and memory.queue.pending() == 0
    with pytest.raises(ValueError):
        memory.scoped(user_id="ana", agent_name="bot", role="owner")


def test_changes_through_a_view_record_its_actor(memory):
    view = memory.scoped(user_id="ana", agent_name="bot", role="editor", actor="dashboard:ana@acme.com")
    fact = view.facts.add("User likes tea", "preference", 0.9)
    view.facts.update(fact.id, confidence=0.7)
    with memory.acting_as("library-job"):
        memory.facts.update(fact.id, confidence=0.6)
    memory.facts.update(fact.id, confidence=0.5)
    actors = [e.actor for e in view.facts.history(fact.id)]
    assert actors == [None, "library-job", "dashboard:ana@acme.com", "dashboard:ana@acme.com"]
    version = view.write_core("- User likes tea\n")
    assert view.core_versions()[0].actor == "dashboard:ana@acme.com" and version.version == 1


def test_queued_updates_are_applied_as_whoever_queued_them(memory):
    view = memory.scoped(user_id="ana", agent_name="bot", actor="mcp:ci-bot")
    view.queue.add(CONVO, thread_id="t1")
    assert view.queue.pending() == 1 and memory.queue.pending(user_id="bob") == 0
    memory.queue.flush()
    entries = view.facts.history()
    assert entries and {e.actor for e in entries} == {"mcp:ci-bot"}


def test_the_queue_seen_from_a_view_is_its_scope_only(tmp_path, database_url):
    llm = ScriptedChatModel(default=LLMError("the endpoint is down"))
    with make_memory(tmp_path, database_url, llm=llm, update_max_attempts=1, rate_limit_seconds=0) as m:
        ana, bob = m.scoped(user_id="ana", agent_name="bot"), m.scoped(user_id="bob", agent_name="bot")
        ana.queue.add(CONVO, thread_id="a")
        bob.queue.add(CONVO, thread_id="b")
        m.queue.flush()
        assert [i.thread_id for i in ana.queue.failed()] == ["a"]
        assert [i.thread_id for i in bob.queue.failed()] == ["b"]
        assert ana.queue.retry() == 1
        assert [i.status for i in m.queue.items(user_id="bob")] == ["failed"]
        assert [i.status for i in m.queue.items(user_id="ana")] == ["pending"]


def test_the_types_of_the_public_api_import_from_the_package():
    import memory_core

    for name in ("ScopedMemory", "ImportReport", "Grant", "ApiToken", "AuditEntry", "CoreVersion", "Fact",
                 "UpdateResult", "DreamResult", "SearchHit", "Plan", "acting_as", "Memory", "Settings"):
        assert name in memory_core.__all__ and getattr(memory_core, name) is not None
