"""Memory formatted for prompt injection, within an exact token budget.

The text is, in order and leaving out empty parts:

    User Context:
    - Work: ...
    - Personal: ...
    - Top of mind: ...

    History:
    - Recent: ...
    - Earlier: ...
    - Background: ...

    Facts:
    - [{category} | {confidence:.2f}] {content}

Over budget, facts go from the lowest confidence up; if the text is still over, it is cut at
character level and "\\n..." appended, the marker included in the budget.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from .tokens import count_tokens, encoding_name_for, get_encoding

TRUNCATION_MARKER = "\n..."
USER_FIELDS = (("workContext", "Work"), ("personalContext", "Personal"), ("topOfMind", "Top of mind"))
HISTORY_FIELDS = (("recentMonths", "Recent"), ("earlierContext", "Earlier"), ("longTermBackground", "Background"))
_WS = re.compile(r"\s+")


@dataclass
class InjectionReport:
    """What `format_memory_for_injection` did: for the Context Preview page."""

    text: str
    tokens: int
    max_tokens: int
    encoding: str
    section_tokens: dict[str, int] = field(default_factory=dict)
    kept_fact_ids: list[str] = field(default_factory=list)
    dropped_fact_ids: list[str] = field(default_factory=list)
    truncated: bool = False


def one_line(text: object) -> str:
    """Fold all white space (newlines included) to single spaces, so content can never forge a section."""
    return _WS.sub(" ", str(text)).strip()


def _summary(part: Any) -> str:
    if isinstance(part, Mapping):
        part = part.get("summary", "")
    return one_line(part) if isinstance(part, str) else ""


def _section(title: str, group: Any, fields: tuple[tuple[str, str], ...]) -> str:
    if not isinstance(group, Mapping):
        return ""
    lines = [f"- {label}: {text}" for key, label in fields if (text := _summary(group.get(key)))]
    return f"{title}:\n" + "\n".join(lines) if lines else ""


def _fact_confidence(fact: Mapping[str, Any]) -> float:
    try:
        return float(fact.get("confidence", 0.0))
    except (TypeError, ValueError):
        return 0.0


def fact_line(fact: Mapping[str, Any]) -> str:
    return f"- [{one_line(fact.get('category', ''))} | {_fact_confidence(fact):.2f}] {one_line(fact.get('content', ''))}"


def _sorted_facts(facts: Any) -> list[Mapping[str, Any]]:
    if not isinstance(facts, list):
        return []
    usable = [f for f in facts if isinstance(f, Mapping) and one_line(f.get("content", ""))]
    # Stable sort: among equal confidences the given order (oldest first from the store) stands.
    return sorted(usable, key=_fact_confidence, reverse=True)


def build_injection(memory_data: Mapping[str, Any] | None, max_tokens: int = 2000, *, model: str | None = None) -> InjectionReport:
    """Format memory and report what was kept, what was dropped and the tokens of each section."""
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
        raise ValueError(f"max_tokens must be a non-negative integer; got {max_tokens!r}")
    memory_data = memory_data if isinstance(memory_data, Mapping) else {}
    enc = get_encoding(model)

    def n(text: str) -> int:
        return len(enc.encode(text, disallowed_special=())) if text else 0

    user_part = _section("User Context", memory_data.get("user"), USER_FIELDS)
    history_part = _section("History", memory_data.get("history"), HISTORY_FIELDS)
    head_parts = [p for p in (user_part, history_part) if p]
    head = "\n\n".join(head_parts)
    facts = _sorted_facts(memory_data.get("facts"))

    def render(k: int) -> str:
        if k == 0:
            return head
        body = "Facts:\n" + "\n".join(fact_line(f) for f in facts[:k])
        return f"{head}\n\n{body}" if head else body

    # Count each fact line once, in confidence order, only as far as the budget reaches; the sum of
    # the parts is close to (but not exactly) the count of the joined text, so the joined text is
    # then counted exactly and facts dropped until it fits.
    base = n(head) + (n("\n\nFacts:") if head else n("Facts:"))
    used, k = base, 0
    for fact in facts:
        cost = n("\n" + fact_line(fact))
        if used + cost > max_tokens + 8:
            break
        used += cost
        k += 1
    text = render(k)
    tokens = n(text)
    while k > 0 and tokens > max_tokens:
        k -= 1
        text = render(k)
        tokens = n(text)

    truncated = False
    if tokens > max_tokens:
        truncated = True
        text, tokens = _truncate(text, max_tokens, enc)

    facts_text = "Facts:\n" + "\n".join(fact_line(f) for f in facts[:k]) if k else ""
    report = InjectionReport(
        text=text, tokens=tokens, max_tokens=max_tokens, encoding=encoding_name_for(model), truncated=truncated,
        kept_fact_ids=[str(f.get("id", "")) for f in facts[:k]],
        dropped_fact_ids=[str(f.get("id", "")) for f in facts[k:]],
    )
    report.section_tokens = {"User Context": n(user_part), "History": n(history_part), "Facts": n(facts_text)}
    return report


def _truncate(text: str, max_tokens: int, enc) -> tuple[str, int]:
    marker_tokens = len(enc.encode(TRUNCATION_MARKER))
    if max_tokens < marker_tokens:
        return "", 0
    ids = enc.encode(text, disallowed_special=())
    keep = max_tokens - marker_tokens
    prefix = enc.decode(ids[:keep]).rstrip("\ufffd")
    out = prefix + TRUNCATION_MARKER
    tokens = len(enc.encode(out, disallowed_special=()))
    while tokens > max_tokens and prefix:
        prefix = prefix[:-max(1, len(prefix) // 50)]
        out = prefix + TRUNCATION_MARKER
        tokens = len(enc.encode(out, disallowed_special=()))
    return out, tokens


def format_memory_for_injection(memory_data: Mapping[str, Any] | None, max_tokens: int = 2000, *, model: str | None = None) -> str:
    """The memory text for a system prompt, at most `max_tokens` tokens in `model`'s encoding."""
    return build_injection(memory_data, max_tokens, model=model).text


__all__ = ["format_memory_for_injection", "build_injection", "InjectionReport", "count_tokens", "fact_line"]
