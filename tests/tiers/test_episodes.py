"""Episodes: every conversation taken in is kept, dated, searched, injected as evidence, bundled, erased and retired."""

from __future__ import annotations

import asyncio
import json
import zipfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memory_core import build_injection, count_tokens
from memory_core.clock import ManualClock
from tests.conftest import make_memory

DATA = Path(__file__).resolve().parents[1] / "data" / "imports"
MAY_8 = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
TALK = [
    {"role": "user", "content": "I went to a LGBTQ support group yesterday.", "name": "Caroline"},
    {"role": "assistant", "content": "That's great! How did it go?", "name": "Melanie"},
    {"role": "user", "content": "It was powerful. Next month I start a counseling course.", "name": "Caroline"},
]


def test_update_keeps_the_conversation_dated_with_speakers(tmp_path, database_url):
    with make_memory(tmp_path, database_url) as m:
        result = m.update(TALK, thread_id="s1", when=MAY_8)
        view = m.scoped(user_id="default", agent_name="default")
        assert result.episode_id and result.episode_id.startswith("2023-05-08-")
        assert view.episode_days() == ["2023-05-08"]
        turns = view.episodes_of_day("2023-05-08")
        assert [(t.index, t.who, t.role) for t in turns] == [(0, "Caroline", "user"), (1, "Melanie", "assistant"),
                                                              (2, "Caroline", "user")]
        assert turns[0].dated == "I went to a LGBTQ support group yesterday (7 May 2023)."
        assert turns[2].dated.endswith("Next month (June 2023) I start a counseling course.")
        assert turns[0].said_at == MAY_8 and turns[0].thread_id == "s1"

        hits = m.search("When did Caroline go to the support group?", k=5)
        episode = [h for h in hits if h.kind == "episode"]
        assert episode and episode[0].source == f"episodes/{result.episode_id}#0" == episode[0].ref
        assert episode[0].text == "Caroline: I went to a LGBTQ support group yesterday (7 May 2023)."
        assert all(h.current is None for h in hits)


def test_update_without_when_is_dated_now_and_a_naive_when_is_refused(tmp_path):
    clock = ManualClock(datetime(2026, 3, 2, 9, tzinfo=timezone.utc))
    with make_memory(tmp_path, clock=clock) as m:
        m.update([{"role": "user", "content": "I adopted a cat two days ago."}], thread_id="t")
        view = m.scoped(user_id="default", agent_name="default")
        assert view.episodes_of_day("2026-03-02")[0].dated == "I adopted a cat two days ago (28 February 2026)."
        before = len(m.facts.list())
        with pytest.raises(ValueError, match="timezone-aware"):
            m.update([{"role": "user", "content": "I like tea."}], thread_id="t", when=datetime(2023, 1, 1))
        with pytest.raises(ValueError, match="YYYY-MM-DD"):
            view.episodes_of_day("yesterday")
        assert view.episode_days() == ["2026-03-02"] and len(m.facts.list()) == before  # nothing changed


def test_aupdate_and_the_queue_keep_episodes_too(tmp_path):
    with make_memory(tmp_path, rate_limit_seconds=0) as m:
        asyncio.run(m.aupdate([{"role": "user", "content": "I ran a marathon last Sunday."}], thread_id="a",
                              when=MAY_8))
        m.queue.add([{"role": "user", "content": "I bought a new bike yesterday."}], thread_id="q")
        m.queue.flush()
        view = m.scoped(user_id="default", agent_name="default")
        assert view.episodes_of_day("2023-05-08")[0].dated == "I ran a marathon last Sunday (7 May 2023)."
        assert len(view.episode_days()) == 2


