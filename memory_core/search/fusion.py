"""Pure functions for combining ranked lists."""

from __future__ import annotations

import math
from typing import Hashable, Sequence


def rrf(rankings: Sequence[Sequence[Hashable]], weights: Sequence[float] | None = None, k: int = 60) -> dict[Hashable, float]:
    """Reciprocal-rank fusion: sum of weight / (k + rank) over the lists an item appears in."""
    weights = weights or [1.0] * len(rankings)
    scores: dict[Hashable, float] = {}
    for ranking, weight in zip(rankings, weights):
        for rank, item in enumerate(ranking, 1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    return scores


def weighted(score_lists: Sequence[dict[Hashable, float]], weights: Sequence[float]) -> dict[Hashable, float]:
    """Min-max normalised scores, combined by weight (a missing item scores 0 in that list)."""
    out: dict[Hashable, float] = {}
    for scores, weight in zip(score_lists, weights):
        if not scores:
            continue
        lo, hi = min(scores.values()), max(scores.values())
        span = hi - lo or 1.0
        for item, s in scores.items():
            out[item] = out.get(item, 0.0) + weight * ((s - lo) / span if hi != lo else 1.0)
    return out


def decay(age_days: float, half_life_days: float) -> float:
    """Exponential decay factor: 1 today, 0.5 after one half-life."""
    if half_life_days <= 0:
        return 1.0
    return math.pow(0.5, max(0.0, age_days) / half_life_days)


def mmr(candidates: list[Hashable], relevance: dict[Hashable, float], similarity, k: int, lam: float = 0.7) -> list[Hashable]:
    """Maximal marginal relevance: trade relevance against similarity to what is already picked."""
    picked: list[Hashable] = []
    pool = list(candidates)
    while pool and len(picked) < k:
        best = max(pool, key=lambda c: lam * relevance[c] - (1 - lam) * max((similarity(c, p) for p in picked), default=0.0))
        picked.append(best)
        pool.remove(best)
    return picked
