"""The SQL of a ranked keyword query (FTS5 BM25 on SQLite, ts_rank on PostgreSQL) that stays fast as a scope grows.

The engine scores every row a query matches before it keeps the best, so a term that many of a large scope's rows
hold makes each search slower as the scope grows, for little: a common term weighs little in either rank. A scope of
up to KEYWORD_SCOPE_CAP rows is ranked by the whole query, as it always was. In a larger one, each term's matches
in the whole table are counted first (up to KEYWORD_TERM_CAP, so that counting costs no more than that; PostgreSQL
estimates them from ANALYZE's statistics of the tsvector column, since a count reads the rows themselves): the terms
under the cap are ranked alone (the scope's rows kept by their table, not by the word index, whose scope word every
row of the scope holds); when they find fewer rows than asked (or there are none), the best of the scope's newest
KEYWORD_TERM_CAP matches of the whole query fill the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from sqlalchemy import text as _text

# A scope of up to this many rows (of one table) is ranked by the whole query.
KEYWORD_SCOPE_CAP = 20_000
# Matches of one term (in the whole table) above which a larger scope's query leaves it out.
KEYWORD_TERM_CAP = 2000
# A candidate read (the facts a new statement may repeat or replace): a term that more than this share of the scope's
# facts hold (and more than CANDIDATE_TERM_MIN) is left out, when another term of the query is rarer and found
# (`telling_terms`).
CANDIDATE_TERM_SHARE = 0.1
CANDIDATE_TERM_MIN = 200


def scope_word(user_id: str, agent_name: str) -> str:
    """The word that names a scope in the word index's `scope` column (m031 writes it the same way in SQL)."""
    return f"k{user_id.encode('utf-8').hex()}x{agent_name.encode('utf-8').hex()}x"


@lru_cache(maxsize=256)
def text(sql: str):
    """`sqlalchemy.text(sql)`, built once a string: a search's statements are a few dozen strings, and building one
    (its bind parameters found by a pattern) costs about as much as SQLite running it on a small scope."""
    return _text(sql)


