"""Hybrid search contracts: facts, daily and core hits, CJK, scopes, re-embedding, sync."""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pytest

from memory_core.search.embedders import HashingEmbedder, WordLlamaEmbedder, cosine_top
from memory_core.search.fusion import best, decay, fuse, rrf, weighted
from memory_core.search.embedding_upkeep import drifted, idf
from memory_core.search.index import query_terms
from memory_core.scope import DEFAULT_SCOPE, make_scope
from tests.conftest import make_memory

WHEN = datetime(2026, 11, 22, 14, 30, tzinfo=timezone.utc)


@pytest.fixture
def searchable(tmp_path, database_url, clock):
    clock.set(WHEN)
    m = make_memory(tmp_path, database_url, clock=clock)
    m.facts.add("User loves surfing at Carcavelos", "preference", 0.9, source="D1:3")
    m.facts.add("User works at Northwind as a backend engineer", "context", 0.9)
    m.daily.append("- User asked about a FastAPI routing example\n- Assistant explained dependency injection")
    m.write_core("## Health\n- User is allergic to peanuts\n")
    yield m
    m.close()


def test_fact_daily_and_core_hits_with_provenance(searchable):
    fact = searchable.search("surfing", k=3)[0]
    assert (fact.kind, fact.source) == ("fact", "D1:3") and fact.ref.startswith("fact_")
    daily = [h for h in searchable.search("FastAPI routing", k=5) if h.kind == "daily"][0]
    assert daily.ref == "memory/2026-11-22.md#L3-L5" and "FastAPI" in daily.text
    core = [h for h in searchable.search("peanuts allergy", k=5) if h.kind == "core"][0]
    assert core.ref == "MEMORY.md#L2-L2" and "peanuts" in core.text
    scores = [h.score for h in searchable.search("User", k=10)]
    assert scores == sorted(scores, reverse=True)


def test_keyword_mode_ranks_exact_terms_first(searchable):
    hits = searchable.search("Northwind", k=2, mode="keyword")
    assert hits and "Northwind" in hits[0].text


def test_dream_diaries_never_indexed(searchable):
    searchable.deep_dream(1, force=True)
    assert searchable.read_document(searchable.dream_diaries()[0])
    assert all("dreams/" not in h.ref for h in searchable.search("Dream Guards bullets tokens", k=20))


def test_index_follows_add_update_delete_and_rollback(searchable):
    fact = searchable.facts.add("User collects vinyl records", "preference", 0.8)
    assert searchable.search("vinyl", k=1, mode="keyword")[0].ref == fact.id
    searchable.facts.update(fact.id, content="User collects cassette tapes")
    assert not searchable.search("vinyl", k=5, mode="keyword")
    assert searchable.search("cassette", k=1, mode="keyword")[0].ref == fact.id
    searchable.facts.delete(fact.id)
    assert not searchable.search("cassette", k=5, mode="keyword")
    searchable.write_core("## Health\n- User is allergic to shellfish\n")
    assert not [h for h in searchable.search("peanuts", k=5, mode="keyword") if h.kind == "core"]
    searchable.rollback_core(1)
    assert [h for h in searchable.search("peanuts", k=5, mode="keyword") if h.kind == "core"]


def test_eviction_keeps_index_in_sync(tmp_path):
    with make_memory(tmp_path, max_facts=1) as m:
        m.facts.add("User plays the banjo", "preference", 0.6)
        m.facts.add("User plays the cello", "preference", 0.9)
        assert not m.search("banjo", k=5, mode="keyword")
        assert all("banjo" not in h.text for h in m.search("banjo", k=5, mode="vector"))


def test_cjk_including_two_character_words(tmp_path, database_url):
    with make_memory(tmp_path, database_url) as m:
        m.facts.add("用户喜欢吃寿司和拉面", "preference", 0.9)
        m.facts.add("ユーザーは東京に住んでいる", "context", 0.9)
        m.facts.add("User likes pizza", "preference", 0.9)
        assert "寿司" in m.search("寿司", k=1, mode="keyword")[0].text  # two characters: below a trigram
        assert "東京" in m.search("東京", k=1, mode="keyword")[0].text
        assert "拉面" in m.search("喜欢吃拉面", k=1, mode="keyword")[0].text


