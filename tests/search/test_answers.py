"""Searches and injections kept while their scope is unchanged (search/answers.py): an answer asked for again is
served from what was kept, and every write to what it was made from (whichever process wrote it, whatever kind of
write it was) has it made again, equal to one made afresh."""

from __future__ import annotations

import time

import pytest

from tests.conftest import make_memory

QUERIES = ("where does the user live", "what does the user drink")


def _answers(view):
    return [view.search(q, k=5) for q in QUERIES] + [view.format_for_injection(max_tokens=300, query=q) for q in QUERIES] \
        + [view.format_for_injection(max_tokens=300)]


def _fresh(memory, view):
    """The answers made now, with nothing kept (the cache's bound set to nothing for the call)."""
    answers = memory.index.answers
    bound, answers.cache.max_bytes = answers.cache.max_bytes, 0
    answers.forget()
    try:
        return _answers(view)
    finally:
        answers.cache.max_bytes = bound


def _kept(memory, view):
    """Asked until served from what was kept: the first searches after a write embed what it added (a write too),
    then a version is seen, then an answer asked for twice is kept."""
    for _ in range(5):
        made = memory.index.answers.made
        got = _answers(view)
        if memory.index.answers.made == made:
            return got
    raise AssertionError("an unchanged scope's answers were made again and again")


@pytest.fixture
def settled(monkeypatch):
    """Versions trusted at once (in one process nothing lags; the cross-process test keeps the real wait)."""
    def settle(memory):
        memory.index.answers.settled_seconds = 0
        return memory
    return settle


def test_an_answer_asked_again_is_kept_and_a_write_of_any_kind_has_it_made_again(tmp_path, database_url, settled):
    with make_memory(tmp_path, database_url) as m:
        settled(m)
        view = m.scoped(user_id="ana", agent_name="bot")
        view.facts.add("User lives in Porto", "context", 0.9)
        tea = view.facts.add("User drinks green tea every morning", "preference", 0.8)
        other = m.scoped(user_id="ben", agent_name="bot")
        other.facts.add("User lives in Oslo", "context", 0.9)
        writes = [
            ("add", lambda: view.facts.add("User lives near the river Douro", "context", 0.7)),
            ("supersede", lambda: view.facts.supersede(tea.id, "User drinks black coffee now")),
            ("conversation", lambda: view.update([{"role": "user", "content": "We moved to Lisbon last week."}],
                                                 thread_id="t1")),
            ("daily log", lambda: view.daily.append("Ana said she drinks mate on Sundays", title="note")),
            ("MEMORY.md", lambda: view.write_core("- User lives in Lisbon since May\n", reason="test")),
            ("summaries", lambda: view.set_summaries({"workContext": "Ana drinks rooibos at work"})),
            ("delete", lambda: view.facts.delete(view.facts.list()[0].id)),
            ("erase", lambda: view.facts.erase(view.facts.list()[0].id)),
        ]
        for name, write in writes:
            before = _kept(m, view)
            theirs = _kept(m, other)
            write()
            made = m.index.answers.made
            after = _answers(view)
            assert m.index.answers.made > made, f"{name}: the answers were served as kept"
            assert after == _fresh(m, view), name
            assert after != before, f"{name} changed nothing the test reads"
            assert _kept(m, other) == theirs  # another scope's kept answers stay


def test_a_write_by_another_process_is_seen_at_once(tmp_path, database_url):
    """Two Memory objects on one database stand for two processes: what one writes, the other's kept answers
    give way to at its next call (its answers wait the real settling time before they are kept)."""
    with make_memory(tmp_path, database_url) as a, make_memory(tmp_path, database_url) as b:
        view_a, view_b = a.scoped(user_id="ana", agent_name="bot"), b.scoped(user_id="ana", agent_name="bot")
        old = view_a.facts.add("User lives in Porto", "context", 0.9)
        view_a.facts.add("User drinks green tea every morning", "preference", 0.8)
        a.index.answers.settled_seconds = 0.2
        _answers(view_a)
        time.sleep(0.3)
        _kept(a, view_a)
        assert "Porto" in view_a.format_for_injection(max_tokens=300, query="where does the user live")
        view_b.facts.supersede(old.id, "User lives in Lisbon")
        text = view_a.format_for_injection(max_tokens=300, query="where does the user live")
        assert "Lisbon" in text and "Porto" not in text
        assert any("Lisbon" in h.text for h in view_a.search("where does the user live", k=5))
        b.purge_scope(user_id="ana", agent_name="bot")
        assert "Lisbon" not in view_a.format_for_injection(max_tokens=300, query="where does the user live")
        assert view_a.search("where does the user live", k=5) == []


def test_a_version_is_never_given_twice_even_after_a_purge(tmp_path, database_url):
    with make_memory(tmp_path, database_url) as m:
        view = m.scoped(user_id="ana", agent_name="bot")
        seen = set()
        for i in range(3):
            view.facts.add(f"User likes topic {i}", "preference", 0.9)
            seen.add(m.index.store.scope_version(view.scope))
            m.purge_scope(user_id="ana", agent_name="bot")
            assert m.index.store.scope_version(view.scope) is None
        view.facts.add("User likes topic 0", "preference", 0.9)
        assert m.index.store.scope_version(view.scope) not in seen and len(seen) == 3


def test_what_is_given_out_is_a_copy_and_kept_answers_are_bounded(tmp_path, settled):
    with make_memory(tmp_path) as m:
        settled(m)
        view = m.scoped(user_id="ana", agent_name="bot")
        view.facts.add("User lives in Porto", "context", 0.9)
        for _ in range(2):
            view.injection_report(max_tokens=300, query="where").kept_fact_ids.clear()
            view.search("where", k=3).clear()
        assert view.injection_report(max_tokens=300, query="where").kept_fact_ids
        assert view.search("where", k=3)
        answers = m.index.answers
        answers.cache.max_bytes = 20_000
        for i in range(300):  # many questions, each asked twice: the oldest kept go first
            view.search(f"where {i}", k=3), view.search(f"where {i}", k=3)
        assert 0 < answers.cache.bytes <= 20_000
