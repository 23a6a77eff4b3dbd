"""The Facts page's Erase, with its confirmation, through AppTest on a real SQLite file."""

from __future__ import annotations

from memory_core.dashboard.helpers import get_memory
from tests.app.test_app import app_env, page  # noqa: F401  (the fixture)


def test_erase_needs_the_confirmation_then_erases_everywhere(app_env):  # noqa: F811
    memory = get_memory()
    fact = memory.facts.add("User works at Globex as a data engineer", "context", 0.9)
    memory.write_core("- User works at Globex as a data engineer\n- User likes tea\n")
    at = page("facts")
    at.text_input(key="erase_why").input("asked by the user")
    at.button(key="erase_submit").click().run()
    assert any("Tick the confirmation" in w.value for w in at.warning)
    assert memory.facts.get(fact.id).content == fact.content
    at.checkbox(key="erase_sure").check()
    at.text_input(key="erase_why").input("asked by the user")
    at.button(key="erase_submit").click().run()
    assert not at.exception
    assert any(f"Erased {fact.id}" in s.value for s in at.success)
    assert memory.facts.get(fact.id).content == "[erased]"
    assert "Globex" not in "".join(v.content for v in memory.core_versions())
    assert memory.facts.history(fact.id)[0].reason == "asked by the user"


def test_the_plan_is_shown_and_a_ticked_related_fact_is_erased_too(app_env):  # noqa: F811
    memory = get_memory()
    fact = memory.facts.add("User has a parrot named Zorbulon", "context", 0.9)
    twin = memory.facts.add("User's parrot is named Zorbulon", "context", 0.9)
    memory.daily.append("I have a parrot named Zorbulon. Zorbulon is also a word I made up.")
    at = page("facts")
    at.selectbox(key="erase_target").select(f"{fact.id}: {fact.content}").run()
    shown = next(d.value for d in at.dataframe if "passage" in d.value.columns)
    assert "I have a parrot named Zorbulon." in list(shown["passage"])
    assert "Zorbulon is also a word I made up." not in list(shown["passage"])
    at.checkbox(key=f"erase_also_{twin.id}").check()
    at.checkbox(key="erase_sure").check()
    at.button(key="erase_submit").click().run()
    assert not at.exception
    assert memory.facts.get(fact.id).content == "[erased]" and memory.facts.get(twin.id).content == "[erased]"
    assert "Zorbulon is also a word I made up." in memory.daily.read(memory.daily.today())
