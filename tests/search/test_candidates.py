"""The candidates an update or a retirement reads (`SearchIndex.keyword_facts`): valid facts of the scope that share
words with a text, by the word index; the trigram index only for CJK terms, which the word index does not split."""

from __future__ import annotations

from tests.conftest import make_memory


def test_candidates_share_words_and_stay_in_their_scope(tmp_path, database_url):
    with make_memory(tmp_path, database_url) as m:
        snow = m.facts.add("User enjoys snowboarding in Tyrol", "preference", 0.9)
        sushi = m.facts.add("用户喜欢寿司和拉面", "preference", 0.9)
        other = m.facts.add("User enjoys snowboarding in Tyrol", "preference", 0.9, user_id="bo")
        gone = m.facts.add("User enjoys snowboarding in Utah", "preference", 0.9)
        m.facts.invalidate(gone.id)
        index, scope = m.index, m.scoped().scope
        assert index.keyword_facts(scope, "snowboarding trips") == [snow.id]
        assert index.keyword_facts(m.scoped(user_id="bo").scope, "snowboarding") == [other.id]
        assert index.keyword_facts(scope, "喜欢寿司") == [sushi.id]
        assert index.keyword_facts(scope, "Utah") == []  # invalid: not a candidate
        m.scoped().daily.append("Snowboarding in Tyrol again, snowboarding all day.", title="Trip")
        assert any(h.kind == "daily" for h in m.search("snowboarding Tyrol"))  # the log is indexed
        assert index.keyword_facts(scope, "snowboarding Tyrol", 1) == [snow.id]  # a log takes no candidate's place
        if index.store.keyword_backend == "bm25":  # SQLite: a piece of a word is found by search (its trigrams),
            assert f"f:{snow.id}" in dict(index.keyword(scope, "board"))  # not offered as a candidate
            assert index.keyword_facts(scope, "board") == []
