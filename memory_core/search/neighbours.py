"""Neighbouring turns: a conversation turn stored as a fact is found with the turns around it.

A turn often answers the one before it ("What did you paint?" / "A sunset over the lake"), so the question
a search is for may match one turn while the answer is the next. A fact whose `source` ends in a position
(`<prefix>:<n>` or `<prefix>#<n>`, as LoCoMo's `D3:12` or `chat-7#41`) has as neighbours the facts of the
same scope whose source is the same prefix with a position near it. A hit then lends part
of its score to its neighbours (SHARES): half to the turn after (its reply), 0.3 to the turn before (what
it answered), 0.2 to the turns two away (a reply's follow-up, a question's context). Measured on the LoCoMo
dev conversations (bench/search_locomo.py): recall@10 0.659 -> 0.773, on both conversations alike (0.634
-> 0.773, 0.704 -> 0.773); the shares sit on a plateau (next 0.4-0.6, previous 0.2-0.5, two away
0.2-0.3 within a few questions; three away added nothing).

The extraction's own sources (`thread:<id>`) name a conversation, not a turn: they have no neighbours.
"""

from __future__ import annotations

import re
from typing import Callable, Hashable, Iterable, Mapping, Sequence

# {offset: share}: the turn `offset` positions from a hit gains `share` of the hit's score.
SHARES = {1: 0.5, -1: 0.3, 2: 0.2, -2: 0.2}
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


def nearby_sources(source: str | None, offsets: Iterable[int]) -> dict[int, str]:
    """{offset: source of the turn that many positions away}, in the source's own spelling; an offset that
    would go below position 0 is left out, and so is every offset for a source without a position."""
    found = position(source)
    if found is None:
        return {}
    prefix, n, width = found
    return {d: f"{prefix}{n + d:0{width}d}" if width else f"{prefix}{n + d}" for d in offsets if n + d >= 0}


def spread(scores: Mapping[Hashable, float],
           links: Mapping[Hashable, Sequence[tuple[Hashable, float]]]) -> dict[Hashable, float]:
    """Scores after each item lends to its linked items (`links[item] = [(other, share), ...]`): `other`
    gains `share` of the item's score, added to what it has. Lending reads the scores given, never what
    was lent; an item never lends to itself."""
    out = dict(scores)
    for item, others in links.items():
        score = scores.get(item)
        if not score:
            continue
        for other, share in others:
            if other != item:
                out[other] = out.get(other, 0.0) + share * score
    return out


def with_neighbours(scores: Mapping[str, float], sources_of: Callable[[list[str]], dict[str, str]],
                    facts_with: Callable[[list[str]], Iterable[tuple[str, str]]], pool: int = POOL,
                    shares: Mapping[int, float] = SHARES) -> dict[str, float]:
    """`spread` over search owners ("f:<id>" facts, "c:<pk>" chunks): the best `pool` facts lend to the
    turns around them. `sources_of(fact ids)` gives {id: source} of valid facts; `facts_with(sources)` gives
    (id, source) of the valid facts with one of those sources."""
    best = sorted((o for o in scores if o.startswith("f:")), key=lambda o: scores[o], reverse=True)[:pool]
    if not best:
        return dict(scores)
    sources = sources_of([o[2:] for o in best])
    wanted = {o: nearby_sources(sources.get(o[2:]), shares) for o in best}
    lookup = sorted({s for nearby in wanted.values() for s in nearby.values()})
    if not lookup:
        return dict(scores)
    by_source: dict[str, list[str]] = {}
    for fact_id, source in facts_with(lookup):
        by_source.setdefault(source, []).append(f"f:{fact_id}")
    links = {o: [(other, shares[d]) for d, s in nearby.items() for other in by_source.get(s, [])]
             for o, nearby in wanted.items()}
    return spread(scores, links)
