"""Corrections said in conversation, offline (tests/data/corrections_table.json): "Actually my favourite team is
Sporting now", "Correction: my birthday is March 13, not March 3", "I switched from Vim to Emacs" supersede the fact
they correct; "I also like blues", "my sister moved to Lisbon", questions, hypotheticals and a negated past replace
nothing.

Each row holds the facts already in memory and what the person says. A correction is recognised when the extractor
returns a fact that supersedes the stored one it replaces and holds the new value; precision is the share of
supersessions that are right. The table was split in halves before any tuning: half A was tuned on, half B never.
Today's extractor first (before this work): A recall 0.000 (0/31) precision - , B recall 0.032 (1/31) precision
1.000. After tuning on A: A recall TBD, B (first sight) recall TBD."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memory_core.extraction.offline.heuristics import HeuristicExtractor

TABLE = Path(__file__).resolve().parents[1] / "data" / "corrections_table.json"


def load(half: str | None = None) -> list[dict]:
    rows = json.loads(TABLE.read_text(encoding="utf-8"))["rows"]
    return [r for r in rows if half in (None, r["half"])]


def verdict(row: dict) -> tuple[bool, bool]:
    """(whether the extractor superseded anything, whether that was exactly the right correction)."""
    stored = [{"id": f"fact_{n:08d}", "content": c, "category": "context"} for n, c in enumerate(row["memory"])]
    reply = HeuristicExtractor().extract([{"role": "user", "content": row["said"]}], {"facts": stored})
    ids = {f["content"]: f["id"] for f in stored}
    superseding = [c for c in reply.facts if any(t in ids.values() for t in c.supersedes)]
    if not superseding:
        return False, False
    if not row["correction"]:
        return True, False
    target = ids[row["replaces"]]
    wanted = [w.casefold() for w in row["new"].split("|")]
    right = any(set(c.supersedes) & set(ids.values()) == {target}
                and any(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", c.content.casefold()) for w in wanted)
                for c in superseding)
    return True, right


def score(rows: list[dict]) -> dict:
    said = [(r, *verdict(r)) for r in rows]
    predicted = sum(p for _r, p, _ok in said)
    right = sum(ok for _r, _p, ok in said)
    corrections = sum(r["correction"] for r in rows)
    return {"recall": right / corrections, "precision": right / predicted if predicted else None,
            "misses": [r["said"] for r, _p, ok in said if r["correction"] and not ok],
            "wrong": [r["said"] for r, p, ok in said if p and not ok]}