def test_scope_isolation(tmp_path, database_url):
    with make_memory(tmp_path, database_url) as m:
        m.facts.add("User secret hobby is falconry", "preference", 0.9, user_id="alice")
        m.daily.append("- falconry lesson", user_id="alice")
        assert m.search("falconry", k=10) == []
        assert len(m.search("falconry", k=10, user_id="alice")) == 2


def test_embedder_swap_triggers_reembedding(tmp_path):
    with make_memory(tmp_path, embedder=HashingEmbedder(32)) as m:
        m.facts.add("User loves surfing", "preference", 0.9)
        assert m.index.ensure_embeddings(DEFAULT_SCOPE) == 1
        assert m.index.ensure_embeddings(DEFAULT_SCOPE) == 0  # nothing changed: nothing embedded
    with make_memory(tmp_path, embedder=HashingEmbedder(48, model_name="other")) as m:
        assert m.index.ensure_embeddings(DEFAULT_SCOPE) == 1  # a new model: embedded again
        assert m.search("surfing", k=1, mode="vector")[0].text == "User loves surfing"


def test_wordllama_offline_embedder_is_semantic():
    e = WordLlamaEmbedder()
    v = e.embed(["I love cats", "My favourite pet is a cat", "The stock market fell"])
    assert v.shape == (3, 256) and abs(float(v[0] @ v[0]) - 1) < 1e-4
    assert float(v[0] @ v[1]) > float(v[0] @ v[2])


def test_wordllama_pools_tokens_with_weights():
    e = WordLlamaEmbedder()
    texts = ["Note from the weekly sync meeting: the team adopted a puppy", "", "cats"]
    plain = e.embed(texts)
    assert plain.shape == (3, 256) and not plain[1].any()  # an empty text is the zero vector, not an error
    ids = e.token_ids(texts)
    weights = np.ones(e.vocab_size, dtype=np.float32)
    assert np.allclose(e.embed(texts, weights=weights), plain, atol=1e-6)  # uniform weights: the plain mean
    weights[ids[0][:-3]] = 0.0  # silence all but the last three tokens ("a puppy")
    assert np.allclose(e.embed(texts[:1], weights=weights)[0], e.embed([e_text(e, ids[0][-3:])])[0], atol=1e-5)


def e_text(embedder, ids):
    """The text of some token ids, decoded by the embedder's own tokenizer."""
    from memory_core.search.embedders import _wordllama

    return _wordllama(embedder.dim)[0].decode(ids)


def test_idf_of_tokens():
    df = np.array([10, 5, 0])
    weights = idf(df, 10)
    assert weights[0] < weights[1] < weights[2] and weights[0] > 0  # in every item: low, never zero
    assert drifted(100, 204) and drifted(100, 48) and not drifted(100, 150) and not drifted(0, 3)


def test_idf_weighting_silences_what_every_item_shares(tmp_path, database_url):
    """Items that all open the same way ("Caroline: ...") must be told apart by what follows."""
    topics = ["adopted a puppy from the shelter", "bought a red sports car", "started learning the violin",
              "moved to a flat near the sea", "ran her first marathon", "planted tomatoes in the garden",
              "broke her wrist skiing", "read a novel about dragons", "sings", "cooks", "paints", "knits"]
    with make_memory(tmp_path, database_url, embedder=WordLlamaEmbedder()) as m:
        for topic in topics:
            m.facts.add(f"Caroline said during our long weekly conversation that she {topic}", "context", 0.9)
        scope = make_scope("default", "default")
        version, weights = m.index.weighting(scope)
        shared = m.embedder.token_ids(["Caroline said during our long weekly conversation"])[0]
        assert version and float(weights[shared].max()) < float(np.median(weights))
        # A plain mean answers "cooks" to the last: in a short item the shared opening is nearly everything.
        for query, want in (("pet dog", "puppy"), ("automobile", "car"), ("Caroline's vegetables", "tomatoes")):
            assert want in m.search(query, k=1, mode="vector")[0].text