@dataclass(frozen=True)
class RankedQuery:
    """One table's ranked query of one kind: "bm25:words" (m031's scoped word index), "bm25:fts" (the trigram
    index) or "ts_rank" (PostgreSQL's stored tsvector of m030, GIN-indexed)."""

    kind: str
    table: str
    owner: str  # the SQL of an owner ("f:<id>" or "c:<pk>") from the table's row `t`
    column: str
    valid: str  # the extra condition on `t` (only valid facts are searched)
    user_id: str
    agent_name: str

    @property
    def index(self) -> str:
        return f"{self.table}_{self.kind[5:]}"

    def match(self, terms: list[str], in_scope: bool = False) -> str:
        """The engine's query text for rows holding any of `terms` (`in_scope`: the word index's rows of the scope,
        valid facts only)."""
        if self.kind == "ts_rank":
            return " | ".join(w + ":*" for w in terms)
        anyof = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        if self.kind == "bm25:fts":
            return anyof
        return (f'scope:"{scope_word(self.user_id, self.agent_name)}" AND ' if in_scope else "") + f"{self.column}:({anyof})"

    def matching(self, q: str) -> str:
        """FROM and WHERE of the table's rows (every scope's) that match the query text named `:{q}`."""
        if self.kind == "ts_rank":
            return f"FROM {self.table} t WHERE t.tsv @@ to_tsquery('simple', :{q})"
        return f"FROM {self.index} WHERE {self.index} MATCH :{q}"

    def ranking(self, *, as_before: bool = False, newest: bool = False) -> str:
        """The SQL of the best `:n` (owner, score) of the scope's rows matching `:q`, best first, higher scores
        better. `as_before`: the query of a scope under the cap (the word index's `:q` names the scope itself, and
        SQLite's planner picks the trigram index's join); `newest`: of the rows whose pk is at least `:floor`."""
        scoped = f"t.user_id = :u AND t.agent_name = :a{self.valid}"
        if self.kind == "ts_rank":
            return (f"SELECT {self.owner}, ts_rank(t.tsv, to_tsquery('simple', :q)) AS r {self.matching('q')} "
                    f"AND {scoped}{' AND t.pk >= :floor' if newest else ''} ORDER BY r DESC LIMIT :n")
        floor = f" AND {self.index}.rowid >= :floor" if newest else ""
        if self.kind == "bm25:fts":
            return (f"SELECT {self.owner}, -bm25({self.index}) {self._joined(lead=not as_before)}{floor} AND {scoped} "
                    f"ORDER BY bm25({self.index}) LIMIT :n")
        ranked = f"SELECT rowid AS pk, bm25({self.index}, 1.0, 0.0) AS score {self.matching('q')}{floor}"
        if as_before:  # ranked inside the index, then joined to the few rows kept
            return (f"SELECT {self.owner}, -m.score FROM ({ranked} ORDER BY score LIMIT :n) m "
                    f"JOIN {self.table} t ON t.pk = m.pk ORDER BY m.score")
        return f"SELECT {self.owner}, -m.score FROM ({ranked}) m CROSS JOIN {self.table} t ON t.pk = m.pk " \
               f"WHERE {scoped} ORDER BY m.score LIMIT :n"

    def newest_floor(self) -> str:
        """The SQL of the pk of the scope's KEYWORD_TERM_CAP-th newest row that matches `:q` (none when fewer do)."""
        if self.kind == "ts_rank":
            return (f"SELECT t.pk {self.matching('q')} AND t.user_id = :u AND t.agent_name = :a{self.valid} "
                    f"ORDER BY t.pk DESC LIMIT 1 OFFSET :cap")
        if self.kind == "bm25:words":
            return f"SELECT rowid {self.matching('q')} ORDER BY rowid DESC LIMIT 1 OFFSET :cap"
        return (f"SELECT {self.index}.rowid {self._joined()} AND t.user_id = :u AND t.agent_name = :a{self.valid} "
                f"ORDER BY {self.index}.rowid DESC LIMIT 1 OFFSET :cap")

    def _joined(self, lead: bool = True) -> str:
        """FROM and WHERE of the trigram index's matches of `:q` with their rows `t`; `lead`: the index leads (CROSS
        JOIN: else SQLite's planner may walk a large scope's rows and match each)."""
        return (f"FROM {self.index} {'CROSS JOIN' if lead else 'JOIN'} {self.table} t ON t.pk = {self.index}.rowid "
                f"WHERE {self.index} MATCH :q")


def scope_sizes(s, tables: list[str], params: dict) -> dict[str, int]:
    """{table: the scope's rows} of `tables` ("facts", "chunks"), in one read (facts: the trigger-kept count of m004;
    chunks counted up to KEYWORD_SCOPE_CAP + 1); a scope of more than KEYWORD_SCOPE_CAP rows of a table is large."""
    sizes = {"facts": "SELECT coalesce(max(n), 0) FROM fact_counts WHERE user_id = :u AND agent_name = :a",
             "chunks": "SELECT count(*) FROM (SELECT 1 FROM chunks WHERE user_id = :u AND agent_name = :a LIMIT :cap) c"}
    row = s.execute(text("SELECT " + ", ".join(f"({sizes[t]})" for t in tables)),
                    {**params, "cap": KEYWORD_SCOPE_CAP + 1}).one()
    return dict(zip(tables, row))


