"""Reading other tools' exports: each format and its variants, detection by content, and the safety refusals.

Fixtures are small files in each format under tests/data/imports; zips are written here with zipfile, the
malicious ones included. Nothing touches a database: these are the parsers only.
"""

from __future__ import annotations

import gzip
import json
import shutil
import struct
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import pytest

from bench.chatgpt_export import write_chatgpt_export
from memory_core.facts.api import CATEGORIES
from memory_core.portability import detect_format, read_import
from memory_core.portability.chatgpt import current_branch
from memory_core.portability.claude import active_branch, split_summary
from memory_core.portability.records import SUMMARY_KEYS, confidence_of, map_category, to_utc
from memory_core.portability.safety import (Source, ZipLimits, gunzip, load_json, read_file, read_member,
                                            safe_members)

DATA = Path(__file__).parents[1] / "data" / "imports"
UTC = timezone.utc


def zip_of(target: Path, files: dict[str, bytes | str], compression: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(target, "w", compression) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return target


def zip_folder(folder: Path, target: Path, prefix: str = "") -> Path:
    return zip_of(target, {prefix + p.relative_to(folder).as_posix(): p.read_bytes()
                           for p in sorted(folder.rglob("*")) if p.is_file()})


def openmemory_zip(target: Path, with_lines: bool = True) -> Path:
    files: dict[str, bytes | str] = {"memories.json": (DATA / "mem0/openmemory/memories.json").read_bytes()}
    if with_lines:
        files["memories.jsonl.gz"] = gzip.compress((DATA / "mem0/openmemory/memories.jsonl").read_bytes())
    return zip_of(target, files)


def by_id(parsed):
    return {f.source_id: f for f in parsed.facts}


def check_records(parsed) -> None:
    """What every parser promises: our categories, confidences in range, aware UTC times, known keys."""
    for fact in parsed.facts:
        assert fact.category in CATEGORIES and 0.0 <= fact.confidence <= 1.0 and fact.content == fact.content.strip()
        assert fact.created_at is None or fact.created_at.utcoffset().total_seconds() == 0
    assert set(parsed.summaries) <= set(SUMMARY_KEYS) and all(v.strip() for v in parsed.summaries.values())
    for conversation in parsed.conversations:
        assert conversation.id and conversation.messages
        for when in (conversation.created_at, conversation.updated_at):
            assert when is None or when.tzinfo is not None
        for message in conversation.messages:
            assert message.role in ("user", "assistant") and message.content.strip()
            assert "\x00" not in message.content
    for document in parsed.documents:
        assert document.path == "MEMORY.md" or document.path.startswith("memory/")


# -- DeerFlow ---------------------------------------------------------------------------------------------------


def test_deerflow_facts_summaries_and_bad_items():
    parsed = read_import(DATA / "deerflow/memory.json")
    check_records(parsed)
    facts = by_id(parsed)
    assert parsed.format == "deerflow" and len(parsed.facts) == 7
    assert facts["fact_1a2b3c4d"].category == "preference" and facts["fact_1a2b3c4d"].confidence == 0.92
    assert facts["fact_1a2b3c4d"].created_at == datetime(2026, 2, 1, 8, 0, tzinfo=UTC)
    # A correction keeps its content as DeerFlow wrote it, and what it corrects beside it (issue 19, item 15);
    # DeerFlow's newer categories map onto ours.
    assert facts["fact_3c4d5e6f"].content == "Use make dev to start the local stack"
    assert facts["fact_3c4d5e6f"].source_error == "npm start"
    assert facts["fact_3c4d5e6f"].category == "correction"
    assert all(f.source_error is None for f in parsed.facts if f.source_id != "fact_3c4d5e6f")
    assert facts["fact_4d5e6f70"].category == "context"  # identity
    assert facts["fact_4d5e6f70"].created_at == datetime(2026, 2, 11, 11, 0, tzinfo=UTC)  # +01:00 in the file
    assert facts["fact_92a3b4c5"].category == "context"  # decision
    assert facts["fact_5e6f7081"].confidence == 0.8 and not facts["fact_5e6f7081"].confidence_defaulted  # "0.8"
    assert facts["fact_6f708192"].confidence_defaulted and facts["fact_6f708192"].confidence == 0.8  # null
    assert any("fitness" in n for n in parsed.notes) and any("no confidence" in n for n in parsed.notes)
    # The malformed ones are errors with their id or index; the rest was read.
    assert len(parsed.errors) == 3
    assert any("fact_708192a3" in e and "no content" in e for e in parsed.errors)
    assert any("fact_8192a3b4" in e and "1.7" in e for e in parsed.errors)
    assert any("#8" in e for e in parsed.errors)
    assert parsed.summaries == {
        "workContext": "Backend engineer at Finch Labs, building a billing service in Go.",
        "personalContext": "Lives in Porto; learning Portuguese.",
        "topOfMind": "Migrating the billing service to PostgreSQL 16 before April.",
        "recentMonths": "Moved from Berlin to Porto in January 2026."}


def test_deerflow_early_file_with_missing_fields():
    parsed = read_import(DATA / "deerflow/memory_early.json")
    check_records(parsed)
    assert [f.content for f in parsed.facts] == ["User uses Python 3.12", "User prefers tabs over spaces",
                                                "User tends to work late at night"]
    assert parsed.facts[1].source_id is None and parsed.facts[0].created_at is None
    assert parsed.facts[2].category == "context" and parsed.facts[2].created_at is None  # no category, bad date
    assert parsed.summaries == {"workContext": "Works on a data pipeline."} and not parsed.errors


def test_deerflow_2_summaries_only_and_its_export():
    summaries_only = read_import(DATA / "deerflow/memory_v2.json")
    assert not summaries_only.facts and summaries_only.summaries == {
        "workContext": "Leads the platform team.", "longTermBackground": "Ten years of backend work."}
    assert any("/api/memory/export" in n for n in summaries_only.notes)
    exported = read_import(DATA / "deerflow/export_api.json")
    assert [(f.content, f.category) for f in exported.facts] == [
        ("User prefers PostgreSQL over MySQL", "preference"), ("Never deploy on Fridays", "preference")]


def test_deerflow_format_on_another_file_names_what_was_expected(tmp_path):
    with pytest.raises(ValueError, match="DeerFlow"):
        read_import(DATA / "mem0/get_all_list.json", format="deerflow")
    (tmp_path / "memory.json").write_text(json.dumps({"user": {}, "history": {}, "facts": "many"}))
    assert read_import(tmp_path / "memory.json").errors == ["facts: expected a list, got str"]


# -- mem0 -------------------------------------------------------------------------------------------------------


def test_mem0_list_defaults_confidence_and_says_so():
    parsed = read_import(DATA / "mem0/get_all_list.json")
    check_records(parsed)
    facts = by_id(parsed)
    first = facts["0b9f1c7e-6a11-4c8e-9d8f-5d7a1d7e0001"]
    assert first.content == "Is a vegetarian" and first.confidence == 0.8 and first.confidence_defaulted
    assert first.created_at == datetime(2025, 11, 3, 18, 12, 45, 123456, tzinfo=UTC)  # -08:00 in the file
    assert facts["0b9f1c7e-6a11-4c8e-9d8f-5d7a1d7e0002"].category == "preference"  # metadata category "food"
    goal = facts["0b9f1c7e-6a11-4c8e-9d8f-5d7a1d7e0004"]
    assert goal.category == "goal" and goal.confidence == 0.65 and not goal.confidence_defaulted
    assert any("no confidence" in n and "0.8" in n for n in parsed.notes)
    assert parsed.errors == ["memory '0b9f1c7e-6a11-4c8e-9d8f-5d7a1d7e0003': it has no text"]


def test_mem0_results_with_platform_categories():
    parsed = read_import(DATA / "mem0/get_all_results.json")
    check_records(parsed)
    assert [f.category for f in parsed.facts] == ["context", "preference", "preference", "context"]
    assert any("pets" in n for n in parsed.notes)
    early = read_import(DATA / "mem0/early_text.json")  # the first versions called the text "text"
    assert [f.content for f in early.facts] == ["Likes hiking in the Alps", "Allergic to peanuts"]


@pytest.mark.parametrize("with_lines", [True, False])
def test_openmemory_export_zip(tmp_path, with_lines):
    parsed = read_import(openmemory_zip(tmp_path / "memories_export_dana.zip", with_lines))
    check_records(parsed)
    assert parsed.format == "mem0"
    assert [(f.content, f.category) for f in parsed.facts] == [
        ("Prefers pytest over unittest", "preference"), ("Works on the search team at Globex", "context"),
        ("Wants to learn Rust this year", "goal"), ("Uses a standing desk", "context")]
    assert all(f.confidence_defaulted for f in parsed.facts)
    assert any("1 deleted, 1 archived" in n for n in parsed.notes)


def test_mem0_json_lines_alone_with_a_bad_line(tmp_path):
    lines = (DATA / "mem0/openmemory/memories.jsonl").read_bytes() + b"{not json\n"
    (tmp_path / "memories.jsonl.gz").write_bytes(gzip.compress(lines))
    parsed = read_import(tmp_path / "memories.jsonl.gz")
    assert parsed.format == "mem0" and len(parsed.facts) == 4
    assert parsed.errors == ["memories.jsonl.gz line 7: not valid JSON (Expecting property name enclosed in double "
                             "quotes)"]


# -- ChatGPT ----------------------------------------------------------------------------------------------------


def chatgpt():
    return {c.title: c for c in read_import(DATA / "chatgpt/conversations.json").conversations}


def test_chatgpt_edited_message_follows_the_current_branch():
    kyoto = chatgpt()["Kyoto trip"]
    # u_new (not the edited-away u_old), then a_v2 (not the regenerated-away a_v1); no tool call or output.
    assert [(m.role, m.content) for m in kyoto.messages] == [
        ("user", "Plan a trip to Kyoto for 7 days. I prefer quiet temples to crowded ones."),
        ("assistant", "Day 1: Sanzen-in in Ohara is quiet in the morning.")]
    assert kyoto.id == "67750002-bbbb-8000-8000-000000000002"


def test_current_branch_walks_parents_and_survives_damage():
    mapping = {"root": {"message": None, "parent": None, "children": ["a"]},
               "a": {"message": {"id": "a"}, "parent": "root", "children": ["b1", "b2"]},
               "b1": {"message": {"id": "b1"}, "parent": "a", "children": []},
               "b2": {"message": {"id": "b2"}, "parent": "a", "children": ["c"]},
               "c": {"message": {"id": "c"}, "parent": "b2", "children": []}}
    assert [n["message"] and n["message"]["id"] for n in current_branch(mapping, "c")] == [None, "a", "b2", "c"]
    assert [n["message"]["id"] for n in current_branch(mapping, "b1")[1:]] == ["a", "b1"]
    mapping["a"]["parent"] = "c"  # a loop: the walk stops instead of spinning
    assert [n["message"]["id"] for n in current_branch(mapping, "c")] == ["a", "b2", "c"]
    mapping["a"]["parent"] = "gone"  # a parent that is not there: what was reached is kept
    assert len(current_branch(mapping, "c")) == 3


def test_chatgpt_keeps_chat_text_and_leaves_out_the_rest():
    parsed = read_import(DATA / "chatgpt/conversations.json")
    check_records(parsed)
    conversations = {c.title: c for c in parsed.conversations}
    assert set(conversations) == {"Moving to Lisbon", "Kyoto trip", "Balcony plant", "Morning chat", "Two answers",
                                  "No id"}
    lisbon = conversations["Moving to Lisbon"]
    assert [m.role for m in lisbon.messages] == ["user", "assistant", "user", "assistant"]
    assert lisbon.messages[0].content == "I live in Lisbon now and I work at Tidewater Analytics."
    assert lisbon.created_at == datetime(2025, 1, 1, 10, 0, tzinfo=UTC)
    assert lisbon.updated_at == datetime(2025, 1, 1, 11, 0, tzinfo=UTC)
    assert lisbon.messages[0].created_at == datetime(2025, 1, 1, 10, 0, 10, tzinfo=UTC)
    # An image's text part is kept, its reasoning is not; voice mode's transcriptions are the words.
    assert [m.content for m in conversations["Balcony plant"].messages] == [
        "What plant is this? I keep it on my balcony.", "It looks like Thai basil."]
    assert conversations["Morning chat"].messages[0].content == "I prefer tea over coffee in the mornings."
    # No current node: the latest leaf stands in.
    assert conversations["Two answers"].messages[-1].content == "VS Code with gopls."
    # Hidden custom instructions never become a message; "do not remember" is respected.
    every = " ".join(m.content for c in parsed.conversations for m in c.messages)
    assert "photographer" not in every and "PIN" not in every and "You are ChatGPT" not in every
    assert any("do not remember" in n for n in parsed.notes) and any("image" in n for n in parsed.notes)
    assert parsed.errors == ["conversation '67750006-ffff-8000-8000-000000000006': it has no messages ('mapping')",
                             "conversation #7: not an object"]


def test_chatgpt_id_is_stable_without_one(tmp_path):
    first = chatgpt()["No id"].id
    assert first.startswith("chatgpt-") and first == chatgpt()["No id"].id
    items = json.loads((DATA / "chatgpt/conversations.json").read_text())
    items.insert(0, items.pop())  # the same conversation elsewhere in the file keeps its id
    (tmp_path / "conversations.json").write_text(json.dumps(items))
    assert {c.title: c.id for c in read_import(tmp_path / "conversations.json").conversations}["No id"] == first


def test_chatgpt_export_zip_and_folder(tmp_path):
    zipped = zip_of(tmp_path / "export.zip", {
        "Export/conversations.json": (DATA / "chatgpt/conversations.json").read_bytes(),
        "Export/user.json": "{}", "Export/chat.html": "<html></html>",
        "Export/file-abc123-sanitized.png": b"\x89PNG\r\n\x1a\n" + bytes(100)})
    assert detect_format(zipped) == "chatgpt"
    assert [c.id for c in read_import(zipped).conversations] == [c.id for c in chatgpt().values()]
    folder = tmp_path / "unzipped"
    folder.mkdir()
    shutil.copy(DATA / "chatgpt/conversations.json", folder / "conversations.json")
    assert len(read_import(folder).conversations) == 6


def test_chatgpt_text_that_cannot_be_stored_is_cleaned(tmp_path):
    items = json.loads((DATA / "chatgpt/conversations.json").read_text())
    items[0]["mapping"]["u1"]["message"]["content"]["parts"] = ["I live in Lisbon\u0000 \ud800now"]
    (tmp_path / "c.json").write_text(json.dumps(items))
    parsed = read_import(tmp_path / "c.json")
    assert parsed.conversations[0].messages[0].content == "I live in Lisbon \ufffdnow"
    assert any("NUL" in n for n in parsed.notes)


# -- Claude -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("packed", ["folder", "zip"])
def test_claude_export(tmp_path, packed):
    source = DATA / "claude/export" if packed == "folder" else \
        zip_folder(DATA / "claude/export", tmp_path / "data-2025-07-01.zip", prefix="data-2025-07-01/")
    parsed = read_import(source)
    check_records(parsed)
    assert parsed.format == "claude"
    talks = {c.title: c for c in parsed.conversations}
    assert set(talks) == {"Garden planning", "Async Rust", "Job change"}
    assert talks["Garden planning"].messages[0].content == "I grow tomatoes and peppers on my allotment in Leeds."
    assert talks["Garden planning"].created_at == datetime(2024, 5, 1, 9, 0, 0, 123456, tzinfo=UTC)
    # Content blocks: the text blocks, not thinking or tools.
    assert talks["Async Rust"].messages[1].content == "Tokio is a solid choice.\n\nVersion 1.40 added new APIs."
    # An edited message: the latest branch.
    assert [m.content for m in talks["Job change"].messages] == [
        "I'm a nurse thinking about a career change.", "What interests you?",
        "I want to move into health informatics.", "Health informatics builds on your nursing."]
    # Claude's memory lands in the matching summary sections.
    assert parsed.summaries["workContext"] == "Sam is a product designer at Northwind, leading the checkout redesign."
    assert parsed.summaries["recentMonths"] == "Moved from agency work to Northwind in spring 2025."
    assert parsed.summaries["longTermBackground"] == "Trained as an illustrator."
    assert len(parsed.summaries) == 6
    assert any("project memory" in n for n in parsed.notes) and any("attached" in n for n in parsed.notes)
    assert parsed.errors == ["conversation 'c5000000-0000-4000-8000-000000000005': it has no 'chat_messages' list"]


def test_claude_branch_by_current_leaf_and_plain_order():
    chat = [{"uuid": "h1", "sender": "human", "parent_message_uuid": "00000000-0000-4000-8000-000000000000"},
            {"uuid": "a1", "sender": "assistant", "parent_message_uuid": "h1", "created_at": "2025-01-01T00:00:02Z"},
            {"uuid": "a2", "sender": "assistant", "parent_message_uuid": "h1", "created_at": "2025-01-01T00:00:09Z"}]
    assert [m["uuid"] for m in active_branch(chat)] == ["h1", "a2"]  # the latest leaf
    assert [m["uuid"] for m in active_branch(chat, "a1")] == ["h1", "a1"]  # the named leaf
    plain = [{"uuid": "x", "sender": "human"}, {"uuid": "y", "sender": "assistant"}]
    assert active_branch(plain) == plain


def test_claude_memory_without_headings_and_memories_alone(tmp_path):
    sections, matched = split_summary("Sam likes long walks.\nSam is vegetarian.")
    assert not matched and sections == {"personalContext": "Sam likes long walks.\nSam is vegetarian."}
    sections, matched = split_summary("## Work context:\nDesigner.\n\n# Top of Mind\nThe launch.")
    assert matched and sections == {"workContext": "Designer.", "topOfMind": "The launch."}
    parsed = read_import(DATA / "claude/export/memories.json")
    assert parsed.format == "claude" and not parsed.conversations and len(parsed.summaries) == 6


# -- Markdown ---------------------------------------------------------------------------------------------------


def test_openclaw_workspace():
    parsed = read_import(DATA / "markdown/openclaw")
    check_records(parsed)
    docs = {d.path: d.text for d in parsed.documents}
    assert list(docs) == ["MEMORY.md", "memory/2026-01-15.md", "memory/2026-01-16.md", "memory/dreams/DREAMS.md"]
    assert docs["MEMORY.md"] == (DATA / "markdown/openclaw/MEMORY.md").read_text()
    # The session note joins its day's log, after the day's own text.
    day = docs["memory/2026-01-16.md"]
    assert day.startswith("# 2026-01-16") and "## vendor-pitch (from memory/2026-01-16-vendor-pitch.md)" in day
    assert day.index("alert fatigue") < day.index("observability suite")
    other = next(n for n in parsed.notes if "not imported" in n)
    assert "USER.md" in other and "SOUL.md" in other and "memory/.dreams/state.json" in other


def test_cowagent_workspace_zipped_in_a_folder(tmp_path):
    zipped = zip_folder(DATA / "markdown/cowagent", tmp_path / "cow.zip", prefix="cow/")
    parsed = read_import(zipped)
    assert parsed.format == "markdown"
    assert [d.path for d in parsed.documents] == ["MEMORY.md", "memory/2026-02-01.md", "memory/dreams/2026-02-01.md"]
    assert "李雷" in parsed.documents[0].text
    assert any("memory/2026-02-30.md" in n and "memory/notes.md" in n for n in parsed.notes)  # not a real day


def test_markdown_unreadable_file_is_an_error_the_rest_is_read(tmp_path):
    shutil.copytree(DATA / "markdown/openclaw", tmp_path / "ws")
    (tmp_path / "ws/memory/2026-01-15.md").write_bytes("caf\xe9 au lait".encode("latin-1"))
    (tmp_path / "ws/memory/2026-01-17.md").write_text("nul \x00 inside")
    parsed = read_import(tmp_path / "ws")
    assert [d.path for d in parsed.documents] == ["MEMORY.md", "memory/2026-01-16.md", "memory/dreams/DREAMS.md"]
    assert len(parsed.errors) == 2 and "not UTF-8" in parsed.errors[0] and "NUL" in parsed.errors[1]


def test_markdown_single_files_and_no_workspace(tmp_path):
    day = tmp_path / "2026-03-04.md"
    day.write_text("- Went to the dentist.\n")
    assert [(d.path, d.text) for d in read_import(day).documents] == [("memory/2026-03-04.md",
                                                                       "- Went to the dentist.\n")]
    (tmp_path / "notes.md").write_text("hello")
    with pytest.raises(ValueError, match="MEMORY.md or YYYY-MM-DD.md"):
        read_import(tmp_path / "notes.md")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty/README.md").write_text("hi")
    with pytest.raises(ValueError, match="no MEMORY.md"):
        read_import(tmp_path / "empty", format="markdown")


# -- Detection --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path, expected", [
    ("deerflow/memory.json", "deerflow"), ("deerflow/memory_v2.json", "deerflow"),
    ("mem0/get_all_list.json", "mem0"), ("mem0/get_all_results.json", "mem0"),
    ("mem0/openmemory/memories.json", "mem0"), ("mem0/openmemory/memories.jsonl", "mem0"),
    ("mem0/openmemory", "mem0"), ("chatgpt/conversations.json", "chatgpt"),
    ("claude/export/conversations.json", "claude"), ("claude/export/memories.json", "claude"),
    ("claude/export", "claude"), ("markdown/openclaw", "markdown"), ("markdown/cowagent/MEMORY.md", "markdown")])
