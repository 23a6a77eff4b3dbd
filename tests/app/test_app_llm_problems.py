"""The sidebar shows what the LLM last got wrong in the scope (issue 26), through Streamlit's AppTest against
a local OpenAI-compatible server that answers like a small local model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from memory_core.dashboard import helpers as dashboard
from memory_core.dashboard.helpers import _memory
from tests.llm_servers import completion

APP = str(Path(__file__).resolve().parents[2] / "streamlit_app.py")
TRANSCRIPT = "User: I love hiking in the Alps. I collect stamps.\nAssistant: Nice!"


@pytest.fixture
def app_env(tmp_path, monkeypatch, httpserver):
    reply = {"facts": [{"content": "User loves hiking in the Alps", "category": "Preferences", "confidence": "90%"},
                       {"content": "User collects stamps", "category": "hobby", "confidence": 0.9}]}
    httpserver.expect_request("/v1/chat/completions").respond_with_json(completion(json.dumps(reply)))
    monkeypatch.setenv("MEMORY_CORE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MEMORY_CORE_TIMEZONE", "UTC")
    monkeypatch.setenv("MEMORY_CORE_LLM_BASE_URL", httpserver.url_for("/v1"))
    monkeypatch.setenv("MEMORY_CORE_LLM_MODEL", "smollm2")
    monkeypatch.setattr(dashboard, "ensure_entrypoint", lambda: None)
    _memory.clear()
    yield tmp_path
    _memory().close()
    _memory.clear()


def test_sidebar_shows_the_scopes_last_llm_problem(app_env):
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("pages/ingest.py")
    at.run()
    at.text_area(key="ingest_text").input(TRANSCRIPT)
    at.button(key="ingest_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert [(f.content, f.category, f.confidence) for f in _memory().facts.list()] == [
        ("User loves hiking in the Alps", "preference", 0.9)]
    at = AppTest.from_file(APP, default_timeout=60).run()  # the same process's memory, drawn anew
    captions = [e.value for e in at.sidebar if type(e).__name__ == "Caption"]
    shown = [c for c in captions if c.startswith("Last LLM problem")]
    assert shown and "hobby" in shown[0] and "stamps" in shown[0], captions
