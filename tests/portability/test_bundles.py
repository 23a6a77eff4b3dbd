"""Bundles: lossless round trips SQLite -> PostgreSQL -> SQLite, idempotent imports, refused damage."""

from __future__ import annotations

import hashlib
import json
import zipfile
from datetime import timedelta

import pytest

from memory_core.portability.bundle import read_bundle
from memory_core.store.bundle_store import dump_scope
from tests.conftest import make_memory


def fill(m, clock):
    """A scope with every kind of thing a bundle carries, and a second scope."""
    with m.acting_as("dashboard:ana@acme.com"):
        tea = m.facts.add("User likes tea", "preference", 0.9, user_id="ana", agent_name="bot", source="dashboard")
        clock.advance(61.123456)
        m.facts.add("User lives in Lisbon", "context", 0.8, user_id="ana", agent_name="bot")
        lisbon = m.facts.list(user_id="ana", agent_name="bot", category="context")[0]
        clock.advance(3600)
        m.facts.supersede(lisbon.id, "User lives in Porto", reason="moved")
        m.facts.update(tea.id, confidence=0.95)
        m.set_summaries({"workContext": "Nurse at Acme", "topOfMind": "Half marathon"}, user_id="ana", agent_name="bot")
        m.write_core("- User likes tea\n", user_id="ana", agent_name="bot")
        m.write_core("## Context\n- User lives in Porto\n- User likes tea\n", user_id="ana", agent_name="bot")
        m.daily.append("- User: I moved to Porto", user_id="ana", agent_name="bot")
        m.daily.append("- Yesterday's note", when=clock.now() - timedelta(days=1), user_id="ana", agent_name="bot")
        m.deep_dream(2, user_id="ana", agent_name="bot")
        plan = m.plans.start("Move house", ["pack", "ship", "unpack"], session_id="s1", user_id="ana", agent_name="bot")
        m.plans.check(plan.id, 0)
        m.facts.add("User has a dog", "context", 0.7, user_id="bob", agent_name="coder")


def snapshot(m):
    """Everything a bundle should carry, per scope, from a database."""
    from memory_core.portability.bundle import _documents
    from memory_core.store.bundle_store import bundle_scopes

    with m.db.read() as s:
        scopes = bundle_scopes(s)
        rows = {scope.key: dump_scope(s, scope) for scope in scopes}
    return {key: (rows[key], _documents(m, scope)) for scope, key in ((sc, sc.key) for sc in scopes)}


def test_round_trip_sqlite_postgresql_sqlite_is_lossless(tmp_path, pg_url, clock):
    with make_memory(tmp_path / "a", clock=clock) as a:
        fill(a, clock)
        counts = a.export_bundle(tmp_path / "one.zip")
        before = snapshot(a)
    assert counts["scopes"] == 2 and counts["facts"] == 4 and counts["documents"] >= 3 and counts["plans"] == 1
    with make_memory(tmp_path / "b", pg_url, clock=clock) as b:
        result = b.import_bundle(tmp_path / "one.zip")
        assert result["facts"] == 4 and not result["dry_run"]
        assert snapshot(b) == before
        b.export_bundle(tmp_path / "two.zip")
        assert b.facts.get(b.facts.list(user_id="ana", agent_name="bot", include_invalid=True)[-1].id)
        porto = [f for f in b.facts.list(user_id="ana", agent_name="bot") if "Porto" in f.content][0]
        assert [e.actor for e in b.facts.history(porto.id)] == ["dashboard:ana@acme.com"]
    with make_memory(tmp_path / "c", clock=clock) as c:
        c.import_bundle(tmp_path / "two.zip")
        assert snapshot(c) == before  # ids, timestamps (microseconds), validity, audit, versions, documents
        assert c.read_core(user_id="ana", agent_name="bot").startswith("## Context")
        assert [v.version for v in c.core_versions(user_id="ana", agent_name="bot")][:2] == [2, 1] or \
            len(c.core_versions(user_id="ana", agent_name="bot")) >= 2
        assert c.search("Porto", user_id="ana", agent_name="bot")


def test_a_second_import_changes_nothing_and_dry_run_writes_nothing(tmp_path, database_url, clock):
    with make_memory(tmp_path / "src", clock=clock) as src:
        fill(src, clock)
        src.export_bundle(tmp_path / "b.zip")
    with make_memory(tmp_path / "dst", database_url, clock=clock) as dst:
        preview = dst.import_bundle(tmp_path / "b.zip", dry_run=True)
        assert preview["dry_run"] and preview["facts"] == 4 and preview["documents"] >= 3
        assert snapshot(dst) == {}  # a dry run writes nothing
        dst.import_bundle(tmp_path / "b.zip")
        first = snapshot(dst)
        for mode in ("skip", "replace"):
            again = dst.import_bundle(tmp_path / "b.zip", mode=mode)
            assert again["facts"] == 0 and again["documents"] == 0 and again["audit"] == 0, mode
            assert snapshot(dst) == first


def test_skip_keeps_what_exists_and_replace_lets_the_bundle_win(tmp_path, clock):
    with make_memory(tmp_path / "m", clock=clock) as m:
        fact = m.facts.add("User likes tea", "preference", 0.9)
        m.write_core("- old memory\n")
        m.export_bundle(tmp_path / "b.zip")
        m.facts.update(fact.id, confidence=0.5)
        m.write_core("- newer memory\n")
        m.import_bundle(tmp_path / "b.zip", mode="skip")
        assert m.facts.get(fact.id).confidence == 0.5 and m.read_core() == "- newer memory\n"
        m.import_bundle(tmp_path / "b.zip", mode="replace")
        assert m.facts.get(fact.id).confidence == 0.9 and m.read_core() == "- old memory\n"
        with pytest.raises(ValueError, match="mode"):
            m.import_bundle(tmp_path / "b.zip", mode="merge")