def test_detect_format(path, expected):
    assert detect_format(DATA / path) == expected


def test_detection_reads_content_not_names(tmp_path):
    shutil.copy(DATA / "chatgpt/conversations.json", tmp_path / "memory.json")
    assert detect_format(tmp_path / "memory.json") == "chatgpt"
    shutil.copy(DATA / "deerflow/memory.json", tmp_path / "backup.dat")
    assert detect_format(tmp_path / "backup.dat") == "deerflow"
    zip_of(tmp_path / "archive.bin", {"memory.json": (DATA / "deerflow/memory.json").read_bytes()})
    assert detect_format(tmp_path / "archive.bin") == "deerflow"  # a zip by its bytes, whatever the suffix


def test_wrong_format_named_by_the_caller(tmp_path):
    with pytest.raises(ValueError, match="not a Claude export"):
        read_import(DATA / "chatgpt/conversations.json", format="claude")
    with pytest.raises(ValueError, match="not a ChatGPT export"):
        read_import(DATA / "claude/export", format="chatgpt")
    with pytest.raises(ValueError, match="not a mem0 export"):
        read_import(DATA / "claude/export", format="mem0")
    with pytest.raises(ValueError, match="not a Markdown memory workspace"):
        read_import(DATA / "claude/export", format="markdown")
    with pytest.raises(ValueError, match="format must be one of"):
        read_import(DATA / "deerflow/memory.json", format="notion")


