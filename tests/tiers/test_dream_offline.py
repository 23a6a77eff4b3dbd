"""The offline Deep Dream: third-person bullets about the user under headings, the later statement winning,
nothing the assistant said unless confirmed, and a MEMORY.md written by older versions not taken for a loss."""

from __future__ import annotations

import re
import time
from datetime import date, datetime, timedelta, timezone

import pytest

from memory_core import ScriptedChatModel
from memory_core.dashboard.demo import DEMO_CONVERSATIONS, load_demo
from memory_core.tiers.core import bullets
from memory_core.tiers.offline_dream import LogLine, line_statements, offline_dream
from memory_core.tiers.summarizer import ExtractiveSummarizer
from tests.conftest import make_memory

WHEN = datetime(2026, 11, 22, 14, 30, tzinfo=timezone.utc)
DAY = WHEN.date()


def wire_facts(m, include_invalid=False):
    """What the lead wires in memory.py: the scope's facts for the dream (valid ones, unless told otherwise)."""
    m.dreamer.facts_of = lambda scope: [f.to_dict() for f in m.facts.list(
        user_id=scope.user_id, agent_name=scope.agent_name, include_invalid=include_invalid)]


def sections(markdown):
    """{heading: [bullets]} of a MEMORY.md."""
    out, heading = {}, None
    for line in markdown.splitlines():
        if line.startswith("## "):
            heading = line[3:]
            out[heading] = []
        elif line.startswith("- "):
            out.setdefault(heading, []).append(line[2:])
    return out


ASSISTANT_SENTENCES = [s for _, convo in DEMO_CONVERSATIONS for m in convo if m["role"] == "assistant"
                       for s in re.split(r"(?<=[.!?])\s+", m["content"])]
EXPECTED = {  # what a person reading Priya's MEMORY.md should find, and under which heading
    "Context": ["User's name is Priya", "User works at Northwind as a backend engineer",
                "User is migrating their billing service from Flask to FastAPI", "User lives in Porto"],
    "Preferences": ["User prefers type-checked Python", "User loves surfing at Carcavelos on weekends",
                    "User does not like running in the heat",
                    "Asynchronous, written answers work best for the user"],  # the assistant's, confirmed
    "Habits": ["User always runs mypy in CI", "User usually reviews pull requests in the morning, so async answers "
               "suit them", "User trains at 7am"],
    "Goals": ["User wants to run the Lisbon half marathon in March"],
}


def check_demo_memory(text):
    found = sections(text)
    assert list(found)[:4] == ["Context", "Preferences", "Habits", "Goals"]
    for heading, expected in EXPECTED.items():
        assert set(expected) <= set(found[heading]), (heading, found[heading])
    every = bullets(text)
    assert len(every) == len(set(every)) <= 16
    for bullet in every:
        assert not re.match(r"(?i)(i|my|i'm|i've)\b", bullet) and not re.search(r"(?i)\b(i|my|me)\b", bullet)
        assert not any(s.rstrip(".!?").casefold() in bullet.casefold() for s in ASSISTANT_SENTENCES
                       if not s.startswith("Noted")), bullet
        assert "Lisbon" not in bullet or "half marathon" in bullet, bullet  # she lives in Porto now
        assert bullet.startswith("User") or bullet in EXPECTED["Preferences"], bullet


def test_the_demo_memory_reads_well(tmp_path, database_url):
    with make_memory(tmp_path, database_url) as m:
        assert m.offline
        outcome = load_demo(m.scoped())
        assert outcome["dream"] == 1
        check_demo_memory(m.read_core())
        # the same in another scope (the dashboard's sandbox), and with the facts wired in
        wire_facts(m)
        assert load_demo(m.scoped(user_id="priya"))["dream"] == 1
        check_demo_memory(m.read_core(user_id="priya"))
        diary = m.read_document(m.dream_diaries(user_id="priya")[0], user_id="priya")
        assert 'Superseded "User lives in Lisbon" by "User lives in Porto"' in diary


