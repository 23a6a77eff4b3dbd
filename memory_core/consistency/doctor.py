"""The consistency check (`memory-core doctor`, and a panel on the dashboard): where the copies of what memory
knows disagree. Two kinds of finding: a sentence of a summary or MEMORY.md that states a fact no longer true (and
no valid fact says again), and two valid facts that give one single-valued slot (where the user lives, works,
their name, ...) different values. A sentence memory_core wrote from facts is judged by its stored provenance (found
by "provenance"); other text by its words ("words")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Sequence

from memory_core.extraction.offline.statements import describe, single_valued
from memory_core.text.truth import Provenance, Retired, contradictions

if TYPE_CHECKING:
    from memory_core.facts.api import Fact


@dataclass(frozen=True)
class Finding:
    kind: str  # "stale" (a copy states an invalid fact) or "conflict" (two valid facts disagree)
    place: str  # summary:<section>, MEMORY.md, or facts
    text: str  # the sentence, or the two facts
    fact_ids: tuple[str, ...]
    advice: str
    found_by: str = "words"  # "provenance" (the sentence was written from the fact), "words", or "facts"

    def to_dict(self) -> dict:
        return {"kind": self.kind, "place": self.place, "text": self.text, "factIds": list(self.fact_ids),
                "advice": self.advice, "foundBy": self.found_by}


Places = Mapping[str, Mapping[str, Provenance]]  # place ("summary:<section>", "core") -> sentence key -> provenance


def stale_copies(summaries: dict[str, str], core: str | None, facts: Sequence["Fact"],
                 provenance: Places | None = None) -> list[Finding]:
    """Sentences of the summaries and MEMORY.md that state an invalid fact no valid fact states again: by their
    provenance where memory_core wrote them from facts, else (or when none of those facts is valid any more) by
    their words."""
    invalid = [Retired(f.id, f.content, next((g.content for g in facts if g.id == f.superseded_by), None))
               for f in facts if not f.valid and f.content != "[erased]"]
    valid = [f.content for f in facts if f.valid]
    places = [(f"summary:{name}", text) for name, text in summaries.items() if text]
    if core:
        places.append(("MEMORY.md", core))
    sources = {("MEMORY.md" if place == "core" else place): found for place, found in (provenance or {}).items()}
    return [Finding("stale", place, sentence, (fact_id,),
                    f"{'written from' if how == 'provenance' else 'states'} {fact_id}, which is no longer true: "
                    f"edit the {place.split(':')[0]} or run a dream", how)
            for place, sentence, fact_id, how in contradictions(places, invalid, valid, sources,
                                                                 {f.id for f in facts if f.valid})]


def conflicting_facts(facts: Sequence["Fact"]) -> list[Finding]:
    """Pairs of valid facts that fill one single-valued slot with different values."""
    by_slot: dict[str, list[tuple["Fact", str | None, bool]]] = {}
    for fact in facts:
        if not fact.valid:
            continue
        for slot in describe(fact.content).slots:
            if single_valued(slot.key):
                by_slot.setdefault(slot.key, []).append((fact, slot.value, slot.negated))
    found: list[Finding] = []
    for key, fills in sorted(by_slot.items()):
        positive = [(f, v) for f, v, negated in fills if not negated]
        values = {v for _, v in positive}
        if len(values) < 2:
            continue
        first = {}
        for fact, value in positive:
            first.setdefault(value, fact)
        pair = list(first.values())[:2]
        found.append(Finding("conflict", "facts", f"{pair[0].content} / {pair[1].content}",
                             (pair[0].id, pair[1].id), f"both say {_what(key)}: supersede the one that is no longer "
                             "true", "facts"))
    return found


def _what(key: str) -> str:
    """A slot's key as the advice says it: "count:user has # kid" -> 'how many in "user has # kid"'."""
    kind, _, topic = key.partition(":")
    if kind == "count":
        return f'how many in "{topic}"'
    if kind == "named":
        return f"what the user's {topic} is called"
    if kind == "favourite":
        return f"the user's favourite {topic}".rstrip()
    return f"the user's {topic or kind}"


def check(summaries: dict[str, str], core: str | None, facts: Sequence["Fact"],
          provenance: Places | None = None) -> list[Finding]:
    """Every finding of one scope (facts with `include_invalid=True`; `provenance`: the scope's, by place)."""
    return stale_copies(summaries, core, facts, provenance) + conflicting_facts(facts)
