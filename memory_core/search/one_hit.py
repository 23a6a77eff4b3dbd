"""One hit per statement: where a fact and a MEMORY.md bullet (or a line of a daily log) say the same thing, the
fact stands for both. A document hit loses the lines a fact among the candidates says (the fact takes the hit's
place if it ranked lower); a hit left with nothing of its own is dropped."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Sequence

from memory_core.text.truth import full_stems, split_sentences, stems
from memory_core.search.index import SearchHit

_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+|^\s*(?:\*\*)?(?:user|assistant)(?:\*\*)?\s*:\s*", re.I)


def _statement(line: str) -> str:
    return _MARK.sub("", line).strip()


def _said_by(line: str, facts: Sequence[SearchHit]) -> SearchHit | None:
    """The fact hit that says everything `line` says, if any."""
    marks = full_stems(_statement(line))
    if not marks:
        return None
    return next((f for f in facts if marks <= stems(f.text)), None)


def _parts(hit: SearchHit) -> list[str]:
    """The hit's text as statements: MEMORY.md's one bullet (less its heading prefix), a log's sentences."""
    if hit.kind == "core" and "\n" not in hit.text and ": " in hit.text:
        return [hit.text.split(": ", 1)[1]]
    parts = []
    for line in hit.text.split("\n"):
        if not line.strip() or line.lstrip().startswith("#"):
            parts.append(line)
        else:
            parts.extend(split_sentences(_MARK.sub("", line)) or [line])
    return parts


def one_hit_per_statement(hits: Sequence[SearchHit], k: int) -> list[SearchHit]:
    """The first `k` of `hits` (best first) with each statement once (see the module's docstring)."""
    facts = [h for h in hits if h.kind == "fact"]
    out: list[SearchHit] = []
    placed: set[str] = set()
    for hit in hits:
        if hit.kind == "episode":  # a turn as it was said, dated: kept beside the fact drawn from it
            out.append(hit)
            continue
        if hit.kind == "fact":
            if hit.ref not in placed:
                placed.add(hit.ref)
                out.append(hit)
            continue
        statements = [p for p in _parts(hit) if p.strip() and not p.lstrip().startswith("#")]
        own: list[str] = []
        for part in statements:
            fact = _said_by(part, facts)
            if fact is None:
                own.append(part)
            elif fact.ref not in placed:  # the fact stands for it, as high as it ranked
                placed.add(fact.ref)
                out.append(replace(fact, score=max(fact.score, hit.score)))
        if len(own) == len(statements):
            out.append(hit)
        elif own:
            out.append(replace(hit, text=" ".join(own)))
    out.sort(key=lambda h: h.score, reverse=True)
    return out[:k]