def test_idf_snapshot_is_renewed_as_the_scope_grows(tmp_path, database_url):
    from memory_core.store.models import TokenStatsRow

    with make_memory(tmp_path, database_url, embedder=WordLlamaEmbedder()) as m:
        for n in range(3):
            m.facts.add(f"User fact number {n} about gardening", "context", 0.9)
        assert m.index.ensure_embeddings(DEFAULT_SCOPE) == 3
        first, _ = m.index.weighting(DEFAULT_SCOPE)
        assert m.index.ensure_embeddings(DEFAULT_SCOPE, force=True) == 0  # no drift: nothing to redo
        for n in range(3, 12):
            m.facts.add(f"User fact number {n} about cooking", "context", 0.9)
        assert m.index.ensure_embeddings(DEFAULT_SCOPE, force=True) == 12  # the scope quadrupled: all re-pooled
        second, _ = m.index.weighting(DEFAULT_SCOPE)
        assert second != first
        with m.db.read() as s:
            row = s.get(TokenStatsRow, ("default", "default", m.embedder.model_name))
            assert row.items == 12 and row.version == second
        assert "snapshot of 12 items" in m.search_info()
        hit = m.search("User fact number 7 about cooking", k=1, mode="vector")[0]
        assert hit.text == "User fact number 7 about cooking" and hit.score > 0.99  # query pooled like the items
    with make_memory(tmp_path, database_url, embedder=WordLlamaEmbedder()) as m:  # another process: same snapshot
        assert m.index.weighting(DEFAULT_SCOPE)[0] == second
        assert m.index.ensure_embeddings(DEFAULT_SCOPE) == 0


def test_bad_queries(searchable):
    for bad in ("", "   "):
        with pytest.raises(ValueError):
            searchable.search(bad)
    with pytest.raises(ValueError):
        searchable.search("x", k=0)
    assert isinstance(searchable.search("\"'*) OR ( NEAR", k=3), list)  # FTS syntax is quoted away


@pytest.mark.parametrize("query,long_terms,short_terms", [
    ("What is Caroline's favorite book?", ["caroline", "favorite", "book"], []),
    ("寿司", [], ["寿司"]), ("喜欢吃", ["喜欢吃"], []), ("a an the", [], []),
])
def test_query_terms(query, long_terms, short_terms):
    assert query_terms(query) == (long_terms, short_terms)


def test_fusion_and_maths():
    assert list(rrf([["a", "b"], ["b", "c"]]).keys())[:1] in (["a"], ["b"])
    fused = rrf([["a", "b"], ["b", "c"]])
    assert max(fused, key=fused.get) == "b"
    assert weighted([{"a": 1.0, "b": 0.0}], [1.0]) == {"a": 1.0, "b": 0.0}
    assert decay(0, 7) == 1.0 and abs(decay(7, 7) - 0.5) < 1e-9
    idx, scores = cosine_top(np.eye(3, dtype=np.float32), np.array([0, 1, 0], dtype=np.float32), 2)
    assert idx[0] == 1 and scores[0] == 1.0


KW, VEC = [("a", 4.0), ("b", 2.0), ("c", 1.0)], [("c", 0.9), ("d", 0.5)]


@pytest.mark.parametrize("options,expected", [
    ({"mode": "keyword"}, {"a": 4.0, "b": 2.0, "c": 1.0}),
    ({"mode": "vector"}, {"c": 0.9, "d": 0.5}),
    ({}, {"a": 1.0, "b": 1 / 3, "c": 1.0, "d": 0.0}),  # min-max normalised, summed with weights 1 and 1
    ({"vector_weight": 2.0}, {"a": 1.0, "b": 1 / 3, "c": 2.0, "d": 0.0}),
    ({"keyword_weight": 0.0}, {"a": 0.0, "b": 0.0, "c": 1.0, "d": 0.0}),
    ({"fusion": "rrf"}, {"a": 1 / 61, "b": 1 / 62, "c": 1 / 63 + 1 / 61, "d": 1 / 62}),
])
def test_fuse_keyword_and_vector_scores(options, expected):
    fused = fuse(KW, VEC, **options)
    assert fused.keys() == expected.keys() and all(abs(fused[o] - expected[o]) < 1e-9 for o in expected)


