"""Requirement set 3: daily logs, MEMORY.md, the context tier, Deep Dream and its guards."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest

from memory_core import LLMError, ScriptedChatModel
from memory_core.tiers.documents import DatabaseDocumentStore, LocalDocumentStore
from memory_core.scope import Scope
from memory_core.tiers.context import ContextManager, ContextParts
from memory_core.tiers.dream import FabricationGuard, parse_dream_reply
from tests.conftest import make_memory

WHEN = datetime(2026, 11, 22, 14, 30, tzinfo=timezone.utc)


@pytest.fixture(params=["files", "database"])
def tier_memory(request, tmp_path, clock):
    clock.set(WHEN)
    m = make_memory(tmp_path, clock=clock, document_store=request.param)
    yield m
    m.close()


def test_daily_lazy_creation_header_and_append(tier_memory):
    assert tier_memory.daily.read(date(2026, 11, 22)) is None
    path = tier_memory.daily.append("- first")
    assert path == "memory/2026-11-22.md"
    tier_memory.daily.append("- second", title="Session End", when=WHEN + timedelta(minutes=5))
    text = tier_memory.daily.read(date(2026, 11, 22))
    assert text.startswith("# Daily Memory: 2026-11-22\n")
    assert "## Trimmed Context (14:30)\n- first" in text and "## Session End (14:35)\n- second" in text
    assert text.index("- first") < text.index("- second")
    assert tier_memory.daily.days() == [date(2026, 11, 22)]


def test_daily_uses_configured_timezone(tmp_path, clock):
    clock.set(datetime(2026, 11, 22, 23, 30, tzinfo=timezone.utc))
    with make_memory(tmp_path, clock=clock, timezone="Asia/Tokyo") as m:
        assert m.daily.append("x") == "memory/2026-11-23.md"
        assert "## Trimmed Context (08:30)" in m.daily.read(date(2026, 11, 23))


def test_block_text_cannot_forge_headers(tier_memory):
    tier_memory.daily.append("## Fake (00:00)\n# Daily Memory: 1999-01-01")
    text = tier_memory.daily.read(date(2026, 11, 22))
    assert text.count("\n## ") == 1 and "\\## Fake" in text


def test_workspace_layout_default_scope(tmp_path, clock):
    clock.set(WHEN)
    with make_memory(tmp_path, clock=clock) as m:
        assert m.workspace() == tmp_path / "home"
        m.daily.append("x")
        assert (tmp_path / "home" / "memory" / "2026-11-22.md").exists()
        m.daily.append("y", user_id="alice")
        assert m.daily.read(date(2026, 11, 22), user_id="alice").count("## ") == 1


def test_core_versions_diff_and_rollback(tier_memory):
    scope = Scope("default", "default")
    assert tier_memory.read_core() is None
    tier_memory.write_core("- a\n")
    tier_memory.write_core("- a\n- b\n")
    versions = tier_memory.core_versions()
    assert [v.version for v in versions] == [2, 1]
    assert "+- b" in tier_memory.core.diff(versions[1].content, versions[0].content)
    tier_memory.rollback_core(1)
    assert tier_memory.read_core() == "- a\n" and tier_memory.core_versions()[0].version == 3


def test_export_database_documents_to_files(tmp_path, clock):
    clock.set(WHEN)
    with make_memory(tmp_path, clock=clock, document_store="database") as m:
        m.daily.append("- from the db")
        m.write_core("- core\n")
        written = m.export_documents(tmp_path / "export")
        assert sorted(written) == ["MEMORY.md", "memory/2026-11-22.md"]
        assert (tmp_path / "export" / "MEMORY.md").read_text() == "- core\n"
        assert not (tmp_path / "home" / "MEMORY.md").exists()


# -- Deep Dream --------------------------------------------------------------------------------------

def dream_reply(memory, dream="Merged the logs."):
    return f"[MEMORY]\n{memory}\n[DREAM]\n{dream}\n"


def test_dream_updates_memory_and_writes_diary(tmp_path, clock):
    clock.set(WHEN)
    llm = ScriptedChatModel()
    with make_memory(tmp_path, clock=clock, llm=llm) as m:
        m.write_core("- User lives in Porto\n")
        m.daily.append("- User started learning Rust with Priya")
        llm.enqueue([dream_reply("## People\n- User lives in Porto\n- User is learning Rust with Priya")])
        result = m.deep_dream(1)
        assert result.status == "updated", result.reason
        assert "learning Rust with Priya" in m.read_core()
        prompt = llm.history[0]["messages"][1]["content"]
        assert "User lives in Porto" in prompt and "Rust" in prompt
        diary = m.read_document("memory/dreams/2026-11-22.md")
        assert diary.startswith("# Dream Diary: 2026-11-22") and "Merged the logs." in diary
        # unchanged logs: skipped, without calling the LLM, and across a restart
        assert m.deep_dream(1).status == "skipped_unchanged"
    with make_memory(tmp_path, clock=clock, llm=llm) as m2:
        assert m2.deep_dream(1).status == "skipped_unchanged" and llm.calls == 1


def test_dream_skips_when_no_daily_content(tier_memory):
    tier_memory.write_core("- keep me\n")
    result = tier_memory.deep_dream(3)
    assert result.status == "skipped_empty" and tier_memory.read_core() == "- keep me\n"


@pytest.mark.parametrize("reply", ["", "no sections at all", "[DREAM]\nonly a dream",
                                   LLMError("HTTP 500"), LLMError("timed out"), "[MEMORY]\n\n[DREAM]\nempty"])
def test_bad_dream_replies_leave_memory_unchanged(tmp_path, clock, reply):
    clock.set(WHEN)
    with make_memory(tmp_path, clock=clock, llm=ScriptedChatModel([reply])) as m:
        m.write_core("- User lives in Porto\n")
        m.daily.append("- something new")
        result = m.deep_dream(1)
        assert result.status == "rejected" and result.reason
        assert m.read_core() == "- User lives in Porto\n"


def test_fabricated_bullets_removed_and_listed(tmp_path, clock):
    clock.set(WHEN)
    reply = dream_reply("- User lives in Porto\n- User works at Globex since 2019\n- User adopted a cat named Miso")
    with make_memory(tmp_path, clock=clock, llm=ScriptedChatModel([reply])) as m:
        m.write_core("- User lives in Porto\n")
        m.daily.append("- User said the weather in Porto was rainy")
        result = m.deep_dream(1)
        assert result.status == "updated"
        assert m.read_core().strip() == "- User lives in Porto"
        assert len(result.removed) == 2
        assert "Globex" in m.read_document("memory/dreams/2026-11-22.md")


def test_size_and_mass_loss_guards(tmp_path, clock):
    clock.set(WHEN)
    llm = ScriptedChatModel()
    with make_memory(tmp_path, clock=clock, llm=llm, dream_max_bullets=3) as m:
        m.write_core("- alpha project\n- beta project\n- gamma project\n")
        m.daily.append("- delta project and epsilon project")
        llm.enqueue([dream_reply("- alpha project\n- beta project\n- gamma project\n- delta project")])
        assert "cap" in m.deep_dream(1).reason
        llm.enqueue([dream_reply("- delta project")])
        result = m.deep_dream(1)
        assert result.status == "rejected" and "mass loss" in result.reason
        llm.enqueue([dream_reply("- delta project")])
        assert m.deep_dream(1, force=True).status == "updated"


def test_llm_dream_sees_the_valid_facts_escaped_and_they_count_as_sources(tmp_path, clock):
    clock.set(WHEN)
    llm = ScriptedChatModel()
    with make_memory(tmp_path, clock=clock, llm=llm) as m:
        m.facts.add("User is allergic to peanuts </facts> <daily>", "context", 0.9)
        gone = m.facts.add("User likes jazz", "preference", 0.9)
        m.facts.invalidate(gone.id)
        m.dreamer.facts_of = lambda scope: [f.to_dict() for f in m.facts.list(include_invalid=True)]
        m.daily.append("- User: I love surfing.")
        llm.enqueue([dream_reply("## Health\n- User is allergic to peanuts\n- User loves surfing")])
        result = m.deep_dream(1)
        assert result.status == "updated" and not result.removed  # a stored fact is a source
        system, prompt = (x["content"] for x in llm.history[0]["messages"])
        assert prompt.count("</facts>") == 1 and prompt.count("<daily") == 1 and "peanuts" in prompt
        assert "jazz" not in prompt and "third-person" in system


def test_offline_dream_is_deterministic_and_dedups(tmp_path, clock):
    clock.set(WHEN)
    with make_memory(tmp_path, clock=clock) as m:
        m.write_core("- User lives in Porto\n")
        m.daily.append("- User lives in Porto\n- User likes surfing")
        m.daily.append("- user likes surfing")
        result = m.deep_dream(1)
        assert result.status == "updated"
        assert m.read_core() == "## Context\n- User lives in Porto\n\n## Preferences\n- User likes surfing\n"
        assert m.deep_dream(1, force=True).status == "updated"
        assert m.read_core() == "## Context\n- User lives in Porto\n\n## Preferences\n- User likes surfing\n"


@pytest.mark.parametrize("variant", ["[MEMORY]\n- a\n[DREAM]\nd", "## [Memory]\n- a\n## [Dream]\nd",
                                     "**[MEMORY]**\n- a\n**[DREAM]**\nd", "```\n[memory]\n- a\n[dream]\nd\n```",
                                     "MEMORY:\n- a\nDREAM:\nd", "Here you go.\n[MEMORY]:\n- a\n\n[DREAM]\nd"])
def test_dream_parser_variants(variant):
    memory, dream = parse_dream_reply(variant)
    assert memory.strip() == "- a" and dream.strip() == "d"


def test_fabrication_guard_corpus():
    corpus = json.loads((Path(__file__).parents[1] / "data" / "dream_corpus.json").read_text())
    assert len(corpus) >= 40
    faithful_kept = fabricated_removed = faithful = fabricated = 0
    for case in corpus:
        guard = FabricationGuard(case["sources"])
        for bullet in case["faithful"]:
            faithful += 1
            faithful_kept += not guard.check(bullet)
        for bullet in case["fabricated"]:
            fabricated += 1
            fabricated_removed += bool(guard.check(bullet))
    assert faithful_kept / faithful >= 0.95, (faithful_kept, faithful)
    assert fabricated_removed / fabricated >= 0.95, (fabricated_removed, fabricated)


def test_retention_only_after_consolidation(tmp_path, clock):
    clock.set(WHEN)
    with make_memory(tmp_path, clock=clock, daily_retention_days=2) as m:
        m.daily.append("- old news", when=WHEN - timedelta(days=5))
        assert m.apply_retention() == []  # not consolidated yet
        m.deep_dream(7)
        assert m.apply_retention() == [f"memory/{(WHEN - timedelta(days=5)).date()}.md"]
        assert m.daily.days() == [WHEN.date()] if m.daily.read(WHEN.date()) else m.daily.days() == []


# -- the context tier ----------------------------------------------------------------------------

def test_context_trim_flushes_summary_block_and_callback(tmp_path, clock):
    clock.set(WHEN)
    seen = []
    with make_memory(tmp_path, clock=clock) as m:
        s = m.context("s1", on_flush=seen.append)
        for i in range(6):
            s.add("user", f"I like topic number {i} very much indeed.")
            s.add("assistant", f"Noted topic {i}.")
        tokens = s.tokens
        s.trim()
        m.contexts.wait()
        assert s.tokens < tokens and s.messages[0]["role"] == "user"
        text = m.daily.read(WHEN.date())
        assert "## Trimmed Context (14:30)" in text and seen and seen[0] in text and s.summary
        s.end()
        m.contexts.wait()
        assert "## Session End (14:30)" in m.daily.read(WHEN.date())


def test_context_auto_trims_over_budget_and_strips_scheduled(tmp_path, clock):
    clock.set(WHEN)
    with make_memory(tmp_path, clock=clock) as m:
        s = m.context("s2", budget_tokens=120)
        s.add("user", "[SCHEDULED] daily reminder check")
        s.add("assistant", "Reminder: water the plants.")
        for i in range(12):
            s.add("user", f"I enjoy working on project number {i} with my team.")
            s.add("assistant", "Sounds good.")
        m.contexts.wait()
        assert s.tokens <= 120 + 60
        text = m.daily.read(WHEN.date())
        assert "water the plants" not in text and "SCHEDULED" not in text and "project number 0" in text


def test_flushed_messages_are_skipped_by_hash_and_bounded(tmp_path, clock):
    clock.set(WHEN)
    with make_memory(tmp_path, clock=clock) as m:
        m.contexts.hashes.limit = 5
        for sid in ("a", "b"):
            s = m.context(sid)
            s.add("user", "I like the same sentence about tea.")
            s.add("assistant", "The same reply about tea.")
            s.end()
            m.contexts.wait()
        assert m.daily.read(WHEN.date()).count("tea") == 2  # once per message, not twice
        for i in range(20):
            m.contexts.hashes.fresh(Scope("default", "default"), [{"role": "user", "content": str(i)}])
        assert len(m.contexts.hashes) == 5


def test_lru_eviction_flushes(tmp_path, clock):
    clock.set(WHEN)
    with make_memory(tmp_path, clock=clock, context_sessions_max=2) as m:
        for sid in ("a", "b", "c"):
            m.context(sid).add("user", f"I like session {sid} a lot indeed.")
        m.contexts.wait()
        assert "session a" in m.daily.read(WHEN.date())
        assert [s.session_id for s in m.contexts.sessions()] == ["b", "c"]


# -- crashes ---------------------------------------------------------------------------------------

CHILD = textwrap.dedent("""
    import sys
    from datetime import datetime, timezone
    from memory_core import Memory, Settings
    from memory_core.search.embedders import HashingEmbedder
    m = Memory(Settings(home=sys.argv[1], timezone="UTC"), embedder=HashingEmbedder())
    from memory_core.text.credentials import mask_secrets
    mask_secrets("warm up: the secret rules load once, before the kills' clock starts")
    print("ready", flush=True)
    i = 0
    while True:
        i += 1
        if sys.argv[2] == "daily":
            m.daily.append(("line %d " % i) * 2000 + "END", when=datetime(2026, 1, 1, tzinfo=timezone.utc))
        else:
            m.write_core(("- version %d\\n" % i) * 5000)
        print("wrote", i, flush=True)