def test_the_day_of_a_conversation_is_the_day_where_the_memory_lives(tmp_path, database_url):
    """A conversation at 22:37 on 27 June in Los Angeles is 05:37 UTC on the 28th: with `timezone` Los Angeles, one
    taken in then (the clock's time, in UTC) or queued then is of the 27th and its "yesterday" the 26th; a `when` is
    read in its own zone (14:37 on the 28th in Tokyo is of the 28th); every instant is kept as given (SQLite keeps no
    zone: a `when` in Tokyo was read back nine hours off)."""
    from zoneinfo import ZoneInfo

    late = datetime(2023, 6, 27, 22, 37, tzinfo=ZoneInfo("America/Los_Angeles"))
    clock = ManualClock(late.astimezone(timezone.utc))
    m = make_memory(tmp_path, database_url, clock=clock, timezone="America/Los_Angeles")
    try:
        view = m.scoped()
        first = view.update([{"role": "user", "content": "I went hiking yesterday with my sister."}],
                            thread_id="t1").episode_id
        second = view.update([{"role": "user", "content": "Tomorrow I fly to Lima."}], thread_id="t2",
                             when=late.astimezone(ZoneInfo("Asia/Tokyo"))).episode_id
        m.queue.add([{"role": "user", "content": "My sister liked the trail."}], thread_id="t3")
        clock.advance(86_400 * 3)
        m.queue.flush()
        assert first.startswith("2023-06-27-") and second.startswith("2023-06-28-")
        assert view.episode_days() == ["2023-06-28", "2023-06-27"]
        turns = {t.thread_id: t for day in ("2023-06-27", "2023-06-28") for t in view.episodes_of_day(day)}
        assert turns["t1"].dated == "I went hiking yesterday (26 June 2023) with my sister."
        assert turns["t2"].dated == "Tomorrow (29 June 2023) I fly to Lima."
        assert turns["t3"].episode_id.startswith("2023-06-27-")
        assert turns["t1"].said_at == turns["t2"].said_at == turns["t3"].said_at == late  # the same instant, kept
        text = view.format_for_injection(query="When did I go hiking?")
        assert "[27 June 2023]" in text
    finally:
        m.close()


def test_a_queued_conversation_is_dated_when_it_was_queued(tmp_path, database_url):
    """The queue takes a conversation in when it is given (the agent's `queue.add`), and works on it later (after
    the debounce, or at a flush much later): its episode, and the dates its turns resolve, are those of when it was
    given, as `update()` would have them."""
    clock = ManualClock(datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc))
    m = make_memory(tmp_path, database_url, clock=clock, rate_limit_seconds=0)
    try:
        m.queue.add([{"role": "user", "content": "I ran my first half marathon yesterday."}], thread_id="s1")
        clock.set(datetime(2023, 6, 20, 9, 0, tzinfo=timezone.utc))
        m.queue.add([{"role": "user", "content": "Next month I start a pottery class."}], thread_id="s2")
        clock.set(datetime(2023, 9, 1, 12, 0, tzinfo=timezone.utc))
        m.queue.flush()
        view = m.scoped()
        assert view.episode_days() == ["2023-06-20", "2023-05-08"]  # newest first
        assert view.episodes_of_day("2023-05-08")[0].dated == "I ran my first half marathon yesterday (7 May 2023)."
        assert view.episodes_of_day("2023-06-20")[0].dated == "Next month (July 2023) I start a pottery class."
    finally:
        m.close()


def test_system_messages_and_scheduler_pairs_are_not_kept_and_turns_are_bounded(tmp_path):
    from memory_core.tiers.episodes import MAX_TURN_CHARS

    with make_memory(tmp_path, max_conversation_chars=100_000) as m:
        m.update([{"role": "system", "content": "You are a helpful agent."},
                  {"role": "user", "content": "[SCHEDULED] daily digest"},
                  {"role": "assistant", "content": "Here is the digest."},
                  {"role": "user", "content": "x" * (MAX_TURN_CHARS + 500)}], thread_id="t", when=MAY_8)
        turns = m.scoped(user_id="default", agent_name="default").episodes_of_day("2023-05-08")
        assert [t.role for t in turns] == ["user"] and len(turns[0].text) == MAX_TURN_CHARS


def test_credentials_are_masked_in_episodes(tmp_path):
    with make_memory(tmp_path) as m:
        m.update([{"role": "user", "content": "My key is sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD ok"}],
                 thread_id="t", when=MAY_8)
        turn = m.scoped(user_id="default", agent_name="default").episodes_of_day("2023-05-08")[0]
        assert "abcdefghijklmnop" not in turn.text and "[secret]" in turn.text
        assert not any("abcdefghijklmnop" in h.text for h in m.search("key", k=5))


