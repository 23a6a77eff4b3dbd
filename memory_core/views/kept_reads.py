"""What an injection reads of a scope that no question changes (its summaries, its count of facts, its most confident
facts), kept while the scope's version holds (`search.answers.Answers`): a new question on an unchanged scope reads
only what it picks. Each value is copied out: a caller may change what it is given."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple, Sequence

if TYPE_CHECKING:
    from memory_core.scope import Scope
    from memory_core.search.answers import Answers
    from memory_core.store.fact_store import FactStore

Ranked = tuple[tuple, dict[str, Any]]  # a fact's place in the scope's order (store.leading_facts.rank), the fact


class Leading(NamedTuple):
    """The first facts of the scope's order (confidence, then oldest first), every one of them up to the last;
    `whole`: all of the scope's facts."""
    facts: tuple[Ranked, ...]
    whole: bool


def injection_data(store: "FactStore", answers: "Answers", scope: "Scope", budget: int,
                   priority: Sequence[str] | None) -> dict[str, Any]:
    """The summaries, and the facts that can reach a text of `budget` tokens: a fact line is at least 9 tokens, so
    no more than budget // 9 facts fit, and those are the most confident, plus the query's relevant ones in
    `priority` (`FactStore.injected`'s facts, in its order)."""
    version = answers.version(scope)  # before what is kept under it
    summaries = answers.read(scope, "summaries", lambda: store.summaries(scope), lambda d: len(str(d)) * 2)
    data: dict[str, Any] = {group: {name: dict(v) for name, v in sections.items()}
                            for group, sections in summaries.items()}
    data["facts"] = [dict(fact) for _key, fact in _facts(store, answers, scope, version, budget // 9 + 2, priority or ())]
    return data


def _facts(store: "FactStore", answers: "Answers", scope: "Scope", version: int | None, limit: int,
           priority: Sequence[str]) -> list[Ranked]:
    """The scope's `limit` first facts not in `priority` and those of `priority` that are valid facts of the scope, in
    the scope's order. The leading facts read are kept (their longest run read at this version), and each fact of
    `priority` read by id, so that a new question reads at most the facts it names that were never read before;
    a read of the database is never more than `FactStore.injected`'s (`limit` facts and those named)."""
    wanted = list(dict.fromkeys(str(i) for i in priority))
    named = set(wanted)
    leading: Leading | None = answers.kept(scope, "leading", version)
    others = [f for f in leading.facts if f[1]["id"] not in named][:limit] if leading else []
    if leading is None or (len(others) < limit and not leading.whole):
        read = store.injected_ranked(scope, limit, wanted)
        found = [f for f in read if f[1]["id"] in named]
        others = [f for f in read if f[1]["id"] not in named]
        whole = len(others) < limit
        last = others[-1][0] if others else None
        run = tuple(f for f in read if whole or f[0] <= last)  # every fact up to the last of the others
        if leading is None or len(run) > len(leading.facts) or whole:
            answers.keep(scope, "leading", Leading(run, whole), sum(map(_bytes, run)), version)
        for fact in found:
            answers.keep(scope, ("fact", fact[1]["id"]), fact, _bytes(fact), version)
        return read
    in_run = {f[1]["id"]: f for f in leading.facts if f[1]["id"] in named}
    rest = [i for i in wanted if i not in in_run] if not leading.whole else []  # the whole scope: none is left
    found = answers.rows(scope, "fact", rest, lambda ids: {f[1]["id"]: f for f in store.injected_ranked(scope, 0, ids)},
                         _bytes) if rest else {}
    return sorted([*others, *in_run.values(), *found.values()], key=lambda f: f[0])


def _bytes(fact: Ranked) -> int:
    """About what a kept fact takes in memory."""
    return 300 + 2 * len(fact[1]["content"])


def fact_count(store: "FactStore", answers: "Answers", scope: "Scope") -> int:
    """The scope's valid facts."""
    return answers.read(scope, "count", lambda: store.count(scope), lambda _n: 0)
