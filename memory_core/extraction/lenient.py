"""Reading an extracted fact's category and confidence the way a small or local model writes them.

Only what is plainly meant is read ("Preferences", "pref", "likes" -> preference; "85%", 85, "high" -> a
confidence); each such reading comes with a note that the update's result carries. Anything else is None
with the reason, and the fact is skipped as invalid, as the API says."""

from __future__ import annotations

import math
import re
from typing import Any

from memory_core.facts.api import CATEGORIES

CATEGORY_ALIASES: dict[str, str] = {
    **{word: "preference" for word in ("pref", "prefs", "like", "likes", "dislike", "dislikes", "likes/dislikes",
                                       "favorite", "favorites", "favourite", "favourites", "taste", "tastes",
                                       "user preference", "user preferences")},
    **{word: "knowledge" for word in ("skill", "skills", "expertise", "know-how", "knowhow", "user knowledge")},
    **{word: "context" for word in ("background", "personal", "personal context", "personal info",
                                    "personal information", "situation", "user context", "work context")},
    **{word: "behavior" for word in ("behaviour", "behaviours", "habit", "habits", "routine", "routines",
                                     "user behavior", "user behaviour")},
    **{word: "goal" for word in ("aim", "aims", "objective", "objectives", "plan", "plans", "intention",
                                 "intentions", "aspiration", "aspirations", "user goal", "user goals")},
    **{word: "correction" for word in ("corrections", "corrected", "fix", "mistake", "mistakes")},
}

CONFIDENCE_WORDS: dict[str, float] = {
    "very high": 0.95, "certain": 0.95, "high": 0.9, "medium": 0.7, "moderate": 0.7, "mid": 0.7,
    "low": 0.4, "very low": 0.2,
}

_PERCENT = re.compile(r"^([0-9]+(?:\.[0-9]+)?)\s*%$")


def read_category(value: Any) -> tuple[str | None, str | None]:
    """(category, note): note says how a loosely written category was read; (None, reason) when unusable."""
    if not isinstance(value, str) or not value.strip():
        return None, f"missing category {value!r:.40}"
    word = re.sub(r"[\s_]+", " ", value.strip().strip("\"'`.:;!").lower()).strip()
    if word in CATEGORIES:
        return word, (None if word == value else f"category {value!r:.40} read as {word}")
    found = CATEGORY_ALIASES.get(word) or CATEGORY_ALIASES.get(word.replace("-", " "))
    if found is None and word.endswith("s") and word[:-1] in CATEGORIES:
        found = word[:-1]
    if found is None:
        return None, f"unknown category {value!r:.40}"
    return found, f"category {value!r:.40} read as {found}"


def read_confidence(value: Any) -> tuple[float | None, str | None]:
    """(confidence in 0..1, note) from a number, a numeric string, a percentage ("85%", 85) or a word
    ("high"); (None, reason) for anything else."""
    if isinstance(value, bool) or value is None:
        return None, f"missing or unreadable confidence {value!r:.40}"
    note = None
    if isinstance(value, str):
        text = value.strip().lower()
        if text in CONFIDENCE_WORDS:
            return CONFIDENCE_WORDS[text], f"confidence {value!r:.40} read as {CONFIDENCE_WORDS[text]}"
        match = _PERCENT.match(text)
        if match:
            number = float(match.group(1)) / 100
            note = f"confidence {value!r:.40} read as {number:g}"
        else:
            try:
                number = float(text)
            except ValueError:
                return None, f"unreadable confidence {value!r:.40}"
    elif isinstance(value, (int, float)):
        number = float(value)
    else:
        return None, f"unreadable confidence {value!r:.40}"
    if not math.isfinite(number):
        return None, f"out-of-range confidence {value!r:.40}"
    if 1.0 < number <= 100.0 and number == int(number) and note is None:  # a percentage without its sign
        number /= 100
        note = f"confidence {value!r:.40} read as {number:g} (a percentage)"
    if not 0.0 <= number <= 1.0:
        return None, f"out-of-range confidence {value!r:.40}"
    return number, note