def test_the_later_statement_wins_even_when_both_facts_are_still_valid(tmp_path, clock):
    """Before facts had validity, the demo stored Lisbon and Porto as valid facts: the logs' order decides."""
    clock.set(WHEN)
    with make_memory(tmp_path, clock=clock) as m:
        m.facts.add("User lives in Lisbon", "context", 0.9)
        clock.set(WHEN + timedelta(seconds=1))
        m.facts.add("User lives in Porto", "context", 0.9)
        wire_facts(m)
        m.daily.append("- User: I live in Lisbon.\n- User: Actually, I live in Porto now, I moved last month.")
        assert m.deep_dream(1).status == "updated"
        assert sections(m.read_core()) == {"Context": ["User lives in Porto"]}


@pytest.mark.parametrize("first,then,kept", [
    ("I live in Lisbon.", "I moved to Porto.", "User moved to Porto"),
    ("I moved to Porto.", "I live in Lisbon.", "User lives in Lisbon"),  # the later one, whatever it says
    ("My name is Priya.", "My name is Pri.", "User's name is Pri"),
    ("I work at Northwind.", "I changed jobs, I work at Globex now.", "User works at Globex"),
    ("I prefer tea.", "These days I prefer coffee.", "User prefers coffee"),
])
def test_across_days_the_later_statement_wins(tmp_path, clock, first, then, kept):
    clock.set(WHEN)
    with make_memory(tmp_path, clock=clock) as m:
        m.daily.append(f"- User: {first}", when=WHEN - timedelta(days=1))
        m.daily.append(f"- User: {then}")
        assert m.deep_dream(2).status == "updated"
        assert bullets(m.read_core()) == [kept]


def test_a_fact_invalidated_in_the_store_never_appears(tmp_path, clock):
    clock.set(WHEN)
    with make_memory(tmp_path, clock=clock) as m:
        jazz = m.facts.add("User likes jazz", "preference", 0.9)
        m.facts.invalidate(jazz.id, reason="not any more")
        porto = m.facts.add("User lives in Porto", "context", 0.9)
        m.daily.append("- User: I like jazz. I love surfing.")
        wire_facts(m, include_invalid=True)
        assert m.deep_dream(1).status == "updated"
        assert sections(m.read_core()) == {"Context": ["User lives in Porto"], "Preferences": ["User loves surfing"]}
        # the same day, the store has the last word: a valid fact beats an older line of that day's log
        m.facts.supersede(porto.id, "User lives in Braga")
        m.daily.append("- User: I live in Porto.")
        assert m.deep_dream(1).status == "updated"
        assert sections(m.read_core())["Context"] == ["User lives in Braga"]


def test_valid_facts_are_promoted_and_count_as_sources(tmp_path, clock):
    clock.set(WHEN)
    with make_memory(tmp_path, clock=clock) as m:
        m.facts.add("User is allergic to peanuts", "context", 0.95)
        m.facts.add("User speaks Portuguese and Hindi", "knowledge", 0.8)
        m.daily.append("- User: I love surfing.")
        m.dreamer.facts_of = None  # a DeepDream without facts reads the logs only
        assert m.deep_dream(1).status == "updated"
        assert bullets(m.read_core()) == ["User loves surfing"]
        wire_facts(m)
        result = m.deep_dream(1)  # the facts are part of what the dream read: a new dream, not "unchanged"
        assert result.status == "updated" and not result.removed
        assert sections(m.read_core()) == {"Context": ["User is allergic to peanuts"],
                                           "Preferences": ["User loves surfing"],
                                           "Knowledge": ["User speaks Portuguese and Hindi"]}
        assert m.deep_dream(1).status == "skipped_unchanged"


# -- the log lines ----------------------------------------------------------------------------------

def line(speaker, text, block=0):
    return LogLine(DAY, block, speaker, text)