def test_injection_with_a_query_adds_dated_passages_within_the_budget(tmp_path, database_url):
    with make_memory(tmp_path, database_url) as m:
        m.update(TALK, thread_id="s1", when=MAY_8)
        for n in range(30):  # other days, other talk
            m.update([{"role": "user", "content": f"Day {n}: I cooked pasta number {n} and watched a film."},
                      {"role": "assistant", "content": "Sounds nice."}], thread_id=f"o{n}",
                     when=MAY_8 + timedelta(days=n + 1))
        query = "When did Caroline go to the LGBTQ support group?"
        report = m.injection_report(query=query)
        assert "Relevant passages:\n" in report.text
        section = report.text.split("Relevant passages:\n", 1)[1]
        assert "[8 May 2023]\n- Caroline: I went to a LGBTQ support group yesterday (7 May 2023)." in section
        assert report.passage_sources and report.section_tokens["Relevant passages"] > 0
        assert report.tokens == count_tokens(report.text) <= 2000
        # what the Context Preview lists: each passage's date and cost, the facts' share of the budget
        first = next(p for p in report.passages if p.when == "2023-05-08")
        assert first.header == "[8 May 2023]" and first.tokens > 0
        assert "Caroline: I went to a LGBTQ support group yesterday (7 May 2023)." in first.lines
        assert sum(p.tokens for p in report.passages) + count_tokens("Relevant passages:") == \
            report.section_tokens["Relevant passages"]
        assert report.facts_max_tokens < report.max_tokens == 2000
        for budget in (60, 120, 300, 1000):
            text = m.format_for_injection(query=query, max_tokens=budget)
            assert count_tokens(text) <= budget
        # the passages come after the seed's sections
        assert report.text.index("Facts:") < report.text.index("Relevant passages:")


def test_without_a_query_the_text_is_the_seed_format_byte_for_byte(tmp_path):
    with make_memory(tmp_path) as m:
        m.update(TALK, thread_id="s1", when=MAY_8)
        seed = build_injection(m.memory_data(), 2000).text
        assert m.format_for_injection() == seed and "Relevant passages" not in seed
        assert m.format_for_injection(max_tokens=50) == build_injection(m.memory_data(), 50).text


def test_a_passage_stating_a_retired_fact_is_marked_with_what_replaced_it(tmp_path):
    with make_memory(tmp_path) as m:
        m.update([{"role": "user", "content": "I live in Lisbon."}], thread_id="a", when=MAY_8)
        m.update([{"role": "user", "content": "I live in Porto now."}], thread_id="b", when=MAY_8 + timedelta(days=60))
        assert [f.content for f in m.facts.list()] == ["User lives in Porto"]
        hits = {h.text: h.current for h in m.search("Where does the user live?", k=10) if h.kind == "episode"}
        assert hits["user: I live in Lisbon."] == "User lives in Porto"
        assert hits["user: I live in Porto now."] is None
        text = m.format_for_injection(query="Where does the user live?")
        assert "- user: I live in Lisbon. (no longer current; now: User lives in Porto)" in text

        forgotten = m.update([{"role": "user", "content": "I am allergic to peanuts."}], thread_id="c", when=MAY_8)
        for fact in forgotten.added:
            m.facts.invalidate(fact.id, reason="asked to forget")
        hits = [h for h in m.search("allergic to peanuts", k=10) if h.kind == "episode" and "peanuts" in h.text]
        assert hits and hits[0].current == ""
        assert "(no longer current)" in m.format_for_injection(query="Is the user allergic to peanuts?")


def test_erasing_a_fact_erases_the_turns_that_state_it(tmp_path, database_url):
    """A turn that states the erased fact reads `[erased]`, as a log sentence does (the turns keep their places,
    so their neighbours stay neighbours); the other turns are untouched."""
    with make_memory(tmp_path, database_url) as m:
        result = m.update([{"role": "user", "content": "My sister Marta is allergic to peanuts."},
                           {"role": "user", "content": "I love hiking in the Alps."}], thread_id="t", when=MAY_8)
        fact = next((f for f in m.facts.list() if "peanuts" in f.content), None) or m.facts.add(
            "User's sister Marta is allergic to peanuts", "context", 0.9)  # the heuristics keep only the user's
        counts = m.facts.erase(fact.id, reason="asked")
        assert counts.get("episode_turns") == 1
        view = m.scoped(user_id="default", agent_name="default")
        assert [t.text for t in view.episodes_of_day("2023-05-08")] == ["[erased]", "I love hiking in the Alps."]
        assert not any("peanuts" in h.text for h in m.search("Marta peanuts allergy", k=10))
        assert result.episode_id


