"""Embedding upkeep: a scope's vectors kept in step with its items (facts and chunks), by model.

Vectors are float32 BLOBs keyed by owner and model; a different model re-embeds everything. Token-weighted
embedders pool with the scope's inverse document frequencies, from a snapshot (see `weighting`). An item whose
embedding fails is marked and tried again later (see MAX_EMBED_ATTEMPTS). The SQL is `store.index_store`'s;
the index (`search.index`) asks this module for vectors and is told when they change.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable

import numpy as np

from memory_core.errors import EmbeddingError
from memory_core.text.redact import scrub
from memory_core.scope import Scope
from memory_core.store.index_store import IndexStore
from memory_core.search.cache import BytesLRU
from memory_core.search.embedders import Embedder, batches

log = logging.getLogger(__name__)
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
# When a search finds a scope changed, the items added since its last check are found by their primary keys (a
# marker, not a sweep) and at most INLINE_ITEMS of them embedded within the request. A scope of up to this many
# items is checked in full (every item's text hash) the first time, after an edit, and when more were added; a
# larger one does that in the background while search ranks what has vectors (keyword search finds the rest),
# and its edited texts are re-embedded by the worker's back-fill.
FULL_CHECK_ON_REQUEST = 2_000
INLINE_ITEMS = 64
# A scope this process knows embedded, and has changed nothing of since, is not counted again for this long: what
# another process adds is embedded within it (keyword search finds it at once), as the index's matrix sees it.
RECHECK_SECONDS = 1.0
KNOWN_SCOPES = 10_000  # the per-scope bookkeeping (counts and markers) of at most this many scopes is kept
_PROBE = "memory"  # embedded when a batch fails, to tell a failing embedder from failing items


@dataclass(frozen=True)
class _Pending:
    """An item to embed: its owner ("f:<id>" or "c:<pk>"), text, vector hash, text hash and failed attempts."""

    owner: str
    text: str
    digest: str
    text_hash: str
    attempts: int


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def idf(df: np.ndarray, items: int) -> np.ndarray:
    """BM25's inverse document frequency, always positive: tokens no item holds weigh the most."""
    return np.log1p((items - df + 0.5) / (df + 0.5)).astype(np.float32)


def drifted(snapshot_items: int, items: int) -> bool:
    return items >= 2 * snapshot_items + 4 or 2 * items + 4 <= snapshot_items


