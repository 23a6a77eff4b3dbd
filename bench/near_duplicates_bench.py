"""Issue 14: near-duplicate facts. Precision and recall on the hand-labelled pairs, per threshold and per kind,
for the offline WordLlama embedder and the hashing one; find_near_duplicates on 500 and 5,000 facts."""

from __future__ import annotations

import itertools
import json
import random
import time
from pathlib import Path

import numpy as np

from memory_core.facts import duplicates
from memory_core.facts.duplicates import DEFAULT_THRESHOLD, find_near_duplicates, pair_score
from memory_core.search.embedders import HashingEmbedder, WordLlamaEmbedder
from bench.common import row, timed

PAIRS = Path(__file__).resolve().parents[1] / "tests" / "data" / "near_duplicates.json"
THRESHOLDS = (0.8, 0.85, DEFAULT_THRESHOLD, 0.95)
DUPLICATE_KINDS = ("exact", "reworded", "paraphrase")
DISTINCT_KINDS = ("negation", "different_value", "same_topic", "unrelated")

_HOBBIES = "hiking cooking running swimming climbing cycling painting reading gardening fishing skiing surfing".split()
_CITIES = ("Lisbon Porto Berlin Munich Paris Lyon Madrid Seville Rome Milan Vienna Prague Warsaw Krakow Oslo Bergen "
           "Dublin Cork Toronto Austin Athens Lima Quito Cairo Nairobi Seoul Osaka Kyoto Hanoi Perth").split()
_COMPANIES = "Acme Northwind Contoso Globex Initech Umbrella Hooli Vandelay Stark Wayne".split()
_JOBS = "nurse pharmacist teacher designer accountant lawyer architect chef pilot librarian".split()
_LANGUAGES = "Spanish Japanese Korean German French Italian Polish Dutch Greek Turkish".split()
_RELATIVES = "sister brother mother father son daughter friend neighbour cousin colleague".split()
_NAMES = "Ana Priya Leo Mia Dana Erik Sam Alex Kenji Maya Omar Lena Ines Tomas Yuki".split()
_DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
_MONTHS = "January February March April June July August September October November December".split()
_DRINKS = "tea coffee juice water cocoa lemonade kombucha milk".split()
# (meaning, its slots' values, wordings of that meaning): two texts are duplicates when their meanings are equal.
_TEMPLATES = [
    ("likes", [_HOBBIES], ["User likes {0}", "User enjoys {0}", "user loves {0}."]),
    ("dislikes", [_HOBBIES], ["User does not like {0}", "User doesn't enjoy {0}"]),
    ("habit", [_HOBBIES, _DAYS], ["User goes {0} every {1}", "Every {1}, User goes {0}"]),
    ("lives", [_CITIES], ["User lives in {0}", "User is based in {0}", "User resides in {0}"]),
    ("relative lives", [_RELATIVES, _CITIES], ["User's {0} lives in {1}", "User's {0} is based in {1}"]),
    ("works", [_COMPANIES, _JOBS], ["User works at {0} as a {1}", "User is a {1} at {0}"]),
    ("learning", [_LANGUAGES], ["User is learning {0}", "User is studying {0}"]),
    ("goal", [_LANGUAGES], ["User wants to learn {0}", "User hopes to learn {0}"]),
    ("wakes", [[str(h) for h in range(4, 11)]], ["User wakes up at {0}am", "User gets up at {0}am"]),
    ("relative name", [_RELATIVES, _NAMES], ["User's {0} is called {1}", "User's {0} is named {1}"]),
    ("prefers", [_DRINKS, _DRINKS], ["User prefers {0} over {1}", "User prefers {0} to {1}"]),
    ("meeting", [_NAMES, _DAYS, ["1", "2", "3", "4", "5"]],
     ["User has a meeting with {0} on {1} at {2}pm", "On {1} at {2}pm User has a meeting with {0}"]),
    ("flying", [_CITIES, _DAYS], ["User is flying to {0} on {1}", "On {1} User is flying to {0}"]),
    ("relative job", [_RELATIVES, _JOBS], ["User's {0} is a {1}", "User's {0} works as a {1}"]),
    ("visit", [_CITIES, _MONTHS], ["User plans to visit {0} in {1}", "User is planning a trip to {0} in {1}"]),
    ("relative age", [_RELATIVES, [str(a) for a in range(2, 90)]],
     ["User's {0} is {1} years old", "User's {0} is {1}"]),
]