@pytest.mark.parametrize("name, content, message", [
    ("random.bin", bytes(range(256)) * 4, "not UTF-8"),
    ("other.json", json.dumps({"hello": "world"}), "not a format memory_core can import"),
    ("empty.json", "[]", "empty JSON"),
    ("broken.json", '{"facts": [', "not valid JSON"),
    ("latin1.json", '{"facts": ["caf\xe9"]}'.encode("latin-1"), "not UTF-8"),
    ("deep.json", "[" * 100_000 + "]" * 100_000, "nested absurdly deep"),
    ("fake.zip", b"PK\x03\x04" + bytes(200), "not a readable zip"),
    ("odd.gz", b"\x1f\x8b" + bytes(50), "gzip"),
])
def test_garbage_files_are_refused(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    with pytest.raises(ValueError, match=message):
        read_import(path)


def test_missing_path_and_empty_folder(tmp_path):
    with pytest.raises(ValueError, match="no such file or folder"):
        read_import(tmp_path / "nope.json")
    with pytest.raises(ValueError, match="nothing memory_core can import"):
        detect_format(tmp_path)


# -- Safety -----------------------------------------------------------------------------------------------------


def with_conversations(extra: dict[str, bytes | str]) -> dict[str, bytes | str]:
    """A good export plus one bad entry: the bad entry must stop everything."""
    return {"conversations.json": (DATA / "chatgpt/conversations.json").read_bytes(), **extra}


@pytest.mark.parametrize("name, message", [
    ("../escape.json", "'..'"), ("/etc/passwd", "absolute"), ("C:/Windows/evil.json", "absolute"),
    ("..\\..\\evil.json", "backslash"), ("data\\conversations.json", "backslash"),
    ("inner/export.zip", "another zip"),
])
def test_zip_entries_with_tricky_names_are_refused(tmp_path, name, message):
    path = zip_of(tmp_path / "bad.zip", with_conversations({name: "{}"}))
    with pytest.raises(ValueError, match=message):
        read_import(path)
    with pytest.raises(ValueError, match=message):
        detect_format(path)


def test_zip_bomb_is_refused(tmp_path):
    path = zip_of(tmp_path / "bomb.zip", with_conversations({"padding.json": bytes(20 * 2**20)}))
    with pytest.raises(ValueError, match="zip bombs"):
        read_import(path)


def test_gzip_bomb_and_cap_are_refused():
    bomb = gzip.compress(bytes(20 * 2**20))
    with pytest.raises(ValueError, match="bombs"):
        gunzip(bomb, "memories.jsonl.gz")
    with pytest.raises(ValueError, match="more than 1,000 bytes"):
        gunzip(gzip.compress(b"x" * 5000), "m.gz", max_bytes=1000)
    assert gunzip(gzip.compress(b"ab") + gzip.compress(b"cd"), "two members") == b"abcd"
    text = b"".join(b"%d memory line\n" % i for i in range(400_000))  # many chunks out of one stream
    assert gunzip(gzip.compress(text), "long.gz") == text
    with pytest.raises(ValueError, match="truncated"):
        gunzip(gzip.compress(text)[:-100], "cut.gz")


def patched(path: Path, offset: int, fmt: str, value: int, signature: bytes = b"PK\x01\x02") -> Path:
    """Overwrite one field of every header with `signature` (central directory by default): a header that lies."""
    data = bytearray(path.read_bytes())
    at = data.find(signature)
    while at != -1:
        struct.pack_into(fmt, data, at + offset, value)
        at = data.find(signature, at + 4)
    path.write_bytes(bytes(data))
    return path


def patched_sizes(path: Path, declared: int) -> Path:
    """Every central-directory entry declares `declared` bytes uncompressed."""
    return patched(path, 24, "<I", declared)


def test_zip_sizes_declared_huge_or_understated(tmp_path):
    huge = patched_sizes(zip_of(tmp_path / "huge.zip", {"conversations.json": "[]"}), 600 * 2**20)
    with pytest.raises(ValueError, match="declares 629,145,600 bytes"):
        read_import(huge)
    # Declaring less than it holds: the read stops at the declared size and the archive is refused.
    small = patched_sizes(zip_of(tmp_path / "small.zip", {"conversations.json": b"[" + b" " * 5000 + b"]"},
                                 zipfile.ZIP_STORED), 100)
    with pytest.raises(ValueError, match="cannot be read"):
        read_import(small)


def test_zip_limits_on_entries_sizes_and_total(tmp_path):
    path = zip_of(tmp_path / "many.zip", {f"memory/2026-01-{d:02d}.md": "x" * 100 for d in range(1, 29)})
    with zipfile.ZipFile(path) as zf:
        with pytest.raises(ValueError, match="28 entries; at most 10"):
            safe_members(zf, ZipLimits(max_members=10))
        with pytest.raises(ValueError, match="declares 100 bytes; the limit is 50"):
            safe_members(zf, ZipLimits(max_member_bytes=50))
        with pytest.raises(ValueError, match="add up to more than 1,000 bytes"):
            safe_members(zf, ZipLimits(max_total_bytes=1000))
        members = safe_members(zf)
        assert len(members) == 28 and read_member(zf, members["memory/2026-01-01.md"]) == b"x" * 100
    with pytest.raises(ValueError, match="at most 10"):
        Source.open(path, ZipLimits(max_members=10))


def test_zip_links_encryption_and_duplicates_are_refused(tmp_path):
    link = zipfile.ZipInfo("conversations.json")
    link.external_attr = 0o120777 << 16
    path = zip_of(tmp_path / "link.zip", {})
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(link, "/etc/passwd")
    with pytest.raises(ValueError, match="symbolic link"):
        read_import(path)
    locked = zip_of(tmp_path / "locked.zip", {"conversations.json": "[]"}, zipfile.ZIP_STORED)
    patched(patched(locked, 8, "<H", 0x1), 6, "<H", 0x1, signature=b"PK\x03\x04")  # the "encrypted" bit
    with pytest.raises(ValueError, match="encrypted"):
        read_import(tmp_path / "locked.zip")
    with pytest.warns(UserWarning), zipfile.ZipFile(tmp_path / "twice.zip", "w") as zf:
        zf.writestr("conversations.json", "[]")
        zf.writestr("conversations.json", "[]")
    with pytest.raises(ValueError, match="appears twice"):
        read_import(tmp_path / "twice.zip")


def test_file_size_cap_and_json_checks(tmp_path):
    path = tmp_path / "big.json"
    path.write_bytes(b"[" + b" " * 200 + b"]")
    with pytest.raises(ValueError, match="the limit is 100"):
        read_file(path, max_bytes=100)
    assert read_file(path) == path.read_bytes()
    assert load_json("\ufeff{\"a\": 1}".encode("utf-8"), "bom.json") == {"a": 1}  # a byte-order mark is fine
    with pytest.raises(ValueError, match="x.json is not UTF-8"):
        load_json(b"\xff\xfe{}", "x.json")


def test_a_link_in_a_folder_is_not_followed(tmp_path):
    secret = tmp_path / "secret.md"
    secret.write_text("not yours")
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# mine")
    (ws / "memory/2026-01-01.md").symlink_to(secret)
    parsed = read_import(ws)
    assert [d.path for d in parsed.documents] == ["MEMORY.md"]
    assert any("link" in n for n in parsed.notes)
    (tmp_path / "chosen.json").symlink_to(DATA / "deerflow/memory.json")  # the path the user gives may be a link
    assert len(read_import(tmp_path / "chosen.json").facts) == 7


# -- Records ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value, expected", [
    (1735725600.5, datetime(2025, 1, 1, 10, 0, 0, 500000, tzinfo=UTC)),
    (1735725600000, datetime(2025, 1, 1, 10, 0, tzinfo=UTC)),  # milliseconds
    ("2025-01-01T10:00:00Z", datetime(2025, 1, 1, 10, 0, tzinfo=UTC)),
    ("2025-01-01T02:00:00-08:00", datetime(2025, 1, 1, 10, 0, tzinfo=UTC)),
    ("2025-01-01T10:00:00", datetime(2025, 1, 1, 10, 0, tzinfo=UTC)),  # naive: UTC
    ("2025-01-01 10:00:00.1234567Z", datetime(2025, 1, 1, 10, 0, 0, 123456, tzinfo=UTC)),
    ("", None), ("yesterday", None), (float("nan"), None), (True, None), (1e300, None), ([2025], None), (None, None),
])
def test_to_utc(value, expected):
    assert to_utc(value) == expected