def ranked(s, query: RankedQuery, terms: list[str], params: dict, size: int,
           candidates: bool = False) -> dict[str, float]:
    """The best `params["n"]` owners of the scope's rows holding any of `terms`, with their scores: by the whole
    query unless the scope is large (`size`, its rows, over KEYWORD_SCOPE_CAP), else by its rare terms, the newest matches of the whole
    query filling what they leave (see the module). `candidates`: a read of the facts a statement may repeat or
    replace, by its telling terms (`telling_terms`)."""
    whole = query.kind == "bm25:words"  # the word index matches the scope itself
    large = size > KEYWORD_SCOPE_CAP
    if candidates and whole and not large and len(terms) > 1 and size > CANDIDATE_TERM_MIN:
        terms = telling_terms(s, query, terms, params, max(CANDIDATE_TERM_MIN, int(size * CANDIDATE_TERM_SHARE)))
    if not terms or not large:
        return _scores(s, query.ranking(as_before=True), {**params, "q": query.match(terms, whole)})
    counts = _estimates(s, query.table, terms) if query.kind == "ts_rank" else _counts(s, query, terms)
    rare = [t for t in terms if counts[t] <= KEYWORD_TERM_CAP]
    found = _scores(s, query.ranking(), {**params, "q": query.match(rare)}) if rare else {}
    if len(found) < params["n"] and len(rare) < len(terms):
        q = query.match(terms, whole)
        floor = s.execute(text(query.newest_floor()), {**params, "q": q, "cap": KEYWORD_TERM_CAP - 1}).scalar()
        few = whole and floor is None  # the scope's few matches: kept by the word index, not among every scope's
        newest = _scores(s, query.ranking(as_before=few, newest=floor is not None),
                         {**params, "q": query.match(terms, few), "floor": floor})
        for owner, score in sorted(newest.items(), key=lambda kv: kv[1], reverse=True):
            if len(found) >= params["n"]:
                break
            found.setdefault(owner, score)
    return found


def telling_terms(s, query: RankedQuery, terms: list[str], params: dict, cap: int) -> list[str]:
    """The terms of a candidate read worth ranking by: those at most `cap` of the scope's rows hold, when one of them
    is found at all and another is more common; else all of them. A fact that a statement repeats or replaces shares
    its telling words ("chess" of "I love chess"), not only the words a tenth of the scope holds ("love"), and BM25
    scores every row a term matches before it keeps the best (4.7 ms for "love" in a scope of 10,000 LoCoMo turns,
    1,476 of them holding it; counting each term in the scope up to the cap, 0.3-0.7 ms). A word that says which
    fact a statement replaces ("live" of "I live in Lisbon now") is held by few of a scope's facts, and kept. One
    read."""
    counts = _counts(s, query, terms, cap, in_scope=True)
    telling = [t for t in terms if 0 < counts[t] <= cap]
    return telling if telling and any(n > cap for n in counts.values()) else terms


def _counts(s, query: RankedQuery, terms: list[str], cap: int = KEYWORD_TERM_CAP,
            in_scope: bool = False) -> dict[str, int]:
    """How many rows of the table (every scope's; `in_scope`: the scope's valid ones, by the word index) hold each
    term, counted up to `cap` + 1: one read."""
    row = s.execute(text("SELECT " + ", ".join(
        f"(SELECT count(*) FROM (SELECT 1 {query.matching(f'q{i}')} LIMIT :cap) c{i})" for i in range(len(terms)))),
        {"cap": cap + 1, **{f"q{i}": query.match([t], in_scope) for i, t in enumerate(terms)}}).one()
    return dict(zip(terms, row))


def _estimates(s, table: str, words: list[str]) -> dict[str, int]:
    """PostgreSQL: about how many rows of the table hold each word (as a prefix), from ANALYZE's statistics of its
    tsvector column (the most common lexemes and their shares): counting would read every matching row from the
    heap. A word that starts none of them is rare (as is every word before the table was first analysed)."""
    row = s.execute(text("SELECT s.most_common_elems::text::text[], s.most_common_elem_freqs, "
                         "(SELECT reltuples FROM pg_class WHERE oid = to_regclass(:t)) FROM pg_stats s "
                         "WHERE s.schemaname = current_schema() AND s.tablename = :t AND s.attname = 'tsv'"),
                    {"t": table}).first()
    shares = list(zip(row[0], row[1])) if row is not None and row[0] is not None else []
    rows = float(row[2] or 0) if row is not None else 0.0
    return {w: round(rows * sum(share for lexeme, share in shares if lexeme.startswith(w))) for w in words}


def _scores(s, sql: str, params: dict) -> dict[str, float]:
    return {owner: float(score) for owner, score in s.execute(text(sql), params).all()}
