"""What the dashboard says in words instead of ids (memory_core.dashboard.words)."""

from __future__ import annotations

import pytest

from memory_core.dashboard.words import reason_words

TEXTS = {"fact_0123abcd": "User lives in Hamburg", "fact_89ef4567": "User's manager is Tomas " + "and more " * 20}


@pytest.mark.parametrize("reason, words", [
    ("one truth: no longer states fact_0123abcd", "a fact changed, so it no longer states “User lives in Hamburg”"),
    ("rolled back to v3", "rolled back to v3"),
    ("merged fact_0123abcd into fact_89ef4567",
     f"merged “User lives in Hamburg” into “{TEXTS['fact_89ef4567'][:60]}”"),  # a long fact: its first 60 characters
    ("erased fact_ffffffff", "erased a fact"),  # not among the facts read: no id shown
])
def test_a_versions_reason_names_facts_by_their_words(reason, words):
    assert reason_words(reason, TEXTS) == words
