"""The dashboard as a product, through Streamlit's AppTest: scope switching, the Overview, Context Preview's
budget presets and struck-through dropped facts, Facts' status badges and empty states, Search's filler.

(AppTest keeps the sidebar's widgets of the first run only and replays their first values, so the sidebar's
new-scope flow is tested in chromium: tests/test_browser_dashboard.py.)"""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from memory_core.dashboard import get_memory
from tests.test_app import app_env, page  # noqa: F401  (app_env is a fixture)

APP = str(Path(__file__).resolve().parents[1] / "streamlit_app.py")


def many_facts(memory, n: int = 40) -> None:
    for i in range(n):
        memory.facts.add(f"User fact number {i} with some extra words to count", "knowledge", round(0.5 + i / 100, 2))


def test_context_preview_presets_set_the_budget_and_dropped_facts_are_struck_through(app_env):  # noqa: F811
    memory = get_memory()
    many_facts(memory)
    at = page("context_preview")
    at.get("button_group")[0].set_value(100).run()
    assert not at.exception
    assert at.slider(key="cp_budget").value == 100 and at.number_input(key="cp_budget_n").value == 100
    used, budget = at.metric[0].value.split(" / ")
    assert budget == "100" and int(used) <= 100
    dropped = int(at.metric[2].value)
    assert dropped > 0 and at.metric[3].value == "no"  # facts dropped is not "cut mid-text"
    listing = next(m.value for m in at.markdown if "tok`" in m.value)
    assert listing.count("~~") == 2 * dropped and "*(dropped)*" in listing
    at.number_input(key="cp_budget_n").set_value(8000).run()
    assert at.slider(key="cp_budget").value == 8000 and at.metric[2].value == "0"
    assert "~~" not in next(m.value for m in at.markdown if "tok`" in m.value)


def test_context_preview_escapes_memory_text_in_the_struck_through_list(app_env):  # noqa: F811
    memory = get_memory()
    memory.facts.add("User's site is [click](https://evil.example) ~~gone~~", "context", 0.9)
    at = page("context_preview")
    listing = next(m.value for m in at.markdown if "tok`" in m.value)
    assert "](https" not in listing and "\\~\\~gone\\~\\~" in listing
