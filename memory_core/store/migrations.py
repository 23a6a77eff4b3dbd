"""Versioned schema migrations: an ordered list of small named functions.

Opening a database runs the ones it has not seen, under a lock, so that several processes opening
the same database at once apply each migration exactly once.
"""

from __future__ import annotations

import hashlib
import logging
import unicodedata
from datetime import datetime, timezone
from typing import Callable

from sqlalchemy import Connection, DateTime, bindparam, inspect, text
from sqlmodel import SQLModel

from memory_core.store import models
from memory_core.store.db import Database, lock_id
from memory_core.store import scope_versions

log = logging.getLogger(__name__)

# Every migration spells out its DDL and imports no live code, except m001: it creates the first tables
# from today's model classes (V1_TABLES). That stays safe while a later column comes with a migration of its
# own that adds it where it lacks (m007, m012 through `_add_columns`), so that a fresh database and a
# migrated one end alike; tests/store/test_migrations.py checks that the migrated schema matches the models.
V1_TABLES = [
    models.FactRow, models.FactAuditRow, models.SummaryRow, models.DocumentRow, models.CoreVersionRow,
    models.DreamStateRow, models.DreamRunRow, models.PendingUpdateRow, models.LeaseRow, models.PlanRow,
    models.ChunkRow, models.IndexedDocRow, models.EmbeddingRow,
]


def m001_initial(conn: Connection, db: Database) -> None:
    SQLModel.metadata.create_all(conn, tables=[t.__table__ for t in V1_TABLES])


