"""Crafted bundles: a consistent manifest and checksums around records the loader cannot store. Each is
refused whole, before anything is written, with a ValueError that names the record kind, index and field; the
command line says so in one line. Valid bundles that used to crash the loader in replace mode now load."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any, Callable

import pytest

from memory_core import ManualClock
from tests.conftest import make_memory
from tests.portability.test_bundles import fill, snapshot
from tests.cli.test_cli import ROOT, cli_env, opened, refused

DATA = "scopes/ana/bot/data.json"


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("bundle")
    clock = ManualClock()
    with make_memory(folder / "src", clock=clock) as src:
        fill(src, clock)
        src.export_bundle(folder / "good.zip")
    return folder / "good.zip"


def craft(good: Path, target: Path, change: Callable[[dict[str, Any]], Any],
          documents: dict[str, bytes] | None = None) -> Path:
    """A copy of `good` whose ana/bot data.json `change` edited (or replaced, by returning a value), and whose
    `documents` (member name: bytes) are replaced, with the manifest's sizes and checksums made to match: only
    the record checks can catch it."""
    with zipfile.ZipFile(good) as zf:
        members = {i.filename: zf.read(i) for i in zf.infolist()}
    rows = json.loads(members[DATA])
    replaced = change(rows)
    members[DATA] = json.dumps(rows if replaced is None else replaced).encode()
    members.update(documents or {})
    manifest = json.loads(members["manifest.json"])
    for name in [DATA, *(documents or {})]:
        manifest["files"][name] = {"sha256": hashlib.sha256(members[name]).hexdigest(), "size": len(members[name])}
    members["manifest.json"] = json.dumps(manifest).encode()
    with zipfile.ZipFile(target, "w") as zf:
        for name, blob in members.items():
            zf.writestr(name, blob)
    return target


def put(kind: str, index: int, field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(rows: dict[str, Any]) -> None:
        rows[kind][index][field] = value
    return change


def drop(kind: str, index: int, field: str) -> Callable[[dict[str, Any]], None]:
    def change(rows: dict[str, Any]) -> None:
        del rows[kind][index][field]
    return change


def valid_fact_superseded(rows: dict[str, Any]) -> None:
    valid = [i for i, f in enumerate(rows["facts"]) if f["invalid_at"] is None]
    rows["facts"][valid[0]]["superseded_by"] = rows["facts"][valid[1]]["id"]


# (what is crafted, how, what the message must name)
CASES: list[tuple[str, Callable[[dict[str, Any]], Any], str]] = [
    ("a summary version of 10**30", put("summaries", 0, "version", 10 ** 30), "summaries[0].version"),
    ("a MEMORY.md version of 10**30", put("core_versions", 0, "version", 10 ** 30), "core_versions[0].version"),
    ("a MEMORY.md version that is a boolean", put("core_versions", 0, "version", True), "core_versions[0].version"),
    ("a plan without version", drop("plans", 0, "version"), "plans[0] lacks version"),
    ("a plan of 200,000 steps", put("plans", 0, "steps", [{"text": "x", "done": False}] * 200_000),
     "plans[0].steps has 200,000 entries; the limit is 1,000"),
    ("a plan step with a NUL", put("plans", 0, "steps", [{"text": "a\x00b", "done": False}]),
     "plans[0].steps[0].text"),
    ("a plan step done as a string", put("plans", 0, "steps", [{"text": "pack", "done": "yes"}]),
     "plans[0].steps[0].done"),
    ("a plan session id that is a number", put("plans", 0, "session_ids", [7]), "plans[0].session_ids[0]"),
    ("a plan status not known", put("plans", 0, "status", "paused"), "plans[0].status"),
    ("a dict in dream_state", lambda r: r["dream_state"].__setitem__("last_status", {"a": 1}),
     "dream_state.last_status"),
    ("a dream_state field not known", lambda r: r["dream_state"].__setitem__("mood", "ok"), "dream_state has a field"),
    ("a dream_state day that is not a date", lambda r: r["dream_state"].__setitem__("consolidated_through", "2026-13-40"),
     "dream_state.consolidated_through"),
    ("a dreamt day that is not a date", lambda r: r.__setitem__("dreamt_days", [
        {"day": "2026-02-30", "content_hash": "0" * 64, "dreamt_at": "2026-01-01T00:00:00+00:00"}]),
     "dreamt_days[0].day"),
    ("a fact confidence NaN", put("facts", 0, "confidence", float("nan")), "facts[0].confidence"),
    ("a fact confidence as text", put("facts", 0, "confidence", "0.9"), "facts[0].confidence"),
    ("a timestamp out of range in UTC", put("facts", 0, "created_at", "0001-01-01T00:00:00+01:00"),
     "facts[0].created_at is out of range"),
    ("a timestamp without a zone", put("facts", 0, "updated_at", "2026-01-01T00:00:00"),
     "facts[0].updated_at is a timestamp without a zone"),
    ("a fact source over 256 characters", put("facts", 0, "source", "s" * 300), "facts[0].source is 300 characters"),
    ("a fact field not known", put("facts", 0, "mood", "happy"), "facts[0] has a field"),
    ("a fact id twice", lambda r: r["facts"].append(dict(r["facts"][0], content="Other text")),
     "repeats facts[0]"),
    ("superseded_by on a valid fact", valid_fact_superseded, "superseded_by is set on a fact that is still valid"),
    ("an audit fact id of 40 characters", put("audit", 0, "fact_id", "fact_" + "0" * 35), "audit[0].fact_id"),
    ("an audit action of 17 characters", put("audit", 0, "action", "a" * 17), "audit[0].action"),
    ("an audit snapshot that is a list", put("audit", 0, "old", [1, 2]), "audit[0].old"),
    ("an audit entry without time", drop("audit", 0, "at"), "audit[0] lacks at"),
    ("a summary section not known", put("summaries", 0, "section", "mood"), "summaries[0].section"),
    ("a summary section twice", lambda r: r["summaries"].append(dict(r["summaries"][0])), "summaries[2].section repeats"),
    ("a MEMORY.md reason over 256 characters", put("core_versions", 0, "reason", "r" * 300), "core_versions[0].reason"),
    ("a record kind not known", lambda r: r.__setitem__("usage", []), "record kind this version does not know"),
    ("facts that are not a list", lambda r: r.__setitem__("facts", {"a": 1}), "facts is missing or not a list"),
    ("a data.json that is a list", lambda r: [], "must be an object; got list"),
]
MANIFEST_CASES = [
    ("counts that are not numbers", {"counts": {"facts": "many"}}, "manifest.json counts.facts must be a whole number"),
    ("scopes that are not text", {"scopes": [{"user": "ana"}]}, "manifest.json scopes[0] must be text"),
    ("a time of export that is not one", {"exported_at": 5}, "manifest.json exported_at"),
]


def test_crafted_bundles_are_refused_whole_naming_kind_index_and_field(tmp_path, good, database_url, clock):
    with make_memory(tmp_path / "dst", database_url, clock=clock) as dst:
        dst.facts.add("User likes coffee", "preference", 0.9, user_id="ana", agent_name="bot")
        dst.import_bundle(good)  # a second import of these would change nothing: a refusal must change nothing too
        before = snapshot(dst)
        for n, (label, change, named) in enumerate(CASES):
            crafted = craft(good, tmp_path / f"crafted{n}.zip", change)
            for mode in ("skip", "replace"):
                with pytest.raises(ValueError) as info:
                    dst.import_bundle(crafted, mode=mode)
                message = str(info.value)
                assert named in message and DATA in message, (label, message)
                assert len(message) < 400, (label, message)
            assert snapshot(dst) == before, label


def test_a_crafted_manifest_is_refused_naming_its_field(tmp_path, good):
    for n, (label, change, named) in enumerate(MANIFEST_CASES):
        with zipfile.ZipFile(good) as zf:
            members = {i.filename: zf.read(i) for i in zf.infolist()}
        members["manifest.json"] = json.dumps(json.loads(members["manifest.json"]) | change).encode()
        with zipfile.ZipFile(tmp_path / f"m{n}.zip", "w") as zf:
            for name, blob in members.items():
                zf.writestr(name, blob)
        with make_memory(tmp_path / f"dst{n}") as dst:
            with pytest.raises(ValueError, match=re.escape(named)):
                dst.import_bundle(tmp_path / f"m{n}.zip")
            assert snapshot(dst) == {}, label


def test_a_timestamp_with_another_offset_is_stored_as_the_same_moment(tmp_path, good, database_url, clock):
    def shift(rows: dict[str, Any]) -> None:
        rows["facts"][0]["created_at"] = "2026-01-01T17:30:00+05:30"  # 12:00 UTC

    with make_memory(tmp_path / "dst", database_url, clock=clock) as dst:
        dst.import_bundle(craft(good, tmp_path / "shifted.zip", shift))
        fact_id = json.loads(zipfile.ZipFile(good).read(DATA))["facts"][0]["id"]
        assert dst.facts.get(fact_id).created_at.isoformat() == "2026-01-01T12:00:00+00:00"


KEY = "sk-proj-abcDEF1234567890abcdefGHIJKLMNOPqrstuv"
RLO = "\u202e"  # right-to-left override: "User likes tea" would read other than it is


def test_a_crafted_bundle_brings_in_no_credential_and_no_bidirectional_control(tmp_path, good, database_url, clock):
    """Every other way in masks credentials and strips bidirectional controls; a bundle is no way around it:
    facts, their audit, summaries, MEMORY.md versions, plans and documents are stored as memory would store them."""
    def smuggle(rows: dict[str, Any]) -> None:
        rows["facts"][0]["content"] = f"User's key is {KEY} and likes {RLO}aet"
        rows["facts"][0]["source_error"] = f"failed with {KEY}"
        rows["audit"][0]["new"] = {"content": f"key {KEY}"}
        rows["summaries"][0]["summary"] = f"Deploys with {KEY}{RLO}"
        rows["core_versions"][-1]["content"] = f"- key {KEY}\n- {RLO}tea\n"
        rows["plans"][0]["name"] = f"Rotate {KEY}"
        rows["plans"][0]["steps"][0]["text"] = f"{RLO}revoke {KEY}"

    doc = next(name for name in zipfile.ZipFile(good).namelist()
               if name.startswith("scopes/ana/bot/documents/memory/"))
    crafted = craft(good, tmp_path / "smuggled.zip", smuggle, {doc: f"- the key is {KEY} {RLO}\n".encode()})
    with make_memory(tmp_path / "dst", database_url, clock=clock) as dst:
        dst.import_bundle(crafted)
        stored = json.dumps(snapshot(dst), ensure_ascii=False)
        assert KEY not in stored and RLO not in stored
        assert "[secret]" in stored
        fact = dst.facts.get(json.loads(zipfile.ZipFile(good).read(DATA))["facts"][0]["id"])
        assert fact.content == "User's key is [secret] and likes aet"
        assert dst.read_document(doc.split("/documents/", 1)[1], user_id="ana", agent_name="bot") == \
            "- the key is [secret] \n"
        dst.import_bundle(crafted)  # the same bundle again changes nothing
        assert json.dumps(snapshot(dst), ensure_ascii=False) == stored


def test_the_command_line_refuses_a_crafted_bundle_in_one_line(tmp_path, good):
    crafted = craft(good, tmp_path / "plan.zip", drop("plans", 0, "version"))
    line = refused(cli_env(tmp_path / "home"), "import", crafted)
    assert "plans[0] lacks version" in line
    crafted = craft(good, tmp_path / "dream.zip", lambda r: r["dream_state"].__setitem__("last_hash", {"x": 1}))
    line = refused(cli_env(tmp_path / "home"), "import", crafted, "--mode", "replace")
    assert "dream_state.last_hash" in line and "INSERT" not in line and "UPDATE" not in line


def test_replace_mode_loads_a_fact_that_became_invalid_and_keeps_one_fact_per_text(tmp_path, good, database_url,
                                                                                    clock):
    """Valid bundles that crashed the loader: a fact valid here but superseded in the bundle (AttributeError),
    and a fact whose text in the bundle is another valid fact's text here (IntegrityError)."""
    with make_memory(tmp_path / "dst", database_url, clock=clock) as dst:
        dst.import_bundle(good)
        tea = next(f for f in dst.facts.list(user_id="ana", agent_name="bot") if "tea" in f.content)
        porto = next(f for f in dst.facts.list(user_id="ana", agent_name="bot") if "Porto" in f.content)

        def supersede_tea(rows: dict[str, Any]) -> None:
            fact = next(f for f in rows["facts"] if f["id"] == tea.id)
            fact.update(invalid_at="2026-06-01T00:00:00+00:00", superseded_by=porto.id, invalid_reason="moved on")
            fact["updated_at"] = fact["invalid_at"]

        dst.import_bundle(craft(good, tmp_path / "superseded.zip", supersede_tea), mode="replace")
        now = dst.facts.get(tea.id)
        assert not now.valid and now.superseded_by == porto.id and now.invalid_reason == "moved on"

        clash = craft(good, tmp_path / "clash.zip", lambda rows: next(
            f for f in rows["facts"] if f["id"] == porto.id).update(content="User has a dog"))
        dst.facts.add("User has a dog", "context", 0.7, user_id="ana", agent_name="bot")
        dst.import_bundle(clash, mode="replace")  # tea comes back valid (the bundle wins); Porto is kept
        texts = [f.content for f in dst.facts.list(user_id="ana", agent_name="bot")]
        assert texts.count("User has a dog") == 1 and "User lives in Porto" in texts