def synthetic_facts(n: int, seed: int = 7) -> tuple[list[str], list[tuple[str, ...]]]:
    """`n` distinct templated facts of one scope and what each means (equal meanings: duplicates), dense with
    hard negatives: the same sentence about another city, day, person or number."""
    every: dict[str, tuple[str, ...]] = {}
    for meaning, slots, wordings in _TEMPLATES:
        for values in itertools.product(*slots):
            if meaning == "prefers" and values[0] == values[1]:
                continue
            for wording in wordings:
                every.setdefault(wording.format(*values), (meaning, *values))
    if n > len(every):
        raise ValueError(f"at most {len(every)} synthetic facts; asked for {n}")
    texts = random.Random(seed).sample(sorted(every), n)
    return texts, [every[t] for t in texts]


def _counts(scores: list[float], labels: list[bool], threshold: float) -> tuple[int, int, int]:
    tp = sum(s >= threshold and y for s, y in zip(scores, labels))
    fp = sum(s >= threshold and not y for s, y in zip(scores, labels))
    return tp, fp, sum(labels) - tp


def _prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def quality() -> None:
    pairs = json.loads(PAIRS.read_text())
    labels = [p["duplicate"] for p in pairs]
    print(f"labelled pairs: {len(pairs)} ({sum(labels)} duplicates), pair_score per embedder")
    for embedder in (WordLlamaEmbedder(), HashingEmbedder()):
        va, vb = embedder.embed([p["a"] for p in pairs]), embedder.embed([p["b"] for p in pairs])
        scores = [pair_score(p["a"], p["b"], x, y) for p, x, y in zip(pairs, va, vb)]
        print(f" {embedder.model_name}")
        row("threshold", "precision", "recall", "F1", "tp", "fp", "fn")
        for threshold in THRESHOLDS:
            tp, fp, fn = _counts(scores, labels, threshold)
            precision, recall, f1 = _prf(tp, fp, fn)
            mark = " (default)" if threshold == DEFAULT_THRESHOLD else ""
            row(f"{threshold}{mark}", f"{precision:.3f}", f"{recall:.3f}", f"{f1:.3f}", tp, fp, fn)
        row(f"kind, at {DEFAULT_THRESHOLD}", "pairs", "at or above", "share", "median score")
        for kind in DUPLICATE_KINDS + DISTINCT_KINDS:
            chosen = [s for s, p in zip(scores, pairs) if p["kind"] == kind]
            above = sum(s >= DEFAULT_THRESHOLD for s in chosen)
            what = "found" if kind in DUPLICATE_KINDS else "false positives"
            row(f"{kind} ({what})", len(chosen), above, f"{above / len(chosen):.3f}", f"{np.median(chosen):.3f}")


def speed() -> None:
    print(f"find_near_duplicates at {DEFAULT_THRESHOLD}, WordLlama vectors, synthetic scope (median of 3, cold)")
    row("facts", "embed ms", "find ms", "pairs found", "precision", "recall", "brute force ms")
    embedder = WordLlamaEmbedder()
    for n in (500, 5_000):
        texts, meanings = synthetic_facts(n)
        start = time.perf_counter()
        vectors = embedder.embed(texts)
        embed_s = time.perf_counter() - start

        def cold() -> list[tuple[int, int, float]]:
            duplicates._analyse.cache_clear()  # time the text analysis too, as a fresh process would
            return find_near_duplicates(texts, vectors)

        found = cold()
        find_s = timed(cold, repeat=3)
        truth = {(i, j) for i, j in itertools.combinations(range(n), 2) if meanings[i] == meanings[j]}
        tp = len({(i, j) for i, j, _ in found} & truth)
        precision, recall, _ = _prf(tp, len(found) - tp, len(truth) - tp)
        brute = "-"
        if n <= 500:
            start = time.perf_counter()
            for i, j in itertools.combinations(range(n), 2):
                pair_score(texts[i], texts[j], vectors[i], vectors[j])
            brute = f"{(time.perf_counter() - start) * 1000:.0f}"
        row(f"{n:,}", f"{embed_s * 1000:.0f}", f"{find_s * 1000:.0f}", len(found), f"{precision:.3f}",
            f"{recall:.3f}", brute)


def main() -> None:
    quality()
    speed()


if __name__ == "__main__":
    main()
