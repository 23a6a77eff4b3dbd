"""Every page of the dashboard through Streamlit's AppTest, against a real SQLite workspace."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from memory_core.dashboard import helpers as dashboard
from memory_core.dashboard.helpers import _memory

APP = str(Path(__file__).resolve().parents[2] / "streamlit_app.py")

TRANSCRIPT = "User: I love hiking in the Alps. I work at Acme as a nurse.\nAssistant: Nice!"


@pytest.fixture
def app_env(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMORY_CORE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MEMORY_CORE_TIMEZONE", "UTC")
    # AppTest resets Streamlit's legacy pages/ flag before every run, so the cold-start guard would rerun
    # (and swallow the simulated click) each time; a real server takes that path once. The browser tests
    # cover the guard against a real `streamlit run`.
    monkeypatch.setattr(dashboard, "ensure_entrypoint", lambda: None)
    _memory.clear()
    yield tmp_path
    _memory().close()
    _memory.clear()


def plain(markdown: str) -> str:
    """A message as a person reads it: escape_markdown's backslashes and zero-width spaces removed."""
    return markdown.replace("\u200b", "").replace("\\", "")


GRID = "facts_editor:default/default:0"  # the Facts grid's key: scope and generation (fact_edits)


def page(name: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page(f"pages/{name}.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_every_page_renders_without_exception(app_env):
    for name in ("ingest", "facts", "daily", "dream", "context_preview", "search"):
        page(name)
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    assert any("Offline mode" in i.value for i in at.sidebar.info)


def test_ingest_transcript_then_facts_page_shows_them(app_env):
    at = page("ingest")
    at.text_area(key="ingest_text").input(TRANSCRIPT)
    at.button(key="ingest_go").click().run()
    assert not at.exception and any("Added 2 facts" in s.value for s in at.success)
    assert {f.content for f in _memory().facts.list()} == {"User loves hiking in the Alps",
                                                             "User works at Acme as a nurse"}
    assert _memory().daily.days()  # the context tier reached the daily log
    at = page("facts")
    assert "User loves hiking in the Alps" in at.data_editor(key=GRID).value["content"].tolist()


def test_ingest_garbage_changes_nothing(app_env):
    at = page("ingest")
    at.text_area(key="ingest_text").input("just some words without speakers")
    at.button(key="ingest_go").click().run()
    assert any("Cannot read this conversation" in e.value for e in at.error)
    assert _memory().facts.list() == []


def test_ingest_queue_mode(app_env):
    at = page("ingest")
    at.text_area(key="ingest_text").input(TRANSCRIPT)
    at.radio(key="ingest_how").set_value("Queue (debounced)")
    at.button(key="ingest_go").click().run()
    assert any("Queued" in s.value for s in at.success) and _memory().queue.pending() == 1


def test_demo_data_then_every_page(app_env):
    at = page("ingest")
    at.button(key="load_demo").click().run()
    assert not at.exception and len(_memory().facts.list()) >= 5
    assert _memory().read_core()
    for name in ("facts", "daily", "dream", "context_preview", "search"):
        page(name)


def test_facts_add_filter_and_delete(app_env):
    memory = _memory()
    keep = memory.facts.add("User likes tea", "preference", 0.9)
    gone = memory.facts.add("User likes coffee", "preference", 0.6)
    at = page("facts")
    at.text_input(key="facts_text").input("coffee").run()
    assert any("1 of 2 facts" in c.value for c in at.caption)
    memory.facts.delete(gone.id)
    at = page("facts")
    assert any("1 of 1 facts" in c.value for c in at.caption)
    assert memory.facts.list() == [keep]


def test_context_preview_budget_changes_counter(app_env):
    memory = _memory()
    for i in range(40):
        memory.facts.add(f"User fact number {i} with some extra words to count", "knowledge", 0.5 + i / 100)
    at = page("context_preview")
    used_at_default = at.metric[0].value
    at.slider(key="cp_budget").set_value(100).run()
    assert not at.exception
    used, budget = at.metric[0].value.split(" / ")
    assert budget == "100" and int(used) <= 100 and at.metric[0].value != used_at_default
    at.text_area(key="cp_text").input("hello world").run()
    assert at.metric[-1].value == "2"


def test_dream_page_runs_dream(app_env):
    _memory().daily.append("- User likes surfing at Carcavelos")
    at = page("dream")
    at.button(key="dream_run").click().run()
    assert not at.exception
    assert "surfing" in (_memory().read_core() or "")


def test_search_page_finds(app_env):
    _memory().facts.add("User loves surfing at Carcavelos", "preference", 0.9)
    at = page("search")
    at.text_input(key="search_q").input("surfing").run()
    assert not at.exception and "surfing" in at.dataframe[0].value["text"].iloc[0]
    assert any("token frequencies (snapshot of 1 item)" in c.value for c in at.caption)


def test_search_hits_link_to_their_source_pages(app_env):
    memory = _memory()
    memory.daily.append("- User asked about surfing lessons")
    at = page("search")
    at.text_input(key="search_q").input("surfing lessons").run()
    assert not at.exception
    links = [(el.proto.page, el.proto.query_string) for el in at.get("page_link")]
    day = memory.daily.days()[0].isoformat()
    assert ("daily", f"day={day}") in links
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["day"] = memory.daily.days()[0].isoformat()
    at.run()
    at.switch_page("pages/daily.py").run()
    assert not at.exception and at.selectbox(key="daily_day").value == memory.daily.days()[0]