def test_a_restore_whose_documents_cannot_be_written_says_so_in_one_line_and_is_finished_later(tmp_path, good):
    home = tmp_path / "home"
    home.symlink_to(tmp_path / "nowhere")  # documents read as absent, and cannot be written: after the commit
    env = cli_env(home, f"sqlite:///{tmp_path / 'memory.db'}")
    line = refused(env, "import", good)
    assert "document(s) not written yet are written the next time memory is opened" in line
    home.unlink()
    with opened(env) as m:
        assert m.status().restores_pending == 0
        assert m.read_core(user_id="ana", agent_name="bot").startswith("## Context")


def test_an_unexpected_fault_is_one_line_and_the_details_go_to_the_debug_log(tmp_path, good):
    """A loader fault that no check foresaw (simulated in a real subprocess) is still one line, exit status 2."""
    code = ("import sys\n"
            "import memory_core.portability.bundle as bundle\n"
            "def load_scope(*args): raise RuntimeError('a fault no check foresaw\\n[SQL: INSERT INTO facts ...]')\n"
            "bundle.load_scope = load_scope\n"
            "from memory_core.cli.main import main\n"
            "sys.exit(main(sys.argv[1:]))\n")
    env = cli_env(tmp_path / "home")
    for level, traceback in (("WARNING", False), ("DEBUG", True)):
        done = subprocess.run([sys.executable, "-c", code, "import", str(good), "--log-level", level], env=env,
                              cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and done.stdout == ""
        errors = [line for line in done.stderr.splitlines() if "error:" in line]
        assert len(errors) == 1 and "RuntimeError: a fault no check foresaw" in errors[0], done.stderr
        assert "INSERT" not in errors[0] and ("Traceback" in done.stderr) == traceback


def superseded_by(fact_id: str, which: str = "tea") -> Callable[[dict[str, Any]], None]:
    """The bundle's `which` fact of ana/bot made invalid and `superseded_by` the given fact id."""
    def change(rows: dict[str, Any]) -> None:
        fact = next(f for f in rows["facts"] if which in f["content"])
        fact.update(invalid_at="2026-06-01T00:00:00+00:00", superseded_by=fact_id, invalid_reason="replaced")
    return change


def test_a_fact_superseded_by_another_scopes_fact_is_refused_and_changes_nothing(tmp_path, good, database_url,
                                                                               clock):
    """Issue 32: a crafted bundle whose fact is replaced by another scope's fact (one in the database, or one
    the bundle holds for another scope) was accepted by import_bundle in skip and replace mode."""
    with make_memory(tmp_path / "dst", database_url, clock=clock) as dst:
        other = dst.facts.add("Carol's desk is by the window", "context", 0.9, user_id="carol", agent_name="x")
        with zipfile.ZipFile(good) as zf:
            dog = next(f["id"] for f in json.loads(zf.read("scopes/bob/coder/data.json"))["facts"])
        crafted = {"a fact of the database": craft(good, tmp_path / "db.zip", superseded_by(other.id)),
                   "a fact of the bundle": craft(good, tmp_path / "bundle.zip", superseded_by(dog))}
        for label, path in crafted.items():
            for mode in ("skip", "replace"):
                before = snapshot(dst)
                with pytest.raises(ValueError, match=r"facts\[\d+\]\.superseded_by names fact_\w+, a fact of "
                                                     "another scope"):
                    dst.import_bundle(path, mode=mode)
                assert snapshot(dst) == before, (label, mode)
            if label == "a fact of the database":
                dst.import_bundle(good)  # the next refusals meet rows that exist: replace would overwrite them
        assert dst.facts.get(other.id).valid and dst.facts.get(other.id).content == "Carol's desk is by the window"
        # What replaced a fact in its own scope still loads (the bundle's own Porto fact).
        tea = next(f for f in dst.facts.list(user_id="ana", agent_name="bot") if "tea" in f.content)
        porto = next(f for f in dst.facts.list(user_id="ana", agent_name="bot") if "Porto" in f.content)
        dst.import_bundle(craft(good, tmp_path / "own.zip", superseded_by(porto.id)), mode="replace")
        assert dst.facts.get(tea.id).superseded_by == porto.id


def test_the_command_line_refuses_a_fact_superseded_by_another_scopes_fact(tmp_path, good):
    env = cli_env(tmp_path / "home")
    with opened(env) as m:
        other = m.facts.add("Carol's desk is by the window", "context", 0.9, user_id="carol", agent_name="x")
        before = snapshot(m)
    crafted = craft(good, tmp_path / "cross.zip", superseded_by(other.id))
    for mode in ("skip", "replace"):
        line = refused(env, "import", crafted, "--mode", mode)
        assert "superseded_by" in line and "another scope" in line
    with opened(env) as m:
        assert snapshot(m) == before
