"""Migrations are frozen: an old migration does what it did when it was written, whatever live code does now."""

from __future__ import annotations

import hashlib
import unicodedata

import pytest
from sqlalchemy import create_engine, inspect, text
from sqlmodel import SQLModel

from memory_core.store import migrations
from memory_core.store.db import Database
from memory_core.store.migrations import MIGRATIONS, migrate
from tests.conftest import fresh_schema, make_memory

# What m008 made of each text when it was written: its normalised form. The key is that form's sha256.
M008_KEYS = [
    ("User likes café", "user likes café"),
    (unicodedata.normalize("NFD", "User likes café"), "user likes café"),
    ("User likes\u200b tea", "user likes tea"),
    ("\uff35\uff53\uff45\uff52 likes tea", "user likes tea"),  # fullwidth letters
    ("  User   likes\ttea\n", "user likes tea"),
    ("Straße", "strasse"),
    ("\ufeff\ufb01ne", "fine"),  # a BOM and the "fi" ligature
]
M008_HASHES = {
    "user likes café": "80b5d469e36dc230818454db403a3caab3d78ab84ce944faf40d1f5b0ad93263",
    "user likes tea": "c32aa60cbe3faa7871fee6ce9384dd24d802069fa4808fa4d3afbea02aac49ad",
    "strasse": "16d96952087774fee069b7585d3991b24d90c181c09b2129b4908c35baa7f0c0",
    "fine": "d14a58bae804a2b80b5b76a010239c88ffca1fc7951a90f8e9131beda1e23c1b",
}


@pytest.mark.parametrize("content,normalised", M008_KEYS)
def test_m008_keys_are_pinned(content, normalised):
    assert migrations._m008_normalise(content) == normalised
    assert migrations._m008_content_key(content) == M008_HASHES[normalised]
    assert hashlib.sha256(normalised.encode("utf-8")).hexdigest() == M008_HASHES[normalised]
    assert migrations._m008_invalid_key("fact_00000002") == "invalid:fact_00000002"


def schema_before_validity(memory) -> None:
    """The memory's database as it was before validity and audit actors: migrated up to m006 only, without the
    columns m007 adds, for a test to fill before the later migrations run."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("memory_core.store.migrations.MIGRATIONS", MIGRATIONS[:6])
        memory.db.ensure_ready()
    with memory.db.engine.begin() as conn:
        for column in ("valid_from", "invalid_at", "superseded_by", "invalid_reason"):
            conn.exec_driver_sql(f"ALTER TABLE facts DROP COLUMN {column}")
        conn.exec_driver_sql("ALTER TABLE fact_audit DROP COLUMN actor")


def test_m008_does_not_follow_a_change_to_live_normalisation(tmp_path, monkeypatch):
    """Live normalisation changed (here: made to raise) after m008: the migration's effect stays the same."""
    m = make_memory(tmp_path)
    schema_before_validity(m)
    with m.db.engine.begin() as conn:
        for i, (content, _) in enumerate(M008_KEYS):
            conn.execute(text("INSERT INTO facts (id, user_id, agent_name, content, content_key, category, confidence, "
                              "created_at, updated_at) VALUES (:i, 'default', 'default', :c, :k, 'preference', 0.9, "
                              ":t, :t)"),
                         {"i": f"fact_0000000{i}", "c": content, "k": f"old-key-{i}", "t": f"2026-01-0{i + 1} 10:00:00"})

    def changed(*args, **kwargs):
        raise AssertionError("m008 read live normalisation")

    for name in ("memory_core.facts.api.content_key", "memory_core.facts.api.normalise_for_key",
                 "memory_core.store.fact_store.content_key", "memory_core.store.fact_store.invalid_key"):
        monkeypatch.setattr(name, changed)
    assert migrate(m.db) == [f.__name__ for f in MIGRATIONS[6:]]
    monkeypatch.undo()
    with m.db.engine.connect() as conn:
        keys = dict(conn.exec_driver_sql("SELECT id, content_key FROM facts ORDER BY id").all())
    # The first of each normalised text keeps its key; later twins are superseded with an invalid key.
    assert keys == {"fact_00000000": M008_HASHES["user likes café"], "fact_00000001": "invalid:fact_00000001",
                    "fact_00000002": M008_HASHES["user likes tea"], "fact_00000003": "invalid:fact_00000003",
                    "fact_00000004": "invalid:fact_00000004", "fact_00000005": M008_HASHES["strasse"],
                    "fact_00000006": M008_HASHES["fine"]}
    assert m.facts.get("fact_00000004").superseded_by == "fact_00000002"
    m.close()


