"""`MemoryCoreStore`, LangGraph's `BaseStore` over memory_core: the same operations as LangGraph's own
`InMemoryStore` give the same answers; items with "content" are facts the team sees, corrects and injects;
a real LangGraph graph writes and reads memory through it (real SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import GetOp, InvalidNamespaceError, ListNamespacesOp, MatchCondition, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from memory_core.integrations.langgraph import MemoryCoreStore
from tests.conftest import make_memory

ANA = ("ana", "coder")


@pytest.fixture
def store(tmp_path, database_url):
    memory = make_memory(tmp_path, database_url)
    yield MemoryCoreStore(memory)
    memory.close()


def _fill(s) -> None:
    s.put((*ANA, "prefs"), "theme", {"theme": "dark", "size": 12, "tags": ["ui", "eyes"]})
    s.put((*ANA, "prefs"), "font", {"theme": "light", "size": 14, "nested": {"a": 1}})
    s.put((*ANA, "prefs", "old"), "x", {"size": 9})
    s.put(("ana", "writer", "notes"), "n1", {"kind": "note", "size": 1})
    s.put(("bob", "coder"), "root", {"kind": "note"})


def _keys(items) -> list:
    return sorted((tuple(i.namespace), i.key) for i in items)


def test_same_answers_as_langgraphs_own_store(store):
    reference = InMemoryStore()
    for s in (store, reference):
        _fill(s)
        s.put((*ANA, "prefs"), "font", {"theme": "light", "size": 16, "nested": {"a": 1}})  # replace
        s.put(("bob", "coder"), "gone", {"kind": "temp"})
        s.delete(("bob", "coder"), "gone")
        s.delete(("bob", "coder"), "never-was")

    # (before the gets below: InMemoryStore lists a namespace that a get of a missing item touched)
    for kwargs in (dict(), dict(prefix=("ana",)), dict(suffix=("prefs",)), dict(prefix=("ana", "*", "prefs")),
                   dict(max_depth=2), dict(prefix=("ana",), max_depth=3), dict(limit=2, offset=1), dict(suffix=("nope",))):
        assert store.list_namespaces(**kwargs) == reference.list_namespaces(**kwargs), kwargs

    for namespace, key in (((*ANA, "prefs"), "theme"), ((*ANA, "prefs"), "font"), (("bob", "coder"), "gone"),
                           ((*ANA, "prefs"), "nope"), (("zed", "coder"), "theme")):
        mine, theirs = store.get(namespace, key), reference.get(namespace, key)
        assert (mine is None) == (theirs is None), (namespace, key)
        if mine is not None:
            assert (mine.value, mine.key, mine.namespace) == (theirs.value, theirs.key, theirs.namespace)
            assert mine.created_at <= mine.updated_at

    searches = [dict(namespace_prefix=()), dict(namespace_prefix=("ana",)), dict(namespace_prefix=(*ANA, "prefs")),
                dict(namespace_prefix=ANA, filter={"theme": "dark"}), dict(namespace_prefix=ANA, filter={"size": {"$gte": 12}}),
                dict(namespace_prefix=("ana",), filter={"size": {"$lt": 12}, "kind": {"$ne": "x"}}),
                dict(namespace_prefix=(), filter={"nested": {"a": 1}}), dict(namespace_prefix=(), filter={"tags": ["ui", "eyes"]}),
                dict(namespace_prefix=(), filter={"kind": "note"}, limit=1)]
    for kwargs in searches:
        prefix = kwargs["namespace_prefix"]
        rest = {k: v for k, v in kwargs.items() if k != "namespace_prefix"}
        mine, theirs = store.search(prefix, **rest), reference.search(prefix, **rest)
        if "limit" in rest:
            assert len(mine) == len(theirs) == rest["limit"]
        else:
            assert _keys(mine) == _keys(theirs), kwargs
    assert len(store.search((), limit=2, offset=1)) == 2 and len(store.search((), offset=10)) == 0



def test_batch_reads_before_writes_and_async(store):
    ns = (*ANA, "batch")
    results = store.batch([PutOp(ns, "a", {"n": 1}), GetOp(ns, "a"), PutOp(ns, "a", {"n": 2}),
                           SearchOp(ns), ListNamespacesOp(match_conditions=(MatchCondition("prefix", ns),))])
    reference = InMemoryStore().batch([PutOp(ns, "a", {"n": 1}), GetOp(ns, "a"), PutOp(ns, "a", {"n": 2}),
                                       SearchOp(ns), ListNamespacesOp(match_conditions=(MatchCondition("prefix", ns),))])
    assert results == [None, None, None, [], []]
    assert reference[:4] == results[:4]  # (its namespace list holds what the get touched: a quirk of InMemoryStore)
    assert store.get(ns, "a").value == {"n": 2}  # the last write of a key wins

    async def scenario() -> None:
        await store.aput(ns, "b", {"content": "User deploys on Fridays", "category": "behavior"})
        got = await store.aget(ns, "b")
        assert got.value == {"content": "User deploys on Fridays", "category": "behavior"}
        found = await store.asearch(ns, query="when does the user deploy")
        assert [i.key for i in found][0] == "b" and found[0].score is not None
        assert ns in await store.alist_namespaces(prefix=ANA)
        both = await asyncio.gather(store.aget(ns, "a"), store.aget(ns, "b"))
        assert [i.key for i in both] == ["a", "b"]
        await store.adelete(ns, "b")
        assert await store.aget(ns, "b") is None

    asyncio.run(scenario())


def test_content_items_are_facts_the_team_sees_corrects_and_injects(store):
    memory = store.memory
    ns = (*ANA, "memories")
    store.put(ns, "m1", {"content": "User prefers dark mode", "category": "preference", "confidence": 0.9, "why": "said so"})
    store.put(ns, "m2", {"content": "User works at Acme"})  # defaults: context, 0.8
    store.put(ns, "m3", {"content": "User might like cats", "confidence": 0.1})  # below the threshold: a plain item

    facts = {f.content: f for f in memory.facts.list(user_id="ana", agent_name="coder")}
    assert set(facts) == {"User prefers dark mode", "User works at Acme"}
    dark = facts["User prefers dark mode"]
    assert (dark.category, dark.confidence, dark.source) == ("preference", 0.9, "langgraph:memories/m1")
    assert (facts["User works at Acme"].category, facts["User works at Acme"].confidence) == ("context", 0.8)
    assert memory.facts.history(dark.id)[0].actor == "langgraph"
    assert store.get(ns, "m3").value == {"content": "User might like cats", "confidence": 0.1}
    assert "User prefers dark mode" in memory.format_for_injection(user_id="ana", agent_name="coder")
    assert memory.search("dark mode", user_id="ana", agent_name="coder")[0].ref == dark.id

    found = store.search(ANA, query="dark mode")
    assert found[0].key == "m1" and found[0].score > 0 and found[0].value["why"] == "said so"

    # Corrected on the dashboard: the graph reads the correction.
    fixed = memory.facts.supersede(dark.id, "User prefers light mode", reason="corrected by Ana")
    item = store.get(ns, "m1")
    assert item.value == {"content": "User prefers light mode", "category": "preference", "confidence": 0.9,
                          "why": "said so"}
    # Changed by the graph: the fact is replaced, its history kept.
    store.put(ns, "m1", {"content": "User prefers solarized", "category": "preference"})
    assert not memory.facts.get(fixed.id).valid
    assert "User prefers solarized" in {f.content for f in memory.facts.list(user_id="ana", agent_name="coder")}
    store.put(ns, "m1", {"content": "User prefers solarized", "category": "goal", "confidence": 0.7})
    now = next(f for f in memory.facts.list(user_id="ana", agent_name="coder") if f.content == "User prefers solarized")
    assert (now.category, now.confidence) == ("goal", 0.7)

    # Deleted by the graph: invalidated, kept in history. Forgotten on the dashboard: gone for the graph.
    store.delete(ns, "m1")
    assert store.get(ns, "m1") is None and not memory.facts.get(now.id).valid
    acme = facts["User works at Acme"]
    memory.facts.invalidate(acme.id, reason="left Acme")
    assert store.get(ns, "m2") is None and [i.key for i in store.search(ns)] == ["m3"]
    assert ns in store.list_namespaces()  # m3 still lives there

    # A value that stops being a fact invalidates the fact.
    store.put(ns, "m4", {"content": "User owns a bike"})
    store.put(ns, "m4", {"note": "nothing to remember"})
    assert "User owns a bike" not in {f.content for f in memory.facts.list(user_id="ana", agent_name="coder")}


def test_bad_namespaces_and_values_are_refused(store):
    for namespace in (("ana",), ("../x", "coder"), ("ana", "co der"), ("ana", "coder", "a.b")):
        with pytest.raises((InvalidNamespaceError, ValueError)):
            store.put(namespace, "k", {"v": 1})
    with pytest.raises(ValueError, match="JSON"):
        store.put(ANA, "k", {"v": object()})
    with pytest.raises(ValueError, match="content must not be empty"):
        store.put(ANA, "k", {"content": "   "})
    assert store.list_namespaces() == [] and store.memory.facts.list(user_id="ana", agent_name="coder") == []


class State(TypedDict):
    user: str
    said: str
    recalled: Annotated[list[str], operator.add]


def test_a_langgraph_graph_writes_and_reads_memory_through_the_store(store):
    def remember(state: State, runtime: Runtime) -> dict:
        runtime.store.put((state["user"], "assistant", "memories"), "latest", {"content": state["said"],
                                                                            "category": "preference"})
        return {}

    def recall(state: State, runtime: Runtime) -> dict:
        hits = runtime.store.search((state["user"], "assistant"), query="what does the user like to drink")
        return {"recalled": [h.value["content"] for h in hits]}

    builder = StateGraph(State)
    builder.add_node("remember", remember)
    builder.add_node("recall", recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    graph = builder.compile(store=store)

    out = graph.invoke({"user": "ana", "said": "User drinks green tea", "recalled": []})
    assert out["recalled"] == ["User drinks green tea"]
    assert [f.content for f in store.memory.facts.list(user_id="ana", agent_name="assistant")] == ["User drinks green tea"]
    out = asyncio.run(graph.ainvoke({"user": "bob", "said": "User drinks espresso", "recalled": []}))
    assert out["recalled"] == ["User drinks espresso"]  # bob's scope only
    assert "User drinks green tea" in store.memory.format_for_injection(user_id="ana", agent_name="assistant")


def test_purging_a_scope_removes_its_items(store):
    store.put(ANA, "plain", {"v": 1})
    store.put(("ana", "other"), "kept", {"v": 2})
    assert store.memory.purge_scope(user_id="ana", agent_name="coder")["agent_items"] == 1
    assert store.get(ANA, "plain") is None and store.list_namespaces() == [("ana", "other")]


def test_search_of_a_scope_finds_facts_added_any_way(store):
    """Issue 32: `search((user, agent), query=...)` uses memory_core's search over the scope's memory, so a fact
    added with memory.facts.add (or MCP, the dashboard, update()) is found, as an item keyed by its fact id."""
    memory = store.memory
    added = memory.facts.add("User is allergic to peanuts", "context", 0.9, user_id="ana", agent_name="coder")
    memory.facts.add("User is allergic to cats", "context", 0.9, user_id="bob", agent_name="coder")  # another scope
    store.put((*ANA, "memories"), "m1", {"content": "User prefers dark mode"})
    store.put((*ANA, "memories"), "m2", {"content": "User is allergic to peanuts"})  # the same fact: one item

    found = store.search(ANA, query="allergic to peanuts")
    assert [(tuple(i.namespace), i.key) for i in found if "allergic" in i.value["content"]] == \
        [((*ANA, "memories"), "m2")]  # a fact an item holds comes as that item, once
    store.delete((*ANA, "memories"), "m2")  # invalidates the fact m2 was (the one added above)
    assert not memory.facts.get(added.id).valid
    peanuts = memory.facts.add("User is allergic to peanuts", "context", 0.9, user_id="ana", agent_name="coder")

    found = store.search(ANA, query="allergic to peanuts")
    assert found and found[0].key == peanuts.id and tuple(found[0].namespace) == ANA and found[0].score > 0
    assert found[0].value == {"content": "User is allergic to peanuts", "category": "context", "confidence": 0.9}
    assert all("cats" not in i.value.get("content", "") for i in found)  # bob's memory stays bob's
    got = store.get(ANA, peanuts.id)
    assert got is not None and got.value["content"] == "User is allergic to peanuts"
    assert store.search(ANA, query="allergic", filter={"category": "preference"}) == []
    deeper = store.search((*ANA, "memories"), query="allergic")  # a deeper namespace holds only its own items
    assert [i.key for i in deeper] == ["m1"]
    memory.facts.invalidate(peanuts.id, reason="outgrown")
    assert all("peanuts" not in i.value["content"] for i in store.search(ANA, query="allergic to peanuts"))
    assert store.get(ANA, peanuts.id) is None


def test_each_key_is_its_own_item_even_with_the_same_content(store):
    ns = (*ANA, "memories")
    store.put(ns, "a", {"content": "User likes tea"})
    store.put(ns, "b", {"content": "User likes tea"})
    store.delete(ns, "a")
    assert store.get(ns, "a") is None
    assert store.get(ns, "b").value["content"] == "User likes tea"  # deleting one key never touches the other
    store.put(ns, "c", {"content": "User likes tea"})
    store.put(ns, "c", {"content": "User likes coffee"})  # overwriting one key never changes the other
    assert store.get(ns, "b").value["content"] == "User likes tea"
    assert store.get(ns, "c").value["content"] == "User likes coffee"
    store.put(ns, "b", {"kind": "no longer a fact"})
    assert store.get(ns, "c").value["content"] == "User likes coffee"
    contents = {f.content for f in store.memory.facts.list(user_id="ana", agent_name="coder")}
    assert contents == {"User likes coffee"}
