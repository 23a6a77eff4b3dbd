"""Neighbouring turns: the turn after (and before) a hit is lent part of its score."""

from __future__ import annotations

import pytest

from memory_core.search.neighbours import nearby_sources, position, spread, with_neighbours
from tests.conftest import make_memory


@pytest.mark.parametrize("source, expected", [
    ("D3:12", ("D3:", 12, 0)),
    ("chat-7#41", ("chat-7#", 41, 0)),
    ("a:b:0", ("a:b:", 0, 0)),
    ("t:007", ("t:", 7, 3)),
    ("session 2:5", ("session 2:", 5, 0)),
    ("thread:42", None),  # the extraction's source names a conversation, not a turn
    ("thread:abc", None),
    (":5", None),
    ("D3:", None),
    ("D3:12x", None),
    ("plain note", None),
    ("", None),
    (None, None),
])
def test_position(source, expected):
    assert position(source) == expected


@pytest.mark.parametrize("source, offsets, expected", [
    ("D3:12", (1, -1), {1: "D3:13", -1: "D3:11"}),
    ("D3:1", (1, -1, 2, -2), {1: "D3:2", -1: "D3:0", 2: "D3:3"}),
    ("D3:0", (-1,), {}),
    ("t:010", (-1, 1), {-1: "t:009", 1: "t:011"}),
    ("t:099", (1,), {1: "t:100"}),
    ("chat#9", (1,), {1: "chat#10"}),
    ("thread:7", (1, -1), {}),
    (None, (1,), {}),
])
def test_nearby_sources(source, offsets, expected):
    assert nearby_sources(source, offsets) == expected


@pytest.mark.parametrize("scores, links, expected", [
    ({}, {}, {}),
    ({"a": 1.0}, {}, {"a": 1.0}),
    # a's reply b gains half a's score, the turn before it (z, not a candidate yet) gains 0.3 of it
    ({"a": 1.0}, {"a": [("z", 0.3), ("b", 0.5)]}, {"a": 1.0, "b": 0.5, "z": 0.3}),
    # lent scores add up; lending reads the given scores, not what was lent
    ({"a": 1.0, "b": 0.4}, {"a": [("b", 0.5)], "b": [("a", 0.3), ("c", 0.5)]}, {"a": 1.12, "b": 0.9, "c": 0.2}),
    # an item never lends to itself; one with no score lends nothing
    ({"a": 1.0, "b": 0.0}, {"a": [("a", 0.5)], "b": [("c", 0.5)]}, {"a": 1.0, "b": 0.0}),
    # several facts with one source are all neighbours
    ({"a": 2.0}, {"a": [("b", 0.25), ("c", 0.25)]}, {"a": 2.0, "b": 0.5, "c": 0.5}),
])
def test_spread(scores, links, expected):
    out = spread(scores, links)
    assert out == pytest.approx(expected)
    assert scores is not out


def test_with_neighbours_looks_up_only_the_best_facts_and_their_nearby_sources():
    sources = {"1": "D1:1", "2": "D1:2", "3": "note", "4": "D2:5"}
    stored = [("1", "D1:1"), ("2", "D1:2"), ("5", "D1:3"), ("6", "D2:4"), ("7", "D2:6"), ("8", "D2:6")]
    asked: list[list[str]] = []

    def sources_of(ids):
        asked.append(list(ids))
        return {i: sources[i] for i in ids if i in sources}

    def facts_with(wanted):
        asked.append(list(wanted))
        return [(i, s) for i, s in stored if s in wanted]

    scores = {"f:1": 1.0, "f:3": 0.8, "c:9": 0.9, "f:4": 0.5, "f:2": 0.1}
    out = with_neighbours(scores, sources_of, facts_with, pool=3, shares={1: 0.5, -1: 0.25})
    assert asked[0] == ["1", "3", "4"]  # the 3 best facts; chunks are not turns
    assert asked[1] == ["D1:0", "D1:2", "D2:4", "D2:6"]
    assert out == pytest.approx({"f:1": 1.0, "f:3": 0.8, "c:9": 0.9, "f:4": 0.5, "f:2": 0.6, "f:6": 0.125,
                                 "f:7": 0.25, "f:8": 0.25})


