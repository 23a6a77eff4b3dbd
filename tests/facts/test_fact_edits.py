"""Editing a fact: one rule (`Facts.revise`) for the library, the dashboard's grid and MCP's `update_memory`.

A new statement supersedes the fact (the old one stays in history, invalid, pointing at the new one); the same
statement is no change; a category or confidence alone changes the fact in place; an invalid fact is refused."""

from __future__ import annotations

import anyio
import pytest
from mcp import Client

from memory_core.dashboard.helpers import _memory
from memory_core.mcp.server import build_server
from tests.app.test_app import GRID, app_env, page, plain  # noqa: F401  (app_env is a fixture)


def test_a_new_statement_supersedes_and_the_old_one_stays_in_history(memory):
    old = memory.facts.add("User lives in Porto", "context", 0.9)
    revision = memory.facts.revise(old.id, content="User lives in Lisbon", confidence=0.8, reason="moved")
    new = revision.fact
    assert revision.superseded == old.id and revision.changed == ("content", "confidence")
    assert (new.content, new.category, new.confidence) == ("User lives in Lisbon", "context", 0.8) and new.valid
    before = memory.facts.get(old.id)
    assert not before.valid and before.superseded_by == new.id and before.invalid_reason == "moved"
    assert before.content == "User lives in Porto"  # kept as it was, in history
    assert [f.id for f in memory.facts.list()] == [new.id]
    assert "Porto" not in memory.format_for_injection()  # one truth: the old statement is no longer current
    assert [e.action for e in memory.facts.history(old.id)][0] == "superseded"


def test_the_same_statement_is_no_change_and_category_or_confidence_alone_change_in_place(memory):
    fact = memory.facts.add("User lives in Porto", "context", 0.9)
    same = memory.facts.revise(fact.id, content="  user LIVES in   Porto ")
    assert same.superseded is None and same.changed == () and same.fact == fact
    assert memory.facts.get(fact.id) == fact  # nothing written
    moved = memory.facts.revise(fact.id, content="User lives in Porto", category="knowledge", confidence=0.5)
    assert moved.superseded is None and moved.changed == ("category", "confidence")
    assert moved.fact.id == fact.id and moved.fact.valid and moved.fact.created_at == fact.created_at
    assert (moved.fact.content, moved.fact.category, moved.fact.confidence) == ("User lives in Porto", "knowledge", 0.5)
    unchanged = memory.facts.revise(fact.id, category="knowledge", confidence=0.5)
    assert unchanged.changed == () and unchanged.fact == memory.facts.get(fact.id)


def test_an_invalid_fact_is_refused_and_bad_input_changes_nothing(memory):
    old = memory.facts.add("User lives in Porto", "context", 0.9)
    new = memory.facts.revise(old.id, content="User lives in Lisbon").fact
    with pytest.raises(ValueError, match=f"no longer valid.*{new.id}"):
        memory.facts.revise(old.id, confidence=0.3)
    with pytest.raises(KeyError):
        memory.facts.revise("fact_00000000", confidence=0.3)
    for bad in ({"content": "  "}, {"category": "opinion"}, {"confidence": 1.5}):
        with pytest.raises(ValueError):
            memory.facts.revise(new.id, **bad)
    assert memory.facts.get(new.id) == new and len(memory.facts.list(include_invalid=True)) == 2
    # the library's raw `update()` keeps its documented in-place behaviour
    edited = memory.facts.update(new.id, content="User lives in Faro")
    assert edited.id == new.id and edited.valid and edited.content == "User lives in Faro"


def test_a_scoped_view_revises_only_its_own_facts_and_only_with_a_writing_role(memory):
    mine = memory.scoped(user_id="ana", agent_name="bot")
    other = memory.facts.add("User lives in Porto", "context", 0.9, user_id="bob", agent_name="bot")
    with pytest.raises(KeyError):
        mine.facts.revise(other.id, content="User lives in Lisbon")
    fact = mine.facts.add("User likes tea", "preference", 0.9)
    viewer = memory.scoped(user_id="ana", agent_name="bot", role="viewer")
    with pytest.raises(PermissionError):
        viewer.facts.revise(fact.id, content="User likes coffee")
    assert memory.facts.get(fact.id) == fact and memory.facts.get(other.id) == other
    revision = mine.facts.revise(fact.id, content="User likes coffee")
    assert revision.superseded == fact.id and revision.fact.user_id == "ana"


EDITS = [
    {"content": "User lives in Lisbon"},
    {"content": "User lives in Lisbon", "category": "knowledge"},
    {"confidence": 0.5},
    {"content": "user lives in  PORTO"},
]


def outcome(view, fact_id: str) -> dict:
    """What an edit left in a scope, without ids, times or reasons (which say who edited)."""
    old = view.facts.get(fact_id)
    new = view.facts.get(old.superseded_by) if old.superseded_by else None
    return {"old": (old.content, old.category, old.confidence, old.valid),
            "new": (new.content, new.category, new.confidence, new.valid) if new else None,
            "valid": sorted((f.content, f.category, f.confidence) for f in view.facts.list()),
            "actions": sorted(e.action for e in view.facts.history())}


@pytest.mark.parametrize("edit", EDITS, ids=["content", "content+category", "confidence", "same-statement"])
def test_mcp_and_the_dashboard_give_the_same_result_for_the_same_edit(app_env, edit):  # noqa: F811
    memory = _memory()
    agent = memory.scoped(user_id="default", agent_name="agent")
    by_agent = agent.facts.add("User lives in Porto", "context", 0.9)
    by_person = memory.facts.add("User lives in Porto", "context", 0.9)

    async def call() -> dict:
        async with Client(build_server(lambda: agent, memory.settings)) as client:
            result = await client.call_tool("update_memory", {"fact_id": by_agent.id, **edit})
            assert not result.is_error, result.content[0].text
            return result.structured_content

    reply = anyio.run(call)

    at = page("facts")
    at.session_state[GRID] = {"edited_rows": {0: edit}, "added_rows": [], "deleted_rows": []}
    at.run()
    at.button(key="facts_save").click().run()
    assert not at.exception and not at.error
    assert outcome(memory.scoped(), by_person.id) == outcome(agent, by_agent.id)
    assert (reply["superseded"] is not None) == ("content" in reply["changed"])
    if reply["superseded"]:
        assert any("“User lives in Porto” is now" in plain(s.value) for s in at.success)