def test_retention_removes_old_episodes_only_when_set(tmp_path):
    clock = ManualClock(datetime(2026, 1, 10, tzinfo=timezone.utc))
    with make_memory(tmp_path, clock=clock) as m:
        m.update([{"role": "user", "content": "I started pottery."}], thread_id="old", when=datetime(2025, 6, 1, tzinfo=timezone.utc))
        m.update([{"role": "user", "content": "I started running."}], thread_id="new", when=datetime(2026, 1, 9, tzinfo=timezone.utc))
        m.apply_retention()
        view = m.scoped(user_id="default", agent_name="default")
        assert view.episode_days() == ["2026-01-09", "2025-06-01"]  # default: kept forever
    with make_memory(tmp_path, clock=clock, episode_retention_days=30) as m:
        removed = m.apply_retention()
        view = m.scoped(user_id="default", agent_name="default")
        assert view.episode_days() == ["2026-01-09"] and any("episode turn" in r for r in removed)
        assert not any("pottery" in h.text for h in m.search("pottery", k=5) if h.kind == "episode")
    with pytest.raises(ValueError, match="episode_retention_days"):
        make_memory(tmp_path / "x", episode_retention_days=0)


def test_episodes_travel_in_bundles(tmp_path, database_url):
    with make_memory(tmp_path / "a", database_url) as a:
        a.update(TALK, thread_id="s1", when=MAY_8)
        assert a.export_bundle(tmp_path / "b.zip")["episode_turns"] == 3
    with make_memory(tmp_path / "b") as b:
        b.import_bundle(tmp_path / "b.zip")
        view = b.scoped(user_id="default", agent_name="default")
        turns = view.episodes_of_day("2023-05-08")
        assert [t.dated for t in turns][0] == "I went to a LGBTQ support group yesterday (7 May 2023)."
        assert [t.who for t in turns] == ["Caroline", "Melanie", "Caroline"]
        assert any(h.kind == "episode" for h in b.search("support group", k=5))
        b.import_bundle(tmp_path / "b.zip")  # again: nothing doubles
        assert len(view.episodes_of_day("2023-05-08")) == 3


def test_a_crafted_bundle_episode_is_refused_or_masked(tmp_path):
    with make_memory(tmp_path / "a") as a:
        a.update(TALK, thread_id="s1", when=MAY_8)
        a.export_bundle(tmp_path / "b.zip")
    with zipfile.ZipFile(tmp_path / "b.zip") as z:
        names = z.namelist()
        files = {n: z.read(n) for n in names}
    data_name = next(n for n in names if n.endswith("data.json"))
    data = json.loads(files[data_name])

    def write(data: dict, path: Path) -> None:
        import hashlib
        blob = json.dumps(data).encode()
        manifest = json.loads(files["manifest.json"])
        manifest["files"][data_name] = {"sha256": hashlib.sha256(blob).hexdigest(), "size": len(blob)}
        with zipfile.ZipFile(path, "w") as z:
            for n in names:
                z.writestr(n, json.dumps(manifest) if n == "manifest.json" else blob if n == data_name else files[n])

    bad = json.loads(json.dumps(data))
    bad["episodes"][0]["role"] = "system"
    write(bad, tmp_path / "bad.zip")
    secret = json.loads(json.dumps(data))
    secret["episodes"][1]["text"] = "my key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"
    write(secret, tmp_path / "secret.zip")
    with make_memory(tmp_path / "b") as b:
        with pytest.raises(ValueError, match=r"episodes\[0\]\.role"):
            b.import_bundle(tmp_path / "bad.zip")
        assert b.scoped(user_id="default", agent_name="default").episode_days() == []
        b.import_bundle(tmp_path / "secret.zip")
        turns = b.scoped(user_id="default", agent_name="default").episodes_of_day("2023-05-08")
        assert "abcdefghijklmnop" not in turns[1].text and "[secret]" in turns[1].text


def test_imported_conversations_become_episodes_dated_when_they_happened(tmp_path, clock):
    with make_memory(tmp_path, clock=clock, rate_limit_seconds=0) as m:
        view = m.scoped(user_id="ana", agent_name="bot")
        view.import_file(DATA / "chatgpt" / "conversations.json")
        m.queue.flush()
        days = view.episode_days()
        assert days and max(days) < "2026-01-01"  # the conversation's own date, not the import's
        assert any("Lisbon" in t.text for d in days for t in view.episodes_of_day(d))


