"""The Facts page's Erase, confirmed in place on the fact it quotes, through AppTest on a real SQLite file."""

from __future__ import annotations

from memory_core.dashboard.helpers import _memory
from tests.app.test_app import app_env, page, plain  # noqa: F401  (the fixture)


def test_erase_asks_quoting_the_fact_then_erases_that_fact_everywhere(app_env):  # noqa: F811
    memory = _memory()
    first = memory.facts.add("User's name is Priya", "context", 0.95)
    fact = memory.facts.add("User works at Globex as a data engineer", "context", 0.9)
    memory.write_core("- User works at Globex as a data engineer\n- User likes tea\n")
    at = page("facts")
    at.selectbox(key="fact_pick").set_value(fact.id).run()
    at.button(key="fact_ask_erase").click().run()
    assert any("Erase “User works at Globex as a data engineer” everywhere" in plain(w.value) for w in at.warning)
    assert memory.facts.get(fact.id).content == fact.content  # asking changes nothing
    at.text_input(key="fact_erase_why").input("asked by the user")
    at.button(key="fact_confirm_go").click().run()
    assert not at.exception
    assert any("Erased: the fact's text is gone" in plain(s.value) for s in at.success)
    assert memory.facts.get(fact.id).content == "[erased]"
    assert memory.facts.get(first.id).content == first.content  # never another fact
    assert at.selectbox(key="fact_pick").value == fact.id  # the selection did not move
    assert "Globex" not in "".join(v.content for v in memory.core_versions())
    assert memory.facts.history(fact.id)[0].reason == "asked by the user"


def test_the_plan_is_shown_and_a_ticked_related_fact_is_erased_too(app_env):  # noqa: F811
    memory = _memory()
    fact = memory.facts.add("User has a parrot named Zorbulon", "context", 0.9)
    twin = memory.facts.add("User's parrot is named Zorbulon", "context", 0.9)
    memory.daily.append("I have a parrot named Zorbulon. Zorbulon is also a word I made up.")
    at = page("facts")
    at.selectbox(key="fact_pick").set_value(fact.id).run()
    at.button(key="fact_ask_erase").click().run()
    shown = next(d.value for d in at.dataframe if "passage" in d.value.columns)
    assert "I have a parrot named Zorbulon." in list(shown["passage"])
    assert "Zorbulon is also a word I made up." not in list(shown["passage"])
    at.checkbox(key=f"erase_also_{twin.id}").check().run()
    at.button(key="fact_confirm_go").click().run()
    assert not at.exception
    assert memory.facts.get(fact.id).content == "[erased]" and memory.facts.get(twin.id).content == "[erased]"
    assert "Zorbulon is also a word I made up." in memory.daily.read(memory.daily.today())


def test_cancel_leaves_the_fact_and_the_selection(app_env):  # noqa: F811
    memory = _memory()
    memory.facts.add("User's name is Priya", "context", 0.95)
    fact = memory.facts.add("User always runs mypy in CI", "preference", 0.9)
    at = page("facts")
    at.selectbox(key="fact_pick").set_value(fact.id).run()
    at.button(key="fact_ask_erase").click().run()
    at.button(key="fact_confirm_cancel").click().run()
    assert not any("Erase “" in plain(w.value) for w in at.warning)
    assert at.selectbox(key="fact_pick").value == fact.id and memory.facts.get(fact.id).content == fact.content
