"""Corrections said after a clause of their own (tests/data/corrections_clauses.json, 16 rows, 10 corrections):
"Priya left, my new manager is Tom.", "Long story short, I got a Pixel to replace my iPhone.", "Doctor's orders: I've
replaced coffee with green tea."; and look-alikes (someone else's new manager or coach, a one-time "instead of", a
new desk near a person). Scored as in test_corrections_table.py.

Written (2026-11-28) before the rules changed for them; half A tuned on (extraction/offline/changes.py's
`change_after_lead`: the clause before a change is read as a sentence of its own), half B measured once after:
  before:                 A recall 0.2 (1/5), precision 1.000;  B recall 0.2 (1/5), precision 1.000
  tuned on A:             A recall 1.000 (5/5), precision 1.000
  B, once, after tuning:  B recall 0.8 (4/5), precision 1.000  (missed: "Since January my new doctor is Dr. Faria.",
                          no comma between the two)
  the other correction tables and the LoCoMo dev figures are unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.extraction.test_corrections_table import score

TABLE = Path(__file__).resolve().parents[1] / "data" / "corrections_clauses.json"
WANTED = {"A": 0.95, "B": 0.75}  # recall at least; precision at least 0.95 on both


def load(half: str) -> list[dict]:
    return [r for r in json.loads(TABLE.read_text(encoding="utf-8"))["rows"] if r["half"] == half]


@pytest.mark.parametrize("half", ["B", "A"])  # the half never tuned on first
def test_a_correction_after_a_clause_of_its_own_is_recognised(half):
    result = score(load(half))
    assert result["recall"] >= WANTED[half], result["misses"]
    assert result["precision"] >= 0.95, result["wrong"]


def test_the_lead_clause_is_still_read():
    from memory_core.extraction.offline.heuristics import HeuristicExtractor

    reply = HeuristicExtractor().extract([{"role": "user", "content": "I moved to Lisbon, my new manager is Tom."}],
                                         {"facts": [{"id": "fact_00000001", "content": "User's manager is Priya",
                                                     "category": "context"}]})
    found = {f.content: tuple(f.supersedes) for f in reply.facts}
    assert found == {"User moved to Lisbon": (), "User's manager is Tom": ("fact_00000001",)}
