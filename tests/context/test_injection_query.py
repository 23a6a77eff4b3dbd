"""Query-aware injection: with a query, the facts most relevant to it are kept first within the budget, and the
text reads exactly as without one (sections, fact lines, facts listed by confidence)."""

from __future__ import annotations

import re

import anyio
import pytest

from memory_core import build_injection, count_tokens, format_memory_for_injection
from tests.conftest import make_memory
from tests.mcp.test_mcp import local_memory, server_env, stdio_client, structured

LINE = re.compile(r"^- \[(preference|knowledge|context|behavior|goal|correction) \| (\d\.\d\d)\] \S.*$")
TOPICS = ["hiking trails", "sourdough baking", "jazz records", "chess openings", "python packaging", "bird watching",
          "vintage cameras", "marathon training", "board games", "espresso machines", "climbing gyms", "sci-fi novels"]
RELEVANT = "User's sister Marta is allergic to peanuts"
QUERY = "Is Marta allergic to anything?"


def fact_dict(i: int, content: str, confidence: float, category: str = "knowledge") -> dict:
    return {"id": f"fact_{i:08x}", "content": content, "category": category, "confidence": confidence}


def filler(i: int) -> str:
    return f"User once talked about {TOPICS[i % len(TOPICS)]} on occasion number {i}"


def fact_lines(text: str) -> list[str]:
    return text.split("Facts:\n", 1)[1].splitlines() if "Facts:\n" in text else []


def assert_seed_format(text: str) -> None:
    lines = fact_lines(text)
    assert lines and all(LINE.match(line) for line in lines), lines[:3]
    confidences = [float(LINE.match(line).group(2)) for line in lines]
    assert confidences == sorted(confidences, reverse=True)  # listed by confidence, relevance or not


DATA = {"user": {"workContext": {"summary": "Engineer at Acme"}},
        "facts": [fact_dict(i, filler(i), 0.9 - i / 1000) for i in range(300)] + [fact_dict(999, RELEVANT, 0.55, "context")]}


@pytest.mark.parametrize("budget", [0, 12, 40, 60, 120, 300, 2000])
def test_priority_facts_kept_first_within_the_budget(budget):
    priority = ["fact_000003e7", "fact_00000120", "fact_unknown0"]  # the relevant one, a low filler, an unknown id
    report = build_injection(DATA, budget, priority=priority)
    assert report.tokens == count_tokens(report.text) <= budget
    if budget >= 40:
        assert RELEVANT in report.text  # the most relevant first, though the least confident
    if budget >= 60:
        assert RELEVANT in report.text and "occasion number 288" in report.text
        assert_seed_format(report.text)
        assert report.text.startswith("User Context:\n- Work: Engineer at Acme\n\nFacts:\n")
        assert fact_lines(report.text)[-1] == f"- [context | 0.55] {RELEVANT}"  # shown last: least confident
    kept, dropped = set(report.kept_fact_ids), set(report.dropped_fact_ids)
    assert not kept & dropped and len(kept | dropped) == 301
    content = {f["id"]: f["content"] for f in DATA["facts"]}
    assert [line.split("] ", 1)[1] for line in fact_lines(report.text)] == [content[i] for i in report.kept_fact_ids]
    rest = kept - {"fact_000003e7", "fact_00000120"}
    if rest and dropped - {"fact_000003e7", "fact_00000120"}:  # the others still by confidence
        confidence = {f["id"]: f["confidence"] for f in DATA["facts"]}
        assert min(confidence[i] for i in rest) >= max(confidence[i] for i in dropped)


def test_without_priority_the_text_is_unchanged():
    assert format_memory_for_injection(DATA, 300) == format_memory_for_injection(DATA, 300, priority=None)
    assert format_memory_for_injection(DATA, 300) == format_memory_for_injection(DATA, 300, priority=[])
    assert RELEVANT not in format_memory_for_injection(DATA, 300)
    # when everything fits, a priority changes nothing at all
    small = {"facts": DATA["facts"][:5] + DATA["facts"][-1:]}
    assert format_memory_for_injection(small, 2000, priority=["fact_000003e7"]) == format_memory_for_injection(small, 2000)


def test_a_relevant_fact_too_long_is_passed_over_not_the_rest():
    data = {"facts": [fact_dict(1, "User's sister Marta " + "likes long words " * 80, 0.6),
                      fact_dict(2, "Marta is allergic to peanuts", 0.5), fact_dict(3, "User likes tea", 0.9)]}
    text = format_memory_for_injection(data, 60, priority=["fact_00000001", "fact_00000002"])
    assert "Marta is allergic to peanuts" in text and "likes long words" not in text and count_tokens(text) <= 60
    assert fact_lines(text)[0] == "- [knowledge | 0.90] User likes tea"


def fill(memory, **scope) -> None:
    for i in range(300):
        memory.facts.add(filler(i), "knowledge", round(0.9 - i / 1000, 3), **scope)
    memory.facts.add(RELEVANT, "context", 0.55, **scope)


