"""Why a search hit matched (memory_core.search.explain): a labelled table of queries and texts, other people,
domains, phrasings and languages. Split in two halves before any tuning: half B was measured first."""

from __future__ import annotations

import pytest

from memory_core.search.explain import why

# (query, text, a good match?)
HALF_A = [
    ("peanuts", "User trains at 6am", False),
    ("peanuts", "User's sister Marta is allergic to peanuts", True),
    ("What does the user do on weekends?", "User surfs at Carcavelos on weekends", True),
    ("surfing", "User loves surfing at Carcavelos", True),
    ("Where does Ana live?", "Ana lives in Lisbon", True),
    ("cello lessons", "User is learning the cello", True),
    ("marathon training", "User trains at 7am for the half marathon", True),
    ("Kyoto trip", "User plans a trip to Kyoto in October", True),
    ("What is the user's job?", "User likes green tea", False),
    ("東京", "東京に住んでいる", True),
    ("the and of", "User likes the sea", False),
    ("deploys", "User deployed the service with Terraform", True),
]
HALF_B = [
    ("allergies", "User is allergic to peanuts", True),
    ("Porto", "User lives in Porto", True),
    ("coffee", "User drinks green tea, never coffee after noon", True),
    ("mypy", "User always runs mypy in CI", True),
    ("mypy", "User's name is Priya", False),
    ("Wohnort Berlin", "Der Nutzer wohnt in Berlin", True),
    ("habite Paris", "L'utilisateur habite à Paris", True),
    ("runs", "User is running the Porto half marathon", True),
    ("bananas", "User bakes banana bread on Sundays", True),
    ("manager", "User's manager is Tomas", True),
    ("Tomas", "User lives in Hamburg", False),
    ("invoices", "User reviews pull requests in the morning", False),
]
# The labels are what a person would call a good match. Measured on half B first, with the rule as written
# before the table existed: 11 of 12 (missed: "runs" / "running", a doubled consonant); then on half A:
# 12 of 12. No tuning was done after measuring, so both figures stand: B 11/12, A 12/12.
KNOWN_MISSES = {("runs", "User is running the Porto half marathon")}


def accuracy(rows) -> float:
    return sum(why(q, t).good == good for q, t, good in rows) / len(rows)


def test_the_figures_recorded_above_hold():
    assert accuracy(HALF_B) >= 11 / 12
    assert accuracy(HALF_A) == 1.0


@pytest.mark.parametrize("query, text, good", [r for r in HALF_A + HALF_B if r[:2] not in KNOWN_MISSES])
def test_table(query, text, good):
    assert why(query, text).good is good


def test_words_say_what_was_shared():
    assert why("Is Marta allergic to peanuts?", "Marta is allergic to peanuts").words() == \
        "shares “marta”, “allergic”, “peanuts”"
    assert "vector only" in why("peanuts", "User trains at 6am").words()
