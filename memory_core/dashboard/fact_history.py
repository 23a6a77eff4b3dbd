"""The Facts page's history in words, computed here so that the page only draws: what an audit entry changed,
field by field; a fact's status as the grid shows it; and each superseded fact beside the one that replaced it."""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping

FIELDS = ("content", "category", "confidence")


def change_words(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> str:
    """What an audit entry changed, field by field ("confidence: 0.8 → 0.6"); "" for an entry without both."""
    if not old or not new:
        return ""
    return "; ".join(f"{k}: {json.dumps(old.get(k), ensure_ascii=False)} → {json.dumps(new.get(k), ensure_ascii=False)}"
                     for k in FIELDS if old.get(k) != new.get(k))


def status_text(fact: Any, as_of: bool = False) -> str:
    """The status as plain text, for the grid (data_editor has no per-row styling): as of a day, every fact
    listed was believed then."""
    if fact.valid or as_of:
        return "valid"
    if fact.superseded_by:
        return "superseded"
    return "forgotten" + (f" ({fact.invalid_reason})" if fact.invalid_reason else "")


def replacements(facts: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each superseded fact of `facts` ({id: fact}) beside the one that replaced it, newest first."""
    chains = []
    for fact in facts.values():
        newer = facts.get(fact.superseded_by or "")
        if newer is not None:
            chains.append({"old": fact.content, "→ new": newer.content, "when": fact.invalid_at,
                           "why": fact.invalid_reason or "", "new is": "valid" if newer.valid else "superseded too"})
    return sorted(chains, key=lambda c: c["when"], reverse=True)


def replaced_by(facts: Iterable[Any], everything: Mapping[str, Any]) -> dict[str, str]:
    """{fact id: the content of the fact that replaced it} for those of `facts` that were superseded."""
    return {f.id: everything[f.superseded_by].content for f in facts if f.superseded_by in everything}