@pytest.mark.parametrize("this,following,contents,why", [
    (line("user", "I live in Porto and I love surfing."), None, ["User lives in Porto", "User loves surfing"], None),
    (line("user", "Yes, later."), None, [], "a question, greeting or acknowledgement"),
    (line("user", "Can you help me with the routing layer?"), None, [], "a question, greeting or acknowledgement"),
    (line("user", "I asked my manager for a raise yesterday."), None, ["User asked their manager for a raise"], None),
    (line("user", "I think that's a good idea."), None, [], "a question, greeting or acknowledgement"),
    (line("assistant", "Nice to meet you, Priya."), None, [], "said by the assistant"),
    (line("assistant", "Noted: written answers work best for you."), line("user", "Exactly."),
     ["Written answers work best for the user"], None),
    (line("assistant", "So you prefer tea over coffee."), line("user", "Yes, that's right."),
     ["User prefers tea over coffee"], None),
    (line("assistant", "So you prefer tea over coffee."), line("user", "No, I prefer coffee."), [],
     "said by the assistant"),
    (line("assistant", "Do you want help with the routing layer?"), line("user", "Yes, please."), [],
     "said by the assistant"),
    (line("assistant", "I can draft a 12-week plan."), line("user", "Yes!"), [], "said by the assistant"),
    (line("assistant", "Noted: you like tea."), line("user", "Exactly.", block=1), [], "said by the assistant"),
    (line("system", "You are a helpful assistant."), None, [], "not said by the user"),
    # lines written by hand or by an LLM summary
    (line(None, "User asked for a FastAPI routing example."), None, ["User asked for a FastAPI routing example"], None),
    (line(None, "The user mentioned they moved to Porto last month."), None,
     ["User mentioned they moved to Porto"], None),
    (line(None, "Assistant explained dependency injection"), None, [], "said by the assistant"),
    (line(None, "The assistant offered to draft a plan for you."), None, [], "said by the assistant"),
    (line(None, "I love hiking"), None, ["User loves hiking"], None),
    (line(None, "Release of the billing service moved to Friday"), None,
     ["Release of the billing service moved to Friday"], None),
])
def test_log_line_table(this, following, contents, why):
    found, reason = line_statements(this, following)
    assert ([s.content for s in found], reason) == (contents, why)


def test_older_hand_written_and_llm_written_logs_consolidate(tmp_path, clock):
    clock.set(WHEN)
    with make_memory(tmp_path, clock=clock) as m:
        # an LLM summary's block, and a file written by hand with no "## " block at all
        m.daily.append("- Priya is migrating the billing service to FastAPI.\n- The user prefers written answers.\n"
                       "- The assistant offered to draft a training plan.\n- **User:** I train at 7am.",
                       title="Session End")
        yesterday = (WHEN - timedelta(days=1)).date()
        m.documents.write(m.scoped().scope, f"memory/{yesterday}.md", "# my notes\nI live in Porto.\n* I'm 34\n")
        assert m.deep_dream(2).status == "updated", m.dreamer.state(m.scoped().scope).last_reason
        assert sections(m.read_core()) == {
            "Context": ["User lives in Porto", "User is 34"], "Preferences": ["User prefers written answers"],
            "Habits": ["User trains at 7am"], "Notes": ["Priya is migrating the billing service to FastAPI"]}


# -- MEMORY.md as it was ------------------------------------------------------------------------------

OLD_STYLE = """- User asked for a FastAPI routing example for the billing service.
- My name is Priya.
- I work at Northwind as a backend engineer.
- Nice to meet you, Priya.
- I'm migrating our billing service from Flask to FastAPI.
- I prefer type-checked Python and I always run mypy in CI.
- That migration is a good fit for FastAPI.
- I usually review pull requests in the morning, so async answers suit me.
- Noted: asynchronous, written answers work best for you.
- I live in Lisbon and I love surfing at Carcavelos on weekends.
- Lisbon has great surf close by.
- I want to run the Lisbon half marathon in March.
- I don't like running in the heat, so I train at 7am.
- An early schedule makes sense.
- I can draft a 12-week plan.
- Actually, I live in Porto now, I moved last month.
- Thanks for the correction: Porto it is.
"""  # what the offline dream wrote for the demo before this version


