"""What the dashboard says in words instead of enum names and ids: dream outcomes, history actions, who did it,
why a MEMORY.md version was written."""

from __future__ import annotations

import re

_FACT_ID = re.compile(r"fact_[0-9a-f]{8}")

DREAM_WORDS = {
    "updated": "MEMORY.md was rewritten from the daily logs.",
    "proposed": "A new MEMORY.md waits for your review (dream review is on).",
    "skipped_unchanged": "Nothing to do: the daily logs have not changed since the last dream.",
    "skipped_empty": "Nothing to do: no daily log in the period says something lasting.",
    "rejected": "The dream's rewrite was not used.",
}
ACTIONS = {"added": "added", "updated": "changed in place", "superseded": "replaced by a newer statement",
           "invalidated": "marked as no longer true", "merged": "merged into a duplicate",
           "deleted": "deleted", "erased": "erased", "reinforced": "confirmed again", "restored": "restored",
           "imported": "imported", "held": "held for review", "released": "released from review"}


def dream_words(status: str | None, reason: str | None = None) -> str:
    """A dream's outcome in words, with its reason where the status alone does not say it (plain text)."""
    words = DREAM_WORDS.get(status or "", (status or "").replace("_", " ").capitalize() + ".")
    if reason and status not in ("skipped_unchanged", "proposed"):
        words += f" Why: {reason}."
    return words


def action_words(action: str) -> str:
    return ACTIONS.get(action, action.replace("_", " "))


def actor_words(actor: str | None) -> str:
    if not actor:
        return "the library"
    kind, _, who = actor.partition(":")
    if kind == "dashboard":
        return f"{who or 'someone'} on the dashboard"
    if kind == "mcp":
        return f"the agent {who}" if who else "an agent (MCP)"
    return actor


def reason_words(reason: str, texts: dict[str, str]) -> str:
    """A MEMORY.md version's reason with each fact id told as the fact's words (its first 60 characters), or as
    "a fact" when it is not in `texts`."""
    reason = reason.replace("one truth: no longer states", "a fact changed, so it no longer states")
    return _FACT_ID.sub(lambda m: f"“{texts[m.group(0)][:60]}”" if m.group(0) in texts else "a fact", reason)
