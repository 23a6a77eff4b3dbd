"""The crude stem that every word match of the project shares (truth, erase, extraction's slots, the eval's check):
a verb said by the user ("I drive", "I write") and the same verb in a fact ("User drives", "User writes") and its
"-ing" must meet. Before, "-es" came off whole, so "drives" was "driv" and "drive" stayed "drive": a passage "I drive
a Ford Focus." was not marked stale once "User drives a Ford Focus" was replaced."""

from __future__ import annotations

import pytest

from memory_core.text.truth import Retired, stale
from memory_core.text.words import stem


@pytest.mark.parametrize("forms", [
    ("drive", "drives", "driving", "drived"), ("write", "writes", "writing"), ("smoke", "smokes", "smoking", "smoked"),
    ("live", "lives"), ("hike", "hikes"), ("manage", "manages", "managing"),  # a short word keeps "-ing" and "-ed"
    ("watch", "watches", "watching", "watched"), ("play", "plays", "playing", "played"),
])
def test_the_forms_of_a_verb_share_one_stem(forms):
    assert len({stem(w) for w in forms}) == 1


@pytest.mark.parametrize("a,b", [("free", "tree"), ("drive", "driver"), ("watch", "water")])
def test_other_words_keep_their_own(a, b):
    assert stem(a) != stem(b)


def test_a_passage_said_with_the_base_verb_states_the_fact_that_was_replaced():
    old = Retired("fact_1", "User drives a Ford Focus", "User switched from Focus to a Kia Niro")
    assert stale("I drive a Ford Focus.", [old], [old.replacement]) == old
    assert stale("I drive to work on Mondays.", [old], [old.replacement]) is None
