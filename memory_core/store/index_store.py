"""The SQL of the search index: chunks, indexed documents, embeddings, token statistics and keyword queries.

Ranking, chunking, embedding upkeep and fusion live in `memory_core.search` (index, chunking, embedding_upkeep,
fusion); this module only reads and writes rows. An item is named by its owner: "f:<fact id>" or "c:<chunk pk>".
Keyword search runs FTS5 BM25 on SQLite (when the build has FTS5), ts_rank on PostgreSQL (their SQL is
`store.keyword_ranking`'s), and a substring scan for what neither indexes.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Iterable, Sequence

from sqlalchemy import bindparam, delete, func, select, text

from memory_core.scope import Scope
from memory_core.store.db import Database
from memory_core.store.keyword_ranking import RankedQuery, ranked, scope_sizes
from memory_core.store.models import ChunkRow, EmbeddingRow, FactRow, IndexedDocRow, TokenStatsRow

# Keyword search's tables: (table, owner expression, text column, extra condition: only valid facts are searched).
_TABLES = (("facts", "'f:' || t.id", "content", " AND t.invalid_at IS NULL"), ("chunks", "'c:' || t.pk", "text", ""))
# (owner, dim, text hash, vector bytes) of one `embeddings` row; dim <= 0 marks failed attempts, no vector
EmbeddingWrite = tuple[str, int, str, bytes]


# What every search reads, built once: building a statement costs more than SQLite takes to run these. Their
# parameters: the scope (:u, :a) and the names given.
_ITEM_COUNT = text("SELECT (SELECT coalesce(max(n), 0) FROM fact_counts WHERE user_id = :u AND agent_name = :a) "
                   "+ (SELECT count(*) FROM chunks WHERE user_id = :u AND agent_name = :a)")  # facts: m004's count
_SCOPE_VERSION = text("SELECT v FROM scope_versions WHERE user_id = :u AND agent_name = :a")  # m034
_HAS_CHUNKS = text("SELECT EXISTS (SELECT 1 FROM chunks WHERE user_id = :u AND agent_name = :a)")
_INDEXED_DOCS = select(IndexedDocRow.path, IndexedDocRow.content_hash).where(
    IndexedDocRow.user_id == bindparam("u"), IndexedDocRow.agent_name == bindparam("a"))
_TOKEN_STATS = select(TokenStatsRow.version, TokenStatsRow.items).where(
    TokenStatsRow.user_id == bindparam("u"), TokenStatsRow.agent_name == bindparam("a"),
    TokenStatsRow.model == bindparam("m"))
_HIT_FACTS = select(FactRow.id, FactRow.content, FactRow.source, FactRow.user_id, FactRow.agent_name,
                    FactRow.invalid_at.is_(None)).where(FactRow.id.in_(bindparam("ids", expanding=True)))  # no date read
_HIT_CHUNKS = select(ChunkRow.pk, ChunkRow.kind, ChunkRow.path, ChunkRow.start_line, ChunkRow.end_line, ChunkRow.text,
                     ).where(ChunkRow.pk.in_(bindparam("pks", expanding=True)), ChunkRow.user_id == bindparam("u"),
                             ChunkRow.agent_name == bindparam("a"))


def _scope(scope: Scope) -> dict[str, str]:
    return {"u": scope.user_id, "a": scope.agent_name}


class IndexStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    @property
    def keyword_backend(self) -> str:
        """"bm25" (SQLite with FTS5), "ts_rank" (PostgreSQL) or "substring" (SQLite without FTS5)."""
        if self.db.dialect == "sqlite" and self.db.has_fts5:
            return "bm25"
        return "ts_rank" if self.db.dialect == "postgresql" else "substring"

    def scope_version(self, scope: Scope) -> int | None:
        """The scope's version (m034): a new one with every write to what its searches and injections read; None
        for a scope nothing was written to. Read once in a `reads()` block's transaction (what else it reads of the
        scope is at that version or newer, never older)."""
        def read() -> int | None:
            with self.db.rows() as s:
                return s.execute(_SCOPE_VERSION, _scope(scope)).scalar()

        return self.db.once(("scope_version", scope), read)

    # -- items and chunks -----------------------------------------------------------------------

    def has_chunks(self, scope: Scope) -> bool:
        """Whether the scope has any chunk (an episode's turn, a piece of a daily log or of MEMORY.md)."""
        with self.db.rows() as s:
            return bool(s.execute(_HAS_CHUNKS, _scope(scope)).scalar())

    def item_count(self, scope: Scope) -> int:
        """The scope's valid facts plus its chunks."""
        with self.db.rows() as s:
            return s.execute(_ITEM_COUNT, _scope(scope)).scalar()

    def items(self, scope: Scope) -> list[tuple[str, str]]:
        """(owner, text) of the scope's searchable items: valid facts, then chunks."""
        with self.db.read() as s:
            facts = s.execute(select(FactRow.id, FactRow.content).where(
                FactRow.user_id == scope.user_id, FactRow.agent_name == scope.agent_name,
                FactRow.invalid_at.is_(None))).all()  # superseded and forgotten facts are not searched
            chunks = s.execute(select(ChunkRow.pk, ChunkRow.text).where(
                ChunkRow.user_id == scope.user_id, ChunkRow.agent_name == scope.agent_name)).all()
        return [(f"f:{i}", c) for i, c in facts] + [(f"c:{pk}", t) for pk, t in chunks]

    def item_marks(self, scope: Scope) -> tuple[int, int]:
        """The highest fact pk and chunk pk of the scope (0 when none): items added later have higher ones."""
        with self.db.read() as s:
            fact = s.execute(select(func.max(FactRow.pk)).where(
                FactRow.user_id == scope.user_id, FactRow.agent_name == scope.agent_name)).scalar()
            chunk = s.execute(select(func.max(ChunkRow.pk)).where(
                ChunkRow.user_id == scope.user_id, ChunkRow.agent_name == scope.agent_name)).scalar()
        return fact or 0, chunk or 0

    def items_after(self, scope: Scope, fact_pk: int, chunk_pk: int,
                    limit: int) -> tuple[list[tuple[str, str]], int, int]:
        """(owner, text) of the valid facts and chunks added after the marks (at most `limit` of each), with
        the marks that follow them."""
        with self.db.read() as s:
            facts = s.execute(select(FactRow.pk, FactRow.id, FactRow.content, FactRow.invalid_at).where(
                FactRow.user_id == scope.user_id, FactRow.agent_name == scope.agent_name, FactRow.pk > fact_pk)
                .order_by(FactRow.pk).limit(limit)).all()
            chunks = s.execute(select(ChunkRow.pk, ChunkRow.text).where(
                ChunkRow.user_id == scope.user_id, ChunkRow.agent_name == scope.agent_name, ChunkRow.pk > chunk_pk)
                .order_by(ChunkRow.pk).limit(limit)).all()
        items = [(f"f:{i}", c) for _pk, i, c, invalid in facts if invalid is None] + [(f"c:{pk}", t) for pk, t in chunks]
        return items, (facts[-1][0] if facts else fact_pk), (chunks[-1][0] if chunks else chunk_pk)

    def indexed_docs(self, scope: Scope) -> dict[str, str]:
        """The content hash of each document of the scope as last chunked, by path."""
        with self.db.rows() as s:
            return dict(s.execute(_INDEXED_DOCS, _scope(scope)).all())

    def replace_chunks(self, scope: Scope, path: str, kind: str, day: str | None,
                       chunks: Iterable[tuple[int, int, str]], digest: str | None) -> list[int]:
        """Replace the document's chunks (and their vectors) by `chunks` (start line, end line, text) and
        record its hash; `digest` None forgets the document. A chunk that is the same as before (lines, text and
        kind) keeps its row and its vector (a line appended to a log changes its last chunk alone). Returns the
        primary keys of the chunks that went."""
        with self.db.write(lock=f"index:{scope.key}:{path}") as s:
            kept: dict[tuple, int] = {}
            old: list[int] = []
            for pk, *same in s.execute(select(ChunkRow.pk, ChunkRow.start_line, ChunkRow.end_line, ChunkRow.text,
                                              ChunkRow.kind, ChunkRow.day).where(
                    ChunkRow.user_id == scope.user_id, ChunkRow.agent_name == scope.agent_name, ChunkRow.path == path)):
                if tuple(same) in kept or same[3:] != [kind, day]:
                    old.append(pk)
                else:
                    kept[tuple(same)] = pk
            new = []
            for start, end, chunk in chunks:
                if kept.pop((start, end, chunk, kind, day), None) is None:
                    new.append(ChunkRow(user_id=scope.user_id, agent_name=scope.agent_name, kind=kind, path=path,
                                        start_line=start, end_line=end, text=chunk, day=day))
            old += kept.values()  # not among the new chunks
            for lo in range(0, len(old), 500):
                part = old[lo:lo + 500]
                s.execute(delete(EmbeddingRow).where(EmbeddingRow.owner.in_([f"c:{pk}" for pk in part])))
                s.execute(delete(ChunkRow).where(ChunkRow.pk.in_(part)))
            s.add_all(new)
            row = s.get(IndexedDocRow, (scope.user_id, scope.agent_name, path))
            if digest is None:
                if row is not None:
                    s.delete(row)
            elif row is None:
                s.add(IndexedDocRow(user_id=scope.user_id, agent_name=scope.agent_name, path=path, content_hash=digest))
            else:
                row.content_hash = digest
                s.add(row)
        return list(old)

    def scopes(self) -> set[Scope]:
        """Every scope that has facts or chunks."""
        with self.db.read() as s:
            scopes = {Scope(u, a) for u, a in s.execute(select(FactRow.user_id, FactRow.agent_name).distinct()).all()}
            scopes |= {Scope(u, a) for u, a in s.execute(select(ChunkRow.user_id, ChunkRow.agent_name).distinct()).all()}
        return scopes

    # -- embeddings -----------------------------------------------------------------------------

    def embedding_rows(self, scope: Scope, model: str) -> list[tuple[str, str, int]]:
        """(owner, text hash, dim) of the scope's embeddings of `model`, failure marks included."""
        with self.db.read() as s:
            return [tuple(r) for r in s.execute(select(EmbeddingRow.owner, EmbeddingRow.text_hash, EmbeddingRow.dim).where(
                EmbeddingRow.user_id == scope.user_id, EmbeddingRow.agent_name == scope.agent_name,
                EmbeddingRow.model == model)).all()]

    def embedding_rows_of(self, scope: Scope, model: str, owners: list[str]) -> list[tuple[str, str, int]]:
        """`embedding_rows` of the named owners only."""
        with self.db.read() as s:
            return [tuple(r) for r in s.execute(select(EmbeddingRow.owner, EmbeddingRow.text_hash, EmbeddingRow.dim).where(
                EmbeddingRow.user_id == scope.user_id, EmbeddingRow.agent_name == scope.agent_name,
                EmbeddingRow.model == model, EmbeddingRow.owner.in_(owners))).all()] if owners else []

    def write_embeddings(self, scope: Scope, model: str, rows: Sequence[EmbeddingWrite]) -> None:
        """Replace the embeddings of `model` of the rows' owners, in one transaction."""
        with self.db.write(lock=f"embed:{scope.key}") as s:
            s.execute(delete(EmbeddingRow).where(EmbeddingRow.model == model,
                                                 EmbeddingRow.owner.in_([owner for owner, *_ in rows])))
            for owner, dim, digest, vector in rows:
                s.add(EmbeddingRow(owner=owner, model=model, user_id=scope.user_id, agent_name=scope.agent_name,
                                   dim=dim, text_hash=digest, vector=vector))

    def drop_embeddings(self, scope: Scope, model: str, owners: Iterable[str]) -> None:
        with self.db.write(lock=f"embed:{scope.key}") as s:
            s.execute(delete(EmbeddingRow).where(EmbeddingRow.model == model, EmbeddingRow.owner.in_(list(owners))))

    def _vectors(self, scope: Scope, model: str) -> tuple:
        return (EmbeddingRow.user_id == scope.user_id, EmbeddingRow.agent_name == scope.agent_name,
                EmbeddingRow.model == model, EmbeddingRow.dim > 0)  # not the marks of failed items

    def vector_count(self, scope: Scope, model: str) -> int:
        with self.db.rows() as s:
            return s.execute(select(func.count()).select_from(EmbeddingRow).where(*self._vectors(scope, model))).scalar()

    def vectors(self, scope: Scope, model: str) -> list[tuple[str, bytes]]:
        """(owner, float32 bytes) of the scope's vectors of `model`."""
        with self.db.read() as s:
            return [tuple(r) for r in s.execute(select(EmbeddingRow.owner, EmbeddingRow.vector).where(
                *self._vectors(scope, model))).all()]

    # -- token statistics -----------------------------------------------------------------------

    @staticmethod
    def _stats_of(scope: Scope, model: str) -> tuple:
        return (TokenStatsRow.user_id == scope.user_id, TokenStatsRow.agent_name == scope.agent_name,
                TokenStatsRow.model == model)

    def token_stats(self, scope: Scope, model: str) -> tuple[str, int] | None:
        """(version, items) of the scope's IDF snapshot for `model`, or None."""
        with self.db.rows() as s:
            row = s.execute(_TOKEN_STATS, {**_scope(scope), "m": model}).first()
        return None if row is None else (row.version, row.items)

    def token_df(self, scope: Scope, model: str, version: str) -> bytes | None:
        """The int32 document frequencies of that snapshot version; None when it was replaced meanwhile."""
        with self.db.read() as s:
            return s.execute(select(TokenStatsRow.df).where(*self._stats_of(scope, model),
                                                            TokenStatsRow.version == version)).scalar()

    def save_token_stats(self, scope: Scope, model: str, items: int, version: str, df: bytes) -> None:
        with self.db.write(lock=f"stats:{scope.key}") as s:
            row = s.get(TokenStatsRow, (scope.user_id, scope.agent_name, model))
            if row is None:
                row = TokenStatsRow(user_id=scope.user_id, agent_name=scope.agent_name, model=model, items=0,
                                    version="", df=b"")
            row.items, row.version, row.df = items, version, df
            s.add(row)

    # -- retrieval ------------------------------------------------------------------------------

    def scope_sizes(self, scope: Scope, facts_only: bool = False) -> dict[str, int]:
        """{table: the scope's rows} of the tables keyword search reads (`store.keyword_ranking.scope_sizes`)."""
        with self.db.rows() as s:
            return scope_sizes(s, [table for table, *_ in (_TABLES[:1] if facts_only else _TABLES)], _scope(scope))

    def keyword_scores(self, scope: Scope, queries: Sequence[tuple[str, list[str]]],
                       limit: int, session=None, facts_only: bool = False,
                       sizes: dict[str, int] | None = None) -> list[dict[str, float]]:
        """Each query's scores by owner, in one read: ("bm25:<index>", terms: FTS5 BM25 over the index "words" or
        "fts" of any of the terms; higher is better), ("ts_rank", words: PostgreSQL's rank of any word as a prefix),
        or ("substring", terms: one point per term found). `session`: a write transaction's (a FactTransaction's
        `s`), to read what it sees, inside its lock; `facts_only`: valid facts alone, no chunks, ranked by the query's telling terms
        (a candidate read: `store.keyword_ranking.telling_terms`). A ranked query of a scope larger than
        KEYWORD_SCOPE_CAP leaves its common terms out (see `store.keyword_ranking`). `sizes`: `scope_sizes`, when the
        caller has them."""
        params = {"u": scope.user_id, "a": scope.agent_name, "n": limit}
        tables = _TABLES[:1] if facts_only else _TABLES
        out: list[dict[str, float]] = []
        with nullcontext(session) if session is not None else self.db.rows() as s:
            if sizes is None:
                sizes = scope_sizes(s, [table for table, *_ in tables], params) if queries else {}
            for kind, terms in queries:
                if kind in ("bm25:words", "bm25:fts", "ts_rank"):
                    found: dict[str, float] = {}
                    for table in tables:
                        if sizes[table[0]] == 0:  # the scope has none of these rows: nothing to match
                            continue
                        found.update(ranked(s, RankedQuery(kind, *table, scope.user_id, scope.agent_name), terms, params,
                                            sizes[table[0]], candidates=facts_only))
                    out.append(found)
                elif kind == "substring":  # a scan of the scope's rows, of the tables it has rows of
                    out.append(self._substring(s, terms, params, tuple(t for t in tables if sizes[t[0]])))
                else:
                    raise ValueError(f"unknown keyword query {kind!r}")
        return out

    @staticmethod
    def _substring(s, terms: list[str], params: dict, tables: tuple = _TABLES) -> dict[str, float]:
        found: dict[str, float] = {}
        for term in terms:
            like = "%" + term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            for table, owner, col, valid in tables:
                rows = s.execute(text(
                    f"SELECT {owner} FROM {table} t WHERE t.user_id = :u AND t.agent_name = :a{valid} "
                    f"AND lower(t.{col}) LIKE :p ESCAPE '\\' LIMIT :n"), {**params, "p": like}).all()
                for (o,) in rows:
                    found[o] = found.get(o, 0.0) + 1.0
        return found

    def hit_rows(self, scope: Scope, fact_ids: list[str], chunk_pks: list[int]) -> tuple[list[tuple], list[tuple]]:
        """The valid facts (id, content, source) and chunks (pk, kind, path, start line, end line, text) named,
        of the scope only."""
        facts: list[tuple] = []
        chunks: list[tuple] = []
        with self.db.rows() as s:
            if fact_ids:  # by id alone, so that the planner takes the id index; scope and validity checked here
                facts = [(i, content, source) for i, content, source, u, a, valid
                         in s.execute(_HIT_FACTS, {"ids": list(fact_ids)})
                         if valid and u == scope.user_id and a == scope.agent_name]
            if chunk_pks:
                chunks = [tuple(r) for r in s.execute(_HIT_CHUNKS, {**_scope(scope), "pks": list(chunk_pks)})]
        return facts, chunks
