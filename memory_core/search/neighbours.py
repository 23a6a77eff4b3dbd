"""Neighbouring turns: a conversation turn stored as a fact is found with the turns around it.

A turn often answers the one before it ("What did you paint?" / "A sunset over the lake"), so the question
a search is for may match one turn while the answer is the next. A fact whose `source` ends in a position
(`<prefix>:<n>` or `<prefix>#<n>`, as LoCoMo's `D3:12` or `chat-7#41`) has as neighbours the facts of the
same scope whose source is the same prefix with the position just before or after. A hit then lends part
of its score to its neighbours: TO_NEXT of it to the turn after (its reply), TO_PREVIOUS to the turn
before (what it answered). Measured on the LoCoMo dev conversations (bench/search_locomo.py): recall@10
0.659 -> 0.74, on both conversations alike; the values sit on a plateau (0.4-0.6 and 0.2-0.5 gave the
same within two questions).

The extraction's own sources (`thread:<id>`) name a conversation, not a turn: they have no neighbours.
"""

from __future__ import annotations

import re
from typing import Callable, Hashable, Iterable, Mapping, Sequence

TO_NEXT = 0.5
TO_PREVIOUS = 0.3
# Only the best-scored candidates lend to their neighbours: those below them would lend too little to
# move anything into the top k, and each one is a source to look up.
POOL = 50
_POSITION = re.compile(r"(?!thread:)(.*[^\s:#][:#])(\d{1,9})")


def position(source: str | None) -> tuple[str, int, int] | None:
    """(prefix, position, digits shown) of a source that ends in a position, else None.

    The digits shown are the width of a zero-padded position ("t:007" -> 3), 0 when not padded."""
    m = _POSITION.fullmatch(source or "")
    if not m:
        return None
    digits = m.group(2)
    return m.group(1), int(digits), len(digits) if len(digits) > 1 and digits[0] == "0" else 0


def adjacent_sources(source: str | None) -> tuple[str | None, str | None]:
    """The sources of the turn before and the turn after `source`, in its own spelling; None where there is
    no such turn (no position, or position 0 has nothing before it)."""
    found = position(source)
    if found is None:
        return None, None
    prefix, n, width = found
    spell = lambda i: f"{prefix}{i:0{width}d}" if width else f"{prefix}{i}"  # noqa: E731
    return (spell(n - 1) if n > 0 else None), spell(n + 1)


def spread(scores: Mapping[Hashable, float], neighbours: Mapping[Hashable, tuple[Sequence[Hashable], Sequence[Hashable]]],
           to_next: float = TO_NEXT, to_previous: float = TO_PREVIOUS) -> dict[Hashable, float]:
    """Scores after each item lends `to_next` of its own score to the items in its next-turn list and
    `to_previous` to those in its previous-turn list (`neighbours[item] = (previous, next)`). A lent score
    is added to what the neighbour has; lending reads the scores given, never what was lent."""
    out = dict(scores)
    for item, (before, after) in neighbours.items():
        score = scores.get(item)
        if not score:
            continue
        for others, share in ((after, to_next), (before, to_previous)):
            for other in others:
                if other != item:
                    out[other] = out.get(other, 0.0) + share * score
    return out


def with_neighbours(scores: Mapping[str, float], sources_of: Callable[[list[str]], dict[str, str]],
                    facts_with: Callable[[list[str]], Iterable[tuple[str, str]]], pool: int = POOL,
                    to_next: float = TO_NEXT, to_previous: float = TO_PREVIOUS) -> dict[str, float]:
    """`spread` over search owners ("f:<id>" facts, "c:<pk>" chunks): the best `pool` facts lend to their
    neighbouring turns. `sources_of(fact ids)` gives {id: source} of valid facts; `facts_with(sources)`
    gives (id, source) of the valid facts with one of those sources."""
    best = sorted((o for o in scores if o.startswith("f:")), key=lambda o: scores[o], reverse=True)[:pool]
    if not best:
        return dict(scores)
    sources = sources_of([o[2:] for o in best])
    wanted = {o: adjacent_sources(sources.get(o[2:])) for o in best}
    lookup = sorted({s for pair in wanted.values() for s in pair if s})
    if not lookup:
        return dict(scores)
    by_source: dict[str, list[str]] = {}
    for fact_id, source in facts_with(lookup):
        by_source.setdefault(source, []).append(f"f:{fact_id}")
    links = {o: (by_source.get(before, []) if before else [], by_source.get(after, []) if after else [])
             for o, (before, after) in wanted.items()}
    return spread(scores, links, to_next, to_previous)
