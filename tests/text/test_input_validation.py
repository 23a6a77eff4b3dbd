"""Bad input is refused up front with a clear error and nothing written: NUL characters and lone surrogates on
every path, inputs over the size limits, ids that are not strings, thread ids too long for either database, a
dream longer than the document limit. SQLite and PostgreSQL wherever a database is involved."""

from __future__ import annotations

import pytest

from memory_core import ScriptedChatModel
from memory_core.errors import InvalidIdError
from tests.conftest import make_memory


BAD_TEXTS = {"nul": "User likes \x00 tea", "surrogate": "User likes \ud800 tea"}


@pytest.mark.parametrize("kind", sorted(BAD_TEXTS))
def test_nul_and_lone_surrogates_refused_up_front_everywhere(memory, kind):
    bad = BAD_TEXTS[kind]
    good = memory.facts.add("User likes tea", "preference", 0.9)
    calls = [
        lambda: memory.facts.add(bad, "preference", 0.9),
        lambda: memory.facts.update(good.id, content=bad),
        lambda: memory.update([{"role": "user", "content": bad}], thread_id="t"),
        lambda: memory.queue.add([{"role": "user", "content": bad}], thread_id="t"),
        lambda: memory.set_summaries({"workContext": bad}),
        lambda: memory.plans.start(bad, ["a"], session_id="s"),
        lambda: memory.plans.start("p", [bad], session_id="s"),
        lambda: memory.update([{"role": "user", "content": "I love tea"}], thread_id=bad),
        lambda: memory.scoped(user_id="ana", agent_name="bot").facts.add(bad, "goal", 0.9),
        lambda: memory.context("s").add("user", bad),
    ]
    for call in calls:
        with pytest.raises(ValueError):
            call()
    assert [f.content for f in memory.facts.list()] == ["User likes tea"]
    assert memory.queue.pending() == 0 and memory.plans.active() is None
    assert memory.memory_data()["user"]["workContext"]["summary"] == ""


def test_huge_inputs_refused_and_nothing_written(tmp_path, database_url):
    with make_memory(tmp_path, database_url, max_document_chars=1000, max_conversation_chars=5000) as m:
        with pytest.raises(ValueError, match="max_document_chars"):
            m.set_summaries({"workContext": "x" * 1001})
        with pytest.raises(ValueError, match="max_document_chars"):
            m.plans.start("p", ["x" * 600, "y" * 600], session_id="s")
        with pytest.raises(ValueError, match="max_conversation_chars"):
            m.update([{"role": "user", "content": "I love tea. " * 500}], thread_id="t")
        with pytest.raises(ValueError, match="max_conversation_chars"):
            m.queue.add([{"role": "user", "content": "x" * 5001}], thread_id="t")
        assert m.facts.list() == [] and m.queue.pending() == 0 and m.plans.active() is None


@pytest.mark.parametrize("bad", [123, None, 4.5, b"fact_00000001", ["fact_00000001"]])
def test_a_non_string_id_is_a_clear_error(memory, bad):
    for call in (memory.facts.get, memory.facts.delete, memory.facts.history, memory.facts.invalidate,
                 lambda i: memory.facts.update(i, confidence=0.5), lambda i: memory.facts.supersede(i, "x"),
                 memory.plans.get, memory.plans.finish, lambda i: memory.plans.check(i, 0),
                 memory.scoped(user_id="ana", agent_name="bot").facts.get):
        if bad is None and call == memory.facts.history:
            continue  # history(None) is the whole scope's
        with pytest.raises(InvalidIdError) as info:
            call(bad)
        assert isinstance(info.value, KeyError) and isinstance(info.value, ValueError)
        assert "string" in str(info.value)


def test_long_thread_ids_refused_the_same_on_both_databases(memory):
    convo = [{"role": "user", "content": "I love tea"}]
    for call in (lambda: memory.update(convo, thread_id="t" * 300), lambda: memory.queue.add(convo, thread_id="t" * 300),
                 lambda: memory.update(convo, thread_id=""), lambda: memory.update(convo, thread_id=42)):
        with pytest.raises(ValueError, match="thread_id"):
            call()
    assert memory.facts.list() == [] and memory.queue.pending() == 0
    assert memory.update(convo, thread_id="t" * 256).added


def test_a_dream_longer_than_the_document_limit_is_rejected_not_raised(tmp_path, database_url):
    words = " ".join(f"word{i}" for i in range(120))
    llm = ScriptedChatModel([f"[MEMORY]\n- User notes {words}\n- User also notes {words}\n[DREAM]\ncopied"])
    with make_memory(tmp_path, database_url, llm=llm, max_document_chars=1200) as m:
        m.daily.append(f"- User notes {words}")
        m.daily.append(f"- User also notes {words}")
        m.write_core("- User likes tea\n")
        result = m.deep_dream(1, force=True)
        assert result.status == "rejected" and "max_document_chars" in result.reason
        assert m.read_core() == "- User likes tea\n"


def test_a_content_of_parts_is_read_as_its_text(memory):
    """OpenAI's, Anthropic's and LangChain's messages may give content as parts: the text parts are what was said
    (an image or a tool call carries no text to remember); a part of another shape is a clear error."""
    said = [{"role": "user", "content": [{"type": "text", "text": "I moved to Porto last month."},
                                         {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
                                         "I love jazz."]},
            {"role": "assistant", "content": [{"type": "output_text", "text": "Noted!"}]}]
    result = memory.update(said, thread_id="parts")
    assert {f.content for f in result.added} >= {"User moved to Porto", "User loves jazz"}
    memory.queue.add(said, thread_id="queued")  # the queue reads it the same way
    for bad in ([{"type": "text", "text": 5}, 7], [None]):
        with pytest.raises(ValueError, match=r"messages\[0\]\.content\[\d\]|must be a string"):
            memory.update([{"role": "user", "content": bad}], thread_id="bad")