def test_with_an_llm_extraction_reads_the_conversation_dated(tmp_path, scripted):
    scripted.enqueue([json.dumps({"facts": [{"content": "User went to a support group on 7 May 2023",
                                             "category": "context", "confidence": 0.9}]})])
    with make_memory(tmp_path, llm=scripted) as m:
        m.update(TALK[:1], thread_id="s1", when=MAY_8)
        prompt = scripted.history[0]["messages"][-1]["content"]
        assert "<conversation_date>\"8 May 2023\"</conversation_date>" in prompt
        assert "yesterday (7 May 2023)" in prompt  # the relative date written out
        assert "absolute date" in scripted.history[0]["messages"][0]["content"]
        assert [f.content for f in m.facts.list()] == ["User went to a support group on 7 May 2023"]


def test_a_conversation_queued_before_an_erase_keeps_the_erased_statement_out_of_its_episode(tmp_path, database_url):
    clock = ManualClock(datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc))
    with make_memory(tmp_path, database_url, clock=clock, debounce_seconds=60) as m:
        fact = m.facts.add("User's sister Marta is allergic to peanuts", "context", 0.9)
        m.queue.add([{"role": "user", "content": "My sister Marta is allergic to peanuts."},
                     {"role": "user", "content": "I love hiking in the Alps."}], thread_id="before")
        clock.advance(seconds=5)
        m.facts.erase(fact.id, reason="asked")
        clock.advance(seconds=120)
        m.queue.flush()
        turns = m.scoped(user_id="default", agent_name="default").episodes_of_day("2026-03-02")
        assert [t.text for t in turns] == ["[erased]", "I love hiking in the Alps."]
        assert not any("peanuts" in h.text for h in m.search("Marta peanuts allergy", k=10))
        # said again after the erase, it is new memory
        m.update([{"role": "user", "content": "My sister Marta is allergic to peanuts."}], thread_id="after")
        assert any("peanuts" in t.text for t in m.scoped().episodes_of_day("2026-03-02"))


def test_the_turns_around_hits_are_read_by_the_index_not_the_whole_scope(tmp_path):
    """SQLite's planner searches by none of a row value's columns: the episodes, indices and paths are named apart."""
    from memory_core.store.episode_store import _AROUND, _TURN_CHUNKS

    with make_memory(tmp_path) as m:
        m.update(TALK, thread_id="s1", when=MAY_8)
        episode = m.scoped(user_id="default", agent_name="default").episodes_of_day("2023-05-08")[0].episode_id
        turns = m.parts.episodes.store.around(m.scoped().scope, {episode: {0, 2, 7}})
        assert sorted(turns) == [(episode, 0), (episode, 2)] and turns[(episode, 2)][0] == "Caroline"  # (who, dated)
        said = m.scoped().episodes_of_day("2023-05-08")
        assert turns[(episode, 0)] == (said[0].who, said[0].dated) and "(7 May 2023)" in turns[(episode, 0)][1]
        assert turns[(episode, 2)][1] == said[2].dated
        with m.db.engine.connect() as c:
            for statement, params, index in (
                    (_AROUND, {"episodes": ["e1"], "indices": [1, 2], "pairs": [("e1", 1), ("e1", 2)]},
                     "ix_episode_turns_episode (user_id=? AND agent_name=? AND episode_id=? AND turn_index=?)"),
                    (_TURN_CHUNKS, {"paths": ["episodes/e1"], "pairs": [("episodes/e1", 1)]},
                     "ix_chunks_doc (user_id=? AND agent_name=? AND path=?)")):
                sql = str(statement.params(u="u", a="a", **params).compile(
                    dialect=m.db.engine.dialect, compile_kwargs={"literal_binds": True}))
                plan = " ".join(str(r) for r in c.exec_driver_sql("EXPLAIN QUERY PLAN " + sql).all())
                assert index in plan