def test_a_fact_id_taken_by_another_scope_gets_a_new_id_not_dropped(tmp_path, clock):
    with make_memory(tmp_path / "a", clock=clock) as a:
        old = a.facts.add("User lives in Lisbon", "context", 0.9)
        new = a.facts.supersede(old.id, "User lives in Porto")
        a.export_bundle(tmp_path / "b.zip")
    with make_memory(tmp_path / "b", clock=clock) as b:
        from memory_core.store import fact_store

        ids = iter([old.id])
        real = fact_store.new_fact_id
        fact_store.new_fact_id = lambda: next(ids, None) or real()
        try:
            b.facts.add("User has a cat", "context", 0.9, user_id="zed")  # takes the id the bundle uses
        finally:
            fact_store.new_fact_id = real
        b.import_bundle(tmp_path / "b.zip")
        mine = b.facts.list(include_invalid=True)
        assert {f.content for f in mine} == {"User lives in Lisbon", "User lives in Porto"}
        moved = next(f for f in mine if "Lisbon" in f.content)
        assert moved.id != old.id and moved.superseded_by == new.id
        assert b.facts.get(old.id).content == "User has a cat"
        assert [e.action for e in b.facts.history(moved.id)] == ["superseded", "added"]


def rewrite(source, target, change):
    """Copy a zip, letting `change(name, data)` return new data (or None to drop the member)."""
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w") as zout:
        for info in zin.infolist():
            data = change(info.filename, zin.read(info))
            if data is not None:
                zout.writestr(info.filename, data)


@pytest.fixture
def bundle(tmp_path, clock):
    with make_memory(tmp_path / "src", clock=clock) as src:
        fill(src, clock)
        src.export_bundle(tmp_path / "good.zip")
    return tmp_path / "good.zip"


def damaged_variants(bundle, tmp_path):
    blob = bundle.read_bytes()
    variants = {}
    (tmp_path / "truncated.zip").write_bytes(blob[: len(blob) // 2])
    variants["truncated"] = tmp_path / "truncated.zip"

    def tamper(name, data):
        return data.replace(b"User likes tea", b"User likes rum") if name.endswith("data.json") else data

    rewrite(bundle, tmp_path / "tampered.zip", tamper)
    variants["tampered"] = tmp_path / "tampered.zip"
    rewrite(bundle, tmp_path / "missing.zip", lambda n, d: None if n.endswith("MEMORY.md") else d)
    variants["missing"] = tmp_path / "missing.zip"

    def extra(name, data):
        return data

    rewrite(bundle, tmp_path / "extra.zip", extra)
    with zipfile.ZipFile(tmp_path / "extra.zip", "a") as zf:
        zf.writestr("scopes/ana/bot/documents/memory/2020-01-01.md", "sneaked in")
    variants["unlisted"] = tmp_path / "extra.zip"

    def forged(name, data):  # a consistent manifest, but a record that is not valid
        return data

    rewrite(bundle, tmp_path / "forged.zip", forged)
    with zipfile.ZipFile(tmp_path / "forged.zip") as zf:
        members = {i.filename: zf.read(i) for i in zf.infolist()}
    manifest = json.loads(members["manifest.json"])
    name = next(n for n in members if n.endswith("ana/bot/data.json"))
    rows = json.loads(members[name])
    rows["facts"][0]["category"] = "opinion"
    members[name] = json.dumps(rows).encode()
    manifest["files"][name] = {"sha256": hashlib.sha256(members[name]).hexdigest(), "size": len(members[name])}
    members["manifest.json"] = json.dumps(manifest).encode()
    with zipfile.ZipFile(tmp_path / "forged.zip", "w") as zf:
        for n, d in members.items():
            zf.writestr(n, d)
    variants["invalid record"] = tmp_path / "forged.zip"
    foreign = tmp_path / "foreign.zip"
    with zipfile.ZipFile(foreign, "w") as zf:
        zf.writestr("conversations.json", "[]")
    variants["foreign"] = foreign
    (tmp_path / "text.zip").write_text("not a zip at all")
    variants["not a zip"] = tmp_path / "text.zip"
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as zf:
        zf.writestr("manifest.json", "{}")
        zf.writestr("../../etc/passwd", "x")
    variants["traversal"] = evil
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("manifest.json", b"{" + b" " * (300 * 1024 * 1024) + b"}")
    variants["zip bomb"] = bomb
    return variants


def test_damaged_tampered_or_foreign_files_are_refused_and_change_nothing(tmp_path, bundle, database_url, clock):
    with make_memory(tmp_path / "dst", database_url, clock=clock) as dst:
        dst.facts.add("User likes coffee", "preference", 0.9, user_id="ana", agent_name="bot")
        before = snapshot(dst)
        for label, path in damaged_variants(bundle, tmp_path).items():
            with pytest.raises(ValueError) as info:
                dst.import_bundle(path)
            assert str(info.value), label
            assert snapshot(dst) == before, label
        read_bundle(bundle)  # the original still reads
