"""The dashboard as a product, through Streamlit's AppTest: scope switching, the Overview, Context Preview's
budget presets and struck-through dropped facts, Facts' status badges, empty states and Consistency tab, Search's filler.

(AppTest keeps the sidebar's widgets of the first run only and replays their first values, so the sidebar's
new-scope flow is tested in chromium: tests/browser/test_browser_dashboard.py.)"""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from memory_core.dashboard.helpers import _memory
from tests.app.test_app import GRID, app_env, page, plain  # noqa: F401  (app_env is a fixture)

APP = str(Path(__file__).resolve().parents[2] / "streamlit_app.py")


def many_facts(memory, n: int = 40) -> None:
    for i in range(n):
        memory.facts.add(f"User fact number {i} with some extra words to count", "knowledge", round(0.5 + i / 100, 2))


def test_context_preview_presets_set_the_budget_and_dropped_facts_are_struck_through(app_env):  # noqa: F811
    memory = _memory()
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
    memory = _memory()
    memory.facts.add("User's site is [click](https://evil.example) ~~gone~~", "context", 0.9)
    at = page("context_preview")
    listing = next(m.value for m in at.markdown if "tok`" in m.value)
    assert "](https" not in listing and "\\~\\~gone\\~\\~" in listing


def test_facts_page_content_first_superseded_marked_and_empty_state(app_env):  # noqa: F811
    at = page("facts")
    assert any("Memory arrives three ways" in i.value for i in at.info)
    assert {"ingest", "import_export"} <= {el.proto.page for el in at.get("page_link")}
    memory = _memory()
    old = memory.facts.add("User lives in Porto", "context", 0.9)
    new = memory.facts.supersede(old.id, "User lives in Lisbon")
    at = page("facts")
    grid = at.data_editor(key=GRID).value
    assert list(grid.columns)[0] == "content" and grid["status"].tolist() == ["valid"]
    assert not any("Memory arrives" in i.value for i in at.info)
    at.toggle(key="facts_invalid").set_value(True).run()
    past = next(m.value for m in at.markdown if "~~" in m.value)
    assert ":orange-badge[superseded] ~~User lives in Porto~~ → now: User lives in Lisbon" in past.replace("\\", "")
    assert new.id not in past  # ids only in tooltips
    assert at.data_editor(key=GRID).value["content"].tolist() == ["User lives in Lisbon"]


def test_overview_is_the_landing_page_with_counts_changes_and_next_steps(app_env):  # noqa: F811
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception and at.title[0].value == "Overview"
    assert any("no memory yet" in i.value for i in at.info)
    memory = _memory()
    old = memory.facts.add("User lives in Porto", "context", 0.9)
    memory.facts.supersede(old.id, "User lives in Lisbon")
    memory.facts.add("User likes tea", "preference", 0.8)
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    assert at.metric[0].value == "2" and at.metric[1].value == "1 / 0"
    changes = at.dataframe[0].value
    assert "replaced by a newer statement" in " ".join(changes["action"]) and all(changes["by"])  # who made each change
    scopes = at.dataframe[1].value
    assert scopes.loc[scopes["scope"] == "default/default", "superseded"].iloc[0] == 1
    pages = {el.proto.page for el in at.get("page_link")}
    assert {"ingest", "facts", "context_preview", "dream"} <= pages
    assert any("Scope **default/default**" in c.value for c in at.caption)


def test_import_notes_are_in_view_not_folded_away(app_env):  # noqa: F811
    import json

    at = page("import_export")
    body = json.dumps({"version": "1.0", "facts": [{"id": "f1", "content": "User rides a bike", "category": "context"}]})
    at.file_uploader(key="import_file").set_value(("memory.json", body.encode(), "application/json")).run()
    assert not at.exception
    assert any("had no confidence" in i.value for i in at.info)  # a note, shown as it is


def test_search_shows_no_zero_score_filler(app_env):  # noqa: F811
    memory = _memory()
    memory.facts.add("User loves surfing at Carcavelos", "preference", 0.9)
    for i in range(6):
        memory.facts.add(f"User owns {i} unrelated things", "context", 0.5)
    at = page("search")
    at.text_input(key="search_q").input("surfing").run()
    hits = at.dataframe[0].value
    assert not at.exception and len(hits) >= 1 and (hits["score"] > 0).all()
    assert "surfing" in hits["text"].iloc[0]


def test_access_page_explains_single_operator_mode(app_env):  # noqa: F811
    at = page("access")
    assert any("Single-operator mode" in i.value and "once sign-in is configured" in i.value for i in at.info)


def test_daily_chart_has_days_not_hours(app_env):  # noqa: F811
    import json

    _memory().daily.append("- User asked about surfing lessons")
    at = page("daily")
    figure = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert figure["layout"]["xaxis"]["type"] == "category"
    assert all(len(day) == 10 for day in figure["data"][0]["x"])  # YYYY-MM-DD, never a time of day


def test_facts_one_fact_history_and_forget(app_env):  # noqa: F811
    memory = _memory()
    fact = memory.facts.add("User collects stamps", "preference", 0.8)
    at = page("facts")
    assert at.selectbox(key="fact_pick").value == fact.id
    assert any("added by" in m.value for m in at.markdown)  # the history, in words
    at.button(key="fact_ask_forget").click().run()
    assert any("Forget “User collects stamps”" in plain(w.value) for w in at.warning)  # confirmed in place, quoted
    assert memory.facts.get(fact.id).valid
    at.text_input(key="fact_forget_why").input("told us it stopped")
    at.button(key="fact_confirm_go").click().run()
    assert not at.exception and any("Forgotten: “User collects stamps”" in plain(s.value) for s in at.success)
    assert at.selectbox(key="fact_pick").value == fact.id  # the selection stays on its fact
    forgotten = memory.facts.get(fact.id)
    assert not forgotten.valid and forgotten.invalid_reason == "told us it stopped"
    at.toggle(key="facts_invalid").set_value(True).run()
    assert any(":gray-badge[forgotten]" in m.value and "~~User collects stamps~~" in m.value for m in at.markdown)


def test_consistency_tab_lists_what_disagrees(app_env):  # noqa: F811
    memory = _memory()
    memory.facts.add("User lives in Lisbon", "context", 0.9)
    memory.facts.add("User lives in Porto", "context", 0.8)
    at = page("facts")
    frames = [d.value for d in at.dataframe]
    assert any("Lisbon" in " ".join(map(str, df["text"])) for df in frames if "text" in df)
