"""The Context Preview page's query box, through Streamlit's AppTest: the relevant-first injection."""

from __future__ import annotations

from memory_core import count_tokens
from memory_core.dashboard import get_memory
from tests.test_app import app_env, page  # noqa: F401  (app_env is a fixture)

RELEVANT = "User's sister Marta is allergic to peanuts"


def injected(at) -> str:
    return at.code[0].value


def test_query_box_keeps_the_relevant_fact_within_the_budget(app_env):  # noqa: F811
    memory = get_memory()
    for i in range(120):
        memory.facts.add(f"User once mentioned hobby number {i} with a few more words", "knowledge", round(0.9 - i / 1000, 3))
    memory.facts.add(RELEVANT, "context", 0.55)
    at = page("context_preview")
    at.slider(key="cp_budget").set_value(300).run()
    assert RELEVANT not in injected(at)
    at.text_input(key="cp_query").input("Is Marta allergic to anything?").run()
    assert not at.exception
    text = injected(at)
    assert RELEVANT in text and count_tokens(text, "gpt-4o") <= 300
    assert text.splitlines()[-1] == f"- [context | 0.55] {RELEVANT}"  # still listed by confidence
    assert any("facts most relevant to the query were kept first" in c.value for c in at.caption)
    kept = at.dataframe[0].value
    assert "relevance" in kept.columns and kept.loc[kept["content"] == RELEVANT, "relevance"].iloc[0] >= 1
    used, budget = at.metric[0].value.split(" / ")
    assert budget == "300" and int(used) <= 300
    at.text_input(key="cp_query").input("").run()
    assert RELEVANT not in injected(at) and "relevance" not in at.dataframe[0].value.columns