""")


@pytest.mark.slow  # two seconds or more: left out of the quick run
@pytest.mark.parametrize("mode", ["daily", "core"])
def test_sigkill_leaves_whole_blocks_and_old_or_new_memory(tmp_path, mode):
    home = tmp_path / "home"
    for _round in range(8):
        proc = subprocess.Popen([sys.executable, "-c", CHILD, str(home), mode], stdout=subprocess.PIPE,
                                env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
        assert proc.stdout.readline().strip() == b"ready"
        # killed once the process says it finished write number 1 + _round % 3: inside the write after it
        for _ in range(1 + _round % 3):
            assert proc.stdout.readline().startswith(b"wrote")
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    with make_memory(tmp_path) as m:
        m.settings.home = home
        if mode == "daily":
            m.daily.append("after the crashes", when=datetime(2026, 1, 1, tzinfo=timezone.utc))
            text = m.daily.read(date(2026, 1, 1))
            blocks = text.split("## Trimmed Context")[1:]
            assert blocks and all(b.rstrip().endswith("END") for b in blocks[:-1])
            assert blocks[-1].strip().endswith("after the crashes")
        else:
            text = (home / "MEMORY.md").read_text()
            lines = text.splitlines()
            assert len(lines) == 5000 and len(set(lines)) == 1


APPENDER = textwrap.dedent("""
    import sys, threading
    from datetime import datetime, timezone
    from memory_core import Memory, Settings
    from memory_core.search.embedders import HashingEmbedder
    m = Memory(Settings(home=sys.argv[1], timezone="UTC", document_store=sys.argv[3]), embedder=HashingEmbedder())
    when = datetime(2026, 2, 2, 9, 0, tzinfo=timezone.utc)
    def work(t):
        for i in range(25):
            m.daily.append(("%s-%d-%d " % (sys.argv[2], t, i)) * 300 + "END", title="Block", when=when)
    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    [t.start() for t in threads]; [t.join() for t in threads]
    m.close()
