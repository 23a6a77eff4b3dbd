"""What an injection reads of a scope that no query changes (its summaries, its count of facts, its most confident
facts), kept while the scope's version holds (`search.answers.Answers.read`): a new question on an unchanged scope
reads only what the question picks. Each value is copied out: a caller may change what it is given."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:
    from memory_core.scope import Scope
    from memory_core.search.answers import Answers
    from memory_core.store.fact_store import FactStore


def injection_data(store: "FactStore", answers: "Answers", scope: "Scope", budget: int,
                   priority: Sequence[str] | None) -> dict[str, Any]:
    """The summaries, and the facts that can reach a text of `budget` tokens: a fact line is at least 9 tokens, so
    no more than budget // 9 facts fit, and those are the most confident (plus the query's relevant ones in
    `priority`, read each time: they differ with the question)."""
    limit = budget // 9 + 2
    summaries = answers.read(scope, "summaries", lambda: store.summaries(scope), lambda d: len(str(d)) * 2)
    data: dict[str, Any] = {group: {name: dict(v) for name, v in sections.items()}
                            for group, sections in summaries.items()}
    if priority:
        data["facts"] = store.injected(scope, limit, priority)
    else:
        leading = answers.read(scope, ("injected", limit), lambda: store.injected(scope, limit),
                               lambda facts: sum(2 * len(f["content"]) + 300 for f in facts))
        data["facts"] = [dict(f) for f in leading]
    return data


def fact_count(store: "FactStore", answers: "Answers", scope: "Scope") -> int:
    """The scope's valid facts."""
    return answers.read(scope, "count", lambda: store.count(scope), lambda _n: 0)
