"""import_file end to end: every format into a real scope on SQLite and PostgreSQL, dry runs, re-imports,
conversations through the persisted queue (dated daily blocks, heuristic facts), bad files that change
nothing, roles."""

from __future__ import annotations

import json
import re
import shutil
import zipfile
from datetime import date
from pathlib import Path

import pytest
from sqlmodel import select

from memory_core.store.models import ImportedItemRow
from tests.conftest import make_memory
from tests.consistency.test_summaries import _sentences_only

DATA = Path(__file__).parents[1] / "data" / "imports"


def state(m, user="ana", agent="bot"):
    """What an import could change in a scope, comparable before and after."""
    view = m.scoped(user_id=user, agent_name=agent)
    days = view.daily.days()
    with m.db.read() as s:
        ledger = len(s.exec(select(ImportedItemRow)).all())
    return {
        "facts": sorted((f.id, f.content, f.invalid_at) for f in view.facts.list(include_invalid=True)),
        "summaries": json.dumps({k: v for k, v in view.memory_data().items() if k != "facts"}, sort_keys=True,
                                default=str),
        "core": [(v.version, v.content) for v in view.core_versions()],
        "days": {d: view.daily.read(d) for d in days},
        "queue": [(i.thread_id, i.status) for i in m.queue.items()],
        "ledger": ledger,
    }


def test_deerflow_dry_run_then_import_then_again(tmp_path, database_url):
    with make_memory(tmp_path, database_url) as m:
        view = m.scoped(user_id="ana", agent_name="bot")
        before = state(m)
        preview = view.import_file(DATA / "deerflow" / "memory.json", dry_run=True)
        assert state(m) == before
        assert preview.format == "deerflow" and preview.dry_run
        assert preview.facts_added > 0 and preview.summaries > 0 and preview.sample
        assert any("no content" in e for e in preview.errors)  # the bad items of the file are reported

        with m.acting_as("cli:import"):
            report = m.import_file(DATA / "deerflow" / "memory.json", user_id="ana", agent_name="bot")
        assert (report.facts_added, report.summaries) == (preview.facts_added, preview.summaries)
        facts = view.facts.list()
        assert len(facts) == report.facts_added
        assert {f.source for f in facts} == {"import:deerflow"}
        history = view.facts.history(facts[0].id)
        assert history[0].actor == "cli:import"  # audited like any other change
        assert any(v["summary"] for group in view.memory_data().values() if isinstance(group, dict)
                   for v in group.values() if isinstance(v, dict))

        # A fact forgotten here since is not brought back by importing the same file again.
        view.facts.invalidate(facts[0].id, reason="wrong")
        after = state(m)
        again = view.import_file(DATA / "deerflow" / "memory.json")
        assert (again.facts_added, again.summaries, again.documents, again.conversations) == (0, 0, 0, 0)
        assert again.facts_skipped >= report.facts_added
        assert state(m) == after
        # Nor does a dry run of it promise anything.
        assert view.import_file(DATA / "deerflow" / "memory.json", dry_run=True).facts_added == 0


def test_mem0_every_shape_adds_facts_once(tmp_path, database_url):
    packed = tmp_path / "openmemory.zip"
    with zipfile.ZipFile(packed, "w") as z:
        for p in (DATA / "mem0" / "openmemory").iterdir():
            z.write(p, p.name)
    with make_memory(tmp_path, database_url) as m:
        view = m.scoped(user_id="ana", agent_name="bot")
        added = 0
        for source in (packed, DATA / "mem0" / "get_all_list.json", DATA / "mem0" / "get_all_results.json"):
            report = view.import_file(source)
            assert report.format == "mem0"
            added += report.facts_added
        assert added > 0 and view.facts.count() == added
        assert all(0 < f.confidence <= 1 for f in view.facts.list())
        listed = view.import_file(DATA / "mem0" / "get_all_list.json", dry_run=True)
        assert listed.facts_added == 0
        assert any("confidence" in n for n in view.import_file(DATA / "mem0" / "get_all_list.json").notes)


