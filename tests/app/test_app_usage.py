"""The Usage page through AppTest: the ledger's tokens and cost per day, scope and operation, the budget, the
injections recorded."""

from __future__ import annotations

import json

from memory_core import ScriptedChatModel
from memory_core.dashboard.helpers import _memory
from memory_core.scope import make_scope
from memory_core.policy.usage import MeteredChatModel, metering
from tests.app.test_app import app_env, page  # noqa: F401  (the fixture)


def test_an_offline_memory_says_nothing_is_spent(app_env):  # noqa: F811
    at = page("usage")
    assert any("runs offline" in i.value for i in at.info)


def test_the_ledger_and_the_injections_are_shown(app_env):  # noqa: F811
    memory = _memory()
    llm = ScriptedChatModel(default=json.dumps({"facts": [{"content": "User prefers tea", "category": "preference",
                                                           "confidence": 0.9}]}))
    metered = MeteredChatModel(llm, memory.ledger)  # the dashboard's memory is offline: an LLM call made beside it
    with metering(make_scope("default", "default"), "extract"):
        metered.complete([{"role": "user", "content": "I prefer tea"}])
    memory.facts.add("User prefers tea", "preference", 0.9)
    memory.format_for_injection(query="drinks", record=True)
    at = page("usage")
    assert not at.exception
    assert any(m.label == "Calls" and m.value == "1" for m in at.metric)
    frames = [d.value for d in at.dataframe]
    assert any("extract" in set(df.get("operation", [])) for df in frames)
    assert any("drinks" in set(df.get("query", [])) for df in frames)


def test_recorded_injections_are_listed_replayed_and_counted_per_fact(app_env):  # noqa: F811
    memory = _memory()
    tea = memory.facts.add("User prefers green tea", "preference", 0.9)
    for n in range(30):
        memory.facts.add(f"User owns book number {n} about the history of Lisbon", "knowledge", 0.95)
    with memory.acting_as("mcp:ci-bot"):
        memory.format_for_injection(query="what does the user drink", max_tokens=100, record=True)
    at = page("context_preview")
    frames = [d.value for d in at.dataframe]
    assert any("query" in df and "what does the user drink" in list(df["query"]) for df in frames), frames
    at.button(key="cp_replay_go").click().run()
    assert not at.exception
    assert at.text_input(key="cp_query").value == "what does the user drink"
    assert at.slider(key="cp_budget").value == 100
    n = len(memory.injections()[0].fact_ids)
    assert any(f"Then: {n} facts went in; now {n} of them do." in c.value for c in at.caption)
    facts = page("facts")
    grid = next(d.value for d in facts.get("arrow_data_frame") if "injected" in d.value) \
        if facts.get("arrow_data_frame") else None
    assert tea.id in memory.injection_counts()
    if grid is not None:
        assert grid.set_index("id").loc[tea.id, "injected"].startswith("1x")
