"""Keyword search in a scope over KEYWORD_SCOPE_CAP rows (store.keyword_ranking): a term over KEYWORD_TERM_CAP
matches is left out of a query that has rarer ones, the newest matches of the whole query fill what the rare terms
leave, and the scope's own valid rows alone are found; a scope under the cap is ranked by the whole query. The caps
are lowered here so that a few rows stand for a large scope."""

from __future__ import annotations

import pytest

from memory_core.scope import Scope
from memory_core.store import keyword_ranking
from tests.conftest import make_memory

ANA = Scope("ana", "default")


def fill(m) -> tuple[list[str], list[str]]:
    """Ana's 8 facts about coffee (added in order, so the last are the newest), 2 about espresso, one invalid about
    espresso; Bo's 3 about espresso: the ids of Ana's coffee and valid espresso facts."""
    ana, bo = m.scoped(user_id="ana"), m.scoped(user_id="bo")
    coffee = [ana.facts.add(f"User drinks coffee at {hour} o'clock", "behavior", 0.8).id for hour in range(1, 9)]
    espresso = [ana.facts.add(f"User likes espresso from shop {n}", "preference", 0.8).id for n in ("Alto", "Bravo")]
    ana.facts.invalidate(ana.facts.add("User liked espresso from shop Charlie", "preference", 0.8).id)
    for n in ("Delta", "Echo", "Foxtrot"):
        bo.facts.add(f"User likes espresso from shop {n}", "preference", 0.8)
    return coffee, espresso


@pytest.fixture
def filled(tmp_path, database_url):
    """A memory with `fill`'s facts (PostgreSQL: the table analysed, as its counts are estimates from statistics)."""
    m = make_memory(tmp_path, database_url)
    coffee, espresso = fill(m)
    if m.db.dialect == "postgresql":
        with m.db.engine.begin() as conn:
            conn.exec_driver_sql("ANALYZE facts")
    yield m, coffee, espresso
    m.close()


def facts_found(m, query: str, limit: int) -> list[str]:
    return [owner[2:] for owner, _score in m.index.keyword(ANA, query, limit, facts_only=True)]


def test_a_scope_under_the_cap_is_ranked_by_the_whole_query(filled, monkeypatch):
    m, coffee, espresso = filled
    whole = m.index.keyword(ANA, "espresso coffee", 50)
    monkeypatch.setattr(keyword_ranking, "KEYWORD_TERM_CAP", 1)  # would leave both terms out, were the scope large
    assert m.index.keyword(ANA, "espresso coffee", 50) == whole
    assert {o[2:] for o, _ in whole} == set(coffee + espresso)


def test_a_large_scope_ranks_its_rare_terms_and_fills_with_the_newest_matches(filled, monkeypatch):
    m, coffee, espresso = filled
    monkeypatch.setattr(keyword_ranking, "KEYWORD_SCOPE_CAP", 5)
    monkeypatch.setattr(keyword_ranking, "KEYWORD_TERM_CAP", 6)  # espresso: 6 rows of every scope; coffee: 8
    assert sorted(facts_found(m, "espresso coffee", 2)) == sorted(espresso)  # Bo's and the invalid one are not Ana's
    found = set(facts_found(m, "espresso coffee", 5))
    assert set(espresso) <= found and len(found) == 5
    assert found - set(espresso) <= set(coffee[-4:])  # the newest 6 matches of the query fill what espresso leaves


def test_a_large_scope_ranks_the_newest_matches_of_common_terms_alone(filled, monkeypatch):
    m, coffee, espresso = filled
    monkeypatch.setattr(keyword_ranking, "KEYWORD_SCOPE_CAP", 5)
    monkeypatch.setattr(keyword_ranking, "KEYWORD_TERM_CAP", 3)
    found = facts_found(m, "coffee", 10)
    assert sorted(found) == sorted(coffee[-3:])
    assert sorted(facts_found(m, "espresso", 10)) == sorted(espresso)  # common (6 rows), but Ana has 2 valid ones