def test_markdown_workspace_documents_versions_and_search(tmp_path, database_url):
    with make_memory(tmp_path, database_url) as m:
        view = m.scoped(user_id="ana", agent_name="bot")
        view.write_core("## Before\n- User had memory here already\n")
        report = view.import_file(DATA / "markdown" / "openclaw")
        assert report.format == "markdown" and report.documents >= 3 and not report.errors
        core = view.read_core()
        assert "Priya" in core
        versions = view.core_versions()
        assert len(versions) == 2 and {"Before" in v.content for v in versions} == {True, False}
        assert any(v.reason == "imported from markdown" for v in versions)
        assert "VLAN 30" in view.daily.read(date(2026, 1, 15))
        assert any("VLAN" in hit.text for hit in view.search("VLAN IoT devices", k=5))

        # MEMORY.md dreamt over since: importing the same workspace again does not put the old one back.
        view.write_core("## Edited\n- Priya lives in Toronto\n")
        snapshot = state(m)
        again = view.import_file(DATA / "markdown" / "openclaw")
        assert again.documents == 0 and state(m) == snapshot


def test_a_document_too_large_is_reported_and_nothing_of_it_written(tmp_path, database_url):
    workspace = tmp_path / "ws"
    shutil.copytree(DATA / "markdown" / "openclaw", workspace)
    (workspace / "MEMORY.md").write_text("# Long-term memory\n" + "- a line of memory\n" * 2000, encoding="utf-8")
    with make_memory(tmp_path, database_url, max_document_chars=10_000) as m:
        view = m.scoped(user_id="ana", agent_name="bot")
        report = view.import_file(workspace)
        assert any("MEMORY.md" in e and "max_document_chars" in e for e in report.errors)
        assert view.read_core() is None and view.core_versions() == []
        assert view.daily.read(date(2026, 1, 15))  # the rest came in


@pytest.mark.parametrize("fmt, source", [("chatgpt", DATA / "chatgpt" / "conversations.json"),
                                         ("claude", DATA / "claude" / "export")])
def test_conversations_go_through_the_queue_dated_when_they_happened(tmp_path, database_url, clock, fmt, source):
    with make_memory(tmp_path, database_url, clock=clock, rate_limit_seconds=0) as m:
        view = m.scoped(user_id="ana", agent_name="bot")
        preview = view.import_file(source, dry_run=True)
        assert preview.conversations > 0 and m.queue.pending() == 0

        fractions = []
        report = view.import_file(source, progress=lambda f, _what: fractions.append(f))
        assert report.format == fmt and report.conversations == preview.conversations
        assert fractions and fractions[-1] == 1.0 and fractions == sorted(fractions)
        assert view.queue.pending() == report.conversations  # in the persisted queue, not applied yet
        assert view.facts.count() == 0

        assert m.queue.flush() == report.conversations
        assert view.facts.count() > 0  # offline: the heuristic extractor ran on each conversation
        days = view.daily.days()
        assert days and max(days) < date(2026, 1, 1)  # the daily tier keeps the conversations' own dates
        first = view.daily.read(min(days))
        assert "User:" in first

        again = view.import_file(source)
        assert again.conversations == 0 and again.conversations_skipped == report.conversations
        assert view.queue.pending() == 0


def test_chatgpt_conversation_says_where_user_lives(tmp_path, clock):
    with make_memory(tmp_path, clock=clock, rate_limit_seconds=0) as m:
        view = m.scoped(user_id="ana", agent_name="bot")
        view.import_file(DATA / "chatgpt" / "conversations.json")
        m.queue.flush()
        contents = " ".join(f.content for f in view.facts.list())
        assert "Lisbon" in contents
        block = view.daily.read(date(2025, 1, 1))
        assert block and "Moving to Lisbon" in block and "Lisbon" in block


