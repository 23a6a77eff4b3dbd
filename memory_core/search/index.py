"""The search index: keyword (SQLite FTS5 trigram, or PostgreSQL full-text) and vectors, fused.

Facts are indexed by triggers in the database itself; daily blocks and MEMORY.md bullets are chunked
(`search.chunking`) into `chunks` (with their line ranges) whenever a document changes. Dream diaries are never
indexed. Vectors are kept up to date by `search.embedding_upkeep`; keyword and vector scores are combined by
`search.fusion`; the SQL is `store.index_store`'s. This module ranks.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Callable, Iterable

import numpy as np

from memory_core.scope import Scope
from memory_core.store.index_store import IndexStore
from memory_core.store.episode_store import turn_chunks
from memory_core.store.turn_store import facts_with_sources
from memory_core.text.words import STOPWORDS
from memory_core.tiers.core import CORE_PATH
from memory_core.search.chunking import CHUNK_CHARS, CHUNKING, chunk_document, split_chunk  # noqa: F401 (named here before)
from memory_core.search.asked import asked_weights
from memory_core.search.answers import Answers
from memory_core.search.cache import BytesLRU
from memory_core.search.embedders import Embedder, cosine_top, feedback_top
from memory_core.search.embedding_upkeep import (EMBED_BATCH_CHARS, EMBED_BATCH_ITEMS, EMBED_TEXT_CHARS,  # noqa: F401 (named here before)
                               MAX_EMBED_ATTEMPTS, REFRESH_ON_REQUEST, EmbeddingUpkeep, drifted, idf, sha)
from memory_core.search.fusion import VECTOR_WEIGHT, best, decay, fuse, mmr, weighted
from memory_core.search.neighbours import POOL as NEIGHBOUR_POOL, SHARES as NEIGHBOUR_SHARES
from memory_core.search.neighbours import nearby_sources, spread, with_neighbours

if TYPE_CHECKING:
    from memory_core.clock import Clock
    from memory_core.tiers.documents import DocumentStore
    from memory_core.store.db import Database

log = logging.getLogger(__name__)
_DAILY = re.compile(r"memory/(\d{4}-\d{2}-\d{2})\.md")
_TOKEN = re.compile(r"[\w']+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


@dataclass(frozen=True)
class SearchHit:
    kind: str  # fact, daily, core, episode
    ref: str  # fact id, path#Lstart-Lend, or for an episode's turn episodes/<episode id>#<turn index>
    text: str
    score: float
    source: str | None = None  # a fact's source (thread/turn), the document path, or the episode and turn
    # None for an ordinary hit; for a passage that states a fact since retired, what replaced it ("" if nothing)
    current: str | None = None


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


class _Matrix:
    """A scope's vectors of one model in memory: rows [0, n) of `buffer` (which has room to grow), their owners,
    and how many vectors the database held when they were read (another process's writes change that)."""

    def __init__(self, rows: list[tuple[str, bytes]], count: int) -> None:
        self.owners = [r[0] for r in rows]
        self.n = len(rows)
        self.buffer = (np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1).copy()
                       if rows else np.zeros((0, 1), dtype=np.float32))
        self.position = {owner: i for i, owner in enumerate(self.owners)}
        self.count = count
        self.checked = time.monotonic()  # when the database's count of vectors was last compared

    @property
    def nbytes(self) -> int:
        return self.buffer.nbytes + 120 * len(self.owners)

    def put(self, owner: str, vector: np.ndarray) -> bool:
        """Write one vector in place, or append it; False when its dimension differs (the caller reloads)."""
        if self.n and vector.shape[0] != self.buffer.shape[1]:
            return False
        at = self.position.get(owner)
        if at is None:
            if self.n == 0:
                self.buffer = np.zeros((16, vector.shape[0]), dtype=np.float32)
            elif self.n == self.buffer.shape[0]:  # grow by half: appending is amortised O(1)
                grown = np.zeros((self.n + max(16, self.n // 2), self.buffer.shape[1]), dtype=np.float32)
                grown[:self.n] = self.buffer[:self.n]
                self.buffer = grown
            at, self.n = self.n, self.n + 1
            self.owners.append(owner)
            self.position[owner] = at
            self.count += 1
        self.buffer[at] = vector
        return True

    def remove(self, owners: set[str]) -> None:
        keep = [i for i, owner in enumerate(self.owners) if owner not in owners]
        self.count -= self.n - len(keep)
        self.buffer = self.buffer[keep] if keep else np.zeros((0, 1), dtype=np.float32)
        self.owners = [self.owners[i] for i in keep]
        self.n = len(keep)
        self.position = {owner: i for i, owner in enumerate(self.owners)}


# What the index keeps in memory (scopes' vectors and IDF weights) is at most this many bytes by default.
CACHE_BYTES = 256 << 20
# A cached matrix is compared with the database's count of vectors at most this often (a count of a large
# scope costs a scan on PostgreSQL): this process's own writes are patched in at once, another's seen within it.
MATRIX_CHECK_SECONDS = 1.0


class SearchIndex:
    def __init__(self, db: "Database", documents: "DocumentStore", embedder: Embedder, clock: "Clock",
                 store: IndexStore | None = None, *, cache_bytes: int = CACHE_BYTES,
                 screen: Callable[[Scope], Callable[[str], str] | None] | None = None) -> None:
        self.db = db
        # screen(scope): what must not be indexed from the scope's documents yet (the passages of an erase whose
        # file rewrites have not run: a full disk), as a text -> text function, or None when nothing.
        self.screen = screen
        self.store = store or IndexStore(db)  # the SQL; this module keeps the ranking
        self.documents = documents
        self.embedder = embedder
        self.clock = clock
        # Matrices and IDF weights of the scopes searched lately, least recently used evicted first.
        self.cache = BytesLRU(cache_bytes)
        self.upkeep = EmbeddingUpkeep(self.store, embedder, changed=self._vectors_changed, cache=self.cache)
        # searches and injections kept while their scope holds, in an eighth as many bytes again
        self.answers = Answers(self.take_in_documents,
                               self.store.scope_version, settled_seconds=MATRIX_CHECK_SECONDS,
                               max_bytes=cache_bytes // 8)
        self._lock = threading.RLock()

    def touch(self, scope: Scope | None = None) -> None:
        """Something changed in `scope` (every scope when None) behind the index's back (a purge, an erase, a
        restored bundle): its cached vectors and checks are dropped."""
        with self._lock:
            self.upkeep.forget(scope)
            self.cache.drop(lambda key: scope is None or key[1] == scope)
            self.answers.forget(scope)

    def rows_added(self, scope: Scope) -> None:
        """Rows were added to `scope` beside its facts (an episode's turns): the next search embeds them by the marker
        and appends their vectors to the matrix in memory, as for added facts (no reload)."""
        self.upkeep.forget(scope, added_only=True)

    def facts_changed(self, scope: Scope, added_only: bool = False) -> None:
        """The facts of `scope` changed (FactStore's listener): check its embeddings at the next search (only the
        facts added, by the marker, when nothing else changed); the vectors in memory stay, and what the check
        writes is patched into them."""
        self.upkeep.forget(scope, added_only=added_only)

    def _vectors_changed(self, scope: Scope, written: list[tuple[str, np.ndarray]], dropped: set[str]) -> None:
        """Patch the scope's cached matrix with vectors just written or dropped (no reload)."""
        key = ("matrix", scope, self.embedder.model_name)
        with self._lock:
            entry = self.cache.get(key)
            if entry is None:
                return
            if dropped & entry.position.keys():
                entry.remove(dropped)
            if not all(entry.put(owner, vector) for owner, vector in written):
                self.cache.pop(key)
                return
            self.cache.put(key, entry, entry.nbytes)

    def close(self, timeout: float | None = 30.0) -> None:
        """Stop the background embedding (Memory.close calls this before releasing the database)."""
        self.upkeep.close(timeout)

    # -- documents -------------------------------------------------------------------------------

    def _document_paths(self, scope: Scope) -> list[str]:
        paths = [p for p in self.documents.list(scope, "memory") if _DAILY.fullmatch(p)]
        return paths + [CORE_PATH]

    def take_in_documents(self, scope: Scope) -> int:
        """A search's own `sync_documents`: once in a `reads()` block's transaction (an injection's search, its
        kept answers and its passages all look at the files once), every time outside one."""
        return self.db.once(("documents", scope), lambda: self.sync_documents(scope, trust_seconds=MATRIX_CHECK_SECONDS))

    def has_passages(self, scope: Scope) -> bool:
        """Whether the scope holds anything but facts for a search to find (an episode's turns, a daily log,
        MEMORY.md), its documents on disk taken in first as a search takes them in."""
        self.take_in_documents(scope)
        return self.store.has_chunks(scope)

    def sync_documents(self, scope: Scope, paths: Iterable[str] | None = None, *, trust_seconds: float = 0.0) -> int:
        """Re-chunk the documents of `scope` whose content changed; return how many were re-indexed.

        `trust_seconds` (a search's own sync): when every document's stamp is what this process last read and the
        index was found holding what it read less than that long ago, the index is not read again (another
        process re-chunks only a document whose file it changed, which changes its stamp; an erase here drops
        what this process knows first, `touch`)."""
        changed = 0
        wanted = list(paths) if paths is not None else self._document_paths(scope)
        stamp_of = getattr(self.documents, "stamp", None)  # files: a stat tells what is unchanged, unread
        with self._lock:
            seen = dict(self.cache.get(("documents", scope)) or {})  # path -> (stamp, digest) as last read here
            verified = self.cache.get(("documents-verified", scope))
        stamps = {path: stamp_of(scope, path) for path in wanted} if stamp_of is not None else {}
        if (trust_seconds and stamp_of is not None and paths is None and verified is not None
                and time.monotonic() - verified < trust_seconds and set(seen) == set(wanted)
                and all(seen[p][0] == stamps[p] for p in wanted)):  # a missing file's stamp: None, as read
            return 0
        known = self.store.indexed_docs(scope)
        screen: Callable[[str], str] | None = None  # read once, and only when something is to be re-chunked
        dropped: set[str] = set()  # the owners of the chunks replaced
        for path in wanted:
            stamp = stamps.get(path)
            if stamp is not None and path in seen and seen[path][0] == stamp and known.get(path) == seen[path][1]:
                continue  # the file this process read, and the index holds what it read then
            content = self.documents.read(scope, path) or ""
            digest = sha(f"{CHUNKING}\0{content}")  # of the file as it is: its rewrite is re-chunked again
            if stamp_of is not None:
                seen[path] = (stamp, digest)
            if known.get(path) == digest:
                continue
            if screen is None:
                screen = (self.screen(scope) if self.screen else None) or (lambda text: text)
            dropped |= self._reindex(scope, path, screen(content), digest)
            changed += 1
        if paths is None:
            for gone in set(known) - set(wanted):
                dropped |= self._reindex(scope, gone, "", None)
                changed += 1
        if dropped:  # the matrix in memory loses the old chunks' vectors; the new chunks are added by the marker
            self._vectors_changed(scope, [], dropped)
            self.upkeep.rewind(scope, min(int(owner[2:]) for owner in dropped))
        elif changed:
            self.rows_added(scope)
        if stamp_of is not None:
            if paths is None:  # a whole sync: what is no longer there is forgotten
                seen = {p: seen[p] for p in wanted if p in seen}
            with self._lock:  # bounded with the matrices: about 200 bytes a document
                self.cache.put(("documents", scope), seen, 200 * len(seen) + 200)
                if paths is None:
                    self.cache.put(("documents-verified", scope), time.monotonic(), 100)
        return changed

    def _reindex(self, scope: Scope, path: str, content: str, digest: str | None) -> set[str]:
        """Chunk the document again; the owners of its chunks that went."""
        match = _DAILY.fullmatch(path)
        kind = "core" if path == CORE_PATH else "daily"
        gone = self.store.replace_chunks(scope, path, kind, match.group(1) if match else None,
                                         chunk_document(path, content), digest)
        return {f"c:{pk}" for pk in gone}

    # -- embeddings (kept up to date by search.embedding_upkeep) ---------------------------------

    def ensure_embeddings(self, scope: Scope, batch: int = EMBED_BATCH_ITEMS, force: bool = False) -> int:
        """Embed what has no vector for the current model (or whose text changed), drop orphans; how many
        vectors were written (see EmbeddingUpkeep.ensure)."""
        return self.upkeep.ensure(scope, batch, force)

    def backfill(self) -> int:
        """Embed what is missing in every scope that has facts or chunks (the worker runs this)."""
        return self.upkeep.backfill()

    def weighting(self, scope: Scope) -> tuple[str, np.ndarray | None]:
        """The scope's IDF snapshot for a token-weighted embedder: (version, weights), or ("", None)."""
        return self.upkeep.weighting(scope)

    def describe(self, scope: Scope) -> str:
        """One line on how the scope's vectors are made, for people (the Search page shows it)."""
        return self.upkeep.describe(scope)

    def _matrix(self, scope: Scope) -> tuple[np.ndarray, list[str]]:
        """The scope's vectors and their owners: from memory while the database holds as many as were read
        (and patched since); else read again (another process wrote some)."""
        model = self.embedder.model_name
        key = ("matrix", scope, model)
        entry = self.cache.get(key)
        if entry is not None and time.monotonic() - entry.checked < MATRIX_CHECK_SECONDS:
            with self._lock:
                return entry.buffer[:entry.n], entry.owners[:entry.n]
        count = self.store.vector_count(scope, model)  # vectors only, not the marks of failed items
        with self._lock:
            entry = self.cache.get(key)
            if entry is not None and entry.count == count:
                entry.checked = time.monotonic()
                return entry.buffer[:entry.n], entry.owners[:entry.n]
        entry = _Matrix(self.store.vectors(scope, model), count)
        with self._lock:
            self.cache.put(key, entry, entry.nbytes)
        return entry.buffer[:entry.n], entry.owners[:entry.n]

    # -- retrieval -------------------------------------------------------------------------------

    def keyword(self, scope: Scope, query: str, limit: int = 50, session=None, *,
                trigrams: bool = True, facts_only: bool = False) -> list[tuple[str, float]]:
        """Owners ("f:<id>" or "c:<pk>") by keyword relevance, best first (read in `session`, a write
        transaction's, when given; `facts_only`: no chunks).

        SQLite: BM25 over words (Porter-stemmed) and over trigrams, min-max normalised and summed with
        weights 1 and 0.5 (`trigrams=False`: the trigram index for CJK terms only, which the word index does not
        split; it is the slower of the two, and the words are what an update's candidates share); PostgreSQL:
        ts_rank. Words shorter than a trigram (two-character CJK words) are found by a substring scan. A scope of
        more than 20,000 rows ranks its rare terms first (store.keyword_ranking).
        """
        long_terms, short_terms = query_terms(query)
        queries: list[tuple[str, list[str]]] = []
        weights: list[float] = []
        backend = self.store.keyword_backend
        if long_terms and backend == "bm25":
            words = [t for t in long_terms if not _CJK.search(t)]
            grams = long_terms if trigrams else [t for t in long_terms if _CJK.search(t)]
            for index, terms, weight in (("words", words, 1.0), ("fts", grams, 0.5)):
                if terms:
                    queries.append((f"bm25:{index}", terms))
                    weights.append(weight)
        elif long_terms and backend == "ts_rank":
            # The 'simple' parser keeps a CJK run as one word: CJK pieces are matched as substrings.
            short_terms = short_terms + [t for t in long_terms if _CJK.search(t)]
            words = [w for t in long_terms if not _CJK.search(t) and (w := re.sub(r"[^\w]", "", t))]
            if words:
                queries.append(("ts_rank", words))
                weights.append(1.0)
        elif long_terms:
            short_terms = short_terms + long_terms
        if short_terms:
            queries.append(("substring", short_terms))
            weights.append(1.0)
        # the scope's sizes, kept while it holds, unless read inside a write transaction (which sees its own writes)
        sizes = None if session is not None or not queries else self.answers.read(
            scope, ("sizes", facts_only), lambda: self.store.scope_sizes(scope, facts_only), lambda _sizes: 0)
        lists = self.store.keyword_scores(scope, queries, limit, session, facts_only, sizes) if queries else []
        found = weighted(lists, weights) if len(lists) > 1 else (lists[0] if lists else {})
        return sorted(found.items(), key=lambda kv: kv[1], reverse=True)[:limit]

    def keyword_facts(self, scope: Scope, query: str, limit: int = 50, session=None) -> list[str]:
        """The ids of the valid facts that share words with `query`, best first (chunks left out): the candidates
        an update or a retirement reads (keyword search, trigrams for CJK terms only)."""
        return [owner[2:] for owner, _score in self.keyword(scope, query, limit, session, trigrams=False,
                                                             facts_only=True)]

    def vector(self, scope: Scope, query: str, limit: int = 50, *, feedback: bool = False) -> list[tuple[str, float]]:
        """Owners by cosine similarity to the query's vector, best first. `feedback`: the query's vector moved
        toward its nearest rows first (embedders.feedback_top), as hybrid search asks: beside the keyword list the
        moved query finds turns said otherwise (LoCoMo dev hybrid recall@10 0.793 -> 0.808), though alone it ranks
        worse (vector recall@10 0.726 -> 0.704), so vector search alone does not."""
        matrix, owners = self._matrix(scope)
        if not owners:
            return []
        q = self.upkeep.embed_query(scope, query)
        if q.shape[0] != matrix.shape[1]:
            return []
        idx, scores = feedback_top(matrix, q, limit) if feedback else cosine_top(matrix, q, limit)
        return [(owners[i], float(sc)) for i, sc in zip(idx, scores)]

    def search(self, scope: Scope, query: str, k: int = 10, *, mode: str = "hybrid", half_life_days: float | None = None,
               mmr_lambda: float | None = None, keyword_weight: float = 1.0, vector_weight: float = VECTOR_WEIGHT,
               fusion: str = "weighted", neighbours: bool = True, depth: int | None = None,
               asked: bool = True) -> list[SearchHit]:
        """The k best hits; `neighbours` lets a turn stored as a fact lend to the turns around it (see
        search.neighbours); `asked` ranks up the turns said by the people, or in the period, the query names
        (search.asked). `depth`: how many candidates each of keyword and vector search gives the fusion
        (default max(50, 5k)); the scores, and so the order, depend on it, so that a caller that asks for more
        hits than it shows (to drop some) keeps the order of the k it shows by giving their depth."""
        if not isinstance(query, str) or not query.strip():
            raise ValueError("query must not be empty")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError("k must be a positive integer")
        if mode not in ("hybrid", "keyword", "vector"):
            raise ValueError("mode must be hybrid, keyword or vector")
        query = query[:2000]
        self.take_in_documents(scope)
        depth = max(50, k * 5) if depth is None else depth
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise ValueError("depth must be a positive integer")
        kw = self.keyword(scope, query, depth) if mode != "vector" else []
        vec = []
        if mode != "keyword":
            self.ensure_embeddings(scope)
            vec = self.vector(scope, query, depth, feedback=mode == "hybrid")
        fused = fuse(kw, vec, mode=mode, fusion=fusion, keyword_weight=keyword_weight, vector_weight=vector_weight)
        if not half_life_days:  # what ranks below `depth` cannot reach the top k (MMR picks from 4k)
            fused = best(fused, depth)
        hits = self._hits(scope, fused)
        if neighbours:
            hits = self._lend_to_neighbours(scope, hits)
        if half_life_days:
            today = self.clock.now().date()
            hits = {o: (h, sc * (decay((today - date.fromisoformat(h.source[7:17])).days, half_life_days)
                                 if h.kind == "daily" and h.source and _DAILY.fullmatch(h.source) else 1.0))
                    for o, (h, sc) in hits.items()}
        if asked:
            owners = list(hits)
            factors = asked_weights(query, [hits[o][0] for o in owners])
            hits = {o: (hits[o][0], hits[o][1] * w) for o, w in zip(owners, factors)}
        ranked = sorted(hits, key=lambda o: hits[o][1], reverse=True)
        if mmr_lambda is not None and ranked:
            pool = ranked[: k * 4]
            vectors = self.upkeep.embed_all([hits[o][0].text for o in pool], self.upkeep.weighting(scope)[1])
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
        lent = self._lend_between_turns(scope, hits, lent, found)
        return {o: (hits[o][0] if o in hits else found[o], sc) for o, sc in lent.items()}

    def _lend_between_turns(self, scope: Scope, hits: dict[str, tuple[SearchHit, float]], scores: dict[str, float],
                            found: dict[str, SearchHit]) -> dict[str, float]:
        """The same lending between the turns of an episode (their sources "episodes/<id>#<n>" are positions)."""
        best = sorted((o for o, (h, _) in hits.items() if h.kind == "episode"), key=lambda o: hits[o][1],
                      reverse=True)[:NEIGHBOUR_POOL]
        wanted = {o: nearby_sources(hits[o][0].source, NEIGHBOUR_SHARES) for o in best}
        lookup = {s for nearby in wanted.values() for s in nearby.values()}
        if not lookup:
            return scores
        by_source: dict[str, str] = {}
        for pk, source, text in turn_chunks(self.db, scope, lookup):
            by_source[source] = f"c:{pk}"
            if f"c:{pk}" not in hits:
                found[f"c:{pk}"] = SearchHit("episode", source, text, 0.0, source)
        links = {o: [(by_source[s], NEIGHBOUR_SHARES[d]) for d, s in nearby.items() if s in by_source]
                 for o, nearby in wanted.items()}
        return spread(scores, links)

    def _hit_rows(self, scope: Scope, owners: list[str]) -> dict[str, tuple]:
        """`store.hit_rows` by owner (what a hit shows of each: kept by `answers.rows` while the scope holds)."""
        facts, chunks = self.store.hit_rows(scope, [o[2:] for o in owners if o.startswith("f:")],
                                            [int(o[2:]) for o in owners if o.startswith("c:")])
        return {**{f"f:{row[0]}": row for row in facts}, **{f"c:{row[0]}": row for row in chunks}}

    def _hits(self, scope: Scope, scores: dict[str, float]) -> dict[str, tuple[SearchHit, float]]:
        out: dict[str, tuple[SearchHit, float]] = {}
        rows = self.answers.rows(scope, "hit", [o for o in scores if o.startswith(("f:", "c:"))],
                                 lambda owners: self._hit_rows(scope, owners), _row_bytes)
        facts = [rows[o] for o in scores if o.startswith("f:") and o in rows]
        chunks = [rows[o] for o in scores if o.startswith("c:") and o in rows]
        for fact_id, content, source in facts:
            out[f"f:{fact_id}"] = (SearchHit("fact", fact_id, content, 0.0, source), scores[f"f:{fact_id}"])
        for pk, kind, path, start, end, chunk in chunks:
            if kind == "episode":  # a turn: "episodes/<episode id>#<turn index>"
                out[f"c:{pk}"] = (SearchHit(kind, f"{path}#{start}", chunk, 0.0, f"{path}#{start}"), scores[f"c:{pk}"])
            else:
                out[f"c:{pk}"] = (SearchHit(kind, f"{path}#L{start}-L{end}", chunk, 0.0, path), scores[f"c:{pk}"])
        return out


def _row_bytes(row: tuple) -> int:
    """About what a hit's row takes in memory."""
    return 150 + 2 * sum(len(x) for x in row if isinstance(x, str))
