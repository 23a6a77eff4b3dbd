"""Summaries that read as sentences: after updates, offline (extractive) and as the LLM prompts ask for them.
(Facts from imported conversations: tests/portability/test_import.py.)"""

from __future__ import annotations

import re

import pytest

from memory_core.extraction.llm import EXTRACTION_PROMPT
from memory_core.extraction.offline.fact_summaries import as_sentence, fact_summaries, join_sentences, split_sentences
from memory_core.tiers.summarizer import SUMMARY_PROMPT, ExtractiveSummarizer
from tests.conftest import make_memory


def _sentences_only(text: str) -> bool:
    """Every sentence ends with punctuation and no two statements are glued ("... at Acme User works ...")."""
    return all(re.search(r"[.!?…]$", s) for s in split_sentences(text)) and not re.search(r"[\w,] User\b", text)


def test_summaries_after_updates_are_sentences(tmp_path, database_url):
    with make_memory(tmp_path, database_url) as m:
        m.update([{"role": "user", "content": "Hi! I'm Ana, a backend engineer at Acme in Lisbon."}], thread_id="a")
        m.update([{"role": "user", "content": "I want to run a marathon. I'm learning Rust too."}], thread_id="b")
        m.update([{"role": "user", "content": "I no longer work at Acme, I work at Globex now."}], thread_id="c")
        user = m.memory_data()["user"]
        assert user["workContext"]["summary"] == "User no longer works at Acme. User works at Globex."
        assert user["personalContext"]["summary"] == "User's name is Ana. User lives in Lisbon."
        assert user["topOfMind"]["summary"] == "User wants to run a marathon."
        assert all(_sentences_only(part["summary"]) for part in user.values())
        text = m.format_for_injection()
        # the injected text never repeats a fact in a summary (issue 34): the facts say it once
        assert "User works at Globex" in text and text.count("User works at Globex") == 1
        assert "Acme User" not in text


def test_a_stored_summary_keeps_its_sentences_but_loses_the_superseded_one():
    current = {"user": {"workContext": {"summary": "User works at Acme.\nLeads the platform team"}}}
    assert fact_summaries([("User works at Globex", "context")], current) == {
        "workContext": "Leads the platform team. User works at Globex."}
    assert fact_summaries([("User loves tea", "preference")], current) == {}
    replaced = fact_summaries([("User is a nurse", "context")], current, replaced=["User works at Acme"])
    assert replaced == {"workContext": "Leads the platform team. User is a nurse."}


@pytest.mark.parametrize("text,sentence", [
    ("User works at Globex", "User works at Globex."),
    ("  user  lives in   Porto ", "User lives in Porto."),
    ("Is it?", "Is it?"),
    ("User's height is 5'9\"", "User's height is 5'9\"."),
    ("", ""),
])
def test_as_sentence(text, sentence):
    assert as_sentence(text) == sentence


def test_join_sentences_separates_and_drops_repeats():
    assert join_sentences(["User works at Acme", "User lives in Porto.", "user works at Acme."]) == \
        "User works at Acme. User lives in Porto."


def test_the_extractive_summary_writes_whole_sentences():
    long = "I have been working on the billing migration " + "and the invoices " * 30
    summary = ExtractiveSummarizer(max_chars=80).summarize([
        {"role": "user", "content": "I no longer work at Acme\nI work at Globex now"},
        {"role": "user", "content": long},
        {"role": "assistant", "content": "Congratulations on the new job"}])
    lines = summary.splitlines()
    assert lines[:2] == ["- User: I no longer work at Acme.", "- User: I work at Globex now."]
    assert lines[-1] == "- Assistant: Congratulations on the new job."
    cut = next(line for line in lines if "billing" in line)
    assert cut.endswith("…") and len(cut) <= len("- User: ") + 80 and not cut.endswith(" …")
    assert all(re.search(r"[.!?…]$", line) for line in lines)


def test_the_llm_prompts_ask_for_sentences():
    assert "complete sentences" in SUMMARY_PROMPT and "full stop" in SUMMARY_PROMPT
    assert "complete sentences" in EXTRACTION_PROMPT