def test_a_long_conversation_keeps_its_end(tmp_path, clock):
    long = [{"id": "long-1", "title": "Long", "create_time": 1735725600, "mapping": {}}]
    node_ids = []
    mapping = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
    parent = "root"
    for i in range(40):
        nid = f"n{i}"
        role = "user" if i % 2 == 0 else "assistant"
        text = (f"I live in Town{i}. " if role == "user" else "Noted. ") + "x" * 400
        mapping[nid] = {"id": nid, "parent": parent, "children": [],
                        "message": {"id": nid, "author": {"role": role}, "create_time": 1735725600 + i,
                                    "content": {"content_type": "text", "parts": [text]}}}
        mapping[parent]["children"].append(nid)
        parent = nid
        node_ids.append(nid)
    long[0]["mapping"] = mapping
    long[0]["current_node"] = parent
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(long), encoding="utf-8")
    with make_memory(tmp_path, clock=clock, max_conversation_chars=5_000, rate_limit_seconds=0) as m:
        view = m.scoped(user_id="ana", agent_name="bot")
        report = view.import_file(path)
        assert report.conversations == 1 and any("max_conversation_chars (5,000)" in n for n in report.notes)
        assert view.queue.pending() == 1 and m.queue.flush() == 1
        said = " ".join(f.content for f in view.facts.list(include_invalid=True))
        assert "Town38" in said and "Town0" not in said


@pytest.mark.parametrize("name, content", [
    ("garbage.json", b"\x00\x01\x02 not json at all"),
    ("conversations.json", b'[{"title": "cut off", "mapping": {'),
    ("memory.json", b'{"version": "1.0", "facts": "not a list"}'),
    ("empty.zip", b"PK\x05\x06" + b"\x00" * 18),
    ("random.bin", bytes(range(256)) * 64),
])
def test_a_bad_file_raises_and_changes_nothing(tmp_path, database_url, name, content):
    path = tmp_path / name
    path.write_bytes(content)
    with make_memory(tmp_path, database_url) as m:
        view = m.scoped(user_id="ana", agent_name="bot")
        view.import_file(DATA / "deerflow" / "memory.json")
        before = state(m)
        with pytest.raises(ValueError) as err:
            view.import_file(path)
        assert str(err.value) and "Traceback" not in str(err.value)
        assert state(m) == before


def test_escaping_zip_is_refused_before_anything_changes(tmp_path):
    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("MEMORY.md", "# Memory\n- fine\n")
        z.writestr("../../evil/MEMORY.md", "# Memory\n- escaped\n")
    with make_memory(tmp_path) as m:
        view = m.scoped(user_id="ana", agent_name="bot")
        with pytest.raises(ValueError):
            view.import_file(path)
        assert view.read_core() is None and not (tmp_path / "evil").exists()


def test_a_viewer_may_preview_but_not_import(tmp_path):
    with make_memory(tmp_path) as m:
        viewer = m.scoped(user_id="ana", agent_name="bot", role="viewer")
        assert viewer.import_file(DATA / "deerflow" / "memory.json", dry_run=True).facts_added > 0
        with pytest.raises(PermissionError):
            viewer.import_file(DATA / "deerflow" / "memory.json")
        assert m.scoped(user_id="ana", agent_name="bot").facts.count() == 0


def test_imports_stay_in_their_scope(tmp_path, database_url, clock):
    with make_memory(tmp_path, database_url, clock=clock, rate_limit_seconds=0) as m:
        m.scoped(user_id="ana", agent_name="bot").import_file(DATA / "deerflow" / "memory.json")
        m.scoped(user_id="ana", agent_name="bot").import_file(DATA / "chatgpt" / "conversations.json")
        m.queue.flush()
        bob = m.scoped(user_id="bob", agent_name="bot")
        assert bob.facts.count() == 0 and bob.daily.days() == [] and bob.queue.items() == []
        # The ledger is per scope: bob importing the same file gets everything.
        assert bob.import_file(DATA / "deerflow" / "memory.json").facts_added > 0


