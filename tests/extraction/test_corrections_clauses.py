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

from memory_core.extraction.offline.heuristics import HeuristicExtractor

# The table itself is scored with the other fresh one, in test_corrections_fresh.py.


def test_the_lead_clause_is_still_read():
    reply = HeuristicExtractor().extract([{"role": "user", "content": "I moved to Lisbon, my new manager is Tom."}],
                                         {"facts": [{"id": "fact_00000001", "content": "User's manager is Priya",
                                                     "category": "context"}]})
    found = {f.content: tuple(f.supersedes) for f in reply.facts}
    assert found == {"User moved to Lisbon": (), "User's manager is Tom": ("fact_00000001",)}