def test_memory_keeps_the_fact_the_query_is_about(tmp_path, database_url):
    with make_memory(tmp_path, database_url) as memory:
        fill(memory, user_id="ana")
        memory.facts.add("User's brother Rui likes peanuts", "context", 0.9, user_id="bob")  # another scope
        plain = memory.format_for_injection(user_id="ana", max_tokens=300)
        assert RELEVANT not in plain and count_tokens(plain) <= 300

        text = memory.format_for_injection(user_id="ana", max_tokens=300, query=QUERY)
        assert RELEVANT in text and count_tokens(text) <= 300 and "Rui" not in text
        assert_seed_format(text)
        assert len(fact_lines(text)) >= len(fact_lines(plain)) - 1  # the budget is still filled
        report = memory.injection_report(user_id="ana", max_tokens=300, query=QUERY)
        assert report.text == text and report.kept_fact_ids[-1] == memory.facts.list(user_id="ana")[-1].id

        assert memory.format_for_injection(user_id="ana", max_tokens=300, query="   ") == plain  # blank: no ranking
        with pytest.raises(ValueError):
            memory.format_for_injection(user_id="ana", query=42)
        view = memory.scoped(user_id="ana", agent_name="default")
        assert view.format_for_injection(max_tokens=300, query=QUERY) == text
        assert view.injection_report(max_tokens=300, query=QUERY).kept_fact_ids == report.kept_fact_ids
        assert memory.scoped(user_id="bob", agent_name="default").format_for_injection(query=QUERY).count("- [") == 1


def test_invalidated_fact_never_comes_back_through_the_query(tmp_path):
    with make_memory(tmp_path) as memory:
        fill(memory)
        relevant = [f for f in memory.facts.list() if f.content == RELEVANT][0]
        memory.facts.invalidate(relevant.id, reason="test")
        assert RELEVANT not in memory.format_for_injection(max_tokens=300, query=QUERY)


@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_mcp_get_memory_context_takes_a_query(tmp_path):
    env = server_env(tmp_path / "home")
    with local_memory(env) as memory:
        fill(memory, user_id="ana", agent_name="mcp")

    async def session() -> tuple[dict, dict]:
        async with stdio_client(env, "--user", "ana", "--agent", "mcp") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert "query" in tools["get_memory_context"].input_schema["properties"]
            plain = structured(await client.call_tool("get_memory_context", {"max_tokens": 300}))
            relevant = structured(await client.call_tool("get_memory_context", {"max_tokens": 300, "query": QUERY}))
            return plain, relevant

    plain, relevant = anyio.run(session)
    assert RELEVANT not in plain["text"] and RELEVANT in relevant["text"]
    assert relevant["tokens"] == count_tokens(relevant["text"]) <= 300
    assert_seed_format(relevant["text"])


def test_a_scope_of_facts_that_all_fit_is_given_them_without_a_search(tmp_path, database_url, monkeypatch):
    """Where a query changes nothing (no episode, daily log or MEMORY.md to give a passage, every fact fits), the text
    is the same and no search runs; a report asked for its relevance still ranks; a daily log or one fact too many
    and the query path runs as before."""
    with make_memory(tmp_path, database_url) as memory:
        view = memory.scoped(user_id="ana", agent_name="default")
        for i in range(8):
            view.facts.add(filler(i), "knowledge", round(0.9 - i / 100, 2))
        view.facts.add(RELEVANT, "context", 0.55)
        plain = view.format_for_injection(max_tokens=2000)
        ranked = view.injection_report(max_tokens=2000, query=QUERY)
        assert ranked.text == plain and ranked.relevant_fact_ids[0] == view.facts.list()[-1].id  # searched

        searches: list[str] = []
        real_search = type(view)._search  # what runs a search for `search` and for an injection's query
        monkeypatch.setattr(type(view), "_search", lambda self, q, *a: searches.append(q) or real_search(self, q, *a))
        text = view.format_for_injection(max_tokens=2000, query=QUERY)
        lean = view.injection_report(max_tokens=2000, query=QUERY, record=True, relevance=False)
        assert text == lean.text == plain and not searches
        assert lean.relevant_fact_ids == [] and lean.dropped_count == 0 and len(lean.kept_fact_ids) == 9
        assert view.injections(limit=1)[0].query == QUERY  # recorded as asked

        # 9 facts cannot all fit in 80 tokens (9 each at least): the query chooses which, and says so
        tight = view.format_for_injection(max_tokens=80, query=QUERY)
        assert RELEVANT in tight and searches == [QUERY] and count_tokens(tight) <= 80
        searches.clear()

        view.daily.append("Marta said she is allergic to peanuts and to cats.", title="Note")
        with_log = view.format_for_injection(max_tokens=2000, query=QUERY)
        assert searches == [QUERY] and "Relevant passages:" in with_log and "cats" in with_log