def test_a_thread_given_again_keeps_each_turn_once(tmp_path, database_url):
    """Agents give the whole conversation after each turn (and the queue takes a thread in again once it has been
    quiet): a turn is kept once, in the episode that first took it in; a window that slid on keeps its new turns;
    another thread, or a conversation of the same thread that does not repeat its end, is kept whole."""
    clock = ManualClock(datetime(2024, 3, 4, 9, 0, tzinfo=timezone.utc))
    m = make_memory(tmp_path, database_url, clock=clock)
    try:
        said = [{"role": "user", "content": "Hi! I adopted a greyhound called Pixel."},
                {"role": "assistant", "content": "Congratulations! How old is Pixel?"},
                {"role": "user", "content": "Three, and she loves the beach."},
                {"role": "assistant", "content": "Lovely. Any plans for the weekend?"},
                {"role": "user", "content": "A long walk on Saturday."},
                {"role": "assistant", "content": "Enjoy it!"}]
        view = m.scoped()
        first = view.update(said[:2], thread_id="t1").episode_id
        clock.advance(300)
        second = view.update(said[:4], thread_id="t1").episode_id
        assert view.update(said[:4], thread_id="t1").episode_id is None  # nothing new
        clock.advance(300)
        third = view.update(said[2:], thread_id="t1").episode_id  # a window that slid on
        turns = view.episodes_of_day("2024-03-04")
        assert [t.text for t in turns] == [s["content"] for s in said]
        assert first == second == third  # minutes apart: the thread goes on in its episode
        assert [(t.episode_id, t.index) for t in turns] == [(first, i) for i in range(6)]
        assert turns[0].said_at < turns[2].said_at < turns[4].said_at
        hits = [h for h in view.search("greyhound Pixel", k=10) if h.kind == "episode"]
        assert len([h for h in hits if "greyhound" in h.text]) == 1
        view.update(said[:2], thread_id="t2")  # another thread: its own
        view.update([{"role": "user", "content": "Hi! I adopted a greyhound called Pixel."},
                     {"role": "assistant", "content": "Tell me about her!"}], thread_id="t1")  # a new start of t1
        assert len(view.episodes_of_day("2024-03-04")) == 10
    finally:
        m.close()


def test_a_thread_given_in_parts_goes_on_in_one_episode(tmp_path, database_url):
    """An agent that gives each exchange as it happens: the thread's turns of one sitting are one episode, numbered on,
    so that a passage reads its neighbours as when the conversation is given whole; a thread taken up again after a
    pause (over 30 minutes), on another day, or another thread starts an episode of its own."""
    clock = ManualClock(datetime(2024, 6, 1, 20, 0, tzinfo=timezone.utc))
    m = make_memory(tmp_path, database_url, clock=clock)
    try:
        view = m.scoped()
        parts = [[{"role": "user", "content": "Mi hermana Lucía se mudó a Valencia la semana pasada.", "name": "Ana"}],
                 [{"role": "assistant", "content": "¡Qué bien! ¿Le gusta la ciudad?", "name": "Bot"}],
                 [{"role": "user", "content": "Sí, sobre todo la playa.", "name": "Ana"},
                  {"role": "assistant", "content": "Me alegro.", "name": "Bot"}]]
        ids = []
        for part in parts:
            ids.append(view.update(part, thread_id="chat-9").episode_id)
            clock.advance(600)
        assert len(set(ids)) == 1
        turns = view.episodes_of_day("2024-06-01")
        assert [(t.index, t.who) for t in turns] == [(0, "Ana"), (1, "Bot"), (2, "Ana"), (3, "Bot")]
        assert turns[0].dated.startswith("Mi hermana Lucía se mudó a Valencia la semana pasada (")
        assert [t.said_at for t in turns] == [clock.now() - timedelta(seconds=600 * n) for n in (3, 2, 1, 1)]

        other = view.update([{"role": "user", "content": "Unrelated thread."}], thread_id="chat-10").episode_id
        clock.advance(31 * 60)  # a pause: the thread taken up again is a new episode
        later = view.update([{"role": "user", "content": "Lucía found a flat near the beach."}],
                            thread_id="chat-9").episode_id
        clock.advance(600)
        assert view.update([{"role": "user", "content": "She starts work on Monday."}],
                           thread_id="chat-9").episode_id == later
        clock.set(datetime(2024, 6, 2, 0, 5, tzinfo=timezone.utc))  # ten minutes on, but another day
        next_day = view.update([{"role": "user", "content": "Good night."}], thread_id="chat-9").episode_id
        assert len({ids[0], other, later, next_day}) == 4
        assert [(t.episode_id, t.index) for t in view.episodes_of_day("2024-06-01") if t.episode_id == later] == [
            (later, 0), (later, 1)]
        assert later.startswith("2024-06-01-") and next_day.startswith("2024-06-02-")
        text = view.format_for_injection(query="Did Lucía like Valencia?", max_tokens=400)
        assert "- Ana: Mi hermana Lucía se mudó a Valencia" in text and "- Ana: Sí, sobre todo la playa." in text
    finally:
        m.close()