@pytest.mark.parametrize("names, expected", [
    ("preference", ("preference", [])), ("Preferences", ("preference", [])), ("user_preferences", ("preference", [])),
    ("personal_details", ("context", [])), ("AI, ML & Technology", ("knowledge", [])), ("goals", ("goal", [])),
    (["personal", "preferences"], ("preference", [])), (["work", "goals"], ("goal", [])),
    ("identity", ("context", [])), ("constraint", ("preference", [])), ("pets", ("context", ["pets"])),
    ([], ("context", [])), (None, ("context", [])), (["", 3], ("context", [])),
])
def test_map_category(names, expected):
    assert map_category(names) == expected


@pytest.mark.parametrize("value, expected", [(0.9, 0.9), (1, 1.0), ("0.75", 0.75), (None, None), ("", None)])
def test_confidence_of(value, expected):
    assert confidence_of(value) == expected


@pytest.mark.parametrize("value", [1.5, -0.1, True, "high", float("nan"), float("inf"), [0.5]])
def test_confidence_of_refuses(value):
    with pytest.raises(ValueError, match="between 0 and 1"):
        confidence_of(value)


# -- The synthetic ChatGPT export -------------------------------------------------------------------------------


def test_synthetic_chatgpt_export_reads_back(tmp_path):
    stats = write_chatgpt_export(tmp_path / "a.zip", conversations=60, seed=3)
    write_chatgpt_export(tmp_path / "b.json", conversations=60, seed=3)
    with zipfile.ZipFile(tmp_path / "a.zip") as zf:
        assert zf.read("conversations.json") == (tmp_path / "b.json").read_bytes()  # deterministic
    parsed = read_import(tmp_path / "a.zip")
    check_records(parsed)
    assert parsed.format == "chatgpt" and stats["branched"] > 0
    assert len(parsed.conversations) == stats["conversations"] - stats["do_not_remember"]
    user_text = [m.content for c in parsed.conversations for m in c.messages if m.role == "user"]
    assert all(any(t.startswith(s) for t in user_text) for s in stats["statements"])  # current branches
    assert not any(t.startswith(u) for t in user_text for u in stats["abandoned"])  # dead branches
    days = (stats["last"] - stats["first"]) / 86400
    assert 600 < days <= 730 and stats["statements"]


