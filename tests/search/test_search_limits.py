"""Indexing is bounded and a bad item is skipped, not retried forever (issue 11).

Chunks have a bounded size with their line ranges; no embedder call sees more than a bounded amount of
text; WordLlama works in bounded steps; an item whose embedding fails is marked with its attempts and
its text hash, left to keyword search, and never blocks the others; garbage from an OpenAI-compatible
server is an EmbeddingError that never carries the API key.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import math
import random
import re
import tracemalloc

import numpy as np
import pytest
from sqlalchemy import select
from werkzeug import Response

from memory_core import EmbeddingError
from memory_core.scope import DEFAULT_SCOPE
from memory_core.search import embedders as embedders_module
from memory_core.search.embedders import (GROUP_CHARS, PIECE_CHARS, HashingEmbedder, OpenAIEmbedder, WordLlamaEmbedder,
                                          batches, parse_embeddings, piece_groups, split_text)
from memory_core.search.chunking import CHUNK_CHARS, chunk_document, split_chunk
from memory_core.search.embedding_upkeep import EMBED_BATCH_CHARS, EMBED_BATCH_ITEMS, MAX_EMBED_ATTEMPTS
from memory_core.store.models import ChunkRow, EmbeddingRow, IndexedDocRow
from tests.conftest import make_memory

KEY = "sk-test-SECRET-abcdef1234567890"
WORDS = ("the user moved to Porto last month and likes surfing at Carcavelos with friends after work while "
         "the assistant explained dependency injection in FastAPI and asked about the deadline").split()


def prose(chars: int, seed: int = 1, line_sentences: int | None = 2, paragraph_lines: int | None = 6) -> str:
    """Deterministic text of `chars` characters: sentences of 12 words, `line_sentences` to a line and
    `paragraph_lines` lines to a paragraph (None: a single line, or a single paragraph)."""
    rnd = random.Random(seed)
    parts, size, words, lines = [], 0, 0, 0
    while size < chars:
        words += 1
        sep = " "
        if words % 12 == 0:
            sep = ". "
            if line_sentences and words % (12 * line_sentences) == 0:
                lines += 1
                sep = ".\n\n" if paragraph_lines and lines % paragraph_lines == 0 else ".\n"
        parts.append(rnd.choice(WORDS) + sep)
        size += len(parts[-1])
    return "".join(parts)[:chars]


# -- chunking ------------------------------------------------------------------------------------

def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def assert_pieces_cover(first_line: int, text: str, pieces, limit: int) -> None:
    """Every piece fits, sits on the lines it claims, and together they hold all of `text` in order."""
    lines = text.split("\n")
    assert pieces and all(0 < len(piece) <= limit for _, _, piece in pieces)
    for start, end, piece in pieces:
        assert first_line <= start <= end
        span = "\n".join(lines[start - first_line:end - first_line + 1])
        assert piece in span
        assert piece.split("\n")[0] in lines[start - first_line] and piece.split("\n")[-1] in lines[end - first_line]
    assert "".join(p for _, _, p in pieces).replace(" ", "").replace("\n", "") == \
        text.replace(" ", "").replace("\n", "")
    starts = [s for s, _, _ in pieces]
    assert starts == sorted(starts)


@pytest.mark.parametrize("text,limit,expected", [
    ("short text", 100, [(7, 7, "short text")]),
    ("para one\nstill one\n\npara two", 20, [(7, 8, "para one\nstill one"), (10, 10, "para two")]),
    ("line one\nline two\nline three", 18, [(7, 8, "line one\nline two"), (9, 9, "line three")]),
    ("First one. Second one! Third?", 12, [(7, 7, "First one."), (7, 7, "Second one!"), (7, 7, "Third?")]),
    ("寿司。拉面。", 3, [(7, 7, "寿司。"), (7, 7, "拉面。")]),
    ("aaaa bbbb cccc", 10, [(7, 7, "aaaa bbbb"), (7, 7, "cccc")]),
    ("x" * 10, 4, [(7, 7, "xxxx"), (7, 7, "xxxx"), (7, 7, "xx")]),  # no boundary at all: cut hard
])
def test_split_chunk_cuts_at_the_coarsest_boundary(text, limit, expected):
    assert split_chunk(7, text, limit) == expected


@pytest.mark.parametrize("text", [
    prose(20_000), prose(20_000, paragraph_lines=None), prose(20_000, line_sentences=None),
    "word " * 4_000, "z" * 9_999, "## Trimmed Context (10:00)\n" + prose(5_000).replace("\n", "\n\n\n  \n"),
])
def test_split_chunk_bounds_every_piece_and_keeps_everything(text):
    assert_pieces_cover(3, text, split_chunk(3, text), CHUNK_CHARS)


def test_long_daily_block_and_core_bullet_become_several_chunks_with_line_ranges():
    body = prose(12_000)
    daily = "# Daily Memory: 2026-11-22\n\n## Short (09:00)\n- hello\n\n## Trimmed Context (10:00)\n" + body + "\n\n"
    chunks = chunk_document("memory/2026-11-22.md", daily)
    assert chunks[0] == (3, 4, "## Short (09:00)\n- hello")
    assert len(chunks) > 7 and all(len(c) <= CHUNK_CHARS for _, _, c in chunks)
    assert_pieces_cover(6, "## Trimmed Context (10:00)\n" + body.strip(), chunks[1:], CHUNK_CHARS)
    lines = daily.split("\n")
    assert chunks[-1][1] == max(n for n, line in enumerate(lines, 1) if line.strip())

    bullet = prose(5_000, line_sentences=None)
    core = "# Memory\n\n## " + "Health " * 100 + "\n- " + bullet + "\n- short\n"
    pieces = chunk_document("MEMORY.md", core)
    assert len(pieces) >= 4 and all(len(c) <= CHUNK_CHARS for _, _, c in pieces)
    assert all((s, e) == (4, 4) and c.startswith("Health Health") for s, e, c in pieces[:-1])
    assert pieces[-1][0] == 5 and pieces[-1][2].endswith(": short")


def test_a_huge_append_is_searchable_in_bounded_chunks(tmp_path, database_url):
    needle_at = 150_000
    text = prose(200_000, line_sentences=None)  # a single line of 200,000 characters
    text = text[:needle_at] + " zanzibarian " + text[needle_at:]
    with make_memory(tmp_path, database_url) as m:
        m.daily.append("a small block first")
        path = m.daily.append(text[:199_000])
        hits = m.search("zanzibarian", k=3, mode="keyword")
        assert hits and hits[0].ref == f"{path}#L7-L7" and "zanzibarian" in hits[0].text
        with m.db.read() as s:
            sizes = [len(t) for t in s.execute(select(ChunkRow.text)).scalars()]
        assert len(sizes) > 100 and max(sizes) <= CHUNK_CHARS
        assert m.search("zanzibarian surfing", k=3)  # hybrid: every chunk embedded


def test_chunks_from_an_older_version_are_cut_again(tmp_path, database_url):
    """A document indexed before the bound (one huge chunk, its hash without the bound) is re-chunked."""
    with make_memory(tmp_path, database_url) as m:
        path = m.daily.append(prose(30_000))
        m.index.sync_documents(DEFAULT_SCOPE)
        content = m.read_document(path)
        with m.db.write() as s:
            for row in s.execute(select(ChunkRow)).scalars():
                s.delete(row)
            s.add(ChunkRow(user_id="default", agent_name="default", kind="daily", path=path, start_line=3,
                           end_line=900, text=content, day=path[7:17]))
            s.get(IndexedDocRow, ("default", "default", path)).content_hash = sha(content)  # the old hash
        assert m.index.sync_documents(DEFAULT_SCOPE) == 1
        with m.db.read() as s:
            assert max(len(t) for t in s.execute(select(ChunkRow.text)).scalars()) <= CHUNK_CHARS
        assert m.index.sync_documents(DEFAULT_SCOPE) == 0


# -- bounded embedding calls ---------------------------------------------------------------------

@pytest.mark.parametrize("sizes,max_items,max_chars,expected", [
    ([], 3, 10, []),
    ([1, 1, 1, 1], 3, 10, [(0, 3), (3, 4)]),
    ([4, 4, 4], 10, 8, [(0, 2), (2, 3)]),
    ([20, 1, 1], 10, 8, [(0, 1), (1, 3)]),  # a text over the bound goes alone
    ([1, 20], 10, 8, [(0, 1), (1, 2)]),
])
def test_batches_are_bounded_by_count_and_characters(sizes, max_items, max_chars, expected):
    assert list(batches(["x" * n for n in sizes], max_items, max_chars)) == expected


class FlakyEmbedder:
    """Hashed trigrams that record every call, and fail as told: a text holding one of the markers below
    spoils its whole call the way a broken embedder would; `down` fails every call."""

    GARBAGE = ("POISON", "NANVEC", "INFVEC", "SHORTREPLY", "WIDEVEC", "NOTNUMBERS", "FLATREPLY")

    def __init__(self, dim: int = 32, model_name: str = "flaky-32") -> None:
        self.inner = HashingEmbedder(dim, model_name)
        self.model_name, self.dim = model_name, dim
        self.calls: list[list[str]] = []
        self.down = False

    def embed(self, texts: list[str]):
        self.calls.append(list(texts))
        if self.down:
            raise EmbeddingError("connection refused")
        vectors = self.inner.embed(texts)
        joined = "\n".join(texts)
        if "POISON" in joined:
            raise EmbeddingError(f"the server refused an input (key {KEY})")
        if "NANVEC" in joined:
            vectors[-1, 0] = np.nan
        if "INFVEC" in joined:
            vectors[0, 0] = np.inf
        if "SHORTREPLY" in joined:
            return vectors[:-1]
        if "WIDEVEC" in joined:
            return [list(v) + ([0.5] if "WIDEVEC" in t else []) for v, t in zip(vectors, texts)]
        if "NOTNUMBERS" in joined:
            return [["a"] * self.dim for _ in texts]
        if "FLATREPLY" in joined:
            return vectors.reshape(-1)
        return vectors

    def saw(self, marker: str) -> int:
        return sum(marker in t for call in self.calls for t in call)


def marks(m) -> dict[str, tuple[int, str]]:
    """{owner: (failed attempts, text hash)} of the items marked as failing."""
    with m.db.read() as s:
        rows = s.execute(select(EmbeddingRow.owner, EmbeddingRow.dim, EmbeddingRow.text_hash)
                         .where(EmbeddingRow.dim <= 0)).all()
    return {owner: (-dim, digest) for owner, dim, digest in rows}


def vector_count(m) -> int:
    with m.db.read() as s:
        return len(s.execute(select(EmbeddingRow.owner).where(EmbeddingRow.dim > 0)).all())


@pytest.mark.parametrize("marker", FlakyEmbedder.GARBAGE)
def test_a_bad_item_is_marked_and_never_blocks_its_batch(tmp_path, database_url, marker):
    embedder = FlakyEmbedder()
    with make_memory(tmp_path, database_url, embedder=embedder) as m:
        for n in range(40):
            m.facts.add(f"User fact {n} about gardening and tomatoes", "context", 0.9)
        bad = m.facts.add(f"User keeps a {marker} in the shed", "context", 0.9)
        assert m.index.ensure_embeddings(DEFAULT_SCOPE) == 40
        assert marks(m) == {f"f:{bad.id}": (1, sha(bad.content))} and vector_count(m) == 40
        assert len(embedder.calls) <= 3 + 2 * math.ceil(math.log2(41))  # halved, not one by one
        assert m.search(marker, k=1, mode="keyword")[0].ref == bad.id  # keyword search still finds it
        hits = m.search("tomatoes in the shed", k=50)
        assert len(hits) == 41 and bad.id in {h.ref for h in hits}


def test_failures_are_retried_a_few_times_then_skipped_across_restarts(tmp_path, database_url, caplog):
    caplog.set_level(logging.WARNING, logger="memory_core.search.embedding_upkeep")
    embedder = FlakyEmbedder()
    with make_memory(tmp_path, database_url, embedder=embedder) as m:
        good = m.facts.add("User likes oak trees", "preference", 0.9)
        bad = m.facts.add("User likes POISON ivy", "preference", 0.9)
        m.daily.append("- a daily note about the POISON garden")
        m.index.sync_documents(DEFAULT_SCOPE)  # as a search does
        for _ in range(MAX_EMBED_ATTEMPTS + 4):  # the worker's back-fill, every 10 s
            m.index.backfill()
        failing = marks(m)
        assert failing[f"f:{bad.id}"][0] == MAX_EMBED_ATTEMPTS and len(failing) == 2  # the fact and the chunk
        assert embedder.saw("POISON ivy") <= MAX_EMBED_ATTEMPTS * 3  # each attempt: batch, probe, alone
        seen = embedder.saw("POISON")
        m.index.backfill()
        m.search("oak", k=3)
        assert embedder.saw("POISON") == seen  # given up: no more calls
    records = [r for r in caplog.records if r.name == "memory_core.search.embedding_upkeep"]
    assert len(records) == 2 * MAX_EMBED_ATTEMPTS  # one line per failure
    assert all(KEY not in r.getMessage() and "abcdef1234567890" not in r.getMessage() for r in records)
    assert "keeps no vector until its text changes" in records[-1].getMessage()

    restarted = FlakyEmbedder()
    with make_memory(tmp_path, database_url, embedder=restarted) as m:  # another process, after a restart
        m.index.backfill()
        m.search("oak", k=3)
        assert restarted.saw("POISON") == 0 and marks(m) == failing
        m.facts.update(bad.id, content="User likes POISON oak")  # a new text: tried afresh
        m.index.backfill()
        assert marks(m)[f"f:{bad.id}"] == (1, sha("User likes POISON oak"))
        m.facts.update(bad.id, content="User likes ivy")
        m.index.backfill()
        assert f"f:{bad.id}" not in marks(m)
        assert {h.ref for h in m.search("ivy", k=5, mode="vector")} >= {bad.id, good.id}
        doomed = m.facts.add("User said POISON twice", "context", 0.9)
        m.index.backfill()
        assert f"f:{doomed.id}" in marks(m)
        m.facts.delete(doomed.id)
        m.index.backfill()
        assert f"f:{doomed.id}" not in marks(m)  # a gone item's mark goes with it


def test_a_failing_embedder_marks_nothing(tmp_path, database_url):
    embedder = FlakyEmbedder()
    with make_memory(tmp_path, database_url, embedder=embedder) as m:
        for n in range(10):
            m.facts.add(f"User fact {n}", "context", 0.9)
        embedder.down = True
        with pytest.raises(EmbeddingError, match="is failing: connection refused"):
            m.index.backfill()
        assert marks(m) == {} and len(embedder.calls) == 2  # the batch, then the probe; not 10 retries
        assert m.search("fact", k=3, mode="keyword")
        embedder.down = False
        assert m.index.backfill() == 10 and marks(m) == {}


def test_embedder_calls_are_bounded_for_a_huge_document(tmp_path):
    """Structural bounds: the longest text and the largest batch any embedder call ever sees."""
    variants = (prose(199_000), prose(199_000, paragraph_lines=None), prose(199_000, line_sentences=None))
    for n, text in enumerate(variants):  # many blocks' worth of paragraphs; one paragraph; one line
        embedder = FlakyEmbedder()
        with make_memory(tmp_path / str(n), embedder=embedder) as m:
            m.daily.append(text)
            m.facts.add("User likes tea", "preference", 0.9)
            m.index.sync_documents(DEFAULT_SCOPE)
            written = m.index.ensure_embeddings(DEFAULT_SCOPE)
            assert written >= 199_000 // CHUNK_CHARS
            assert max(len(t) for call in embedder.calls for t in call) <= CHUNK_CHARS
            assert max(len(call) for call in embedder.calls) <= EMBED_BATCH_ITEMS
            assert max(sum(map(len, call)) for call in embedder.calls) <= EMBED_BATCH_CHARS
            assert len(embedder.calls) <= 2 * 199_000 // EMBED_BATCH_CHARS + 2


# -- WordLlama in bounded steps ------------------------------------------------------------------

def test_wordllama_tokenises_in_bounded_pieces_and_groups():
    texts = [prose(50_000, line_sentences=None), "", "short", "y" * 7_000] + [prose(300, seed=n) for n in range(200)]
    groups = list(piece_groups(texts))
    assert all(len(p) <= PIECE_CHARS for _, pieces in groups for p in pieces)
    assert all(sum(map(len, pieces)) <= GROUP_CHARS for _, pieces in groups)
    rebuilt = [""] * len(texts)
    for rows, pieces in groups:
        for row, piece in zip(rows, pieces):
            rebuilt[row] += piece
    assert rebuilt == texts
    assert list(split_text("aaa bbb ccc", 5)) == ["aaa ", "bbb ", "ccc"]
    with pytest.raises(ValueError, match="item 1 is int"):
        WordLlamaEmbedder().embed(["ok", 3])


def test_wordllama_long_text_is_the_mean_of_all_its_tokens():
    """Cut into pieces, a long text's vector is still (nearly exactly) the pooled mean of the whole."""
    e = WordLlamaEmbedder()
    text = prose(30_000)
    _, table = embedders_module._wordllama(e.dim)
    whole = embedders_module._wordllama(e.dim)[0].encode(text, add_special_tokens=False).ids
    naive = table[whole].sum(axis=0)
    naive /= np.linalg.norm(naive)
    assert float(e.embed([text])[0] @ naive) > 0.9999
    assert abs(len(e.token_ids([text])[0]) - len(whole)) <= 30_000 // PIECE_CHARS + 1
    short = ["I love cats", "The stock market fell"]
    weights = np.linspace(0.1, 2.0, e.vocab_size, dtype=np.float32)
    for w in (None, weights):  # a short text: one piece, exactly as before
        ids = e.token_ids(short)
        expected = np.stack([(table[i] * (1 if w is None else w[i][:, None])).sum(axis=0) for i in ids])
        expected /= np.linalg.norm(expected, axis=1, keepdims=True)
        assert np.allclose(e.embed(short, weights=w), expected, atol=1e-5)


