"""The search index: keyword (SQLite FTS5 trigram, or PostgreSQL full-text) and vectors, fused.

Facts are indexed by triggers in the database itself; daily blocks and MEMORY.md bullets are chunked
into `chunks` (with their line ranges) whenever a document changes. Dream diaries are never indexed.
Embeddings are float32 BLOBs keyed by owner and model; a different model re-embeds everything.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Iterable

import numpy as np

from ..errors import EmbeddingError
from ..redact import scrub
from ..scope import Scope
from ..store.index_store import IndexStore
from ..store.turn_store import facts_with_sources
from ..text import STOPWORDS
from ..tiers.core import CORE_PATH
from .chunking import CHUNK_CHARS, CHUNKING, chunk_document, split_chunk  # noqa: F401 (named here before)
from .embedders import Embedder, batches, cosine_top
from .fusion import decay, mmr, rrf, weighted
from .neighbours import with_neighbours

if TYPE_CHECKING:
    from ..clock import Clock
    from ..documents import DocumentStore
    from ..store.db import Database

log = logging.getLogger(__name__)
_DAILY = re.compile(r"memory/(\d{4}-\d{2}-\d{2})\.md")
_TOKEN = re.compile(r"[\w']+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
# Hybrid fusion: min-max normalised keyword and cosine scores, weighted. Chosen by measurement on LoCoMo
# (bench/search_locomo.py): it beat reciprocal-rank fusion at every weight tried, because RRF lets weak
# vector neighbours displace strong keyword matches. Equal weights since neighbouring turns lend to each
# other (search.neighbours): with them, vector weights 1.0 and 1.5 gave 0.75 on both dev conversations,
# 0.5 and 0.7 gave 0.735 (without them the plateau was 0.3-0.7, at 0.66).
VECTOR_WEIGHT = 1.0
# Token-weighted embedders pool with the scope's inverse document frequencies, from a snapshot that is
# taken again once the scope has doubled or halved; a new snapshot re-embeds the scope. Above this many
# items (re-pooled in under a second here), a search leaves that to the worker's back-fill rather than
# wait. An older snapshot still weighs well: on LoCoMo, one taken at a tenth of a conversation lost nothing.
REFRESH_ON_REQUEST = 5_000
# Embedding calls are bounded: at most EMBED_BATCH_ITEMS texts and EMBED_BATCH_CHARS characters, each text
# cut to EMBED_TEXT_CHARS (chunks and facts are shorter; this only guards against rows from older versions).
EMBED_BATCH_ITEMS = 512
EMBED_BATCH_CHARS = 32_000
EMBED_TEXT_CHARS = 4_000
# An item whose embedding fails (EmbeddingError, or a reply that is not one finite vector per text) while
# the embedder itself works keeps a row in `embeddings` with no vector: `dim` is minus its failed attempts
# and `text_hash` the hash of its text. It is tried again by later runs (the worker's back-fill every 10 s,
# across restarts) until MAX_EMBED_ATTEMPTS, then left to keyword search until its text changes.
MAX_EMBED_ATTEMPTS = 3
_PROBE = "memory"  # embedded when a batch fails, to tell a failing embedder from failing items


@dataclass(frozen=True)
class _Pending:
    """An item to embed: its owner ("f:<id>" or "c:<pk>"), text, vector hash, text hash and failed attempts."""

    owner: str
    text: str
    digest: str
    text_hash: str
    attempts: int


@dataclass(frozen=True)
class SearchHit:
    kind: str  # fact, daily, core
    ref: str  # fact id, or path#Lstart-Lend
    text: str
    score: float
    source: str | None = None  # a fact's source (thread/turn), or the document path


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def query_terms(query: str) -> tuple[list[str], list[str]]:
    """Terms for the trigram index (3+ characters) and short terms (CJK words of 2) that need a scan."""
    long_terms: list[str] = []
    short_terms: list[str] = []
    for token in _TOKEN.findall(query.casefold()):
        token = re.sub(r"'s$", "", token).strip("'")
        if not token or token in STOPWORDS:
            continue
        if _CJK.search(token):
            if len(token) == 2:
                short_terms.append(token)
            elif len(token) >= 3:
                long_terms.extend(token[i:i + 3] for i in range(len(token) - 2))
        elif len(token) >= 3:
            long_terms.append(token)
    return list(dict.fromkeys(long_terms))[:32], list(dict.fromkeys(short_terms))[:8]


def idf(df: np.ndarray, items: int) -> np.ndarray:
    """BM25's inverse document frequency, always positive: tokens no item holds weigh the most."""
    return np.log1p((items - df + 0.5) / (df + 0.5)).astype(np.float32)