@pytest.mark.parametrize("text, expected", [
    ("[]", []), (" [ ] ", []), ('\ufeff[{"a": 1}, [2], "x", 3, null]', [{"a": 1}, [2], "x", 3, None]),
    ('[\n  {"a": "]"},\n  {"b": "\\"],"}\n]\n', [{"a": "]"}, {"b": '"],'}]),
])
def test_json_array_is_read_one_element_at_a_time(text, expected):
    from memory_core.portability.safety import JsonArray, load_json_lazily

    value = load_json_lazily(text.encode("utf-8"), "x.json")
    assert isinstance(value, JsonArray) and list(value) == expected and value.head(1) == expected[:1]
    assert bool(value) is bool(expected)


@pytest.mark.parametrize("text, message", [
    ('[{"a": 1}, {"b": ]', "not valid JSON"), ('[{"a": 1} {"b": 2}]', "expected ',' or ']'"),
    ('[{"a": 1}] trailing', "extra data"), ('[{"a": 1},', "not valid JSON"), ("[" * 100_000 + "]" * 100_000, "deep"),
])
def test_json_array_refuses_what_is_not_json(text, message):
    from memory_core.portability.safety import load_json_lazily

    with pytest.raises(ValueError, match=message):
        list(load_json_lazily(text.encode("utf-8"), "x.json"))


def test_a_conversation_list_broken_near_its_end_is_refused_whole(tmp_path):
    good = json.loads((DATA / "chatgpt" / "conversations.json").read_text(encoding="utf-8"))
    text = json.dumps(good * 20)
    path = tmp_path / "conversations.json"
    path.write_text(text[:-40], encoding="utf-8")  # cut inside the last conversation
    with pytest.raises(ValueError, match="not valid JSON"):
        read_import(path)
    path.write_text(text, encoding="utf-8")
    once = len(read_import(DATA / "chatgpt" / "conversations.json").conversations)
    assert len(read_import(path).conversations) == 20 * once
