"""The Context Preview page's query box, through Streamlit's AppTest: the relevant-first injection."""

from __future__ import annotations

import re

from memory_core import count_tokens
from memory_core.dashboard.helpers import _memory
from tests.app.test_app import app_env, page  # noqa: F401  (app_env is a fixture)

RELEVANT = "User's sister Marta is allergic to peanuts"


def injected(at) -> str:
    return at.code[0].value


def test_query_box_keeps_the_relevant_fact_within_the_budget(app_env):  # noqa: F811
    memory = _memory()
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


def test_a_large_scope_lists_the_first_facts_and_counts_the_rest(app_env):  # noqa: F811
    """The struck-through list holds the first SHOWN_LINES facts in the order the budget considered them and says
    how many more there are, kept and dropped; the tables hold every fact, each with its token cost."""
    memory = _memory()
    for i in range(350):
        memory.facts.add(f"User keeps a note about topic number {i} and why", "knowledge", round(0.9 - i / 1000, 4))
    at = page("context_preview")
    at.slider(key="cp_budget").set_value(8000).run()
    assert not at.exception
    listed = next(m.value for m in at.markdown if "tok`" in m.value)
    lines = listed.splitlines()
    more = re.fullmatch(r"- \*\.\.\. and 50 more facts \((\d+) kept, (\d+) dropped\): see the tables below\*", lines[-1])
    assert len(lines) == 301 and more and int(more[1]) + int(more[2]) == 50
    tables = at.dataframe[0].value, at.dataframe[1].value
    assert len(tables[0]) + len(tables[1]) == 350 and (tables[0]["tokens"] > 0).all()
    assert int(at.metric[1].value.split(" / ")[0]) == len(tables[0])


def used_bar(at) -> int:
    import json

    figure = json.loads(at.get("plotly_chart")[0].proto.spec)
    return sum(trace["x"][0] for trace in figure["data"] if trace["y"] == ["used"])


def test_the_chart_agrees_with_the_numbers_and_a_typed_budget_unlights_the_preset(app_env):  # noqa: F811
    memory = _memory()
    memory.set_summaries({"workContext": "User is a data scientist at Initech. User is a data scientist at Initech. "
                                         "User lives in Hamburg.", "personalContext": "User lives in Hamburg."})
    memory.facts.add("User lives in Hamburg", "context", 0.9)
    memory.facts.add("User wrote a long note about " + "the planning of the data platform and its teams " * 40,
                     "knowledge", 0.95)
    for i in range(8):
        memory.facts.add(f"User likes item {i}", "preference", 0.8 - i / 100)
    at = page("context_preview")
    for preset in (250, 500):  # at 250 only the long fact is left out; at 500 it fits, and the last small ones not
        at.get("button_group")[0].set_value(preset).run()
        used, budget = map(int, at.metric[0].value.split(" / "))
        assert budget == preset and used_bar(at) == used and injected(at).count("Hamburg") == 1
        if preset == 250:  # everything but the long fact, which is passed over
            assert int(at.metric[2].value) == 1 and "long note" not in injected(at) and "item 7" in injected(at)
        else:  # the long fact fits, and the budget is filled after it
            assert used > budget - 20
    at.number_input(key="cp_budget_n").set_value(37).run()
    used, budget = map(int, at.metric[0].value.split(" / "))
    assert budget == 37 and used <= 37 and used_bar(at) == used
    assert at.get("button_group")[0].value is None  # no preset lit: 37 is none of them


def test_one_click_demo_scope_for_the_preview(app_env):  # noqa: F811
    at = page("context_preview")
    at.button(key="cp_demo").click().run()
    assert not at.exception
    facts = _memory().facts.list(user_id="demo", agent_name="preview-1")
    assert 45 <= len(facts) <= 55 and _memory().facts.list() == []  # the scope shown is left as it was
    # (AppTest replays the sidebar's first scope, so the switch to the new scope is seen in chromium)


def test_a_query_shows_the_librarys_text_its_passages_with_dates_and_costs_and_no_query_beside_it(app_env):  # noqa: F811
    """The page packs nothing itself: its text is `format_for_injection(query=...)`'s, byte for byte; the passages
    the query brings in are listed with their dates and token costs, which add up (with the heading) to the
    chart's passages part; the text without the query stands beside it."""
    from datetime import datetime, timezone

    memory = _memory()
    memory.update([{"role": "user", "content": "I went to a LGBTQ support group yesterday.", "name": "Caroline"},
                   {"role": "assistant", "content": "That's great! How did it go?", "name": "Melanie"}],
                  thread_id="s1", when=datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc))
    for i in range(40):
        memory.facts.add(f"User once mentioned hobby number {i} with a few more words", "knowledge", round(0.9 - i / 1000, 3))
    query = "When did Caroline go to the LGBTQ support group?"
    at = page("context_preview")
    at.slider(key="cp_budget").set_value(500).run()
    at.text_input(key="cp_query").input(query).run()
    assert not at.exception
    assert injected(at) == memory.format_for_injection(query=query, max_tokens=500, model="gpt-4o")
    passages = at.dataframe[0].value  # the passages come before the kept and dropped facts
    assert list(passages.columns) == ["date", "from", "passage", "tokens"]
    assert "8 May 2023" in passages["date"].tolist()
    assert any("LGBTQ support group yesterday (7 May 2023)" in text for text in passages["passage"])
    import json

    figure = json.loads(at.get("plotly_chart")[0].proto.spec)
    part = next(t["x"][0] for t in figure["data"] if t["name"] == "Relevant passages")
    assert passages["tokens"].sum() + count_tokens("Relevant passages:") == part
    used, budget = map(int, at.metric[0].value.split(" / "))
    assert used_bar(at) == used == count_tokens(injected(at)) and budget == 500
    assert int(at.metric[4].value) == len(passages)
    plain = memory.format_for_injection(max_tokens=500, model="gpt-4o")
    assert [c.value for c in at.code[1:3]] == [plain, injected(at)]  # no query beside this query, both copyable
    assert any(m.label == "No query: tokens used" and m.value == f"{count_tokens(plain)} / 500" for m in at.metric)
