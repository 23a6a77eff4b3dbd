"""Injection and update read only what they use (issue 35): a bounded number of facts, whatever the scope holds,
and the same text as from the whole scope."""

from __future__ import annotations

from memory_core.context import evidence
from memory_core.context.injection import build_injection
from memory_core.store.fact_reads import EXTRACTION_KEYS
from memory_core.views import scoped
from tests.conftest import make_memory


def calls_of(monkeypatch, owner, name: str, what) -> list:
    """Wrap `owner.<name>` so that each call appends `what(*args, **kwargs)` to the list returned, then goes through."""
    seen = []
    original = getattr(owner, name)

    def recording(*args, **kwargs):
        seen.append(what(*args, **kwargs))
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, recording)
    return seen


def fill(m, n: int) -> None:
    for i in range(n):
        m.facts.add(f"User note {i}: likes topic {i * 7 % 97} on day {i % 28}", "knowledge", round(0.5 + (i * 37 % 50) / 100, 2))


def test_injection_reads_what_can_fit_and_gives_the_text_of_the_whole_scope(tmp_path, database_url):
    m = make_memory(tmp_path, database_url, max_facts=1000)
    try:
        fill(m, 150)
        view = m.scoped()
        store = m.parts.store
        for budget in (60, 200):
            whole = build_injection(view.memory_data(), budget)
            before = store.rows_read
            report = view.injection_report(max_tokens=budget)
            assert store.rows_read - before <= budget // 9 + 2
            assert report.text == whole.text and report.kept_fact_ids == whole.kept_fact_ids
            assert report.dropped_count == 150 - len(report.kept_fact_ids)
            assert report.dropped_fact_ids == whole.dropped_fact_ids[:len(report.dropped_fact_ids)]
        query = "topic 5 on day 3"  # ranked as injection ranks at this budget (context.evidence.evidence_depth)
        relevant = [h.ref for h in view.search(query, k=scoped.RELEVANT_FACTS * 2, depth=evidence.evidence_depth(120))
                    if h.kind == "fact"][:scoped.RELEVANT_FACTS]
        assert relevant
        whole = build_injection(view.memory_data(), 120, priority=relevant)
        before = store.rows_read
        report = view.injection_report(max_tokens=120, query=query)
        assert store.rows_read - before <= 120 // 9 + 2 + len(relevant)
        assert report.text == whole.text and report.kept_fact_ids == whole.kept_fact_ids
    finally:
        m.close()


def test_update_of_a_large_scope_gives_extraction_a_bounded_set_that_still_finds_what_to_supersede(
        tmp_path, monkeypatch):
    monkeypatch.setattr(scoped, "EXTRACTION_FACTS", 10)
    m = make_memory(tmp_path, max_facts=1000)
    try:
        old = m.facts.add("User lives in Berlin", "context", 0.55)  # the least confident: not among the top 10
        fill(m, 40)
        seen = calls_of(monkeypatch, m.parts.extractor, "extract",
                        lambda messages, current, **options: [f["id"] for f in current["facts"]])
        result = m.update([{"role": "user", "content": "I live in Lisbon now."}], thread_id="t1")
        assert seen[0] == [old.id]  # what search finds for what was said, not the most confident of the rest
        assert len(result.added) == 1 and "Lisbon" in result.added[0].content
        assert m.facts.get(old.id).superseded_by == result.added[0].id
    finally:
        m.close()


def test_update_of_a_large_scope_gives_extraction_what_keyword_search_finds_in_its_order(
        tmp_path, database_url, monkeypatch):
    monkeypatch.setattr(scoped, "EXTRACTION_FACTS", 10)
    m = make_memory(tmp_path, database_url, max_facts=1000)
    try:
        fill(m, 40)
        seen = calls_of(monkeypatch, m.parts.extractor, "extract", lambda messages, current, **options: current["facts"])
        said = "I like topic 5 on day 3."
        found = m.parts.index.keyword_facts(m.scoped().scope, said, scoped.EXTRACTION_FOUND)
        m.update([{"role": "user", "content": said}], thread_id="t1")
        assert len(found) > 1 and [f["id"] for f in seen[0]] == found
        contents = {f.id: (f.content, f.category) for f in m.facts.list()}
        assert all(tuple(f) == EXTRACTION_KEYS and (f["content"], f["category"]) == contents[f["id"]] for f in seen[0])
        # named ids of another scope or of an invalid fact are left out
        theirs = m.scoped(user_id="other").facts.add("User likes topic 5", "knowledge", 0.9)
        gone = m.facts.add("User likes topic 6", "knowledge", 0.9)
        m.facts.invalidate(gone.id)
        named = [found[1], theirs.id, gone.id, "fact_missing", found[0]]
        assert [f["id"] for f in m.parts.store.extraction_facts(m.scoped().scope, 0, named)] == [found[1], found[0]]
    finally:
        m.close()


def test_update_of_a_small_scope_gives_extraction_every_fact(tmp_path, monkeypatch):
    m = make_memory(tmp_path)
    try:
        fill(m, 12)
        seen = calls_of(monkeypatch, m.parts.extractor, "extract", lambda messages, current, **options: current)
        before = m.memory_data()
        m.update([{"role": "user", "content": "I love sailing."}], thread_id="t1")
        # what memory_data() gives, facts in the same order, with the keys extractors read (not their dates)
        assert seen[0] == {**before, "facts": [{k: f[k] for k in EXTRACTION_KEYS} for f in before["facts"]]}
        assert len(seen[0]["facts"]) == 12
    finally:
        m.close()