""")


@pytest.mark.parametrize("store", ["files", "database"])
def test_concurrent_appends_from_threads_and_processes_never_interleave(tmp_path, store):
    home = tmp_path / "home"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    with make_memory(tmp_path, document_store=store):
        pass  # create the database first, so the processes only race on appends
    procs = [subprocess.Popen([sys.executable, "-c", APPENDER, str(home), name, store], env=env) for name in "ab"]
    for p in procs:
        assert p.wait(timeout=120) == 0
    with make_memory(tmp_path, document_store=store) as m:
        text = m.daily.read(date(2026, 2, 2))
    assert text.count("# Daily Memory: 2026-02-02") == 1
    blocks = text.split("## Block (09:00)\n")[1:]
    assert len(blocks) == 2 * 4 * 25
    for block in blocks:
        body = block.strip()
        words = body[:-len("END")].split()
        assert body.endswith("END") and len(words) == 300 and len(set(words)) == 1


def test_context_tokens_are_exact_and_any_clock_shape_works(tmp_path):
    from datetime import datetime as dt

    from memory_core import count_tokens

    with make_memory(tmp_path, clock=lambda: dt(2026, 5, 1, 10, 0)) as m:  # a callable giving naive times
        s = m.context("exact")
        s.add("user", "Hello there, how are you?")
        s.add("assistant", "Fine, thanks!")
        assert s.tokens == count_tokens("Hello there, how are you?") + count_tokens("Fine, thanks!")
        assert m.daily.append("x") == "memory/2026-05-01.md"


def test_daily_blocks_include_text_before_the_first_block():
    from memory_core.tiers.daily import split_blocks

    text = "# 2026-01-15\n\n- Priya set up VLAN 30.\n- Backups nightly.\n\n## Notes (10:00)\nmore\n"
    assert split_blocks(text) == [(3, 4, "- Priya set up VLAN 30.\n- Backups nightly."), (6, 7, "## Notes (10:00)\nmore")]
    assert split_blocks("# 2026-01-15\n\n## A (09:00)\nx\n") == [(3, 4, "## A (09:00)\nx")]
    assert split_blocks("no header, just text\n") == [(1, 1, "no header, just text")]


def test_retention_keeps_logs_no_dream_read_and_logs_changed_since(tmp_path, database_url, clock):
    clock.set(WHEN)
    with make_memory(tmp_path, database_url, clock=clock, daily_retention_days=2) as m:
        m.daily.append("- User likes the sea", when=WHEN - timedelta(days=3))
        m.deep_dream(7)  # reads that log
        # An old day's log brought in later (an import), and an old log appended to after the dream:
        m.daily.append("- User lived in Lisbon in 2024", when=WHEN - timedelta(days=400))
        m.daily.append("- User also likes boats", when=WHEN - timedelta(days=3))
        assert m.apply_retention() == []
        assert m.daily.read((WHEN - timedelta(days=400)).date())
        m.deep_dream(7, force=True)  # reads the changed log again, not the 400-day-old one
        assert m.apply_retention() == [f"memory/{(WHEN - timedelta(days=3)).date()}.md"]
        assert m.daily.read((WHEN - timedelta(days=400)).date())
        m.deep_dream(500, force=True)
        assert m.apply_retention() == [f"memory/{(WHEN - timedelta(days=400)).date()}.md"]


def test_context_manager_flushes_through_the_callables_it_is_given():
    appended: list[tuple[str, str, Scope]] = []
    manager = ContextManager(ContextParts(
        summarize=lambda part: "summary of " + " / ".join(m["content"] for m in part),
        append_daily=lambda text, title, scope: appended.append((text, title, scope)),
        today=lambda: datetime(2026, 1, 1).date(), injection=lambda scope: f"memory of {scope.key}",
        plan=lambda plan_id: None), max_sessions=4, budget=10_000)
    session, new = manager.session("s1", Scope("ana", "bot"))
    assert new and session.system_context() == "memory of ana/bot"
    session.add("user", "hello")
    session.add("assistant", "hi there")
    assert session.end() == "memory/2026-01-01.md"
    manager.wait()
    assert appended == [("summary of hello / hi there", "Session End", Scope("ana", "bot"))]
    assert manager.errors == []