def test_best_keeps_the_n_best_in_order():
    assert list(best({"a": 0.1, "b": 0.9, "c": 0.5}, 2).items()) == [("b", 0.9), ("c", 0.5)]
    assert best({}, 3) == {} and best({"a": 1.0}, 0) == {}


def test_optional_e5_embedder_is_semantic_and_asymmetric(tmp_path):
    from memory_core.search.embedders import E5Embedder

    e5 = E5Embedder()
    passages = e5.embed(["The user adopted a golden retriever puppy", "Quarterly tax filing deadline"])
    query = e5.embed_query("what pet does the user have")
    assert passages.shape == (2, 384) and query.shape == (384,)
    assert float(passages[0] @ query) > float(passages[1] @ query)
    with make_memory(tmp_path, embedder=e5) as m:
        m.facts.add("The user adopted a golden retriever puppy", "context", 0.9)
        m.facts.add("Quarterly tax filing deadline is in April", "context", 0.9)
        assert "retriever" in m.search("what pet does the user have", k=1, mode="vector")[0].text


def test_pg_trgm_indexes_where_available(tmp_path, pg_url):
    from sqlalchemy import create_engine, text

    # installed by another schema of the server (another test running beside this one, which may drop it while this
    # one runs): out of reach; looked at before the migration and after it
    elsewhere_sql = text("SELECT 1 FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
                         "WHERE e.extname = 'pg_trgm' AND NOT n.nspname = ANY (current_schemas(true))")
    engine = create_engine(pg_url)
    try:
        with engine.connect() as conn:
            before = conn.execute(elsewhere_sql).first()
    finally:
        engine.dispose()
    with make_memory(tmp_path, pg_url) as m:
        with m.db.read() as s:
            available = s.execute(text("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'")).first()
            elsewhere = before or s.execute(elsewhere_sql).first()
            indexes = {r[0] for r in s.execute(text("SELECT indexname FROM pg_indexes WHERE tablename = 'facts' "
                                                    "AND schemaname = current_schema()"))}
        if available and not elsewhere and "ix_facts_trgm" not in indexes:
            # another worker's schema held the extension while this one migrated (out of reach then) and dropped it
            # since: the step itself is run again, now that nothing else holds it
            from memory_core.store.migrations import m005_pg_trgm

            with m.db.engine.begin() as conn:
                m005_pg_trgm(conn, m.db)
            with m.db.read() as s:
                elsewhere = s.execute(elsewhere_sql).first()
                indexes = {r[0] for r in s.execute(text("SELECT indexname FROM pg_indexes WHERE tablename = 'facts' "
                                                        "AND schemaname = current_schema()"))}
        if not elsewhere:  # out of reach at some moment: either may be right
            assert bool(available) == ("ix_facts_trgm" in indexes)
        m.facts.add("用户喜欢吃寿司", "preference", 0.9)
        assert "寿司" in m.search("寿司", k=1, mode="keyword")[0].text


def test_the_hits_shown_are_ranked_as_the_index_ranks_them(tmp_path):
    """memory.search asks the index for more hits than it shows (to drop those a fact says again): the k it shows
    are the index's own k best, in its order. A deeper candidate pool changes the fused scores, and once cost
    LoCoMo recall@10 0.773 -> 0.755."""
    import random

    words = ("trip camping lake hiking painting pottery dog cat adoption school career counseling guitar music "
             "concert book library friend family sister brother parade support group running race marathon").split()
    rnd = random.Random(7)
    with make_memory(tmp_path, embedder=WordLlamaEmbedder(), max_facts=10_000) as memory:
        for i in range(400):
            memory.facts.add(f"Caroline said {' '.join(rnd.sample(words, 6))} ({i})", "context", 0.9, source=f"D1:{i}")
        for query in ("When did Caroline go camping at the lake?", "What does Caroline think about adoption?",
                      "Which concert did her sister like?", "Did she run the marathon with a friend?"):
            shown = [h.ref for h in memory.search(query, k=10)]
            assert shown == [h.ref for h in memory.index.search(DEFAULT_SCOPE, query, 10)], query
