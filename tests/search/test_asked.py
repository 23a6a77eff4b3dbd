"""Who and when a question names rank the turns said by them, or then, above the others (search.asked)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

import pytest

from memory_core.search.asked import OTHER_SPEAKER, asked_period, asked_weights, is_turn, split_speaker
from tests.conftest import make_memory

EP1 = "episodes/2023-05-08-aaaaaaaaaaaa"
EP2 = "episodes/2023-06-09-bbbbbbbbbbbb"


@dataclass
class Hit:
    kind: str
    source: str | None
    text: str
    score: float = 1.0


def reranked(hits, query):
    factors = asked_weights(query, hits)
    return [h for _, h in sorted(zip(factors, hits), key=lambda p: p[1].score * p[0], reverse=True)]


def test_the_turns_of_the_person_asked_about_rank_first():
    hits = [Hit("episode", f"{EP1}#1", "Melanie: I love pottery.", 1.0),
            Hit("episode", f"{EP1}#2", "Caroline: I love painting.", 0.9),
            Hit("episode", f"{EP1}#3", "Melanie: Thanks, Caroline! I love it.", 0.8)]
    # Melanie's turns rank down, the one that speaks to Caroline too: it is not about her
    assert [h.source[-1] for h in reranked(hits, "What does Caroline love?")] == ["2", "1", "3"]
    assert asked_weights("What do they love?", hits) == [1.0, 1.0, 1.0]  # nobody named: the order stays
    assert asked_weights("What do Caroline and Melanie love?", hits) == [1.0, 1.0, 1.0]  # both: no one ranks down


def test_a_turn_stored_as_a_fact_has_its_speaker_read_too_but_no_other_fact_does():
    hits = [Hit("fact", "D4:2", "Jon: I opened the studio in March.", 1.0),
            Hit("fact", "D4:3", "Gina: Jon, that's amazing!", 0.95),
            Hit("fact", "thread:9", "Note: the studio lease ends in May.", 0.9),
            Hit("daily", "memory/2023-05-01.md", "Gina: visited the studio", 0.85)]
    # Gina's turn ranks down; the note, the daily line: not turns, whatever they start with
    assert asked_weights("When did Jon open his studio?", hits) == [1.0, OTHER_SPEAKER, 1.0, 1.0]
    assert asked_weights("What does the note say?", hits) == [1.0, 1.0, 1.0, 1.0]  # "Note" is no speaker


def test_the_turns_said_in_the_period_asked_about_rank_first():
    hits = [Hit("episode", f"{EP1}#1", "Melanie: We painted a lake.", 1.0),
            Hit("episode", f"{EP2}#0", "Melanie: We painted a sunset.", 0.8)]
    assert reranked(hits, "What did they paint in June 2023?")[0].text == "Melanie: We painted a sunset."
    assert reranked(hits, "What did they paint in May 2023?")[0].text == "Melanie: We painted a lake."


@pytest.mark.parametrize("name,query,named", [
    ("Jean-Luc", "What did Jean-Luc cook?", True),
    ("Ana María", "¿Qué pintó Ana María en mayo?", True),
    ("Ana María", "What did Ana paint?", False),  # the whole name, not part of it
    ("Dr. Okafor", "what did dr okafor prescribe", True),
    ("李雷", "李雷 去了哪里", True),
    ("Sam", "What did Samantha say?", False),  # a word, not a piece of one
])
def test_a_speaker_is_named_by_every_word_of_their_name(name, query, named):
    hits = [Hit("episode", f"{EP1}#1", f"{name}: something", 1.0), Hit("episode", f"{EP1}#2", "Zed: other", 1.0)]
    assert asked_weights(query, hits) == ([1.0, OTHER_SPEAKER] if named else [1.0, 1.0])


@pytest.mark.parametrize("text,expected", [
    ("Caroline: Hi Mel!", ("Caroline", "Hi Mel!")),
    ("Time: 10:30 is fine", ("Time", "10:30 is fine")),
    ("no speaker here", ("", "no speaker here")),
    ("x" * 70 + ": too long a name", ("", "x" * 70 + ": too long a name")),
    ("two\nlines: not a name", ("", "two\nlines: not a name")),
])
def test_split_speaker(text, expected):
    assert split_speaker(text) == expected


@pytest.mark.parametrize("kind,source,turn", [
    ("episode", f"{EP1}#4", True), ("fact", "D3:12", True), ("fact", "chat-7#41", True),
    ("fact", "thread:42", False), ("fact", None, False), ("daily", "memory/2023-05-01.md", False),
    ("core", "MEMORY.md", False),
])
def test_what_is_a_turn(kind, source, turn):
    assert is_turn(kind, source) is turn


@pytest.mark.parametrize("question,period", [
    ("What painting did Melanie show to Caroline on October 13, 2023?", ("2023-10-13", "2023-10-20")),
    ("What did they do on 7th May 2023?", ("2023-05-07", "2023-05-14")),
    ("What did Mel paint in July 2023?", ("2023-07-01", "2023-08-31")),
    ("What happened in December 2022?", ("2022-12-01", "2023-01-31")),
    ("Where did she travel in 2022?", ("2022-01-01", "2022-12-31")),
    ("When did Caroline go to the support group?", None),
    ("What is on 31 February 2023?", None),
])
def test_the_period_a_question_names(question, period):
    assert asked_period(question) == period


TURNS = [("Priya", "I started learning the cello last spring."), ("Tomás", "Nice! I play the cello too, badly."),
         ("Priya", "My teacher says I should practise scales daily."), ("Tomás", "My cello needs new strings.")]


def test_search_ranks_the_named_speakers_turns_first(tmp_path, database_url):
    with make_memory(tmp_path, database_url) as m:
        for n, (who, said) in enumerate(TURNS, 1):
            m.facts.add(f"{who}: {said}", "context", 0.9, source=f"s1:{n}")
        first = m.search("What instrument does Tomás play?", k=2)[0]
        assert first.text.startswith("Tomás:")
        assert m.search("What instrument does Priya play?", k=2)[0].text.startswith("Priya:")
        # off, the order is the words' and vectors' alone: a reply that speaks to Priya may lead
        plain = m.scoped(user_id="default", agent_name="default")
        assert [h.text for h in plain.search("cello", k=4, asked=False)] == [h.text for h in plain.search("cello", k=4)]


def test_search_ranks_the_named_speakers_turns_of_an_episode_first(tmp_path):
    talk = [{"role": "user" if who == "Priya" else "assistant", "content": said, "name": who} for who, said in TURNS]
    with make_memory(tmp_path) as m:
        m.update(talk, thread_id="t", when=datetime(2024, 3, 2, 10, tzinfo=timezone.utc))
        turns = [h for h in m.search("What did Tomás say about the cello?", k=10) if h.kind == "episode"]
        assert turns and turns[0].text.startswith("Tomás:")
        turns = [h for h in m.search("What did Priya say about the cello?", k=10) if h.kind == "episode"]
        assert turns and turns[0].text.startswith("Priya:")
