"""Why a search hit matched, in words, and whether it is a good match: the query words it shares (by stem).

A hit that shares no distinctive word with the query matched on its vector alone; with the offline
token-frequency vectors that is noise (a query for an erased word still "finds" ten facts), so such a hit is
a weak match, shown apart, and a search with no good match says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory_core.text.words import STOPWORDS

_WORD = re.compile(r"[\w']+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_SUFFIXES = ("ing", "ed", "es", "s", "ly")


@dataclass(frozen=True)
class Why:
    """What the hit shares with the query: the words (as the query spells them); none means a weak match."""

    shared: tuple[str, ...]

    @property
    def good(self) -> bool:
        return bool(self.shared)

    def words(self) -> str:
        if not self.shared:
            return "no word of the query: similar by its vector only"
        return "shares " + ", ".join(f"“{w}”" for w in self.shared)


def _stem(word: str) -> str:
    word = re.sub(r"'s$", "", word).strip("'")
    for suffix in _SUFFIXES:
        if len(word) - len(suffix) >= 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _terms(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.casefold()) if w.strip("'") and w not in STOPWORDS]


def why(query: str, text: str) -> Why:
    """The distinctive query words that `text` also says (by stem; CJK by substring)."""
    found = []
    stems = {_stem(w) for w in _terms(text)}
    folded = text.casefold()
    for word in dict.fromkeys(_terms(query)):
        if _CJK.search(word):
            if len(word) >= 2 and word in folded:
                found.append(word)
        elif len(word) >= 2:
            stem = _stem(word)  # "surfing" finds "surf", "allergies" finds "allergic" (a long stem's prefix)
            if stem in stems or (len(stem) >= 5 and any(s.startswith(stem) for s in stems)):
                found.append(word)
    return Why(tuple(found))