def test_postgresql_before_its_first_analyse_ranks_every_word(tmp_path, pg_url, monkeypatch):
    m = make_memory(tmp_path, pg_url)
    try:
        coffee, _espresso = fill(m)  # 14 rows: autovacuum analyses a table from 50 changed rows
        monkeypatch.setattr(keyword_ranking, "KEYWORD_SCOPE_CAP", 5)
        monkeypatch.setattr(keyword_ranking, "KEYWORD_TERM_CAP", 3)
        assert sorted(facts_found(m, "coffee", 10)) == sorted(coffee)  # no statistics: no word is known common
    finally:
        m.close()


def test_a_candidate_read_ranks_by_the_telling_terms_when_a_common_one_is_there(tmp_path, monkeypatch):
    """The word index's counts (SQLite): what an update or a retirement reads (`keyword_facts`). Ana's scope holds 10
    valid facts: a term is common above max(CANDIDATE_TERM_MIN, a CANDIDATE_TERM_SHARE of them)."""
    with make_memory(tmp_path) as m:
        coffee, espresso = fill(m)

        def candidates(query: str, least: int, share: float = 0.1) -> set[str]:
            monkeypatch.setattr(keyword_ranking, "CANDIDATE_TERM_MIN", least)
            monkeypatch.setattr(keyword_ranking, "CANDIDATE_TERM_SHARE", share)
            return set(m.index.keyword_facts(ANA, query, 20))

        assert candidates("coffee espresso", 3) == set(espresso)  # coffee: 8 rows of Ana's, espresso: 2
        # search itself still ranks by the whole query
        found = [owner[2:] for owner, _ in m.index.keyword(ANA, "coffee espresso", 20)]
        assert set(coffee) <= set(found) and set(espresso) <= set(found)
        # a rarer term that the scope does not hold leaves the query whole; so does a query of common terms alone
        assert candidates("coffee zebra", 3) == set(coffee)
        assert candidates("coffee drinks", 3) == set(coffee)
        # Bo's espresso facts and Ana's invalid one count for nothing: with the cap at 2, espresso still is telling
        assert candidates("coffee espresso", 2) == set(espresso)
        assert candidates("coffee espresso", 1) == set(coffee) | set(espresso)  # at 1 it is common: the query whole
        # the share of the scope: 90% of 10 facts, so coffee's 8 are not common
        assert candidates("coffee espresso", 3, share=0.9) == set(coffee) | set(espresso)
        # a scope of no more than CANDIDATE_TERM_MIN facts is ranked by the whole query
        assert candidates("coffee espresso", 10) == set(coffee) | set(espresso)


def test_a_table_the_scope_has_no_rows_of_is_not_queried(tmp_path, database_url):
    """A scope of facts alone (an agent's, over MCP) runs no keyword query of chunks, ranked or a substring scan: the
    scope's sizes, read first, say there is nothing to match; once a daily log gives it chunks they are searched and
    found."""
    from sqlalchemy import event

    with make_memory(tmp_path, database_url) as m:
        view = m.scoped(user_id="ana")
        view.facts.add("User keeps bees on the roof", "context", 0.9)
        statements: list[str] = []
        event.listen(m.parts.db.engine, "before_cursor_execute",
                     lambda _c, _cur, statement, *_rest: statements.append(statement))
        found = m.index.keyword(ANA, "bees on the roof")
        assert [o[:2] for o, _ in found] == ["f:"]
        assert not [s for s in statements if "chunks_words" in s or "chunks_fts" in s or "FROM chunks t" in s
                    or ("ts_rank" in s and "chunks" in s)]
        assert [s for s in statements if "facts_words" in s or "facts_fts" in s or ("ts_rank" in s and "facts" in s)]
        view.facts.add("用户在屋顶养蜜蜂", "context", 0.9)
        statements.clear()
        assert [o[:2] for o, _ in m.index.keyword(ANA, "蜜蜂")] == ["f:"]  # a two-character CJK word: a substring scan
        assert [s for s in statements if "LIKE" in s and "FROM facts" in s]
        assert not [s for s in statements if "LIKE" in s and "FROM chunks" in s]
        view.daily.append("- Ana moved the bees to the garden")
        view.search("bees", k=5)  # indexes the log
        statements.clear()
        assert {o[:2] for o, _ in m.index.keyword(ANA, "bees garden")} == {"f:", "c:"}
        assert [s for s in statements if "chunks" in s and ("MATCH" in s or "ts_rank" in s or "@@" in s)]