def test_update_of_a_large_scope_finds_what_it_repeats_by_its_telling_word(tmp_path, database_url, monkeypatch):
    """"love" is in most of the scope's facts, "chess" in one: the candidates are read by "chess" (SQLite's word
    index; PostgreSQL ranks every word), and the repeat is found, not added again."""
    from memory_core.store import keyword_ranking

    monkeypatch.setattr(scoped, "EXTRACTION_FACTS", 10)
    monkeypatch.setattr(keyword_ranking, "CANDIDATE_TERM_MIN", 20)
    m = make_memory(tmp_path, database_url, max_facts=1000)
    try:
        chess = m.facts.add("User loves chess", "preference", 0.6)
        for i in range(40):
            m.facts.add(f"User loves topic {i * 7 % 97} on day {i % 28}", "preference", 0.7)
        said = "I love chess."
        found = m.parts.index.keyword_facts(m.scoped().scope, said, scoped.EXTRACTION_FOUND)
        assert found[0] == chess.id
        if m.db.dialect == "sqlite":
            assert found == [chess.id]  # the 40 that only share "love" are not read
        before = len(m.facts.list())
        m.update([{"role": "user", "content": said}], thread_id="t1")
        assert len(m.facts.list()) == before and m.facts.get(chess.id).invalid_at is None
    finally:
        m.close()


def test_a_search_of_facts_alone_reads_no_retired_facts(tmp_path, monkeypatch):
    """A valid fact is current: the retired facts are read only to mark a passage (a log line, a turn)."""
    read = calls_of(monkeypatch, scoped, "retired_facts", lambda *args, **kwargs: 1)
    with make_memory(tmp_path) as m:
        m.facts.invalidate(m.facts.add("User lives in Berlin", "context", 0.9).id)
        m.facts.add("User lives in Lisbon", "context", 0.9)
        assert [h.kind for h in m.search("lives", k=5)] == ["fact"] and read == []
        m.scoped().daily.append("The user lives in Berlin.", title="Home")
        hits = m.search("lives Berlin", k=5)
        assert read and any(h.kind == "daily" and h.current == "" for h in hits)


def test_an_update_ties_its_summary_without_reading_every_fact_of_the_scope(tmp_path, database_url):
    """The summary an update writes is tied to the facts its sentences are (provenance): in a scope of more facts
    than an extraction sees (WRITTEN_FROM_ALL), by the sentences' dedup keys, not by keying every valid fact."""
    from memory_core.extraction.updating import WRITTEN_FROM_ALL
    from memory_core.store.provenance_store import ProvenanceStore
    from memory_core.text.truth import sentence_key

    m = make_memory(tmp_path, database_url, max_facts=1000)
    try:
        fill(m, WRITTEN_FROM_ALL + 50)
        store = m.parts.store
        before = store.rows_read
        berlin = m.update([{"role": "user", "content": "I live in Berlin."}], thread_id="t1").added[0]
        assert store.rows_read - before < WRITTEN_FROM_ALL // 2
        assert m.memory_data()["user"]["personalContext"]["summary"] == "User lives in Berlin."
        tied = ProvenanceStore(m.db, m.clock).of(m.scoped().scope)["summary:personalContext"]
        assert set(tied[sentence_key("User lives in Berlin")].fact_ids) == {berlin.id}
    finally:
        m.close()


def test_a_query_injection_gives_search_the_measured_number_of_candidates(tmp_path, monkeypatch):
    """EVIDENCE_DEPTH candidates a side at the default budget (measured on LoCoMo dev: the scores, and so the order,
    depend on it) and above, a smaller budget its share of them (50 at least), where a plain search of the same 80 hits
    takes 400."""
    m = make_memory(tmp_path)
    try:
        fill(m, 30)
        depths = calls_of(monkeypatch, m.parts.index, "search", lambda *args, **kwargs: kwargs.get("depth"))
        view = m.scoped()
        for budget in (2000, 8000, 1000, 500, 10):
            view.injection_report(max_tokens=budget, query="topic 5 on day 3")
        view.search("topic 5 on day 3", k=scoped.RELEVANT_FACTS * 2)
        assert depths == [150, 150, 75, 50, 50, 400] and evidence.EVIDENCE_DEPTH == 150
        assert m.settings.max_injection_tokens == evidence.EVIDENCE_DEPTH_AT
    finally:
        m.close()


def test_listing_the_first_facts_and_finding_a_duplicate_read_only_those(tmp_path, database_url):
    """`facts.list(limit=n)` gives the first n of `list()`'s order, read as n rows (an MCP client's list_facts on a
    scope of 100,000 facts); `duplicate_of` reads the one fact with the statement's dedup key (it listed them all)."""
    import pytest
    from sqlalchemy import event

    m = make_memory(tmp_path, database_url, max_facts=1000)
    try:
        fill(m, 120)
        view = m.scoped()
        assert [f.id for f in view.facts.list(limit=7)] == [f.id for f in view.facts.list()][:7]
        assert [f.id for f in m.facts.list(category="knowledge", limit=3)] == [f.id for f in m.facts.list()][:3]
        for bad in (0, -1, True, 2.5):
            with pytest.raises(ValueError, match="limit"):
                m.facts.list(limit=bad)
        target = view.facts.list()[60]
        statements: list[str] = []
        event.listen(m.db.engine, "before_cursor_execute", lambda _c, _cur, sql, *_rest: statements.append(sql))
        found = view.facts.duplicate_of("  " + target.content.upper() + " ")
        assert found is not None and found.id == target.id
        assert len(statements) <= 3 and any("content_key" in s for s in statements)
        assert view.facts.duplicate_of("User note 999: likes nothing") is None
    finally:
        m.close()