@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_conversations_wait_for_updates_to_be_switched_on(tmp_path, clock):
    with make_memory(tmp_path, clock=clock, enabled=False) as m:
        report = m.scoped(user_id="ana", agent_name="bot").import_file(DATA / "chatgpt" / "conversations.json")
        assert report.conversations == 0 and any("switched off" in n for n in report.notes)
        assert m.queue.pending() == 0
    with make_memory(tmp_path, clock=clock) as m:  # switched on: the same file queues them all
        assert m.scoped(user_id="ana", agent_name="bot").import_file(
            DATA / "chatgpt" / "conversations.json").conversations > 0


def test_an_import_never_evicts_and_brings_the_rest_later(tmp_path, database_url):
    with make_memory(tmp_path, database_url, max_facts=3) as m:
        view = m.scoped(user_id="ana", agent_name="bot")
        mine = view.facts.add("User keeps bees", "context", 0.55)
        preview = view.import_file(DATA / "deerflow" / "memory.json", dry_run=True)
        assert preview.facts_added == 2 and any("never evicts" in n for n in preview.notes)
        report = view.import_file(DATA / "deerflow" / "memory.json")
        assert report.facts_added == 2 and any("never evicts" in n for n in report.notes)
        assert view.facts.get(mine.id).valid and view.facts.count() == 3
    with make_memory(tmp_path, database_url, max_facts=500) as m:  # room now: the rest comes in, once
        view = m.scoped(user_id="ana", agent_name="bot")
        everything = m.scoped(user_id="bob", agent_name="bot").import_file(DATA / "deerflow" / "memory.json")
        again = view.import_file(DATA / "deerflow" / "memory.json")
        assert everything.facts_added > 2 and again.facts_added == everything.facts_added - 2
        assert view.facts.count() == 3 + again.facts_added
        assert view.import_file(DATA / "deerflow" / "memory.json").facts_added == 0


# What the user said in the fixtures' current branches, as the offline extractor writes it.
STATED = {
    "chatgpt": {"User lives in Lisbon", "User works at Tidewater Analytics", "User prefers walking to work",
                "User prefers quiet temples to crowded ones", "User prefers tea over coffee in the mornings",
                "User usually cycles to the office"},
    "claude": {"User prefers tokio over async-std", "User is a nurse", "User wants to move into health informatics",
               "User grows tomatoes and peppers on their allotment in Leeds"},
}
# Said by the assistant, by nobody, or not a fact: never a fact.
NOT_STATED = re.compile(r"Thai basil|Sanzen|Tokio is|regenerated|Kyoto for 5|data analysis|PIN|Leeds summers|"
                        r"Welcome|commute|keeps it", re.I)


@pytest.mark.parametrize("fmt,path", [("chatgpt", DATA / "chatgpt" / "conversations.json"),
                                      ("claude", DATA / "claude" / "export")])
@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_imported_conversations_yield_the_facts_the_user_stated(tmp_path, database_url, fmt, path):
    with make_memory(tmp_path, database_url) as m:
        report = m.import_file(path, user_id="ana", agent_name="bot")
        assert report.format == fmt and report.conversations >= 3
        m.queue.flush()
        facts = {f.content for f in m.facts.list(user_id="ana", agent_name="bot")}
        assert STATED[fmt] <= facts, STATED[fmt] - facts
        assert not [f for f in facts if NOT_STATED.search(f)]
        user = m.memory_data(user_id="ana", agent_name="bot")["user"]
        if fmt == "claude":  # the summary Claude kept is not thrown away by the offline summary
            assert user["topOfMind"]["summary"] == ("Shipping the checkout redesign before the holiday sale. "
                                                    "User wants to move into health informatics.")
        assert all(_sentences_only(part["summary"]) for part in user.values() if part["summary"])

