"""One truth, propagated: a correction or a forget reaches every copy an agent or a person reads as current (the
summaries, MEMORY.md, injection, search), dreams never bring a retired statement back, and search says each
statement once. SQLite and PostgreSQL, offline and with an LLM."""

from __future__ import annotations

import json

import pytest

from memory_core import ScriptedChatModel
from memory_core.text.truth import Retired, distinctive, scrub_markdown, scrub_prose, states

from tests.conftest import make_memory


GLOBEX = [{"role": "user", "content": "I work at Globex as a data engineer."}, {"role": "assistant", "content": "Noted."}]


def visible(m, **scope) -> str:
    """Everything an agent is handed or a person reads as current, as one text."""
    data = m.memory_data(**scope)
    summaries = " ".join(v["summary"] for group in ("user", "history") for v in data[group].values())
    # a passage quoted as it was said (an episode's turn) that states a retired fact is marked, not given as current
    hits = " ".join(h.text for h in m.search("Globex data engineer", **scope) if h.current is None)
    return "\n".join([summaries, m.format_for_injection(**scope), m.read_core(**scope) or "", hits])




@pytest.mark.parametrize("sentence, old, replacement, expected", [
    ("User works at Globex as a data engineer.", "User works at Globex as a data engineer", None, True),
    ("User is Ana, a backend engineer at Acme in Lisbon.", "User works at Acme", "User works at Globex", True),
    ("User works at Globex.", "User works at Acme", "User works at Globex", False),
    ("User likes tea.", "User works at Acme", None, False),
    ("User prefers dark mode.", "User likes dark mode", "User prefers dark mode", False),  # a merge: same statement
])
def test_a_sentence_states_a_fact_by_its_distinctive_words(sentence, old, replacement, expected):
    assert states(sentence, distinctive(old, replacement)) is expected


def test_scrub_keeps_what_a_valid_fact_still_says():
    retired = [Retired("fact_1", "User likes coffee")]
    kept, dropped = scrub_prose("User drinks coffee every morning. User likes coffee.", retired,
                                ["User drinks coffee every morning"])
    assert kept == "User drinks coffee every morning." and dropped == ["User likes coffee."]
    md, gone = scrub_markdown("# Memory\n## Work\n- User works at Acme\n- User likes tea\n",
                              [Retired("fact_2", "User works at Acme", "User works at Globex")], [])
    assert md == "# Memory\n## Work\n- User works at Globex\n- User likes tea\n" and gone == ["User works at Acme"]


def test_invalidate_leaves_summaries_injection_memory_md_and_search(tmp_path, database_url):
    with make_memory(tmp_path, database_url) as m:
        fact = m.update(GLOBEX, thread_id="t1").added[0]
        m.write_core("# Memory\n\n## Work\n- User works at Globex as a data engineer\n- User likes tea\n")
        assert "Globex" in m.format_for_injection()
        with m.acting_as("dashboard:ana@acme.com"):
            m.facts.invalidate(fact.id)
        assert "Globex" not in visible(m)
        assert "User likes tea" in m.read_core()
        newest = m.core_versions()[0]
        assert newest.actor == "dashboard:ana@acme.com" and fact.id in newest.reason
        assert "Globex" in m.core_versions()[1].content  # the old statement stays in history
        assert m.facts.history(fact.id)[0].old["content"] == fact.content


def test_supersede_hands_the_agent_no_contradiction(tmp_path, database_url):
    with make_memory(tmp_path, database_url) as m:
        fact = m.update(GLOBEX, thread_id="t1").added[0]
        m.write_core("- User works at Globex as a data engineer\n")
        m.facts.supersede(fact.id, "User works at Initech")
        injected = m.format_for_injection()
        assert "Globex" not in injected and "Initech" in injected
        assert m.read_core() == "- User works at Initech\n"
        assert "Globex" not in visible(m)


def test_delete_merge_and_edit_follow_too(tmp_path, database_url):
    with make_memory(tmp_path, database_url) as m:
        fact = m.update(GLOBEX, thread_id="t1").added[0]
        m.facts.delete(fact.id)
        assert "Globex" not in visible(m)
        keep = m.facts.add("User prefers dark mode", "preference", 0.9)
        drop = m.facts.add("User likes dark mode", "preference", 0.8)
        m.write_core("- User likes dark mode\n- User prefers dark mode\n")
        m.facts.merge(keep.id, drop.id)
        assert "dark mode" in m.read_core() and "dark mode" in m.format_for_injection()
        tea = m.facts.add("User drinks green tea", "preference", 0.9)
        m.set_summaries({"personalContext": "User drinks green tea. User lives in Porto."})
        m.facts.update(tea.id, content="User drinks black coffee")
        summary = m.memory_data()["user"]["personalContext"]["summary"]
        assert "green tea" not in summary and "black coffee" in summary and "Porto" in summary


