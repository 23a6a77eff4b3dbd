"""Whether an answer is in a text: its content words, stemmed, with dates and numbers recognised however they are
written.

A date is read in the usual spellings ("2023-05-07", "7 May 2023", "May 7, 2023", "7th of May 2023", "May 7th,
2023", "07/05/2023" is not read: day and month order is ambiguous) and written once more in one spelling ("7 may
2023") beside the original, on both sides, so that "2023-05-07" in the context carries the answer "7 May 2023"
and the other way round. A number said in words is read as its digits ("ten years ago" holds the answer "10
years ago"), on both sides.
"""

from __future__ import annotations

import re

from memory_core.text.words import NUMBER_WORDS, STOPWORDS, stem, words

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MONTH = r"(?P<month>" + "|".join(_MONTHS) + r"|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_FORMS = (
    re.compile(r"\b" + _YEAR + r"-(?P<mnum>[01]?\d)-(?P<day>[0-3]?\d)\b"),
    re.compile(r"\b" + _DAY + r"(?:\s+of)?\s+" + _MONTH + r",?\s+" + _YEAR + r"\b", re.I),
    re.compile(r"\b" + _MONTH + r"\s+" + _DAY + r",?\s+" + _YEAR + r"\b", re.I),
)


def _month_number(name: str) -> int:
    name = name.lower().rstrip(".")
    return next(i + 1 for i, m in enumerate(_MONTHS) if m.startswith(name[:3]))


def _canonical(m: re.Match) -> str | None:
    g = m.groupdict()
    month = int(g["mnum"]) if g.get("mnum") else _month_number(g["month"])
    day = int(g["day"])
    return f"{day} {_MONTHS[month - 1]} {g['year']}" if 1 <= month <= 12 and 1 <= day <= 31 else None


def canonical_dates(text: str) -> list[str]:
    """The dates written in `text`, each as "7 may 2023"."""
    return [c for form in _FORMS for m in form.finditer(text) if (c := _canonical(m))]


def normalise_dates(text: str) -> str:
    """`text` with each date written as "7 may 2023"."""
    for form in _FORMS:
        text = form.sub(lambda m: _canonical(m) or m.group(0), text)
    return text


def _stems(text: str, keep_stopwords: bool = False) -> set[str]:
    return {stem(NUMBER_WORDS.get(w, w)) for w in words(text) if keep_stopwords or w not in STOPWORDS}


def with_dates(text: str) -> str:
    """`text` followed by each of its dates in the one spelling."""
    dates = canonical_dates(text)
    return text + ("\n" + " ".join(dates) if dates else "")


def answer_in_context(answer: str, context: str) -> bool | None:
    """Whether all content words of `answer` (stemmed, its dates in any spelling, numbers in words or digits) are in
    `context`; None for an answer with no words."""
    answer = normalise_dates(answer)
    wanted = _stems(answer) or _stems(answer, keep_stopwords=True)
    if not wanted:
        return None
    return wanted <= _stems(with_dates(context), keep_stopwords=True)


__all__ = ["answer_in_context", "canonical_dates", "normalise_dates", "with_dates"]