class EmbeddingUpkeep:
    """Embeds what has no vector (or whose text changed), drops orphans, keeps the IDF snapshots; `changed(scope)`
    is called whenever a scope's vectors change (the index drops its cached matrix)."""

    def __init__(self, store: IndexStore, embedder: Embedder, changed: Callable[..., None],
                 cache: BytesLRU | None = None) -> None:
        """`changed(scope, written, dropped)` hears of every change to a scope's vectors: `written` the
        (owner, vector) pairs written, `dropped` the owners whose vectors went. `cache` holds the IDF weights."""
        self.store = store
        self.embedder = embedder
        self._changed = changed
        self._lock = threading.RLock()
        self._embedded: OrderedDict[Scope, tuple[int, float]] = OrderedDict()  # scopes known embedded: (items, when)
        self._marks: OrderedDict[Scope, tuple[int, int]] = OrderedDict()  # (fact pk, chunk pk) of the last check
        self._edited: OrderedDict[Scope, None] = OrderedDict()  # scopes changed by more than additions since
        self.cache = cache if cache is not None else BytesLRU(64 << 20)  # IDF snapshots by version
        self._deferred: set[Scope] = set()
        self._worker: threading.Thread | None = None
        self._closing = False

    def forget(self, scope: Scope | None = None, *, added_only: bool = False) -> None:
        """Something changed in `scope` (every scope when None): check it at the next `ensure`, in full unless
        only items were added (then the marker finds them)."""
        with self._lock:
            if scope is None:
                self._embedded.clear()
                self._marks.clear()
                return
            self._embedded.pop(scope, None)
        if not added_only:
            self._remember(self._edited, scope, None)

    def rewind(self, scope: Scope, chunk_pk: int) -> None:
        """Chunks from primary key `chunk_pk` on were deleted and others added: the marker looks again from there
        (SQLite gives a new row the key of the last one deleted), at the next `ensure`."""
        with self._lock:
            marks = self._marks.get(scope)
            if marks is not None and marks[1] >= chunk_pk:
                self._marks[scope] = (marks[0], chunk_pk - 1)
        self.forget(scope, added_only=True)

    def _remember(self, table: OrderedDict, scope: Scope, value) -> None:
        with self._lock:
            table[scope] = value
            table.move_to_end(scope)
            while len(table) > KNOWN_SCOPES:
                table.popitem(last=False)

    def ensure(self, scope: Scope, batch: int = EMBED_BATCH_ITEMS, force: bool = False) -> int:
        """Embed what has no vector for the current model (or whose text changed); drop orphans; return
        how many vectors were written.

        Skipped when this process has changed nothing in the scope and its item count is what it was
        at the last check; a large scope is brought up to date by its marker (see FULL_CHECK_ON_REQUEST);
        `force` (the worker's periodic back-fill) always checks every item, which also catches edits made
        by other processes, and may take a new IDF snapshot at any size. An item that fails is marked and
        skipped (see MAX_EMBED_ATTEMPTS); EmbeddingError only when the embedder itself fails, with nothing marked.
        """
        known = self._embedded.get(scope)
        if not force and known is not None and time.monotonic() - known[1] < RECHECK_SECONDS:
            return 0
        count = self.store.item_count(scope)
        if not force and known is not None and known[0] == count:
            self._remember(self._embedded, scope, (count, time.monotonic()))
            return 0
        marks = self._marks.get(scope)
        if force or (count <= FULL_CHECK_ON_REQUEST and (marks is None or scope in self._edited)):
            return self._full(scope, batch, force, count)
        if marks is None:
            self.defer(scope)
            return 0
        items, fact_pk, chunk_pk = self.store.items_after(scope, *marks, INLINE_ITEMS + 1)
        if len(items) > INLINE_ITEMS:
            if count <= FULL_CHECK_ON_REQUEST:
                return self._full(scope, batch, force, count)
            self.defer(scope)
            return 0
        written = self._embed_items(scope, items, self.weighting(scope), batch) if items else 0
        self._remember(self._marks, scope, (fact_pk, chunk_pk))
        self._remember(self._embedded, scope, (count, time.monotonic()))
        return written

    def defer(self, scope: Scope) -> None:
        """Check `scope` in full in the background (one thread, one scope at a time)."""
        with self._lock:
            if self._closing or scope in self._deferred:
                return
            self._deferred.add(scope)
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._run_deferred, name="memory-core-embed", daemon=True)
                self._worker.start()

    def _run_deferred(self) -> None:
        while True:
            with self._lock:
                if self._closing or not self._deferred:
                    self._deferred.clear()
                    self._worker = None
                    return
                scope = next(iter(self._deferred))
            try:
                self._full(scope, EMBED_BATCH_ITEMS, False, self.store.item_count(scope))
            except Exception:  # the worker's back-fill tries again; search meanwhile ranks what has vectors
                log.exception("embedding scope %s in the background failed", scope.key)
            with self._lock:
                self._deferred.discard(scope)

    def wait(self, timeout: float | None = 30.0) -> None:
        """Wait until the background embedding has finished (tests, benchmarks)."""
        worker = self._worker
        if worker is not None:
            worker.join(timeout)

    def close(self, timeout: float | None = 30.0) -> None:
        """Stop taking background work; wait for the scope in hand."""
        with self._lock:
            self._closing = True
        self.wait(timeout)

    def _full(self, scope: Scope, batch: int, force: bool, count: int) -> int:
        """Check every item of the scope (see `ensure`)."""
        model = self.embedder.model_name
        item_marks = self.store.item_marks(scope)
        with self._lock:
            self._edited.pop(scope, None)  # changes from here on are seen by the next check
        items = self.store.items(scope)
        version, weights = self.weighting(scope, count if force or count <= REFRESH_ON_REQUEST else None, items)
        rows = self.store.embedding_rows(scope, model)
        have = {owner: digest for owner, digest, dim in rows if dim > 0}
        marks = {owner: (digest, -dim) for owner, digest, dim in rows if dim <= 0}
        dim = next((d for _, _, d in rows if d > 0), None)
        todo: list[_Pending] = []
        for owner, t in items:
            digest = sha(f"{version}\0{t}" if version else t)
            if have.get(owner) == digest:
                continue
            text_hash = sha(t)
            marked_hash, attempts = marks.get(owner, ("", 0))
            attempts = attempts if marked_hash == text_hash else 0  # a changed text starts afresh
            if attempts < MAX_EMBED_ATTEMPTS:
                todo.append(_Pending(owner, t, digest, text_hash, attempts))
        orphans = {o for o, _, _ in rows} - {owner for owner, _ in items}
        written = self._write(scope, todo, weights, dim, batch)
        if orphans:
            self.store.drop_embeddings(scope, model, orphans)
            self._changed(scope, [], orphans)
        self._remember(self._marks, scope, item_marks)
        self._remember(self._embedded, scope, (count, time.monotonic()))
        return written

    def _embed_items(self, scope: Scope, items: list[tuple[str, str]], weighting: tuple[str, np.ndarray | None],
                     batch: int) -> int:
        """Embed the (owner, text) items that have no current vector (new ones, found by the marker)."""
        version, weights = weighting
        rows = self.store.embedding_rows_of(scope, self.embedder.model_name, [owner for owner, _ in items])
        have = {owner: digest for owner, digest, dim in rows if dim > 0}
        marks = {owner: (digest, -dim) for owner, digest, dim in rows if dim <= 0}
        todo = []
        for owner, t in items:
            digest = sha(f"{version}\0{t}" if version else t)
            if have.get(owner) == digest:
                continue
            text_hash = sha(t)
            marked_hash, attempts = marks.get(owner, ("", 0))
            attempts = attempts if marked_hash == text_hash else 0
            if attempts < MAX_EMBED_ATTEMPTS:
                todo.append(_Pending(owner, t, digest, text_hash, attempts))
        return self._write(scope, todo, weights, None, batch)

    def _write(self, scope: Scope, todo: list[_Pending], weights: np.ndarray | None, dim: int | None,
               batch: int) -> int:
        """Embed the pending items in bounded batches and write their vectors (or failure marks)."""
        model = self.embedder.model_name
        written = 0
        for lo, hi in batches([p.text for p in todo], batch, EMBED_BATCH_CHARS):
            part = todo[lo:hi]
            results, dim = self._embed_part([p.text for p in part], weights, dim)
            rows_out = []
            vectors = []
            for pending, result in zip(part, results):
                if isinstance(result, EmbeddingError):  # the mark: no vector, minus the attempts
                    self._log_failure(scope, pending.owner, pending.attempts + 1, result)
                    rows_out.append((pending.owner, -(pending.attempts + 1), pending.text_hash, b""))
                else:
                    written += 1
                    rows_out.append((pending.owner, int(result.shape[0]), pending.digest, result.tobytes()))
                    vectors.append((pending.owner, result))
            self.store.write_embeddings(scope, model, rows_out)
            self._changed(scope, vectors, {p.owner for p, r in zip(part, results) if isinstance(r, EmbeddingError)})
        return written

    def backfill(self) -> int:
        """Embed what is missing in every scope that has facts or chunks (the worker runs this)."""
        return sum(self.ensure(scope, force=True) for scope in sorted(self.store.scopes()))

    def embed_query(self, scope: Scope, query: str) -> np.ndarray:
        """The query's vector, pooled like the scope's items (asymmetric models such as e5 prefix queries)."""
        embed_query = getattr(self.embedder, "embed_query", None)
        return embed_query(query) if embed_query else self.checked([query], self.weighting(scope)[1], None)[0]

    def _embed_part(self, texts: list[str], weights: np.ndarray | None,
                    dim: int | None) -> tuple[list[np.ndarray | EmbeddingError], int | None]:
        """Each text's vector, or the error that its embedding alone raised; and the vectors' dimension.

        A failing batch is first told apart from a failing embedder (a probe text must embed, or this
        raises EmbeddingError and nothing is marked), then halved until the texts that fail are alone."""
        try:
            vectors = self.checked(texts, weights, dim)
            return list(vectors), vectors.shape[1]
        except EmbeddingError as exc:
            error = exc
        try:
            dim = self.checked([_PROBE], weights, dim).shape[1]
        except EmbeddingError as exc:
            raise EmbeddingError(f"the embedder {self.embedder.model_name} is failing: {exc}") from error
        if len(texts) == 1:
            return [error], dim
        half = len(texts) // 2
        return self._each(texts[:half], weights, dim) + self._each(texts[half:], weights, dim), dim

    def _each(self, texts: list[str], weights: np.ndarray | None, dim: int) -> list[np.ndarray | EmbeddingError]:
        """Each text's vector or error: the texts together, else each half on its own, down to one."""
        try:
            return list(self.checked(texts, weights, dim))
        except EmbeddingError as exc:
            if len(texts) == 1:
                return [exc]
        half = len(texts) // 2
        return self._each(texts[:half], weights, dim) + self._each(texts[half:], weights, dim)

    def checked(self, texts: list[str], weights: np.ndarray | None, dim: int | None) -> np.ndarray:
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

    def embed_all(self, texts: list[str], weights: np.ndarray | None) -> np.ndarray:
        """Vectors of any number of texts, in bounded batches (for re-ranking; failures raise)."""
        parts = [self._embed(texts[lo:hi], weights) for lo, hi in batches(texts, EMBED_BATCH_ITEMS, EMBED_BATCH_CHARS)]
        return np.concatenate(parts) if parts else np.zeros((0, self.embedder.dim), dtype=np.float32)

    def weighting(self, scope: Scope, count: int | None = None,
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
        cached = self.cache.get(("weights", scope, model))
        if count is None and cached is not None and time.monotonic() - cached[2] < RECHECK_SECONDS:
            return cached[0], cached[1]  # a query's: the snapshot read in the last second (another's seen within it)
        row = self.store.token_stats(scope, model)
        if row is None or (count is not None and drifted(row[1], count)):
            return self._snapshot(scope, items if items is not None else self.store.items(scope))
        version, snapshot_items = row
        if cached is None or cached[0] != version:
            blob = self.store.token_df(scope, model, version)
            if blob is None:  # replaced by another process in between
                self.cache.pop(("weights", scope, model))
                return self.weighting(scope, None)
            weights = idf(np.frombuffer(blob, dtype=np.int32), snapshot_items)
        else:
            weights = cached[1]
        self.cache.put(("weights", scope, model), (version, weights, time.monotonic()), weights.nbytes + 200)
        return version, weights

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
        self.cache.put(("weights", scope, model), (version, weights, time.monotonic()), weights.nbytes + 200)
        return version, weights