def _sqlite_fts(conn: Connection, suffix: str, tokenize: str, rebuild: bool = False) -> None:
    """An FTS5 index `{table}_{suffix}` over facts.content and chunks.text, kept in sync by triggers."""
    for table, column in (("facts", "content"), ("chunks", "text")):
        index = f"{table}_{suffix}"
        conn.exec_driver_sql(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {index} USING fts5("
            f"{column}, content='{table}', content_rowid='pk', tokenize='{tokenize}')"
        )
        if rebuild:  # index what the table already holds
            conn.exec_driver_sql(f"INSERT INTO {index}({index}) VALUES ('rebuild')")
        conn.exec_driver_sql(
            f"CREATE TRIGGER IF NOT EXISTS {index}_ai AFTER INSERT ON {table} BEGIN "
            f"INSERT INTO {index}(rowid, {column}) VALUES (new.pk, new.{column}); END"
        )
        conn.exec_driver_sql(
            f"CREATE TRIGGER IF NOT EXISTS {index}_ad AFTER DELETE ON {table} BEGIN "
            f"INSERT INTO {index}({index}, rowid, {column}) VALUES ('delete', old.pk, old.{column}); END"
        )
        conn.exec_driver_sql(
            f"CREATE TRIGGER IF NOT EXISTS {index}_au AFTER UPDATE OF {column} ON {table} BEGIN "
            f"INSERT INTO {index}({index}, rowid, {column}) VALUES ('delete', old.pk, old.{column}); "
            f"INSERT INTO {index}(rowid, {column}) VALUES (new.pk, new.{column}); END"
        )


def m002_keyword_index(conn: Connection, db: Database) -> None:
    if db.dialect == "sqlite":
        _sqlite_fts(conn, "fts", "trigram")
    elif db.dialect == "postgresql":
        conn.execute(text("CREATE INDEX IF NOT EXISTS ix_facts_tsv ON facts USING gin (to_tsvector('simple', content))"))
        conn.execute(text("CREATE INDEX IF NOT EXISTS ix_chunks_tsv ON chunks USING gin (to_tsvector('simple', text))"))


def m003_word_index(conn: Connection, db: Database) -> None:
    """A word-level index with the Porter stemmer beside the trigram one: better ranking of English words
    (measured on LoCoMo: recall@10 0.62 against 0.60 for trigram alone), while trigrams keep CJK working."""
    if db.dialect == "sqlite":
        _sqlite_fts(conn, "words", "porter unicode61", rebuild=True)


def m004_fact_counts(conn: Connection, db: Database) -> None:
    """Facts per scope, kept by triggers, so that the max_facts check costs the same at any store size."""
    conn.exec_driver_sql("CREATE TABLE IF NOT EXISTS fact_counts (user_id VARCHAR(64) NOT NULL, "
                         "agent_name VARCHAR(64) NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (user_id, agent_name))")
    conn.exec_driver_sql("INSERT INTO fact_counts (user_id, agent_name, n) "
                         "SELECT user_id, agent_name, count(*) FROM facts GROUP BY user_id, agent_name")
    if db.dialect == "sqlite":
        conn.exec_driver_sql(
            "CREATE TRIGGER IF NOT EXISTS facts_count_ai AFTER INSERT ON facts BEGIN "
            "INSERT INTO fact_counts (user_id, agent_name, n) VALUES (new.user_id, new.agent_name, 1) "
            "ON CONFLICT (user_id, agent_name) DO UPDATE SET n = n + 1; END")
        conn.exec_driver_sql(
            "CREATE TRIGGER IF NOT EXISTS facts_count_ad AFTER DELETE ON facts BEGIN "
            "UPDATE fact_counts SET n = n - 1 WHERE user_id = old.user_id AND agent_name = old.agent_name; END")
    elif db.dialect == "postgresql":
        conn.exec_driver_sql("""
            CREATE OR REPLACE FUNCTION memory_core_fact_count() RETURNS trigger AS $$
            BEGIN
                IF TG_OP = 'INSERT' THEN
                    INSERT INTO fact_counts (user_id, agent_name, n) VALUES (NEW.user_id, NEW.agent_name, 1)
                    ON CONFLICT (user_id, agent_name) DO UPDATE SET n = fact_counts.n + 1;
                    RETURN NEW;
                END IF;
                UPDATE fact_counts SET n = n - 1 WHERE user_id = OLD.user_id AND agent_name = OLD.agent_name;
                RETURN OLD;
            END $$ LANGUAGE plpgsql""")
        conn.exec_driver_sql("CREATE TRIGGER facts_count AFTER INSERT OR DELETE ON facts "
                             "FOR EACH ROW EXECUTE FUNCTION memory_core_fact_count()")


def m005_pg_trgm(conn: Connection, db: Database) -> None:
    """On PostgreSQL, trigram indexes (pg_trgm) for the substring matching of CJK and short words, where the
    extension can be had; without it those searches scan, which is correct, only slower."""
    if db.dialect != "postgresql":
        return
    try:
        with conn.begin_nested():
            conn.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        with conn.begin_nested():
            conn.exec_driver_sql("CREATE INDEX IF NOT EXISTS ix_facts_trgm ON facts USING gin (lower(content) gin_trgm_ops)")
            conn.exec_driver_sql("CREATE INDEX IF NOT EXISTS ix_chunks_trgm ON chunks USING gin (lower(text) gin_trgm_ops)")
    except Exception as exc:  # no permission, or the extension lives in a schema not on the search path
        log.info("pg_trgm not available (%s); substring search will scan", type(exc).__name__)


def _create(conn: Connection, db: Database, *statements: str) -> None:
    """Run DDL written for both databases: {ts} is a zoned timestamp, {serial} an auto-numbered integer key,
    {blob} bytes (the types SQLModel gave these columns when the migration was written)."""
    pg = db.dialect == "postgresql"
    types = {"ts": "TIMESTAMP WITH TIME ZONE" if pg else "DATETIME", "serial": "SERIAL" if pg else "INTEGER",
             "blob": "BYTEA" if pg else "BLOB"}
    for statement in statements:
        conn.exec_driver_sql(statement.format(**types))


def m006_token_stats(conn: Connection, db: Database) -> None:
    """Per-scope token document frequencies, for the IDF-weighted pooling of static embedders."""
    _create(conn, db, "CREATE TABLE IF NOT EXISTS token_stats (user_id VARCHAR(64) NOT NULL, "
                      "agent_name VARCHAR(64) NOT NULL, model VARCHAR(128) NOT NULL, items INTEGER NOT NULL, "
                      "version VARCHAR(64) NOT NULL, df {blob} NOT NULL, PRIMARY KEY (user_id, agent_name, model))")


def _add_columns(conn: Connection, table: str, columns: dict[str, str]) -> None:
    """ALTER TABLE ADD COLUMN for those of `columns` (name -> SQL type) the table lacks: m001 creates tables
    from today's models, so a fresh database already has them."""
    have = {c["name"] for c in inspect(conn).get_columns(table)}
    for name, sql_type in columns.items():
        if name not in have:
            conn.exec_driver_sql(f"ALTER TABLE {table} ADD COLUMN {name} {sql_type}")


def m007_validity_and_actors(conn: Connection, db: Database) -> None:
    """Facts that change: valid_from / invalid_at / superseded_by (existing facts are valid from their
    creation); who did it: `actor` on the audit log, MEMORY.md versions and queued updates. The per-scope
    fact counts now count valid facts only (what max_facts is about)."""
    ts = "TIMESTAMP WITH TIME ZONE" if db.dialect == "postgresql" else "DATETIME"
    _add_columns(conn, "facts", {"valid_from": ts, "invalid_at": ts, "superseded_by": "VARCHAR(16)",
                                 "invalid_reason": "TEXT"})
    _add_columns(conn, "fact_audit", {"actor": "VARCHAR(256)"})
    _add_columns(conn, "core_versions", {"actor": "VARCHAR(256)"})
    _add_columns(conn, "pending_updates", {"actor": "VARCHAR(256)", "options": "TEXT"})
    conn.exec_driver_sql("UPDATE facts SET valid_from = created_at WHERE valid_from IS NULL")
    conn.exec_driver_sql("CREATE INDEX IF NOT EXISTS ix_facts_scope_invalid ON facts (user_id, agent_name, invalid_at)")
    if db.dialect == "sqlite":
        for trigger in ("facts_count_ai", "facts_count_ad", "facts_count_au"):
            conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {trigger}")
        conn.exec_driver_sql(
            "CREATE TRIGGER facts_count_ai AFTER INSERT ON facts WHEN new.invalid_at IS NULL BEGIN "
            "INSERT INTO fact_counts (user_id, agent_name, n) VALUES (new.user_id, new.agent_name, 1) "
            "ON CONFLICT (user_id, agent_name) DO UPDATE SET n = n + 1; END")
        conn.exec_driver_sql(
            "CREATE TRIGGER facts_count_ad AFTER DELETE ON facts WHEN old.invalid_at IS NULL BEGIN "
            "UPDATE fact_counts SET n = n - 1 WHERE user_id = old.user_id AND agent_name = old.agent_name; END")
        conn.exec_driver_sql(
            "CREATE TRIGGER facts_count_au AFTER UPDATE OF invalid_at ON facts "
            "WHEN (old.invalid_at IS NULL) <> (new.invalid_at IS NULL) BEGIN "
            "INSERT INTO fact_counts (user_id, agent_name, n) VALUES (new.user_id, new.agent_name, "
            "CASE WHEN new.invalid_at IS NULL THEN 1 ELSE -1 END) "
            "ON CONFLICT (user_id, agent_name) DO UPDATE SET n = n + excluded.n; END")
    elif db.dialect == "postgresql":
        conn.exec_driver_sql("""
            CREATE OR REPLACE FUNCTION memory_core_fact_count() RETURNS trigger AS $$
            DECLARE
                d integer := 0;
            BEGIN
                IF TG_OP = 'INSERT' THEN
                    IF NEW.invalid_at IS NULL THEN d := 1; END IF;
                ELSIF TG_OP = 'DELETE' THEN
                    IF OLD.invalid_at IS NULL THEN d := -1; END IF;
                ELSIF (OLD.invalid_at IS NULL) AND (NEW.invalid_at IS NOT NULL) THEN
                    d := -1;
                ELSIF (OLD.invalid_at IS NOT NULL) AND (NEW.invalid_at IS NULL) THEN
                    d := 1;
                END IF;
                IF d <> 0 THEN
                    INSERT INTO fact_counts (user_id, agent_name, n)
                    VALUES (COALESCE(NEW.user_id, OLD.user_id), COALESCE(NEW.agent_name, OLD.agent_name), d)
                    ON CONFLICT (user_id, agent_name) DO UPDATE SET n = fact_counts.n + d;
                END IF;
                IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
                RETURN NEW;
            END $$ LANGUAGE plpgsql""")
        conn.exec_driver_sql("DROP TRIGGER IF EXISTS facts_count ON facts")
        conn.exec_driver_sql("CREATE TRIGGER facts_count AFTER INSERT OR DELETE OR UPDATE OF invalid_at ON facts "
                             "FOR EACH ROW EXECUTE FUNCTION memory_core_fact_count()")
    conn.exec_driver_sql("DELETE FROM fact_counts")
    conn.exec_driver_sql("INSERT INTO fact_counts (user_id, agent_name, n) SELECT user_id, agent_name, count(*) "
                         "FROM facts WHERE invalid_at IS NULL GROUP BY user_id, agent_name")


def _ts_param():
    """A bound timestamp stored the way the models store it (SQLite keeps no zone: UTC, naive)."""
    return bindparam("t", type_=DateTime(timezone=True))


def _m008_normalise(content: str) -> str:
    """facts.normalise_for_key as it was when m008 was written, frozen here so that a later change to the live
    normalisation never changes what this migration did: NFKC, no format characters (Cf), white space folded,
    casefolded, NFKC again."""
    folded = unicodedata.normalize("NFKC", content)
    folded = "".join(ch for ch in folded if unicodedata.category(ch) != "Cf")
    return unicodedata.normalize("NFKC", " ".join(folded.split()).casefold())


def _m008_content_key(content: str) -> str:
    """facts.content_key as of m008: sha256 of the m008 normalisation, in hex."""
    return hashlib.sha256(_m008_normalise(content).encode("utf-8")).hexdigest()


def _m008_invalid_key(fact_id: str) -> str:
    """fact_store.invalid_key as of m008: the unique key of a fact that is no longer valid."""
    return f"invalid:{fact_id}"


def m008_unicode_dedup_keys(conn: Connection, db: Database) -> None:
    """Dedup keys of Unicode-normalised text (NFKC, no invisible format characters, white space folded,
    casefolded): "café" in NFC and NFD, with a zero-width space or in fullwidth letters are one fact. Facts
    that become duplicates of an older one are superseded by it (audited), never deleted."""
    rows = conn.execute(text("SELECT pk, id, user_id, agent_name, content FROM facts WHERE invalid_at IS NULL "
                             "ORDER BY user_id, agent_name, created_at, pk")).all()
    # Park every key first, so that no row's new key collides with another row's old one on the way.
    conn.execute(text("UPDATE facts SET content_key = 'parked:' || id WHERE invalid_at IS NULL"))
    now = datetime.now(timezone.utc)
    seen: dict[tuple[str, str, str], str] = {}
    for pk, fact_id, user_id, agent_name, content in rows:
        key = _m008_content_key(content)
        first = seen.get((user_id, agent_name, key))
        if first is None:
            seen[(user_id, agent_name, key)] = fact_id
            conn.execute(text("UPDATE facts SET content_key = :k WHERE pk = :pk"), {"k": key, "pk": pk})
            continue
        reason = f"the same text as {first} once Unicode is normalised"
        conn.execute(text("UPDATE facts SET content_key = :k, invalid_at = :t, superseded_by = :by, "
                          "invalid_reason = :r, updated_at = :t WHERE pk = :pk").bindparams(_ts_param()),
                     {"k": _m008_invalid_key(fact_id), "t": now, "by": first, "r": reason, "pk": pk})
        conn.execute(text("INSERT INTO fact_audit (fact_id, user_id, agent_name, action, old, new, reason, at, actor) "
                          "VALUES (:f, :u, :a, 'merged', NULL, NULL, :r, :t, 'migration')").bindparams(_ts_param()),
                     {"f": fact_id, "u": user_id, "a": agent_name, "r": reason, "t": now})
        log.info("fact %s merged into %s by the Unicode dedup migration", fact_id, first)


def m009_access(conn: Connection, db: Database) -> None:
    """Team access: grants of roles on scope patterns, API tokens (hashed), their audit, and the sandboxes of
    anonymous visitors."""
    _create(conn, db,
            "CREATE TABLE IF NOT EXISTS access_grants (pk {serial} NOT NULL, id VARCHAR(16) NOT NULL, "
            "subject VARCHAR(320) NOT NULL, role VARCHAR(16) NOT NULL, scope VARCHAR(160) NOT NULL, "
            "created_at {ts} NOT NULL, created_by VARCHAR(256), PRIMARY KEY (pk), "
            "CONSTRAINT uq_grant_subject_scope UNIQUE (subject, scope), UNIQUE (id))",
            "CREATE TABLE IF NOT EXISTS api_tokens (pk {serial} NOT NULL, id VARCHAR(16) NOT NULL, "
            "name VARCHAR(64) NOT NULL, secret_hash VARCHAR(64) NOT NULL, user_id VARCHAR(64) NOT NULL, "
            "agent_name VARCHAR(64) NOT NULL, role VARCHAR(16) NOT NULL, created_at {ts} NOT NULL, expires_at {ts}, "
            "last_used_at {ts}, revoked BOOLEAN NOT NULL, created_by VARCHAR(256), PRIMARY KEY (pk), UNIQUE (id), "
            "UNIQUE (secret_hash))",
            "CREATE TABLE IF NOT EXISTS access_audit (pk {serial} NOT NULL, at {ts} NOT NULL, actor VARCHAR(256), "
            "action VARCHAR(32) NOT NULL, detail TEXT NOT NULL, PRIMARY KEY (pk))",
            # key_hash came to SandboxRow the evening m009 was written, before any release, without a migration
            # of its own: it belongs here.
            "CREATE TABLE IF NOT EXISTS sandboxes (user_id VARCHAR(64) NOT NULL, agent_name VARCHAR(64) NOT NULL, "
            "key_hash VARCHAR(64) NOT NULL, created_at {ts} NOT NULL, expires_at {ts} NOT NULL, "
            "PRIMARY KEY (user_id, agent_name), UNIQUE (key_hash))")


def m010_import_ledger(conn: Connection, db: Database) -> None:
    """What imports have brought into each scope (conversations of ChatGPT and Claude exports)."""
    _create(conn, db, "CREATE TABLE IF NOT EXISTS imported_items (user_id VARCHAR(64) NOT NULL, "
                      "agent_name VARCHAR(64) NOT NULL, source_key VARCHAR(300) NOT NULL, "
                      "content_hash VARCHAR(64) NOT NULL, imported_at {ts} NOT NULL, "
                      "PRIMARY KEY (user_id, agent_name, source_key))")


def m011_dreamt_days(conn: Connection, db: Database) -> None:
    """Which daily logs dreams have read, and as what text (so retention never removes a log no dream read)."""
    _create(conn, db, "CREATE TABLE IF NOT EXISTS dreamt_days (user_id VARCHAR(64) NOT NULL, "
                      "agent_name VARCHAR(64) NOT NULL, day VARCHAR(10) NOT NULL, content_hash VARCHAR(64) NOT NULL, "
                      "dreamt_at {ts} NOT NULL, PRIMARY KEY (user_id, agent_name, day))")


def m012_source_error_and_restore_journal(conn: Connection, db: Database) -> None:
    """A correction's `source_error` beside its content; the journal of documents a bundle import still has
    to write (an import killed after its commit is finished on the next open)."""
    _add_columns(conn, "facts", {"source_error": "TEXT"})
    _create(conn, db, "CREATE TABLE IF NOT EXISTS restore_journal (pk {serial} NOT NULL, user_id VARCHAR(64) NOT NULL, "
                      "agent_name VARCHAR(64) NOT NULL, path VARCHAR(256) NOT NULL, content TEXT NOT NULL, "
                      "before_hash VARCHAR(64), created_at {ts} NOT NULL, PRIMARY KEY (pk))")


def m013_llm_formats(conn: Connection, db: Database) -> None:
    """The response format each LLM server (base URL and model) takes, so that a restart asks no refused one."""
    _create(conn, db, "CREATE TABLE IF NOT EXISTS llm_formats (base_url VARCHAR(500) NOT NULL, model VARCHAR(200) NOT NULL, "
                      "mode VARCHAR(16) NOT NULL, decided_at {ts} NOT NULL, PRIMARY KEY (base_url, model))")


def m014_search_lookups(conn: Connection, db: Database) -> None:
    """Two lookups that each search makes, as index searches rather than scans of the scope (at 5,000 items
    on this machine: ~12 ms -> 1 ms each): the neighbouring turns of its hits by source, and the count of the
    scope's vectors that tells whether the vectors cached in memory are still current."""
    conn.execute(text("CREATE INDEX IF NOT EXISTS ix_facts_scope_source ON facts (user_id, agent_name, source)"))
    conn.execute(text("CREATE INDEX IF NOT EXISTS ix_embeddings_scope_model_dim ON embeddings (user_id, agent_name, model, dim)"))


def m015_agent_items(conn: Connection, db: Database) -> None:
    """Key-value items of agent frameworks (LangGraph's store); those that are facts point at them."""
    _create(conn, db,
            "CREATE TABLE IF NOT EXISTS agent_items (pk {serial} NOT NULL, user_id VARCHAR(64) NOT NULL, "
            "agent_name VARCHAR(64) NOT NULL, path TEXT NOT NULL, item_key TEXT NOT NULL, value TEXT NOT NULL, "
            "fact_id VARCHAR(16), created_at {ts} NOT NULL, updated_at {ts} NOT NULL, PRIMARY KEY (pk), "
            "CONSTRAINT uq_agent_items_key UNIQUE (user_id, agent_name, path, item_key))",
            "CREATE INDEX IF NOT EXISTS ix_agent_items_fact ON agent_items (fact_id)")


def m016_oauth(conn: Connection, db: Database) -> None:
    """MCP's OAuth: registered clients, and codes and tokens (hashed) of people signed in through it."""
    _create(conn, db,
            "CREATE TABLE IF NOT EXISTS oauth_clients (client_id VARCHAR(64) NOT NULL, info TEXT NOT NULL, "
            "created_at {ts} NOT NULL, PRIMARY KEY (client_id))",
            "CREATE TABLE IF NOT EXISTS oauth_tokens (token_hash VARCHAR(64) NOT NULL, kind VARCHAR(16) NOT NULL, "
            "family VARCHAR(64) NOT NULL, client_id VARCHAR(64) NOT NULL, email VARCHAR(320), data TEXT NOT NULL, "
            "expires_at {ts} NOT NULL, created_at {ts} NOT NULL, PRIMARY KEY (token_hash))",
            "CREATE INDEX IF NOT EXISTS ix_oauth_tokens_family ON oauth_tokens (family)")


def m017_dream_proposals(conn: Connection, db: Database) -> None:
    """Dreams that wait for a person's review (Settings.dream_review)."""
    conn.exec_driver_sql(
        "CREATE TABLE IF NOT EXISTS dream_proposals (id VARCHAR(16) PRIMARY KEY, user_id VARCHAR(64) NOT NULL, "
        "agent_name VARCHAR(64) NOT NULL, created_at TIMESTAMP WITH TIME ZONE NOT NULL, base_hash VARCHAR(64) NOT NULL, "
        "text TEXT NOT NULL, notes TEXT NOT NULL, status VARCHAR(16) NOT NULL, "
        "decided_at TIMESTAMP WITH TIME ZONE, decided_by VARCHAR(256))")
    conn.exec_driver_sql("CREATE INDEX IF NOT EXISTS ix_dream_proposals_user_id ON dream_proposals (user_id)")


def m018_usage_and_injections(conn: Connection, db: Database) -> None:
    """The usage ledger (every LLM and embedding call) and the record of what went into each injection."""
    pk = "INTEGER PRIMARY KEY AUTOINCREMENT" if db.dialect == "sqlite" else "SERIAL PRIMARY KEY"
    conn.exec_driver_sql(
        f"CREATE TABLE IF NOT EXISTS usage (pk {pk}, at TIMESTAMP WITH TIME ZONE NOT NULL, day VARCHAR(10) NOT NULL, "
        "user_id VARCHAR(64), agent_name VARCHAR(64), operation VARCHAR(32) NOT NULL, model VARCHAR(128) NOT NULL, "
        "input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0, cost_usd FLOAT, "
        "actor VARCHAR(256))")
    conn.exec_driver_sql("CREATE INDEX IF NOT EXISTS ix_usage_scope_day ON usage (user_id, agent_name, day)")
    conn.exec_driver_sql(
        f"CREATE TABLE IF NOT EXISTS injections (pk {pk}, at TIMESTAMP WITH TIME ZONE NOT NULL, "
        "user_id VARCHAR(64) NOT NULL, agent_name VARCHAR(64) NOT NULL, actor VARCHAR(256), query TEXT, "
        "tokens INTEGER NOT NULL DEFAULT 0, max_tokens INTEGER NOT NULL DEFAULT 0, fact_ids TEXT NOT NULL)")
    conn.exec_driver_sql("CREATE INDEX IF NOT EXISTS ix_injections_scope ON injections (user_id, agent_name, at)")



def m019_provenance(conn: Connection, db: Database) -> None:
    """Which fact (or daily log) each summary sentence and MEMORY.md bullet that memory_core wrote came from."""
    _create(conn, db,
            "CREATE TABLE IF NOT EXISTS provenance (pk {serial} NOT NULL, user_id VARCHAR(64) NOT NULL, "
            "agent_name VARCHAR(64) NOT NULL, place VARCHAR(64) NOT NULL, text_key VARCHAR(64) NOT NULL, "
            "fact_id VARCHAR(16), source VARCHAR(64), created_at {ts} NOT NULL, PRIMARY KEY (pk))",
            "CREATE INDEX IF NOT EXISTS ix_provenance_place ON provenance (user_id, agent_name, place, text_key)",
            "CREATE INDEX IF NOT EXISTS ix_provenance_fact ON provenance (fact_id)")


def m020_held_facts(conn: Connection, db: Database) -> None:
    """Memory is data: a statement that instructs the agent is kept but held (`held_at`) until a person releases it."""
    _add_columns(conn, "facts", {"held_at": "TIMESTAMP WITH TIME ZONE" if db.dialect == "postgresql" else "DATETIME"})


def m022_budget_reservations(conn: Connection, db: Database) -> None:
    """Tokens that LLM calls in flight hold against their scope's daily budget (reserve before, settle after)."""
    _create(conn, db,
            "CREATE TABLE IF NOT EXISTS budget_reservations (pk {serial} NOT NULL, user_id VARCHAR(64) NOT NULL, "
            "agent_name VARCHAR(64) NOT NULL, day VARCHAR(10) NOT NULL, tokens INTEGER NOT NULL, at {ts} NOT NULL, "
            "PRIMARY KEY (pk))",
            "CREATE INDEX IF NOT EXISTS ix_budget_reservations_scope_day ON budget_reservations (user_id, agent_name, day)")


def m023_oauth_client_use(conn: Connection, db: Database) -> None:
    """When an MCP OAuth client first got tokens: one never used expires (the table cannot fill with them)."""
    ts = "TIMESTAMP WITH TIME ZONE" if db.dialect == "postgresql" else "DATETIME"
    _add_columns(conn, "oauth_clients", {"used_at": ts})


def m024_erase_journal(conn: Connection, db: Database) -> None:
    """Erase's journal (an erase under way, finished on the next open), its tombstones (keyed hashes of what was
    erased, and when) and the database's key for those hashes."""
    _create(conn, db,
            "CREATE TABLE IF NOT EXISTS erase_journal (pk {serial} NOT NULL, user_id VARCHAR(64) NOT NULL, "
            "agent_name VARCHAR(64) NOT NULL, fact_ids TEXT NOT NULL, passage_keys TEXT NOT NULL, reason TEXT, "
            "actor VARCHAR(256), created_at {ts} NOT NULL, PRIMARY KEY (pk))",
            "CREATE TABLE IF NOT EXISTS erase_tombstones (pk {serial} NOT NULL, user_id VARCHAR(64) NOT NULL, "
            "agent_name VARCHAR(64) NOT NULL, statement_key VARCHAR(64) NOT NULL, marks TEXT NOT NULL, "
            "erased_at {ts} NOT NULL, PRIMARY KEY (pk))",
            "CREATE INDEX IF NOT EXISTS ix_erase_tombstones_scope ON erase_tombstones (user_id, agent_name, erased_at)",
            "CREATE TABLE IF NOT EXISTS erase_secret (name VARCHAR(32) NOT NULL, secret VARCHAR(128) NOT NULL, "
            "PRIMARY KEY (name))")


def m028_episodes(conn: Connection, db: Database) -> None:
    """The turns of every conversation taken in, dated (see store/episode_store.py)."""
    _create(conn, db,
            "CREATE TABLE IF NOT EXISTS episode_turns (pk {serial} NOT NULL, user_id VARCHAR(64) NOT NULL, "
            "agent_name VARCHAR(64) NOT NULL, episode_id VARCHAR(40) NOT NULL, thread_id VARCHAR(256) NOT NULL, "
            "turn_index INTEGER NOT NULL, role VARCHAR(16) NOT NULL, speaker VARCHAR(64), text TEXT NOT NULL, "
            "dates TEXT NOT NULL, said_at {ts} NOT NULL, day VARCHAR(10) NOT NULL, PRIMARY KEY (pk))",
            "CREATE INDEX IF NOT EXISTS ix_episode_turns_episode ON episode_turns (user_id, agent_name, episode_id, turn_index)",
            "CREATE INDEX IF NOT EXISTS ix_episode_turns_day ON episode_turns (user_id, agent_name, day)")


def m030_keyword_columns(conn: Connection, db: Database) -> None:
    """Keyword search and injection at 100,000 items a scope. PostgreSQL: a stored tsvector of each fact's and
    chunk's text (filled for existing rows as the column is added), GIN-indexed, so that no tsvector is built per
    row at query time. Both: the valid facts of a scope by confidence, as injection reads its most confident."""
    if db.dialect == "postgresql":
        for table, column in (("facts", "content"), ("chunks", "text")):
            conn.exec_driver_sql(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS tsv tsvector "
                                 f"GENERATED ALWAYS AS (to_tsvector('simple', {column})) STORED")
            conn.exec_driver_sql(f"CREATE INDEX IF NOT EXISTS ix_{table}_tsv_stored ON {table} USING gin (tsv)")
        conn.exec_driver_sql("DROP INDEX IF EXISTS ix_facts_tsv")  # m002's expression indexes: the column serves
        conn.exec_driver_sql("DROP INDEX IF EXISTS ix_chunks_tsv")
    conn.exec_driver_sql("CREATE INDEX IF NOT EXISTS ix_facts_scope_leading ON facts "
                         "(user_id, agent_name, confidence DESC, created_at, pk) WHERE invalid_at IS NULL")


def _m031_scope_token(row: str, valid: bool) -> str:
    """SQL for the one word that names a row's scope in m031's index ("k<hex user>x<hex agent>x", never stemmed:
    no Porter rule ends in x), empty for an invalid fact so that no search finds it."""
    token = f"'k' || hex({row}.user_id) || 'x' || hex({row}.agent_name) || 'x'"
    return f"CASE WHEN {row}.invalid_at IS NULL THEN {token} ELSE '' END" if valid else token


def m031_scoped_word_index(conn: Connection, db: Database) -> None:
    """SQLite: the word index (m003) gets a second column, `scope`, holding the word that names the row's scope
    (none for an invalid fact), so that keyword search matches `scope:<word> AND content:(...)` inside the index
    instead of matching every scope's rows and joining them to their table to keep one scope's valid ones. The
    index reads its columns from a view (`{table}_words_src`); triggers keep it in step when a row's text, scope or
    validity changes. Rebuilt from the tables. (The trigram index stays as it was: its trigrams of a scope word
    are shared by every scope, which measured slower for a large scope.)"""
    if db.dialect != "sqlite" or not conn.exec_driver_sql(
            "SELECT 1 FROM sqlite_master WHERE name = 'facts_words'").first():
        return
    for table, column, valid in (("facts", "content", True), ("chunks", "text", False)):
        index = f"{table}_words"
        for suffix in ("ai", "ad", "au"):
            conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {index}_{suffix}")
        conn.exec_driver_sql(f"DROP TABLE IF EXISTS {index}")
        conn.exec_driver_sql(f"DROP VIEW IF EXISTS {index}_src")
        conn.exec_driver_sql(f"CREATE VIEW {index}_src AS SELECT t.pk AS pk, t.{column} AS {column}, "
                             f"{_m031_scope_token('t', valid)} AS scope FROM {table} t")
        conn.exec_driver_sql(f"CREATE VIRTUAL TABLE {index} USING fts5({column}, scope, content='{index}_src', "
                             f"content_rowid='pk', tokenize='porter unicode61')")
        conn.exec_driver_sql(f"INSERT INTO {index}({index}) VALUES ('rebuild')")
        new, old = _m031_scope_token("new", valid), _m031_scope_token("old", valid)
        conn.exec_driver_sql(f"CREATE TRIGGER {index}_ai AFTER INSERT ON {table} BEGIN "
                             f"INSERT INTO {index}(rowid, {column}, scope) VALUES (new.pk, new.{column}, {new}); END")
        conn.exec_driver_sql(f"CREATE TRIGGER {index}_ad AFTER DELETE ON {table} BEGIN "
                             f"INSERT INTO {index}({index}, rowid, {column}, scope) "
                             f"VALUES ('delete', old.pk, old.{column}, {old}); END")
        changes = f"{column}, user_id, agent_name" + (", invalid_at" if valid else "")
        conn.exec_driver_sql(f"CREATE TRIGGER {index}_au AFTER UPDATE OF {changes} ON {table} BEGIN "
                             f"INSERT INTO {index}({index}, rowid, {column}, scope) "
                             f"VALUES ('delete', old.pk, old.{column}, {old}); "
                             f"INSERT INTO {index}(rowid, {column}, scope) VALUES (new.pk, new.{column}, {new}); END")


def m032_audit_by_action(conn: Connection, db: Database) -> None:
    """A scope's audit entries of one action, newest first (every search and injection with passages reads the
    latest deleted facts): m001's index by scope and time made the engine read every entry of the scope (an added
    fact leaves one) to find the few deleted ones."""
    conn.exec_driver_sql("CREATE INDEX IF NOT EXISTS ix_fact_audit_action ON fact_audit (user_id, agent_name, action, at)")


def m033_episode_threads(conn: Connection, db: Database) -> None:
    """A thread's last turns kept, newest first: a conversation given again (the whole thread after each turn, as
    agents do) keeps only its new turns, and reads what the thread already has (store/episode_store.py)."""
    conn.exec_driver_sql("CREATE INDEX IF NOT EXISTS ix_episode_turns_thread ON episode_turns "
                         "(user_id, agent_name, thread_id, pk)")


def m034_scope_versions(conn: Connection, db: Database) -> None:
    """A version of each scope, new with every write to what its searches and injections read (store.scope_versions)."""
    scope_versions.create(conn, db)


MIGRATIONS: list[Callable[[Connection, Database], None]] = [m001_initial, m002_keyword_index, m003_word_index,
                                                            m004_fact_counts, m005_pg_trgm, m006_token_stats,
                                                            m007_validity_and_actors, m008_unicode_dedup_keys,
                                                            m009_access, m010_import_ledger, m011_dreamt_days,
                                                            m012_source_error_and_restore_journal, m013_llm_formats,
                                                            m014_search_lookups,
                                                            m015_agent_items, m016_oauth,
                                                            m017_dream_proposals, m018_usage_and_injections,
                                                            m019_provenance, m020_held_facts, m022_budget_reservations,
                                                            m023_oauth_client_use, m024_erase_journal, m028_episodes,
                                                            m030_keyword_columns, m031_scoped_word_index,
                                                            m032_audit_by_action, m033_episode_threads,
                                                            m034_scope_versions]

# Migrations renamed so that each number is used once, in order: a database that applied the old name has it
# recorded under the new one before anything runs.
RENAMED = {"m016_agent_items": "m015_agent_items"}


def migrate(db: Database) -> list[str]:
    """Bring the database to the current schema; return the names of the migrations applied."""
    applied: list[str] = []
    with db.engine.connect() as conn:
        conn = conn.execution_options(immediate=True)
        with conn.begin():
            if db.dialect == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": lock_id("memory_core:migrate")})
            conn.exec_driver_sql(
                "CREATE TABLE IF NOT EXISTS schema_migrations (name VARCHAR(128) PRIMARY KEY, applied_at VARCHAR(40) NOT NULL)"
            )
            for old, new in RENAMED.items():
                conn.execute(text("UPDATE schema_migrations SET name = :new WHERE name = :old"), {"old": old, "new": new})
            done = {row[0] for row in conn.exec_driver_sql("SELECT name FROM schema_migrations")}
            for migration in MIGRATIONS:
                if migration.__name__ in done:
                    continue
                log.info("applying migration %s", migration.__name__)
                migration(conn, db)
                conn.execute(
                    text("INSERT INTO schema_migrations (name, applied_at) VALUES (:n, :t)"),
                    {"n": migration.__name__, "t": datetime.now(timezone.utc).isoformat()},
                )
                applied.append(migration.__name__)
    if db.dialect == "sqlite":
        with db.engine.connect() as conn:
            db.has_fts5 = bool(conn.exec_driver_sql(
                "SELECT 1 FROM sqlite_master WHERE name='facts_fts'").first())
    return applied


def schema_version(db: Database) -> list[str]:
    db.ensure_ready()
    with db.engine.connect() as conn:
        return [r[0] for r in conn.exec_driver_sql("SELECT name FROM schema_migrations ORDER BY name")]
