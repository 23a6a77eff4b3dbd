"""Corrections said in conversation, offline (tests/data/corrections_table.json): "Actually my favourite team is
Sporting now", "Correction: my birthday is March 13, not March 3", "I switched from Vim to Emacs" supersede the fact
they correct; "I also like blues", "my sister moved to Lisbon", questions, hypotheticals and a negated past replace
nothing.

Each row holds the facts already in memory and what the person says. A correction is recognised when the extractor
returns a fact that supersedes the stored one it replaces and holds the new value; precision is the share of
supersessions that are right. The table (100 rows, 62 corrections) was split in halves before any tuning; half A
was tuned on, half B never. The extractor before: A recall 0.323 (10/31), precision 1.000; B recall 0.323 (10/31),
precision 1.000. After tuning on A: A recall 0.968 (30/31), precision 1.000; B, at first sight, recall 0.871
(27/31), precision 1.000 (and the same after the last changes). Whole table: recall 0.919, precision 1.000. The
misses left: a correction in Spanish and one in French (the offline extractor is English-first), "I'm not using
PyCharm anymore", "My fiancé is Pablo, I typed it wrong", "I've been vegan since January"."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memory_core.extraction.offline.heuristics import HeuristicExtractor

from tests.conftest import make_memory

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


def test_corrections_said_in_conversation_are_recognised_and_nothing_else_is():
    result = score(load())
    assert result["recall"] >= 0.85, result["misses"]
    assert result["precision"] >= 0.95, result["wrong"]


@pytest.mark.parametrize("half", ["A", "B"])
def test_each_half_holds_on_its_own(half):
    result = score(load(half))
    assert result["recall"] >= 0.85 and result["precision"] >= 0.95, (result["misses"], result["wrong"])


def test_the_table_is_varied_and_split_before_tuning():
    rows = load()
    assert len(rows) >= 80 and len(load("A")) == len(load("B"))
    assert len({r["said"] for r in rows}) == len(rows)
    for half in "AB":
        kinds = {r["kind"] for r in load(half)}
        assert {"name", "nickname", "pet", "number", "age", "date", "tool", "team", "diet", "relationship",
                "preference", "addition", "someone_else", "question", "hypothetical", "negated_past", "repeat",
                "other_language"} <= kinds
        assert 0.5 <= sum(r["correction"] for r in load(half)) / len(load(half)) <= 0.7
    said = " ".join(r["said"] for r in rows).casefold()
    for phrasing in ("actually", "correction:", "i meant", "not java but", "switched from", "these days", "anymore",
                     "used to", "typo", "now", "oops", "also"):
        assert phrasing in said


@pytest.mark.parametrize("before, said, old, new", [
    ("My favourite team is Benfica.", "Actually my favourite team is Sporting now", "Benfica", "Sporting"),
    ("My birthday is March 3.", "Correction: my birthday is March 13, not March 3", "March 3\n", "March 13"),
    ("I use Vim.", "I switched from Vim to Emacs", "uses Vim", "Emacs"),
    ("I have 2 kids.", "I have three kids now", "2 kids", "three kids"),
])
def test_a_correction_said_offline_supersedes_so_injection_never_shows_both(tmp_path, before, said, old, new):
    with make_memory(tmp_path) as m:
        m.update([{"role": "user", "content": before}], thread_id="t1")
        result = m.update([{"role": "user", "content": said}], thread_id="t2")
        injected = m.format_for_injection() + "\n"
        assert result.superseded and new in injected and old not in injected
        assert len(m.facts.list()) == 1


def test_an_addition_keeps_what_was_known(tmp_path):
    with make_memory(tmp_path) as m:
        m.update([{"role": "user", "content": "I like jazz."}], thread_id="t1")
        result = m.update([{"role": "user", "content": "I also like blues. My sister moved to Lisbon."}],
                          thread_id="t2")
        injected = m.format_for_injection()
        assert not result.superseded and "jazz" in injected and "blues" in injected and "Lisbon" not in injected