def old_logs(m):
    for _, convo in DEMO_CONVERSATIONS:
        m.daily.append("\n".join(f"- {x['role'].capitalize()}: {x['content']}" for x in convo), title="Session End")


def test_a_memory_written_by_the_old_offline_dream_is_rewritten_not_rejected(tmp_path, clock):
    clock.set(WHEN)
    with make_memory(tmp_path, clock=clock) as m:
        m.write_core(OLD_STYLE)
        old_logs(m)
        result = m.deep_dream(1)
        assert result.status == "updated", result.reason
        check_demo_memory(m.read_core())
        diary = m.read_document(result.diary_path)
        assert 'Retired "Nice to meet you, Priya.": the assistant\'s words' in diary
        assert 'Retired "I can draft a 12-week plan.": the assistant\'s words' in diary
        assert 'Retired "My name is Priya.": rewritten in the third person' in diary


def test_old_memory_without_its_logs_still_loses_only_the_assistant_lines(tmp_path, clock):
    clock.set(WHEN)
    with make_memory(tmp_path, clock=clock) as m:
        m.write_core(OLD_STYLE)
        m.daily.append("- User: I love fado.")
        result = m.deep_dream(1)
        assert result.status == "updated", result.reason
        text = m.read_core()
        assert "User loves fado" in text and "User lives in Porto" in text and "Lisbon has great surf" not in text
        assert "Nice to meet" not in text and "Thanks for the correction" not in text


def test_a_superseded_bullet_is_not_a_loss_but_the_llm_dream_keeps_the_guard(tmp_path, clock):
    clock.set(WHEN)
    with make_memory(tmp_path, clock=clock) as m:
        m.write_core("- User lives in Lisbon\n- User works at Northwind\n")
        m.daily.append("- User: I moved to Porto. I changed jobs, I work at Globex now.")
        assert m.deep_dream(1).status == "updated"
        assert bullets(m.read_core()) == ["User moved to Porto", "User works at Globex"]
    llm = ScriptedChatModel(["[MEMORY]\n- User loves fado\n[DREAM]\nrewrote"])
    with make_memory(tmp_path / "llm", clock=clock, llm=llm) as m:
        m.write_core(OLD_STYLE)
        m.daily.append("- User: I love fado.")
        result = m.deep_dream(1)
        assert result.status == "rejected" and "mass loss" in result.reason and "of 17 previous" in result.reason


def test_near_duplicates_merge_custom_headings_stay_and_a_second_dream_changes_nothing(tmp_path, clock):
    clock.set(WHEN)
    with make_memory(tmp_path, clock=clock) as m:
        m.write_core("# Memory\n\n## Health\n- User is allergic to peanuts\n\n## Preferences\n- User loves surfing\n")
        m.daily.append("- User: I love surfing at Carcavelos on weekends. I'm 34.\n- User: I love surfing.")
        assert m.deep_dream(1).status == "updated"
        first = m.read_core()
        assert first == ("## Context\n- User is 34\n\n## Preferences\n- User loves surfing at Carcavelos on weekends"
                         "\n\n## Health\n- User is allergic to peanuts\n")
        assert m.deep_dream(1, force=True).status == "updated" and m.read_core() == first


def test_the_cap_leaves_out_the_least_sure(tmp_path, clock):
    clock.set(WHEN)
    with make_memory(tmp_path, clock=clock, dream_max_bullets=3) as m:
        m.daily.append("- User: My name is Dana. I live in Porto. I asked my boss for a raise. I use Neovim.")
        result = m.deep_dream(1)
        assert result.status == "updated"
        assert bullets(m.read_core()) == ["User's name is Dana", "User lives in Porto", "User uses Neovim"]
        assert "Left out 1 over the cap of 3: User asked their boss for a raise" in m.read_document(result.diary_path)