# The tables whose migrations spell out their DDL in place of SQLModel's create_all of today's models.
SPELLED_OUT = ("token_stats", "access_grants", "api_tokens", "access_audit", "sandboxes", "imported_items",
               "dreamt_days", "restore_journal", "llm_formats", "agent_items", "oauth_clients", "oauth_tokens",
               "erase_journal", "erase_tombstones", "erase_secret")


def _schema(url: str) -> dict:
    engine = create_engine(url)
    try:
        inspector = inspect(engine)
        return {table: {
            "columns": [(c["name"], str(c["type"]), c["nullable"], c.get("default")) for c in inspector.get_columns(table)],
            "pk": inspector.get_pk_constraint(table)["constrained_columns"],
            "unique": sorted((u["name"] or "", tuple(u["column_names"])) for u in inspector.get_unique_constraints(table)),
            "indexes": sorted((i["name"], tuple(i["column_names"]), bool(i["unique"])) for i in inspector.get_indexes(table)),
        } for table in SPELLED_OUT}
    finally:
        engine.dispose()


@pytest.fixture
def reference_url(request, tmp_path, database_url):
    """A second empty database of the same kind, for SQLModel's create_all of today's models."""
    if database_url.startswith("sqlite"):
        yield f"sqlite:///{tmp_path / 'reference.db'}"
        return
    with fresh_schema("r") as url:
        yield url


def test_spelled_out_migrations_make_the_tables_the_models_describe(database_url, reference_url):
    """The DDL written into m006, m009-m013 and m016 makes the same tables (columns, types, keys, unique
    constraints, indexes) as SQLModel's create_all of the models did when those migrations used it."""
    Database(database_url, migrate=migrate).ensure_ready()
    engine = create_engine(reference_url)
    try:
        SQLModel.metadata.create_all(engine, tables=[SQLModel.metadata.tables[t] for t in SPELLED_OUT])
    finally:
        engine.dispose()
    assert _schema(database_url) == _schema(reference_url)


def test_migrations_are_numbered_once_each_in_order():
    """Each migration's number is used once, the list runs in number order, and the file defines them in it."""
    import inspect
    import re as _re

    from memory_core.store import migrations

    numbers = [int(_re.match(r"m(\d{3})_", m.__name__).group(1)) for m in migrations.MIGRATIONS]
    assert numbers == sorted(numbers) and len(numbers) == len(set(numbers))
    lines = [inspect.getsourcelines(m)[1] for m in migrations.MIGRATIONS]
    assert lines == sorted(lines)
    assert set(migrations.RENAMED.values()) <= {m.__name__ for m in migrations.MIGRATIONS}


def test_a_database_that_applied_a_renamed_migration_does_not_apply_it_again(tmp_path):
    """A database migrated when m015_agent_items was called m016_agent_items keeps it applied, under the new name."""
    from memory_core.store import migrations
    from memory_core.store.db import Database

    url = f"sqlite:///{tmp_path}/old.db"
    db = Database(url, migrate=migrations.migrate)
    db.ensure_ready()
    with db.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE schema_migrations SET name = 'm016_agent_items' WHERE name = 'm015_agent_items'")
    again = Database(url, migrate=lambda d: None)
    assert migrations.migrate(again) == []
    assert "m015_agent_items" in migrations.schema_version(again)
