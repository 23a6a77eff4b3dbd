"""The Usage page through AppTest: the ledger's tokens and cost per day, scope and operation, the budget, the
injections recorded."""

from __future__ import annotations

import json

from memory_core import ScriptedChatModel
from memory_core.dashboard import get_memory
from memory_core.scope import make_scope
from memory_core.usage import MeteredChatModel, metering
from tests.test_app import app_env, page  # noqa: F401  (the fixture)


def test_an_offline_memory_says_nothing_is_spent(app_env):  # noqa: F811
    at = page("usage")
    assert any("runs offline" in i.value for i in at.info)


def test_the_ledger_and_the_injections_are_shown(app_env):  # noqa: F811
    memory = get_memory()
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