def test_with_neighbours_asks_nothing_without_positioned_sources():
    calls = []
    scores = {"c:1": 1.0}
    assert with_neighbours(scores, lambda ids: calls.append(ids) or {}, lambda s: calls.append(s) or []) == scores
    assert calls == []
    assert with_neighbours({"f:1": 1.0}, lambda ids: {"1": "thread:9"}, lambda s: calls.append(s) or []) == {"f:1": 1.0}
    assert calls == []


# An invented conversation: the question a user later asks matches Ana's question, the answer is Rui's reply.
TURNS = [
    ("Ana", "Morning! Did you sleep well after the concert?"),
    ("Rui", "Barely, the band played until two and my ears are still ringing."),
    ("Ana", "Ha. So, have you two picked a name for the new puppy yet?"),
    ("Rui", "Yes! We went with Biscuit, after his colour."),
    ("Ana", "Cute. Is the garden fence finished?"),
    ("Rui", "The puppy chewed my running shoes this morning."),
    ("Ana", "Almost time for lunch here, talk later."),
    ("Rui", "My sister wants a name for her bakery too, any ideas?"),
    ("Ana", "Call it Crumb Theory, she will love it."),
    ("Rui", "The vet said the puppy needs another vaccine in May."),
    ("Ana", "Good luck with the gate paint this weekend."),
    ("Rui", "A new puppy is a lot of work, but worth it."),
    ("Ana", "See you at the market on Saturday."),
]


@pytest.mark.parametrize("neighbours, found", [(True, True), (False, False)])
def test_the_reply_to_a_matching_turn_is_found_with_it(tmp_path, database_url, neighbours, found):
    with make_memory(tmp_path, database_url) as m:
        for n, (speaker, text) in enumerate(TURNS, 1):
            m.facts.add(f"{speaker}: {text}", "context", 0.9, source=f"chat-3:{n}")
        m.facts.add("Rui: Yes! We went with Biscuit, after his colour.", "context", 0.9)  # a duplicate: skipped
        hits = m.search("what name did they pick for the new puppy", k=3, neighbours=neighbours)
        assert hits[0].source == "chat-3:3"
        assert any("Biscuit" in h.text for h in hits) is found


def test_a_turn_stored_again_takes_the_place_of_the_invalidated_one(tmp_path):
    with make_memory(tmp_path) as m:
        for n, (speaker, text) in enumerate(TURNS, 1):
            m.facts.add(f"{speaker}: {text}", "context", 0.9, source=f"chat-3:{n}")
        reply = next(f for f in m.facts.list() if f.source == "chat-3:4")
        m.facts.invalidate(reply.id, reason="misheard")
        assert all("Biscuit" not in h.text for h in m.search("what name did they pick for the new puppy", k=3))
        m.facts.add("Rui: Yes! We went with Pretzel, after his colour.", "context", 0.9, source="chat-3:4")
        hits = m.search("what name did they pick for the new puppy", k=3)
        assert any("Pretzel" in h.text for h in hits) and all("Biscuit" not in h.text for h in hits)


def test_the_lookups_of_each_search_are_index_searches(tmp_path):
    from sqlalchemy import text

    with make_memory(tmp_path) as m:
        with m.db.read() as s:
            by_source = s.execute(text("EXPLAIN QUERY PLAN SELECT id, source, content FROM facts WHERE user_id = 'u' "
                                       "AND agent_name = 'a' AND invalid_at IS NULL AND source IN ('D1:2', 'D1:4')")).all()
            vectors = s.execute(text("EXPLAIN QUERY PLAN SELECT count(*) FROM embeddings WHERE user_id = 'u' "
                                     "AND agent_name = 'a' AND model = 'm' AND dim > 0")).all()
        assert "ix_facts_scope_source" in str(by_source)
        assert "COVERING INDEX ix_embeddings_scope_model_dim" in str(vectors)
