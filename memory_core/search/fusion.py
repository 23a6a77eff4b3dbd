"""Pure functions for combining ranked lists: the hybrid search's fusion of keyword and vector scores."""

from __future__ import annotations

import math
from typing import Hashable, Sequence

# Hybrid fusion: min-max normalised keyword and cosine scores, weighted. Chosen by measurement on LoCoMo
# (bench/search_locomo.py): it beat reciprocal-rank fusion at every weight tried, because RRF lets weak
# vector neighbours displace strong keyword matches. Equal weights since neighbouring turns lend to each
# other (search.neighbours): with them, vector weights 1.0 and 1.5 gave 0.75 on both dev conversations,
# 0.5 and 0.7 gave 0.735 (without them the plateau was 0.3-0.7, at 0.66).
VECTOR_WEIGHT = 1.0


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


def fuse(keyword: Sequence[tuple[Hashable, float]], vector: Sequence[tuple[Hashable, float]], *, mode: str = "hybrid",
         fusion: str = "weighted", keyword_weight: float = 1.0,
         vector_weight: float = VECTOR_WEIGHT) -> dict[Hashable, float]:
    """One score per item from the keyword and vector lists (each (item, score), best first): either list
    alone for `mode` keyword or vector; for hybrid, `weighted` (the default, see VECTOR_WEIGHT) or `rrf`."""
    if mode == "keyword":
        return dict(keyword)
    if mode == "vector":
        return dict(vector)
    if fusion == "rrf":
        return rrf([[o for o, _ in keyword], [o for o, _ in vector]], [keyword_weight, vector_weight])
    return weighted([dict(keyword), dict(vector)], [keyword_weight, vector_weight])


def best(scores: dict[Hashable, float], n: int) -> dict[Hashable, float]:
    """The `n` best-scoring items, best first."""
    return dict(sorted(scores.items(), key=lambda kv: kv[1], reverse=True)[:n])
