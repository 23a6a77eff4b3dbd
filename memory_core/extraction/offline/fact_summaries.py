"""The offline user-context summaries (`workContext`, `personalContext`, `topOfMind`), written as sentences from facts.

Without an LLM nobody writes prose, so a summary is the current facts of its kind, each a sentence ending with a
full stop: "User works at Globex. User is a backend engineer." The sentences of the summary already stored are
kept (a summary imported or written by hand is not thrown away) unless a new fact supersedes what they say."""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

from memory_core.extraction.offline.statements import describe, supersedes

MAX_SENTENCES = 6
_END = re.compile(r"[.!?…][\"')\]]*$")
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")
_WORK = re.compile(r"\b(?:works?|working|worked|job|jobs|team|company|employer|manager|boss|colleagues?|career|role"
                   r"|office|clients?|startup|business|founder|engineer|developer|designer|nurse|teacher|doctor|student"
                   r"|studies|studying|scientist|analyst|lawyer|consultant|researcher|architect|accountant|freelancer"
                   r"|cto|ceo|intern|shift|shifts|promoted|hired|salary|earns)\b", re.I)
_PERSONAL = re.compile(r"^User(?:'s)? (?:(?:\w+ )?name|lives|is based|moved|is from|grew up|is \d|was born|age|wife"
                       r"|husband|partner|girlfriend|boyfriend|son|daughter|kids|children|has (?:a|an|two|three|\d)"
                       r"|dog|cat|is (?:married|single|engaged|divorced|vegan|vegetarian|allergic|pregnant)"
                       r"|speaks|native|mother tongue|hometown|birthday)", re.I)


def as_sentence(text: str) -> str:
    """One line as a sentence: trimmed, one space between words, a capital first and a full stop last."""
    text = " ".join(text.split()).strip(" ;,-")
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if _END.search(text) else f"{text}."


def join_sentences(parts: Iterable[str]) -> str:
    """Sentences joined by a space, each ending with punctuation, with repeats left out."""
    seen: set[str] = set()
    out: list[str] = []
    for part in parts:
        sentence = as_sentence(part)
        key = sentence.casefold().rstrip(".!?…")
        if sentence and key not in seen:
            seen.add(key)
            out.append(sentence)
    return " ".join(out)


def split_sentences(text: str) -> list[str]:
    """A summary's sentences (a line break ends one too)."""
    return [s.strip() for line in text.splitlines() for s in _SENTENCE_END.split(line) if s.strip()]


def section_of(content: str, category: str) -> str | None:
    """Which user-context summary a fact belongs to, if any."""
    if category == "goal":
        return "topOfMind"
    if category in ("context", "knowledge") and _WORK.search(content):
        return "workContext"
    if category == "context" and _PERSONAL.search(content):
        return "personalContext"
    return None


def fact_summaries(facts: Iterable[tuple[str, str]], current_memory: Mapping[str, Any],
                   replaced: Iterable[str] = ()) -> dict[str, str]:
    """The summaries that `facts` ((content, category) pairs, oldest first) change, as sentences: the stored
    summary's sentences that no new fact (nor a `replaced` fact's removal) contradicts, then the new facts; the
    newest `MAX_SENTENCES` of them."""
    new: dict[str, list[str]] = {}
    for content, category in facts:
        section = section_of(content, category)
        if section:
            new.setdefault(section, []).append(content)
    statements = [describe(content, category) for content, category in facts]
    gone = {c.casefold().rstrip(".") for c in replaced}
    user = current_memory.get("user") if isinstance(current_memory.get("user"), Mapping) else {}
    out: dict[str, str] = {}
    for section, contents in new.items():
        stored = user.get(section) if isinstance(user.get(section), Mapping) else {}
        old = split_sentences(str(stored.get("summary") or ""))
        kept = [s for s in old if s.casefold().rstrip(".") not in gone
                and not any(supersedes(st, describe(s.rstrip("."))) for st in statements)]
        out[section] = join_sentences((kept + contents)[-MAX_SENTENCES:])
    return out
