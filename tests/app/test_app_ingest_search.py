"""Ingest and Search through AppTest: each paste is a conversation of its own, the demo data goes only into an
empty scope (or a new one), and Search says when nothing matches well and why each hit matched."""

from __future__ import annotations

from memory_core.dashboard.helpers import _memory
from tests.app.test_app import app_env, page  # noqa: F401  (app_env is a fixture)


def test_two_pastes_queued_in_the_same_minute_are_two_conversations(app_env):  # noqa: F811
    at = page("ingest")
    at.radio(key="ingest_how").set_value("Queue (debounced)")
    at.text_area(key="ingest_text").input("User: I am learning the cello.\nAssistant: Lovely!")
    at.button(key="ingest_go").click().run()
    at.text_area(key="ingest_text").input("User: I moved to Porto.\nAssistant: Noted.")
    at.button(key="ingest_go").click().run()
    assert not at.exception
    items = _memory().queue.items()
    assert len(items) == 2 and len({i.thread_id for i in items}) == 2 and [i.messages for i in items] == [2, 2]


def test_a_thread_id_typed_is_kept(app_env):  # noqa: F811
    at = page("ingest")
    at.radio(key="ingest_how").set_value("Queue (debounced)")
    at.text_input(key="ingest_thread").input("support-42")
    at.text_area(key="ingest_text").input("User: I like tea.\nAssistant: Noted.")
    at.button(key="ingest_go").click().run()
    assert [i.thread_id for i in _memory().queue.items()] == ["support-42"]


def test_demo_data_only_into_an_empty_scope_else_a_new_one(app_env):  # noqa: F811
    memory = _memory()
    memory.facts.add("User lives in Madrid", "context", 0.9)
    at = page("ingest")
    assert not any(b.key == "load_demo" for b in at.button)
    assert any("already holds memory" in w.value for w in at.warning)
    at.button(key="load_demo_new").click().run()
    assert not at.exception
    assert [f.content for f in memory.facts.list()] == ["User lives in Madrid"]  # untouched
    assert any("Priya" in f.content for f in memory.facts.list(user_id="demo", agent_name="conversation-1"))


def test_search_says_no_good_match_and_why_each_hit_matched(app_env):  # noqa: F811
    memory = _memory()
    memory.facts.add("User trains at 6am", "behavior", 0.9)
    memory.facts.add("User's sister Marta is allergic to peanuts", "context", 0.8)
    at = page("search")
    at.text_input(key="search_q").input("Is Marta allergic?").run()
    assert not at.exception and not at.warning
    hits = at.dataframe[0].value
    assert hits["text"].iloc[0] == "User's sister Marta is allergic to peanuts"
    assert hits["why"].iloc[0] == "shares “marta”, “allergic”"
    memory.facts.erase(memory.facts.list()[1].id if "peanuts" in memory.facts.list()[1].content
                       else memory.facts.list()[0].id)
    at.text_input(key="search_q").input("peanuts").run()
    assert any("No good match for “peanuts”" in w.value for w in at.warning)
