"""The dashboard as a product, through Streamlit's AppTest: scope switching, the Overview, Context Preview's
budget presets and struck-through dropped facts, Facts' status badges and empty states, Search's filler.

(AppTest keeps the sidebar's elements of the first run only, so sidebar widgets are driven right after it and
their effect is read from session state and from the scope header each page shows.)"""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from memory_core.dashboard import get_memory
from memory_core.scope import make_scope
from tests.test_app import app_env, page  # noqa: F401  (app_env is a fixture)

APP = str(Path(__file__).resolve().parents[1] / "streamlit_app.py")


def test_a_scope_just_opened_is_picked_and_demo_data_lands_there(app_env):  # noqa: F811
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert at.selectbox(key="scope_select").value == "default/default"
    # what the sidebar's "New scope" -> Open leaves behind (the browser test clicks it for real)
    at.session_state["_new_scopes"] = [make_scope("ana", "coder")]
    at.session_state["_scope"] = "ana/coder"
    at.session_state["_scope_switch"] = True
    at.switch_page("pages/ingest.py").run()
    assert at.session_state["_scope"] == "ana/coder"
    assert any("ana/coder" in c.value for c in at.caption)  # the scope header
    at.button(key="load_demo").click().run()
    assert not at.exception
    memory = get_memory()
    assert len(memory.facts.list(user_id="ana", agent_name="coder")) >= 5
    assert memory.facts.list() == []  # nothing went into default/default
    at.switch_page("pages/facts.py").run()  # the scope stays picked across the app's own navigation
    assert at.session_state["_scope"] == "ana/coder"
    assert not at.exception and len(at.data_editor(key="facts_editor").value) >= 5