def drifted(snapshot_items: int, items: int) -> bool:
    return items >= 2 * snapshot_items + 4 or 2 * items + 4 <= snapshot_items


class SearchIndex:
    def __init__(self, db: "Database", documents: "DocumentStore", embedder: Embedder, clock: "Clock",
                 store: IndexStore | None = None) -> None:
        self.db = db
        self.store = store or IndexStore(db)  # the SQL; this module keeps ranking and upkeep
        self.documents = documents
        self.embedder = embedder
        self.clock = clock
        self._lock = threading.RLock()
        self._cache: dict[tuple[Scope, str], tuple[int, np.ndarray, list[str]]] = {}
        self._generation = 0
        self._embedded: dict[Scope, int] = {}  # scopes known fully embedded, with their item count then
        self._weights: dict[tuple[Scope, str], tuple[str, np.ndarray]] = {}  # IDF snapshots by version

    def touch(self, scope: Scope | None = None) -> None:
        with self._lock:
            self._generation += 1
            if scope is None:
                self._embedded.clear()
            else:
                self._embedded.pop(scope, None)

    # -- documents -------------------------------------------------------------------------------

    def _document_paths(self, scope: Scope) -> list[str]:
        paths = [p for p in self.documents.list(scope, "memory") if _DAILY.fullmatch(p)]
        return paths + [CORE_PATH]

    def sync_documents(self, scope: Scope, paths: Iterable[str] | None = None) -> int:
        """Re-chunk the documents of `scope` whose content changed; return how many were re-indexed."""
        changed = 0
        wanted = list(paths) if paths is not None else self._document_paths(scope)
        known = self.store.indexed_docs(scope)
        for path in wanted:
            content = self.documents.read(scope, path) or ""
            digest = _sha(f"{CHUNKING}\0{content}")
            if known.get(path) == digest:
                continue
            self._reindex(scope, path, content, digest)
            changed += 1
        if paths is None:
            for gone in set(known) - set(wanted):
                self._reindex(scope, gone, "", None)
                changed += 1
        if changed:
            self.touch(scope)
        return changed

    def _reindex(self, scope: Scope, path: str, content: str, digest: str | None) -> None:
        match = _DAILY.fullmatch(path)
        kind = "core" if path == CORE_PATH else "daily"
        self.store.replace_chunks(scope, path, kind, match.group(1) if match else None,
                                  chunk_document(path, content), digest)

    # -- embeddings ------------------------------------------------------------------------------

    def ensure_embeddings(self, scope: Scope, batch: int = EMBED_BATCH_ITEMS, force: bool = False) -> int:
        """Embed what has no vector for the current model (or whose text changed); drop orphans; return
        how many vectors were written.

        Skipped when this process has changed nothing in the scope and its item count is what it was
        at the last full check; `force` (the worker's periodic back-fill) always checks every item,
        which also catches edits made by other processes, and may take a new IDF snapshot at any size.
        An item that fails is marked and skipped (see MAX_EMBED_ATTEMPTS); EmbeddingError only when the
        embedder itself fails, with nothing marked.
        """
        model = self.embedder.model_name
        count = self.store.item_count(scope)
        if not force and self._embedded.get(scope) == count:
            return 0
        items = self.store.items(scope)
        version, weights = self._weighting(scope, count if force or count <= REFRESH_ON_REQUEST else None, items)
        rows = self.store.embedding_rows(scope, model)
        have = {owner: digest for owner, digest, dim in rows if dim > 0}
        marks = {owner: (digest, -dim) for owner, digest, dim in rows if dim <= 0}
        dim = next((d for _, _, d in rows if d > 0), None)
        todo: list[_Pending] = []
        for owner, t in items:
            digest = _sha(f"{version}\0{t}" if version else t)
            if have.get(owner) == digest:
                continue
            text_hash = _sha(t)
            marked_hash, attempts = marks.get(owner, ("", 0))
            attempts = attempts if marked_hash == text_hash else 0  # a changed text starts afresh
            if attempts < MAX_EMBED_ATTEMPTS:
                todo.append(_Pending(owner, t, digest, text_hash, attempts))
        orphans = {o for o, _, _ in rows} - {owner for owner, _ in items}
        written = 0
        for lo, hi in batches([p.text for p in todo], batch, EMBED_BATCH_CHARS):
            part = todo[lo:hi]
            results, dim = self._embed_part([p.text for p in part], weights, dim)
            rows_out = []
            for pending, result in zip(part, results):
                if isinstance(result, EmbeddingError):  # the mark: no vector, minus the attempts
                    self._log_failure(scope, pending.owner, pending.attempts + 1, result)
                    rows_out.append((pending.owner, -(pending.attempts + 1), pending.text_hash, b""))
                else:
                    written += 1
                    rows_out.append((pending.owner, int(result.shape[0]), pending.digest, result.tobytes()))
            self.store.write_embeddings(scope, model, rows_out)
        if orphans:
            self.store.drop_embeddings(scope, model, orphans)
        if todo or orphans:
            self.touch(scope)
        with self._lock:
            self._embedded[scope] = count
        return written

    def _embed_part(self, texts: list[str], weights: np.ndarray | None,
                    dim: int | None) -> tuple[list[np.ndarray | EmbeddingError], int | None]:
        """Each text's vector, or the error that its embedding alone raised; and the vectors' dimension.

        A failing batch is first told apart from a failing embedder (a probe text must embed, or this
        raises EmbeddingError and nothing is marked), then halved until the texts that fail are alone."""
        try:
            vectors = self._checked(texts, weights, dim)
            return list(vectors), vectors.shape[1]
        except EmbeddingError as exc:
            error = exc
        try:
            dim = self._checked([_PROBE], weights, dim).shape[1]
        except EmbeddingError as exc:
            raise EmbeddingError(f"the embedder {self.embedder.model_name} is failing: {exc}") from error
        if len(texts) == 1:
            return [error], dim
        half = len(texts) // 2
        return self._each(texts[:half], weights, dim) + self._each(texts[half:], weights, dim), dim

    def _each(self, texts: list[str], weights: np.ndarray | None, dim: int) -> list[np.ndarray | EmbeddingError]:
        """Each text's vector or error: the texts together, else each half on its own, down to one."""
        try:
            return list(self._checked(texts, weights, dim))
        except EmbeddingError as exc:
            if len(texts) == 1:
                return [exc]
        half = len(texts) // 2
        return self._each(texts[:half], weights, dim) + self._each(texts[half:], weights, dim)

    def _checked(self, texts: list[str], weights: np.ndarray | None, dim: int | None) -> np.ndarray:
        """The embedder's float32 vectors of `texts` (each cut to EMBED_TEXT_CHARS); EmbeddingError unless
        they are one finite row per text, of dimension `dim` when known."""
        try:
            vectors = np.asarray(self._embed([t[:EMBED_TEXT_CHARS] for t in texts], weights), dtype=np.float32)
        except (TypeError, ValueError) as exc:  # a reply that is not even a matrix of numbers
            raise EmbeddingError(f"the embedder returned something that is not vectors "
                                 f"({type(exc).__name__})") from None
        if vectors.ndim != 2 or vectors.shape[0] != len(texts) or vectors.shape[1] == 0:
            raise EmbeddingError(f"the embedder returned an array of shape {vectors.shape} for {len(texts)} texts")
        if dim is not None and vectors.shape[1] != dim:
            raise EmbeddingError(f"the embedder returned {vectors.shape[1]}-dimensional vectors; this scope's "
                                 f"vectors of that model have {dim}")
        if not np.isfinite(vectors).all():
            raise EmbeddingError("the embedder returned values that are not finite")
        return vectors

    def _log_failure(self, scope: Scope, owner: str, attempt: int, error: EmbeddingError) -> None:
        last = " (the last: it keeps no vector until its text changes)" if attempt >= MAX_EMBED_ATTEMPTS else ""
        log.warning("embedding %s of scope %s failed, attempt %d of %d%s: %s", owner, scope.key, attempt,
                    MAX_EMBED_ATTEMPTS, last, scrub(str(error))[:300])

    def _embed(self, texts: list[str], weights: np.ndarray | None) -> np.ndarray:
        return self.embedder.embed(texts) if weights is None else self.embedder.embed(texts, weights=weights)

    def _embed_all(self, texts: list[str], weights: np.ndarray | None) -> np.ndarray:
        """Vectors of any number of texts, in bounded batches (for re-ranking; failures raise)."""
        parts = [self._embed(texts[lo:hi], weights) for lo, hi in batches(texts, EMBED_BATCH_ITEMS, EMBED_BATCH_CHARS)]
        return np.concatenate(parts) if parts else np.zeros((0, self.embedder.dim), dtype=np.float32)

    def _weighting(self, scope: Scope, count: int | None,
                   items: list[tuple[str, str]] | None = None) -> tuple[str, np.ndarray | None]:
        """The scope's IDF snapshot for a token-weighted embedder: (version, weights), or ("", None).

        A snapshot is taken when there is none, or, given the scope's item `count`, when the scope has
        doubled or halved since the last one (from `items` when the caller has read them already). Its
        version goes into every vector's text hash, so a new snapshot re-embeds the scope and a query is
        always pooled like the items it is compared with.
        """
        if not hasattr(self.embedder, "token_ids"):
            return "", None
        model = self.embedder.model_name
        row = self.store.token_stats(scope, model)
        if row is None or (count is not None and drifted(row[1], count)):
            return self._snapshot(scope, items if items is not None else self.store.items(scope))
        version, snapshot_items = row
        with self._lock:
            cached = self._weights.get((scope, model))
        if cached is None or cached[0] != version:
            blob = self.store.token_df(scope, model, version)
            if blob is None:  # replaced by another process in between
                return self._weighting(scope, None)
            cached = (version, idf(np.frombuffer(blob, dtype=np.int32), snapshot_items))
            with self._lock:
                self._weights[(scope, model)] = cached
        return cached

    def describe(self, scope: Scope) -> str:
        """One line on how the scope's vectors are made, for people (the Search page shows it)."""
        model = self.embedder.model_name
        if not hasattr(self.embedder, "token_ids"):
            return f"Vectors: {model}."
        stats = self.store.token_stats(scope, model)
        items = None if stats is None else stats[1]
        if items is None:
            return f"Vectors: {model}, weighted by this scope's token frequencies once it is first searched."
        return (f"Vectors: {model}, weighted by this scope's token frequencies "
                f"(snapshot of {items:,} item{'s' if items != 1 else ''}).")

    def _snapshot(self, scope: Scope, items: list[tuple[str, str]]) -> tuple[str, np.ndarray]:
        model = self.embedder.model_name
        texts = [t for _, t in items]
        df = np.zeros(self.embedder.vocab_size, dtype=np.int32)
        for lo, hi in batches(texts, EMBED_BATCH_ITEMS, EMBED_BATCH_CHARS):  # token ids of a few texts at a time
            ids = [np.unique(np.asarray(t, dtype=np.int64)) for t in self.embedder.token_ids(texts[lo:hi])]
            df += np.bincount(np.concatenate(ids), minlength=df.shape[0])[:df.shape[0]].astype(np.int32)
        version = f"idf{len(texts)}-{hashlib.sha256(df.tobytes()).hexdigest()[:12]}"
        self.store.save_token_stats(scope, model, len(texts), version, df.tobytes())
        weights = idf(df, len(texts))
        with self._lock:
            self._weights[(scope, model)] = (version, weights)
        return version, weights

    def _matrix(self, scope: Scope) -> tuple[np.ndarray, list[str]]:
        model = self.embedder.model_name
        count = self.store.vector_count(scope, model)  # vectors only, not the marks of failed items
        stamp = hash((self._generation, count))
        with self._lock:
            cached = self._cache.get((scope, model))
            if cached and cached[0] == stamp:
                return cached[1], cached[2]
        rows = self.store.vectors(scope, model)
        owners = [r[0] for r in rows]
        matrix = (np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
                  if rows else np.zeros((0, 1), dtype=np.float32))
        with self._lock:
            self._cache[(scope, model)] = (stamp, matrix, owners)
        return matrix, owners

    def backfill(self) -> int:
        """Embed what is missing in every scope that has facts or chunks (the worker runs this)."""
        scopes = self.store.scopes()
        return sum(self.ensure_embeddings(scope, force=True) for scope in sorted(scopes))

    # -- retrieval -------------------------------------------------------------------------------

    def keyword(self, scope: Scope, query: str, limit: int = 50) -> list[tuple[str, float]]:
        """Owners ("f:<id>" or "c:<pk>") by keyword relevance, best first.

        SQLite: BM25 over words (Porter-stemmed) and over trigrams, min-max normalised and summed with
        weights 1 and 0.5; PostgreSQL: ts_rank. Words shorter than a trigram (two-character CJK words)
        are found by a substring scan.
        """
        long_terms, short_terms = query_terms(query)
        queries: list[tuple[str, str | list[str]]] = []
        weights: list[float] = []
        backend = self.store.keyword_backend
        if long_terms and backend == "bm25":
            words = [t for t in long_terms if not _CJK.search(t)]
            for index, terms, weight in (("words", words, 1.0), ("fts", long_terms, 0.5)):
                if terms:
                    queries.append((f"bm25:{index}", " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)))
                    weights.append(weight)
        elif long_terms and backend == "ts_rank":
            # The 'simple' parser keeps a CJK run as one word: CJK pieces are matched as substrings.
            short_terms = short_terms + [t for t in long_terms if _CJK.search(t)]
            words = [w for t in long_terms if not _CJK.search(t) and (w := re.sub(r"[^\w]", "", t))]
            if words:
                queries.append(("ts_rank", " | ".join(w + ":*" for w in words)))
                weights.append(1.0)
        elif long_terms:
            short_terms = short_terms + long_terms
        if short_terms:
            queries.append(("substring", short_terms))
            weights.append(1.0)
        lists = self.store.keyword_scores(scope, queries, limit) if queries else []
        found = weighted(lists, weights) if len(lists) > 1 else (lists[0] if lists else {})
        return sorted(found.items(), key=lambda kv: kv[1], reverse=True)[:limit]

    def vector(self, scope: Scope, query: str, limit: int = 50) -> list[tuple[str, float]]:
        matrix, owners = self._matrix(scope)
        if not owners:
            return []
        embed_query = getattr(self.embedder, "embed_query", None)  # asymmetric models (e5) prefix queries
        q = embed_query(query) if embed_query else self._checked([query], self._weighting(scope, None)[1], None)[0]
        if q.shape[0] != matrix.shape[1]:
            return []
        idx, scores = cosine_top(matrix, q, limit)
        return [(owners[i], float(sc)) for i, sc in zip(idx, scores)]

    def search(self, scope: Scope, query: str, k: int = 10, *, mode: str = "hybrid", half_life_days: float | None = None,
               mmr_lambda: float | None = None, keyword_weight: float = 1.0, vector_weight: float = VECTOR_WEIGHT,
               fusion: str = "weighted", neighbours: bool = True) -> list[SearchHit]:
        """The k best hits; `neighbours` lets a turn stored as a fact lend to the turns around it (see
        search.neighbours)."""
        if not isinstance(query, str) or not query.strip():
            raise ValueError("query must not be empty")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError("k must be a positive integer")
        if mode not in ("hybrid", "keyword", "vector"):
            raise ValueError("mode must be hybrid, keyword or vector")
        query = query[:2000]
        self.sync_documents(scope)
        depth = max(50, k * 5)
        kw = self.keyword(scope, query, depth) if mode != "vector" else []
        vec = []
        if mode != "keyword":
            self.ensure_embeddings(scope)
            vec = self.vector(scope, query, depth)
        if mode == "keyword":
            fused = {o: s for o, s in kw}
        elif mode == "vector":
            fused = {o: s for o, s in vec}
        elif fusion == "rrf":
            fused = rrf([[o for o, _ in kw], [o for o, _ in vec]], [keyword_weight, vector_weight])
        else:
            fused = weighted([dict(kw), dict(vec)], [keyword_weight, vector_weight])
        if not half_life_days:  # what ranks below `depth` cannot reach the top k (MMR picks from 4k)
            fused = dict(sorted(fused.items(), key=lambda kv: kv[1], reverse=True)[:depth])
        hits = self._hits(scope, fused)
        if neighbours:
            hits = self._lend_to_neighbours(scope, hits)
        if half_life_days:
            today = self.clock.now().date()
            hits = {o: (h, sc * (decay((today - date.fromisoformat(h.source[7:17])).days, half_life_days)
                                 if h.kind == "daily" and h.source and _DAILY.fullmatch(h.source) else 1.0))
                    for o, (h, sc) in hits.items()}
        ranked = sorted(hits, key=lambda o: hits[o][1], reverse=True)
        if mmr_lambda is not None and ranked:
            pool = ranked[: k * 4]
            vectors = self._embed_all([hits[o][0].text for o in pool], self._weighting(scope, None)[1])
            position = {o: i for i, o in enumerate(pool)}
            top = max(hits[o][1] for o in pool) or 1.0
            relevance = {o: hits[o][1] / top for o in pool}
            ranked = mmr(pool, relevance, lambda a, b: float(vectors[position[a]] @ vectors[position[b]]), k, mmr_lambda)
        return [SearchHit(hits[o][0].kind, hits[o][0].ref, hits[o][0].text, round(hits[o][1], 6), hits[o][0].source)
                for o in ranked[:k]]

    def _lend_to_neighbours(self, scope: Scope, hits: dict[str, tuple[SearchHit, float]]) -> dict[str, tuple[SearchHit, float]]:
        """`hits` rescored by search.neighbours, with the neighbouring turns it brought in."""
        sources = {h.ref: h.source for h, _ in hits.values() if h.kind == "fact" and h.source}
        found: dict[str, SearchHit] = {}

        def facts_with(wanted: list[str]) -> list[tuple[str, str]]:
            rows = facts_with_sources(self.db, scope, wanted)
            found.update((f"f:{i}", SearchHit("fact", i, content, 0.0, source)) for i, source, content in rows)
            return [(i, source) for i, source, _ in rows]

        lent = with_neighbours({o: sc for o, (_, sc) in hits.items()},
                               lambda ids: {i: sources[i] for i in ids if i in sources}, facts_with)
        return {o: (hits[o][0] if o in hits else found[o], sc) for o, sc in lent.items()}

    def _hits(self, scope: Scope, scores: dict[str, float]) -> dict[str, tuple[SearchHit, float]]:
        fact_ids = [o[2:] for o in scores if o.startswith("f:")]
        chunk_pks = [int(o[2:]) for o in scores if o.startswith("c:")]
        out: dict[str, tuple[SearchHit, float]] = {}
        facts, chunks = self.store.hit_rows(scope, fact_ids, chunk_pks)
        for fact_id, content, source in facts:
            out[f"f:{fact_id}"] = (SearchHit("fact", fact_id, content, 0.0, source), scores[f"f:{fact_id}"])
        for pk, kind, path, start, end, chunk in chunks:
            out[f"c:{pk}"] = (SearchHit(kind, f"{path}#L{start}-L{end}", chunk, 0.0, path), scores[f"c:{pk}"])
        return out
