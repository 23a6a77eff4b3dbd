"""A time said before the clause it dates ("Last year I moved to Oslo") is read as the same clause with the time after
it ("I moved to Oslo last year"): before, a sentence that opened with a time gave no fact at all, offline."""

from __future__ import annotations

import pytest

from memory_core.extraction.offline.heuristics import HeuristicExtractor
from memory_core.extraction.offline.utterances import time_after


def _facts(said: str) -> list[str]:
    return [f.content for f in HeuristicExtractor().extract([{"role": "user", "content": said}], {"facts": []}).facts]


@pytest.mark.parametrize("first,after", [
    ("Last year I moved to Oslo.", "I moved to Oslo last year."),
    ("Two years ago, I quit smoking.", "I quit smoking two years ago."),
    ("In 2019 I graduated from Yale.", "I graduated from Yale in 2019."),
    ("Last week I started at Google.", "I started at Google last week."),
    ("Back in March, I adopted a dog.", "I adopted a dog back in March."),
    ("Recently I've been learning Korean.", "I've been learning Korean recently."),
    ("A few weeks ago my wife started at Google.", "My wife started at Google a few weeks ago."),
    ("Last June (June 2023) I graduated from Sciences Po.", "I graduated from Sciences Po last June (June 2023)."),
])
def test_a_time_said_first_gives_what_it_gives_said_after(first, after):
    assert _facts(first) == _facts(after)
    assert time_after(first).casefold().rstrip(".") == after.casefold().rstrip(".")


def test_the_time_goes_after_the_first_clause_only():
    assert time_after("Last year I moved to Oslo and I love it.") == "I moved to Oslo last year and I love it."
    assert _facts("Last year I moved to Oslo.") == ["User moved to Oslo"]


@pytest.mark.parametrize("said", [
    "Last time I checked it was fine.",   # "last time" dates nothing
    "Today I'm tired.",                   # "today" is read where it stands (heuristics: a passing thing)
    "Last year was rough.",               # no clause of the user's after it
])
def test_what_is_not_a_time_before_a_clause_of_the_user_is_left_as_it_is(said):
    assert time_after(said) == said