@pytest.mark.parametrize("text", ["what does the user think of tea?", "", "   ", "日本語のテキスト", "x" * PIECE_CHARS,
                                  "word " * (PIECE_CHARS // 5 + 1)])
def test_wordllama_one_text_alone_is_the_same_vector_as_in_a_batch(text):
    """A query is embedded alone (a shorter path): the same vector as beside other texts, weighted or not."""
    e = WordLlamaEmbedder()
    weights = np.linspace(0.1, 2.0, e.vocab_size, dtype=np.float32)
    for w in (None, weights):
        alone = e.embed([text], weights=w)
        beside = e.embed([text, "some other text"], weights=w)[:1]
        assert alone.shape == (1, e.dim) and alone.dtype == np.float32
        assert np.allclose(alone, beside, atol=1e-6)


def test_wordllama_memory_is_bounded_for_a_huge_text_and_many_texts():
    e = WordLlamaEmbedder()
    e.embed(["load the weights first"])
    for texts in ([prose(200_000, line_sentences=None)], [prose(200, seed=n) for n in range(1_000)]):
        tracemalloc.start()
        try:
            vectors = e.embed(texts, weights=np.ones(e.vocab_size, dtype=np.float32))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert vectors.shape == (len(texts), e.dim) and np.isfinite(vectors).all()
        assert peak < 30 * 2**20, f"{peak / 2**20:.0f} MiB"  # was ~100 MB before the pieces


# -- garbage from an OpenAI-compatible server ----------------------------------------------------

def reply(*vectors, **extra):
    return {"object": "list", "model": "m", "data": [{"object": "embedding", "index": i, "embedding": v}
                                                     for i, v in enumerate(vectors)], **extra}


def openai_embedder(httpserver, **kw):
    return OpenAIEmbedder("m", api_key=KEY, base_url=httpserver.url_for("/v1"), max_retries=0, timeout=5, **kw)


def test_openai_embedder_reads_floats_base64_and_any_order(httpserver):
    b64 = base64.b64encode(np.array([0.0, 2.0], dtype=np.float32).tobytes()).decode()
    body = {"data": [{"index": 1, "embedding": b64}, {"index": 0, "embedding": [3, 4.0]}]}
    httpserver.expect_request("/v1/embeddings", method="POST").respond_with_json(body)
    vectors = openai_embedder(httpserver).embed(["a", "b"])
    assert np.allclose(vectors, [[0.6, 0.8], [0.0, 1.0]])
    sent = json.loads(httpserver.log[0][0].get_data())
    assert sent["encoding_format"] == "float" and sent["input"] == ["a", "b"]
    assert httpserver.log[0][0].headers["Authorization"] == f"Bearer {KEY}"


def test_openai_embedder_requests_are_bounded(httpserver):
    seen = []

    def handler(request):
        texts = json.loads(request.get_data())["input"]
        seen.append(texts)
        return Response(json.dumps(reply(*[[1.0, len(t)] for t in texts])), 200, content_type="application/json")

    httpserver.expect_request("/v1/embeddings").respond_with_handler(handler)
    texts = ["x" * 30] * 7 + ["y" * 100]
    vectors = openai_embedder(httpserver, batch=3, batch_chars=70).embed(texts)
    assert vectors.shape == (8, 2) and [len(b) for b in seen] == [2, 2, 2, 1, 1]


GARBAGE_REPLIES = {
    "no data": ({"object": "list"}, "no `data` list"),
    "data not a list": ({"data": {"0": [1.0]}}, "no `data` list"),
    "an error object": ({"error": {"message": f"quota exceeded for {KEY}"}}, "no `data` list: quota exceeded"),
    "not an object": ([1, 2], "no `data` list"),
    "items without embedding": ({"data": [{"index": 0}, {"index": 1}]}, "vector 0 .* no `embedding` list"),
    "items that are not objects": ({"data": [[1.0], [2.0]]}, "vector 0 .* no `embedding` list"),
    "empty vector": (reply([], []), "no `embedding` list"),
    "strings": (reply(["0.1", "0.2"], [0.1, 0.2]), "holds str, not only numbers"),
    "nulls": (reply([None, 1.0], [0.1, 0.2]), "holds NoneType"),
    "booleans": (reply([True, False], [0.1, 0.2]), "holds bool"),
    "nested lists": (reply([[1.0], [2.0]], [0.1, 0.2]), "holds list"),
    "huge integer": (reply([10**400, 1], [0.1, 0.2]), "too large"),
    "beyond float32": (reply([1e300, 1.0], [0.1, 0.2]), "not finite"),
    "inconsistent dimensions": (reply([0.1, 0.2], [0.1, 0.2, 0.3]), "different dimensions"),
    "fewer vectors": (reply([0.1, 0.2]), "1 vectors for 2 texts"),
    "more vectors": (reply([0.1], [0.2], [0.3]), "3 vectors for 2 texts"),
    "duplicate indices": ({"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}]},
                          "indices are not 0..1"),
    "bad base64": (reply("not base64!", [0.1]), "not base64"),
    "base64 of odd length": (reply(base64.b64encode(b"12345").decode(), [0.1]), "not float32 data"),
}


@pytest.mark.parametrize("name", GARBAGE_REPLIES)
def test_garbage_replies_are_embedding_errors(httpserver, name):
    payload, message = GARBAGE_REPLIES[name]
    httpserver.expect_request("/v1/embeddings").respond_with_json(payload)
    with pytest.raises(EmbeddingError, match=message) as caught:
        openai_embedder(httpserver).embed(["a", "b"])
    assert KEY not in str(caught.value) and "abcdef1234567890" not in str(caught.value)
    with pytest.raises(EmbeddingError):
        parse_embeddings(payload, 2)


@pytest.mark.parametrize("body,status,content_type,message", [
    ('{"data": [{"index": 0, "embedding": [NaN, 1.0]}]}', 200, "application/json", "not finite"),
    ('{"data": [{"index": 0, "embedding": [Infinity, 1.0]}]}', 200, "application/json", "not finite"),
    ('{"data": [{"index": 0, "embed', 200, "application/json", "not JSON"),
    ("<html>Bad Gateway</html>", 200, "text/html", "not JSON"),
    ("", 200, "application/json", "not JSON"),
    (json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}"}}), 401, "application/json",
     "AuthenticationError"),
    (json.dumps({"error": {"message": "input too long"}}), 400, "application/json", "BadRequestError"),
    ("Internal error", 500, "text/plain", "InternalServerError"),
    ("Bad gateway", 502, "text/plain", "InternalServerError"),
])
def test_http_errors_and_broken_bodies_are_embedding_errors(httpserver, body, status, content_type, message):
    httpserver.expect_request("/v1/embeddings").respond_with_response(Response(body, status, content_type=content_type))
    with pytest.raises(EmbeddingError, match=message) as caught:
        openai_embedder(httpserver).embed(["a"])
    assert KEY not in str(caught.value) and "abcdef1234567890" not in str(caught.value)


def test_unreachable_server_is_an_embedding_error():
    embedder = OpenAIEmbedder("m", api_key=KEY, base_url="http://127.0.0.1:9/v1", max_retries=0, timeout=2)
    with pytest.raises(EmbeddingError, match="APIConnectionError") as caught:
        embedder.embed(["a"])
    assert KEY not in str(caught.value)


def test_index_skips_what_a_real_server_cannot_embed(tmp_path, httpserver, caplog):
    """End to end: the real client, a server that answers NaN for one input; the rest is searchable."""
    def handler(request):
        texts = json.loads(request.get_data())["input"]
        vectors = [[math.nan if "POISON" in t else 1.0, float(len(t) % 7), 1.0] for t in texts]
        return Response(json.dumps(reply(*vectors)), 200, content_type="application/json")  # NaN: not JSON proper

    httpserver.expect_request("/v1/embeddings").respond_with_handler(handler)
    caplog.set_level(logging.WARNING, logger="memory_core.search.embedding_upkeep")
    with make_memory(tmp_path, embedder=openai_embedder(httpserver)) as m:
        for n in range(6):
            m.facts.add(f"User fact number {n}", "context", 0.9)
        bad = m.facts.add("User mentioned POISON once", "context", 0.9)
        assert m.index.ensure_embeddings(DEFAULT_SCOPE) == 6
        assert list(marks(m)) == [f"f:{bad.id}"]
        assert m.search("POISON", k=1, mode="keyword")[0].ref == bad.id
        with pytest.raises(EmbeddingError, match="not finite"):  # a query that cannot be embedded: said so
            m.search("POISON", k=1)
        assert len(m.search("fact number", k=10, mode="vector")) == 6
    records = [r.getMessage() for r in caplog.records if r.name == "memory_core.search.embedding_upkeep"]
    attempts = [re.search(r"attempt \d", r).group() for r in records]  # the first search re-ran the check
    assert attempts == [f"attempt {n}" for n in range(1, len(attempts) + 1)] and len(attempts) <= MAX_EMBED_ATTEMPTS
    assert all(KEY not in r for r in records)
