"""Who and when a question names: a conversation's turns said by the people it asks about, or in the period it
names, rank above the others.

A turn is an episode's turn (kind "episode", text "Speaker: words", source "episodes/<day>-<id>#<n>") or a turn
stored as a fact (a source that ends in a position, as LoCoMo's "D3:12", text "Speaker: words"). Two rules:

- **Speakers.** When the question names some of the speakers of the turns found (every word of a speaker's name
  in the question), a turn said by none of them keeps OTHER_SPEAKER of its score, even when it names one of
  them: "Thanks, Melanie!" speaks to her, not of her. "What does Melanie do to destress?" is answered by
  Melanie's turns. A speaker is only ever read off a turn, never off another fact ("Note: ..." is not a person).
- **Period.** A turn of an episode said in the period the question names ("on 13 October 2023", "in July 2023",
  "in 2022") gains IN_PERIOD.

Measured on the LoCoMo dev conversations (conv-26 tuned on, conv-30 checked on): in search, where it ranks every
candidate before the k best are cut, the speaker rule lifts turn recall@10 (`python -m bench search`, each turn a
fact) from 0.773 to 0.793 (conv-30 0.773 -> 0.798, conv-26 0.773 -> 0.791) and, in the pipeline (`update()`,
episodes), from 0.778 to 0.806 (conv-30 0.784 -> 0.793); OTHER_SPEAKER sits on a plateau from 0.3 to 0.7
(conv-30 0.798 throughout). Answer in context stays where the same rule, applied to the passages after
search, had it (0.751 -> 0.747 at 2,000 tokens, 0.721 -> 0.712 at 1,000; conv-30 0.778 / 0.753 unchanged).
"""

from __future__ import annotations

import re
from datetime import date
from typing import Sequence

from memory_core.search.neighbours import position
from memory_core.store.episode_store import TURN_SOURCE

OTHER_SPEAKER = 0.5  # a turn by none of the people a question names keeps this share of its score
IN_PERIOD = 1.5  # a turn said in the period a question names gains this factor
SPEAKER_CHARS = 64  # a "name: " prefix longer than this is text, not a speaker

_WORD = re.compile(r"\w+")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MONTH_RE = "(" + "|".join(_MONTHS) + ")"
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+{_MONTH_RE},?\s+((?:19|20)\d\d)\b", re.I)
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH_RE}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+((?:19|20)\d\d)\b", re.I)
_MONTH_YEAR = re.compile(rf"\b{_MONTH_RE},?\s+((?:19|20)\d\d)\b", re.I)
_YEAR = re.compile(r"\b(?:in|during|of)\s+((?:19|20)\d\d)\b", re.I)


def split_speaker(text: str) -> tuple[str, str]:
    """("Speaker", "words") of a turn's text "Speaker: words"; ("", text) when it has no speaker."""
    who, sep, rest = text.partition(": ")
    return (who, rest) if sep and len(who) <= SPEAKER_CHARS and "\n" not in who else ("", text)


def is_turn(kind: str, source: str | None) -> bool:
    """Whether a hit is a turn of a conversation: an episode's, or one stored as a fact with its position."""
    return kind == "episode" or (kind == "fact" and position(source) is not None)


def asked_period(query: str) -> tuple[str, str] | None:
    """The days (first, last; YYYY-MM-DD) a question names: "on 13 October 2023" (that day and the next week,
    when it may be told), "in July 2023" (the month and the next), "in 2022" (the year); None when it names none."""
    if m := _DAY_MONTH_YEAR.search(query) or _MONTH_DAY_YEAR.search(query):
        day, month = (m.group(1), m.group(2)) if m.re is _DAY_MONTH_YEAR else (m.group(2), m.group(1))
        try:
            first = date(int(m.group(3)), _MONTHS.index(month.lower()) + 1, int(day))
        except ValueError:
            return None
        return first.isoformat(), date.fromordinal(first.toordinal() + 7).isoformat()
    if m := _MONTH_YEAR.search(query):
        year, month = int(m.group(2)), _MONTHS.index(m.group(1).lower()) + 1
        end = (year + (month == 12), month % 12 + 1)
        return f"{year:04d}-{month:02d}-01", f"{end[0]:04d}-{end[1]:02d}-31"
    if m := _YEAR.search(query):
        return f"{m.group(1)}-01-01", f"{m.group(1)}-12-31"
    return None


def asked_weights(query: str, hits: Sequence) -> list[float]:
    """One factor per hit (SearchHit-like: kind, source, text) for the question `query`: the speaker and period
    rules above; 1.0 for every hit when the question names neither."""
    asked = {w.casefold() for w in _WORD.findall(query)}
    turns = [is_turn(h.kind, h.source) for h in hits]
    speakers = [split_speaker(h.text)[0].casefold() if turn else "" for h, turn in zip(hits, turns)]
    named = {s for s in set(speakers) if (parts := _WORD.findall(s)) and all(part in asked for part in parts)}
    span = asked_period(query)
    if not named and span is None:
        return [1.0] * len(hits)
    out = []
    for h, turn, who in zip(hits, turns, speakers):
        w = 1.0
        if turn and named and who not in named:
            w *= OTHER_SPEAKER
        if span is not None and h.kind == "episode" and (m := TURN_SOURCE.fullmatch(h.source or "")):
            if span[0] <= m.group(1) <= span[1]:
                w *= IN_PERIOD
        out.append(w)
    return out