def test_nothing_lasting_is_skipped_and_counts_as_consolidated(tmp_path, clock):
    clock.set(WHEN)
    with make_memory(tmp_path, clock=clock, daily_retention_days=1) as m:
        m.daily.append("- User: Hi!\n- Assistant: Hello, how can I help you?\n- User: Thanks, bye.",
                       when=WHEN - timedelta(days=3))
        result = m.deep_dream(7)
        assert result.status == "skipped_empty" and "nothing" in result.reason and m.read_core() is None
        assert m.apply_retention() == [f"memory/{(WHEN - timedelta(days=3)).date()}.md"]


@pytest.mark.parametrize("days", [0, -1, 3651, 10**7, 10**30, True, 1.5, "7", None])
def test_absurd_lookbacks_are_refused(sqlite_memory, days):
    with pytest.raises(ValueError, match="from 1 to 3650"):
        sqlite_memory.deep_dream(days)


def test_the_longest_lookback_is_quick(sqlite_memory):
    started = time.perf_counter()
    assert sqlite_memory.deep_dream(3650).status == "skipped_empty"
    assert time.perf_counter() - started < 5


def test_offline_dream_is_a_pure_function():
    daily = [(DAY, "## Session End (10:00)\n- User: I live in Lisbon.\n- Assistant: Lovely city.\n"
                   "- User: Actually, I live in Porto now.")]
    facts = [{"id": "fact_00000001", "content": "User likes tea", "category": "preference", "confidence": 0.9,
              "validFrom": "2026-11-20T10:00:00Z", "invalidAt": None}]
    dream = offline_dream("- I'm 30\n- Thanks!\n", daily, 50, facts)
    assert dream.markdown() == "## Context\n- User is 30\n- User lives in Porto\n\n## Preferences\n- User likes tea\n"
    assert dream.retired == {"I'm 30": "rewritten in the third person", "Thanks!": "the assistant's words"}
    assert dream.superseded == [("User lives in Lisbon", "User lives in Porto")]
    assert dream.ignored == {"said by the assistant": 1}


# -- the extractive summariser writes what the dream reads -------------------------------------------

def test_the_summary_keeps_a_confirmation_with_what_it_confirms_and_the_user_first():
    chat = [{"role": "user", "content": f"I like topic number {i} a lot, really."} for i in range(8)]
    chat += [{"role": "assistant", "content": "That is a long and very informative assistant sentence about topics."},
             {"role": "assistant", "content": "Great. Noted: you prefer short answers."},
             {"role": "user", "content": "Yes."}]
    summary = ExtractiveSummarizer(max_sentences=8).summarize(chat)
    lines = summary.splitlines()
    assert lines[-2:] == ["- Assistant: Noted: you prefer short answers.", "- User: Yes."]
    assert sum(x.startswith("- User: I like topic") for x in lines) == 8 and "informative" not in summary
    question = ExtractiveSummarizer().summarize([{"role": "assistant", "content": "Do you want a plan for it?"},
                                                 {"role": "user", "content": "Yes, later."}])
    assert question == "- Assistant: Do you want a plan for it?\n- User: Yes, later."


def test_a_large_input_is_consolidated_quickly():
    """Each statement meets only the kept entries that share a slot or words with it (this took 25 s, O(n^2))."""
    topics = [f"topic{i}" for i in range(300)]
    blocks = ["## Session End (10:00)\n" + "\n".join(
        f"- User: I love {topics[(d * 40 + i) % 300]} and I live in City{(d + i) % 7}.\n"
        f"- Assistant: {topics[i % 300]} is great." for i in range(40)) for d in range(30)]
    daily = [(DAY - timedelta(days=30 - d), block) for d, block in enumerate(blocks)]
    facts = [{"id": f"fact_{i:08x}", "content": f"User likes thing number {i}", "category": "preference",
              "confidence": 0.8, "validFrom": "2026-01-05T00:00:00Z"} for i in range(500)]
    started = time.perf_counter()
    dream = offline_dream("", daily, 50, facts)
    assert time.perf_counter() - started < 5
    assert sum(len(items) for _, items in dream.sections) == 50 and len(dream.superseded) > 1000
    assert [x for x in bullets(dream.markdown()) if x.startswith("User lives in")] == ["User lives in City5"]
