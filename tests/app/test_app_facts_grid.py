"""The Facts grid through AppTest: a save applies exactly the edits made, on their facts, then the editor is
empty; an edit pending while the list changes stays on its fact; an edit of a fact changed meanwhile is refused."""

from __future__ import annotations

import pytest

from memory_core.dashboard.helpers import _memory
from tests.app.test_app import GRID, app_env, page, plain  # noqa: F401  (app_env is a fixture)


def edit(at, position: int, values: dict, generation: int = 0) -> None:
    at.session_state[f"facts_editor:default/default:{generation}"] = {
        "edited_rows": {position: values}, "added_rows": [], "deleted_rows": []}
    at.run()


def test_save_applies_the_edit_to_its_fact_once_and_clears_the_editor(app_env):  # noqa: F811
    memory = _memory()
    berlin = memory.facts.add("User lives in Berlin", "context", 0.95)
    tomas = memory.facts.add("User's manager is Tomas", "context", 0.9)
    at = page("facts")
    position = at.data_editor(key="facts_editor:default/default:0").value["id"].tolist().index(berlin.id)
    edit(at, position, {"content": "User lives in Hamburg"})
    at.button(key="facts_save").click().run()
    assert not at.exception and not at.error
    assert any("“User lives in Berlin” is now “User lives in Hamburg”" in plain(s.value) for s in at.success)
    grid = at.data_editor(key="facts_editor:default/default:1").value  # a fresh editor
    assert sorted(grid["content"]) == ["User lives in Hamburg", "User's manager is Tomas"]
    assert not any(b.key == "facts_save" for b in at.button)  # nothing offered twice
    assert memory.facts.get(tomas.id).valid and memory.facts.get(tomas.id).content == "User's manager is Tomas"


def test_an_edit_pending_while_another_tab_adds_a_fact_is_saved_on_its_fact(app_env):  # noqa: F811
    memory = _memory()
    tea = memory.facts.add("User drinks tea", "preference", 0.8)
    at = page("facts")
    edit(at, 0, {"content": "User drinks green tea"})
    memory.facts.add("User plays the cello", "preference", 0.99)  # would be row 0 now
    at.run()
    assert any("The facts changed since you began editing" in i.value for i in at.info)
    at.button(key="facts_save").click().run()
    assert not at.exception and not at.error
    assert not memory.facts.get(tea.id).valid
    assert sorted(f.content for f in memory.facts.list()) == ["User drinks green tea", "User plays the cello"]


def test_an_edit_of_a_fact_changed_meanwhile_is_refused_with_a_message(app_env):  # noqa: F811
    memory = _memory()
    tea = memory.facts.add("User drinks tea", "preference", 0.8)
    at = page("facts")
    edit(at, 0, {"content": "User drinks green tea"})
    memory.facts.revise(tea.id, confidence=0.6)  # another tab saved first
    at.button(key="facts_save").click().run()
    assert any("was changed elsewhere after you began editing it" in plain(e.value) for e in at.error)
    assert memory.facts.get(tea.id).valid and memory.facts.get(tea.id).content == "User drinks tea"


def test_correct_in_the_panel_follows_the_fact_to_its_new_statement(app_env):  # noqa: F811
    memory = _memory()
    memory.facts.add("User's name is Priya", "context", 0.95)
    city = memory.facts.add("User lives in Madrid", "context", 0.9)
    at = page("facts")
    at.selectbox(key="fact_pick").set_value(city.id).run()
    at.button(key="fact_ask_correct").click().run()
    at.text_area(key="fact_correct_text").input("User lives in Porto")
    at.button(key="fact_confirm_go").click().run()
    assert not at.exception
    assert any("Corrected: “User lives in Madrid” is now “User lives in Porto”" in plain(s.value) for s in at.success)
    new = memory.facts.get(at.selectbox(key="fact_pick").value)
    assert new.content == "User lives in Porto" and not memory.facts.get(city.id).valid
    assert sorted(f.content for f in memory.facts.list()) == ["User lives in Porto", "User's name is Priya"]


def test_a_fact_over_the_limit_is_refused_with_its_length_and_kept_in_the_field(app_env):  # noqa: F811
    at = page("facts")
    long = "User wrote " + "x" * 2_100
    at.text_area(key="add_content").input(long).run()
    assert any("This text is 2,111 characters; a fact holds at most 2,000" in w.value for w in at.warning)
    assert at.button(key="add_go").disabled and at.text_area(key="add_content").value == long
    at.text_area(key="add_content").input("User plays the cello").run()
    at.button(key="add_go").click().run()
    assert any("Added “User plays the cello”" in plain(s.value) for s in at.success)
    assert [f.content for f in _memory().facts.list()] == ["User plays the cello"]


def test_the_consistency_check_runs_with_the_page_on_a_small_scope_and_stops_when_turned_off(app_env):  # noqa: F811
    memory = _memory()
    memory.facts.add("User lives in Berlin", "context", 0.9)
    memory.facts.add("User lives in Hamburg", "context", 0.8)
    at = page("facts")
    assert at.toggle(key="facts_check").value is True  # up to CHECK_AT_ONCE facts: at once
    found = [d.value for d in at.dataframe if "what to do" in d.value.columns]
    assert found and any("Berlin" in text and "Hamburg" in text for text in found[0]["text"])
    at.toggle(key="facts_check").set_value(False).run()
    assert not at.exception and not [d for d in at.dataframe if "what to do" in d.value.columns]


@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_a_big_scope_sends_the_browser_the_first_rows_and_says_how_to_reach_the_others(app_env, monkeypatch):  # noqa: F811
    """Every row of a grid or a table, and every option of a picker, travels to the browser on each render: on a
    big scope the grid holds the first 1,000 facts shown, the pickers 500, Context Preview's dropped table 1,000,
    each saying so; the filter reaches the others."""
    monkeypatch.setenv("MEMORY_CORE_MAX_FACTS", "5000")  # the default keeps 500 a scope
    memory = _memory()
    for i in range(1_050):
        memory.facts.add(f"User keeps a note about topic number {i} and why", "knowledge", round(0.9 - i / 10_000, 4))
    at = page("facts")
    grid = at.data_editor(key=GRID).value
    assert len(grid) == 1_000 and grid["content"].iloc[0] == "User keeps a note about topic number 0 and why"
    assert any("The grid holds the first 1,000 of these 1,050 facts" in c.value for c in at.caption)
    assert len(at.selectbox(key="facts_hist").options) == 501  # the whole scope, and 500 facts
    at.text_input(key="facts_text").input("number 1049 ").run()  # the filter reaches a fact past the first 1,000
    assert at.data_editor(key=GRID).value["content"].tolist() == ["User keeps a note about topic number 1049 and why"]
    assert len(at.selectbox(key="facts_hist").options) == 2

    at = page("context_preview")
    at.slider(key="cp_budget").set_value(100).run()
    dropped = at.dataframe[1].value
    kept = int(at.metric[1].value.split(" / ")[0])
    assert len(dropped) == 1_000 and int(at.metric[2].value) == 1_050 - kept
    assert any("Dropped by the budget: the first 1,000 of " in c.value for c in at.caption)
