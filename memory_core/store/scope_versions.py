"""Scope versions (m034): a number per scope that changes with every write to what its searches and injections read,
kept by triggers in the writing transaction, so that one small query tells a reader, in any process, whether what it
built from the scope still holds (search.answers). Its migration lives here beside the tables it watches."""

from __future__ import annotations

from sqlalchemy import Connection

from memory_core.store.db import Database

# The tables whose rows a search or an injection of a scope reads (directly, or as the index of a file): a write to
# any of them gives the scope a new version (m034).
VERSIONED_TABLES = ("facts", "fact_audit", "scope_summaries", "documents", "chunks", "indexed_docs", "embeddings",
                    "token_stats", "episode_turns", "erase_journal", "erase_tombstones")


def create(conn: Connection, db: Database) -> None:
    """m034: a version of each scope that changes with every write to what its searches and injections read
    (triggers on VERSIONED_TABLES, in the writing transaction): one small query tells a reader whether what it built
    from the scope still holds, whichever process wrote. A new version is a fresh random number (SQLite) or the next
    of a sequence (PostgreSQL), never an old one again, even after a purge deleted the scope's row."""
    conn.exec_driver_sql("CREATE TABLE IF NOT EXISTS scope_versions (user_id VARCHAR(64) NOT NULL, "
                         "agent_name VARCHAR(64) NOT NULL, v BIGINT NOT NULL, PRIMARY KEY (user_id, agent_name))")
    if db.dialect == "sqlite":
        bump = ("INSERT INTO scope_versions (user_id, agent_name, v) VALUES ({row}.user_id, {row}.agent_name, "
                "random()) ON CONFLICT (user_id, agent_name) DO UPDATE SET v = excluded.v;")
        for table in VERSIONED_TABLES:
            for suffix, event, rows in (("ai", "INSERT", ("new",)), ("ad", "DELETE", ("old",)),
                                        ("au", "UPDATE", ("old", "new"))):
                body = " ".join(bump.format(row=row) for row in rows)
                conn.exec_driver_sql(f"CREATE TRIGGER IF NOT EXISTS {table}_version_{suffix} AFTER {event} ON "
                                     f"{table} BEGIN {body} END")
        fresh = "random()"
    else:  # one bump a statement, not a row: an episode's thousand turns write the scope's row once
        conn.exec_driver_sql("CREATE SEQUENCE IF NOT EXISTS memory_core_scope_version")
        bump = ("INSERT INTO scope_versions (user_id, agent_name, v) "
                "SELECT s.user_id, s.agent_name, nextval('memory_core_scope_version') FROM ({rows} ORDER BY 1, 2) s "
                "ON CONFLICT (user_id, agent_name) DO UPDATE SET v = excluded.v;")
        scopes_of = {"INSERT": "SELECT DISTINCT user_id, agent_name FROM new_rows",  # the rows each event has
                     "DELETE": "SELECT DISTINCT user_id, agent_name FROM old_rows",
                     "UPDATE": "SELECT user_id, agent_name FROM old_rows UNION SELECT user_id, agent_name FROM new_rows"}
        conn.exec_driver_sql(f"""
            CREATE OR REPLACE FUNCTION memory_core_scope_version() RETURNS trigger AS $$
            BEGIN
                IF TG_OP = 'INSERT' THEN {bump.format(rows=scopes_of["INSERT"])}
                ELSIF TG_OP = 'DELETE' THEN {bump.format(rows=scopes_of["DELETE"])}
                ELSE {bump.format(rows=scopes_of["UPDATE"])}
                END IF;
                RETURN NULL;
            END $$ LANGUAGE plpgsql""")
        for table in VERSIONED_TABLES:
            for suffix, event, rows in (("ai", "INSERT", "NEW TABLE AS new_rows"),
                                        ("ad", "DELETE", "OLD TABLE AS old_rows"),
                                        ("au", "UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows")):
                conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {table}_version_{suffix} ON {table}")
                conn.exec_driver_sql(f"CREATE TRIGGER {table}_version_{suffix} AFTER {event} ON {table} REFERENCING "
                                     f"{rows} FOR EACH STATEMENT EXECUTE FUNCTION memory_core_scope_version()")
        fresh = "nextval('memory_core_scope_version')"
    scopes = " UNION ".join(f"SELECT user_id, agent_name FROM {table}" for table in VERSIONED_TABLES)
    conn.exec_driver_sql(f"INSERT INTO scope_versions (user_id, agent_name, v) SELECT s.user_id, s.agent_name, {fresh} "
                         f"FROM ({scopes}) s WHERE true ON CONFLICT (user_id, agent_name) DO NOTHING")