def test_an_updates_facts_to_remove_reach_the_summaries_with_a_guarded_llm_rewrite(tmp_path, database_url):
    llm = ScriptedChatModel()
    with make_memory(tmp_path, database_url, llm=llm) as m:
        acme = m.facts.add("User works at Acme", "context", 0.9)
        tea = m.facts.add("User drinks green tea", "preference", 0.9)
        m.set_summaries({"workContext": "User is Ana, a backend engineer at Acme in Lisbon.",
                         "personalContext": "User drinks green tea daily."})

        def rewrite(messages):
            if "Acme in Lisbon" in messages[-1]["content"]:
                return "User is Ana, a backend engineer in Lisbon."  # a good rewrite: kept
            return "User still drinks green tea daily."  # still states the old fact: dropped

        llm.enqueue([json.dumps({"facts": [], "factsToRemove": [acme.id, tea.id]}), rewrite, rewrite])
        result = m.update([{"role": "user", "content": "I left Acme, and no more tea."}], thread_id="t1")
        assert sorted(result.removed) == sorted([acme.id, tea.id])
        user = m.memory_data()["user"]
        assert user["workContext"]["summary"] == "User is Ana, a backend engineer in Lisbon."
        assert user["personalContext"]["summary"] == ""
        assert "Acme" not in m.format_for_injection() and "tea" not in m.format_for_injection()


def test_a_failing_llm_rewrite_drops_the_sentence(tmp_path):
    llm = ScriptedChatModel()
    with make_memory(tmp_path, llm=llm) as m:
        acme = m.facts.add("User works at Acme", "context", 0.9)
        m.set_summaries({"workContext": "User works at Acme. User writes Rust."})
        m.write_core("- User works at Acme\n- User writes Rust\n")
        m.facts.invalidate(acme.id)  # the scripted model has no reply: every rewrite fails
        assert m.memory_data()["user"]["workContext"]["summary"] == "User writes Rust."
        assert m.read_core() == "- User writes Rust\n"




def test_an_offline_dream_after_a_forget_leaves_the_statement_out(tmp_path, database_url, clock):
    with make_memory(tmp_path, database_url, clock=clock) as m:
        m.daily.append("User: I work at Globex as a data engineer.\nUser: I love hiking in the Alps.")
        fact = m.update(GLOBEX, thread_id="t1").added[0]
        m.facts.invalidate(fact.id)
        result = m.deep_dream(1)
        assert result.status == "updated", result.reason
        assert "Globex" not in m.read_core() and "hiking" in m.read_core()


def test_an_llm_dream_that_restates_an_invalid_fact_has_it_left_out_and_listed(tmp_path, clock):
    llm = ScriptedChatModel()
    with make_memory(tmp_path, clock=clock, llm=llm) as m:
        m.daily.append("User: I work at Globex as a data engineer. I love hiking in the Alps.")
        fact = m.facts.add("User works at Globex as a data engineer", "context", 0.9)
        m.facts.invalidate(fact.id)
        llm.enqueue(["[MEMORY]\n- User works at Globex as a data engineer\n- User loves hiking in the Alps\n"
                     "[DREAM]\nConsolidated.\n"])
        result = m.deep_dream(1)
        assert result.status == "updated", result.reason
        assert m.read_core() == "- User loves hiking in the Alps\n"
        assert result.left_out == ["User works at Globex as a data engineer"]
        diary = m.read_document(result.diary_path)
        assert "left out, no longer true: User works at Globex as a data engineer" in diary
        again = m.facts.add("User works at Globex as a data engineer", "context", 0.9)  # said again: may return
        assert again is not None




def test_search_returns_one_hit_per_statement(tmp_path, database_url):
    with make_memory(tmp_path, database_url) as m:
        fact = m.facts.add("User works at Globex as a data engineer", "context", 0.9)
        m.write_core("# Memory\n- User works at Globex as a data engineer\n- User likes hiking\n")
        m.daily.append("User: I work at Globex as a data engineer. My sister works at Globex too.")
        hits = m.search("Globex data engineer", k=10)
        stating = [h for h in hits if states(h.text, distinctive(fact.content))]
        assert [h.ref for h in stating] == [fact.id]
        daily = [h for h in hits if h.kind == "daily"]
        assert daily and daily[0].text == "My sister works at Globex too."


def test_a_favourite_of_no_named_kind_is_corrected_offline(tmp_path):
    with make_memory(tmp_path) as m:
        m.update([{"role": "user", "content": "My favourite is tea."}], thread_id="t1")
        result = m.update([{"role": "user", "content": "Actually my favourite is coffee now."}], thread_id="t2")
        assert result.superseded and "tea" not in m.format_for_injection()
