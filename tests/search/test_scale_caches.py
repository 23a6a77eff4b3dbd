"""Search as memory grows (issue 35): per-scope caches bounded in bytes, patched not reloaded, markers not sweeps,
embedding in the background with keyword search meanwhile."""

from __future__ import annotations

import threading

import pytest

from memory_core.search import embedding_upkeep
from memory_core.search.cache import BytesLRU
from memory_core.search.embedders import HashingEmbedder, WordLlamaEmbedder
from memory_core.scope import make_scope
from tests.conftest import make_memory


class GatedEmbedder(HashingEmbedder):
    """HashingEmbedder that, once closed, waits for `gate` before each call (to hold background embedding)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.gate.set()

    def embed(self, texts):
        self.gate.wait(30)
        return super().embed(texts)


def reads_of_vectors(memory) -> list:
    """Count the index's full reads of a scope's vectors (a hook on the store, which does the SQL)."""
    calls = []
    store = memory.index.store
    original = store.vectors

    def counted(scope, model):
        calls.append(scope)
        return original(scope, model)

    store.vectors = counted
    return calls


def test_bytes_lru_evicts_least_recently_used_within_its_bound():
    cache = BytesLRU(100)
    cache.put("a", 1, 40)
    cache.put("b", 2, 40)
    assert cache.get("a") == 1  # a is now the most recently used
    cache.put("c", 3, 40)
    assert cache.get("b") is None and cache.get("a") == 1 and cache.get("c") == 3
    assert cache.bytes == 80 and len(cache) == 2
    cache.put("huge", 4, 101)  # larger than the whole bound: not kept, nothing else lost
    assert cache.get("huge") is None and len(cache) == 2
    cache.drop(lambda key: key == "a")
    assert cache.keys() == ["c"] and cache.bytes == 40
    with pytest.raises(ValueError):
        BytesLRU(-1)


def test_caches_stay_within_their_bytes_setting_over_many_scopes(tmp_path):
    m = make_memory(tmp_path, search_cache_mb=0.01)  # 10,485 bytes: a few scopes' matrices
    try:
        for i in range(40):
            m.facts.add(f"User {i} likes sailing near Lisbon", "preference", 0.9, user_id=f"u{i}")
            assert m.search("sailing", user_id=f"u{i}")[0].text == f"User {i} likes sailing near Lisbon"
            assert m.index.cache.bytes <= m.index.cache.max_bytes
        kept = {key[1] for key in m.index.cache.keys()}
        assert 0 < len(kept) < 40 and make_scope("u39", "default") in kept and make_scope("u0", "default") not in kept
        assert m.search("sailing", user_id="u0")[0].text == "User 0 likes sailing near Lisbon"  # evicted: read again
    finally:
        m.close()
    with pytest.raises(ValueError):
        make_memory(tmp_path / "bad", search_cache_mb=-1)


def test_a_write_in_another_scope_leaves_this_scopes_vectors_in_memory(tmp_path, database_url):
    m = make_memory(tmp_path, database_url)
    try:
        m.facts.add("User likes sailing near Lisbon", "preference", 0.9, user_id="ana")
        m.search("sailing", user_id="ana")
        reads = reads_of_vectors(m)
        for i in range(3):
            m.facts.add(f"Bob plays chess on Sundays {i}", "preference", 0.9, user_id="bob")
            assert m.search("sailing", user_id="ana")[0].text == "User likes sailing near Lisbon"
        assert reads == []
    finally:
        m.close()


def test_search_right_after_an_add_finds_it_by_vector_with_no_reload(tmp_path, database_url, monkeypatch):
    monkeypatch.setattr(embedding_upkeep, "FULL_CHECK_ON_REQUEST", 3)  # this scope counts as large
    m = make_memory(tmp_path, database_url)
    try:
        for i in range(6):
            m.facts.add(f"Stored fact number {i} about gardening", "knowledge", 0.8)
        m.search("gardening")
        m.index.upkeep.wait()  # the first check of a large scope runs in the background
        m.search("gardening")
        reads = reads_of_vectors(m)
        fact = m.facts.add("User adopted a cat named Whiskers", "knowledge", 0.8)
        hits = m.search("adopted a cat named Whiskers", mode="vector")
        assert hits[0].ref == fact.id
        assert reads == []  # appended to the matrix in memory
    finally:
        m.close()


def test_unembedded_items_are_found_by_keyword_while_embedding_runs_in_the_background(tmp_path, monkeypatch):
    monkeypatch.setattr(embedding_upkeep, "FULL_CHECK_ON_REQUEST", 3)
    monkeypatch.setattr(embedding_upkeep, "INLINE_ITEMS", 2)
    embedder = GatedEmbedder()
    m = make_memory(tmp_path, embedder=embedder)
    try:
        for i in range(8):
            m.facts.add(f"Stored fact number {i} about gardening", "knowledge", 0.8)
        fact = m.facts.add("User adopted a cat named Whiskers", "knowledge", 0.8)
        embedder.gate.clear()  # background embedding waits: nothing of this scope has a vector yet
        hits = m.search("Whiskers")
        assert hits[0].ref == fact.id  # by keyword, within the request
        assert m.search("Whiskers", mode="vector") == []
        embedder.gate.set()
        m.index.upkeep.wait()
        assert m.search("adopted a cat named Whiskers", mode="vector")[0].ref == fact.id
    finally:
        embedder.gate.set()
        m.close()


def test_an_add_is_embedded_by_the_marker_and_an_edit_by_a_full_check(tmp_path, database_url):
    m = make_memory(tmp_path, database_url)
    try:
        for i in range(5):
            m.facts.add(f"Stored fact number {i} about gardening", "knowledge", 0.8)
        m.search("gardening")
        sweeps = []
        store = m.index.store
        original = store.items
        store.items = lambda scope: sweeps.append(scope) or original(scope)
        fact = m.facts.add("User adopted a cat named Whiskers", "knowledge", 0.8)
        assert m.search("adopted a cat named Whiskers", mode="vector")[0].ref == fact.id
        assert sweeps == []  # only what was added since the marker was read
        m.facts.update(fact.id, content="User adopted a dog named Rex")
        assert m.search("adopted a dog named Rex", mode="vector")[0].ref == fact.id
        assert len(sweeps) == 1  # an edit: every item's text checked
    finally:
        m.close()


def test_a_search_reads_only_the_documents_that_changed_since_it_last_read_them(tmp_path):
    """Each search checks the scope's daily logs and MEMORY.md: a file unchanged since this process read it (the
    same inode, size and time) is not read and hashed again; one another writer appended to or replaced (even
    with a text of the same length) is, and its new text is found."""
    from memory_core.tiers.documents import LocalDocumentStore

    m = make_memory(tmp_path)
    try:
        scope = make_scope("default", "default")
        days = [f"memory/2024-03-0{d}.md" for d in (1, 2, 3)]
        for n, path in enumerate(days):
            m.index.documents.write(scope, path, f"# Log\n- User walked the dog number {n}.\n")
        reads: list[str] = []
        original = m.index.documents.read
        m.index.documents.read = lambda s, path: reads.append(path) or original(s, path)
        assert m.search("walked the dog", k=5)
        assert set(days) <= set(reads)
        reads.clear()
        assert m.search("walked the dog", k=5) and not set(days) & set(reads)  # nothing changed: nothing read
        other = LocalDocumentStore(m.index.documents.workspace)  # another process's writer, on the same files
        other.append(scope, days[0], "- User planted tulips.\n", "")
        assert "tulips" in " ".join(h.text for h in m.search("planted tulips", k=5))
        assert set(reads) & set(days) == {days[0]}
        reads.clear()
        same_length = "# Log\n- User walked the cat number 1.\n"
        other.write(scope, days[1], same_length)  # replaced, with a text as long as the one it replaces
        assert "cat" in " ".join(h.text for h in m.search("walked the cat", k=5))
        assert set(reads) & set(days) == {days[1]}
    finally:
        m.close()


def test_back_to_back_searches_read_the_scopes_bookkeeping_once_a_second(tmp_path, monkeypatch):
    """A scope this process changed nothing of since its last search is not counted, nor its documents' index nor its
    IDF snapshot read again, within RECHECK_SECONDS (an MCP client's searches come milliseconds apart); after that,
    or after a write here, they are. A file another writer changed is seen at once (its stamp), an item another
    process added by the next check."""
    from sqlalchemy import event

    from memory_core.search import index as index_module
    from memory_core.tiers.documents import LocalDocumentStore

    def recheck_after(seconds: float) -> None:
        monkeypatch.setattr(embedding_upkeep, "RECHECK_SECONDS", seconds)
        monkeypatch.setattr(index_module, "MATRIX_CHECK_SECONDS", seconds)

    recheck_after(3600)  # a slow machine: the searches below stay within the window
    m = make_memory(tmp_path, embedder=WordLlamaEmbedder())  # the default, weighted by the scope's IDF snapshot
    try:
        scope = make_scope("default", "default")
        m.facts.add("User keeps bees on the roof", "context", 0.9)
        m.index.documents.write(scope, "memory/2024-03-01.md", "# Log\n- User walked the dog.\n")
        m.search("bees", k=3)
        statements: list[str] = []
        event.listen(m.db.engine, "before_cursor_execute", lambda _c, _cur, sql, *_rest: statements.append(sql))

        def bookkeeping() -> set[str]:
            return {name for name in ("indexed_docs", "token_stats", ") + (SELECT count(*) FROM chunks")
                    if any(name in s for s in statements)}

        m.search("bees", k=3)
        assert bookkeeping() == set()
        recheck_after(0)  # the window has passed
        statements.clear()
        m.search("bees", k=3)
        assert bookkeeping() == {"indexed_docs", "token_stats", ") + (SELECT count(*) FROM chunks"}  # and the item count

        recheck_after(3600)
        m.search("bees", k=3)
        statements.clear()
        LocalDocumentStore(m.index.documents.workspace).append(scope, "memory/2024-03-01.md", "- User planted tulips.\n", "")
        assert "tulips" in " ".join(h.text for h in m.search("planted tulips", k=5))  # changed on disk: read at once
        fact = m.facts.add("User adopted a cat named Whiskers", "knowledge", 0.8)  # a write here: checked at once
        assert m.search("adopted a cat named Whiskers", mode="vector")[0].ref == fact.id

        other = make_memory(tmp_path, embedder=WordLlamaEmbedder())  # another process on the same database
        try:
            added = other.facts.add("User sails a small boat called Nettle", "context", 0.9)
        finally:
            other.close()
        recheck_after(3600)
        assert m.search("bees", k=3)
        assert added.id in {h.ref for h in m.search("sails a small boat called Nettle", k=3)}  # keyword meanwhile
        assert m.search("sails a small boat called Nettle", mode="vector")[0].ref != added.id
        recheck_after(0)
        assert m.search("sails a small boat called Nettle", mode="vector")[0].ref == added.id
    finally:
        m.close()


def test_search_right_after_an_update_finds_its_turns_by_vector_with_no_reload(tmp_path, database_url):
    """An update keeps the conversation as an episode: its turns are appended to the scope's vectors in memory by the
    marker (reading the whole matrix again made a search right after an update 9x a warm one at 20,000 items); an
    episode that goes (retention, erase) drops them."""
    m = make_memory(tmp_path, database_url)
    try:
        view = m.scoped()
        for i in range(6):
            view.facts.add(f"Stored fact number {i} about gardening", "knowledge", 0.8)
        view.search("gardening")
        reads = reads_of_vectors(m)
        view.update([{"role": "user", "content": "Our cat Whiskers hid under the porch all afternoon."}], thread_id="t1")
        hits = view.search("Whiskers hid under the porch", mode="vector", k=3)
        assert any(h.kind == "episode" and "porch" in h.text for h in hits)
        assert reads == []  # appended, not read again
        [turn] = [h for h in hits if h.kind == "episode"]
        episode_id, index = turn.ref.split("/", 1)[1].split("#")
        assert m.parts.episodes.remove(view.scope, [(episode_id, int(index))]) == 1
        assert not [h for h in view.search("Whiskers hid under the porch", mode="vector", k=3) if h.kind == "episode"]
        assert reads  # gone: the matrix is read again
    finally:
        m.close()


def test_a_section_appended_to_a_log_keeps_the_other_chunks_and_their_vectors_with_no_reload(tmp_path, database_url):
    """Re-chunking a log that grew keeps the chunks that are the same (their rows and vectors: re-embedding a whole
    day's log at each append made a search after it 9x a warm one at 20,000 items); the new chunk is embedded by the
    marker and appended to the matrix in memory, which is not read again. A chunk whose text changed is replaced,
    and its old vector leaves the matrix."""
    from sqlalchemy import select

    from memory_core.store.models import ChunkRow

    m = make_memory(tmp_path, database_url)
    try:
        view = m.scoped()
        for n in range(12):  # one section, so one chunk, per append
            view.daily.append(f"- User repotted the fern number {n} and watered the basil on the balcony.")
        view.search("fern")

        def chunks() -> dict[int, str]:
            with m.db.read() as s:
                return dict(s.execute(select(ChunkRow.pk, ChunkRow.text)).all())

        before = chunks()
        reads = reads_of_vectors(m)
        view.daily.append("- User saw a heron land on the neighbour's pond.")
        hits = view.search("heron landing on a pond", mode="vector", k=3)
        assert "heron" in hits[0].text
        after = chunks()
        assert set(before) < set(after) and ["heron" in t for pk, t in after.items() if pk not in before] == [True]
        assert reads == []  # appended, not read again
        assert {o for o in m.index._matrix(view.scope)[1] if o.startswith("c:")} == {f"c:{pk}" for pk in after}

        text = m.read_document(hits[0].source)
        view.write_document(hits[0].source, text.replace("heron", "stork"))  # one chunk's text changes
        assert "stork" in view.search("stork landing on a pond", mode="vector", k=3)[0].text
        changed = chunks()
        assert set(after.values()) - set(changed.values()) == {t for t in after.values() if "heron" in t}
        assert len(changed) == len(after)  # (SQLite may give the new row the key of the one it replaces)
        assert {o for o in m.index._matrix(view.scope)[1] if o.startswith("c:")} == {f"c:{pk}" for pk in changed}
    finally:
        m.close()
