"""The SQL of provenance: which fact (or daily log) each summary sentence and MEMORY.md bullet memory_core wrote came
from, so that retiring a fact finds exactly the sentences written from it (memory_core.text.truth.judge).

A place is "summary:<section>" or "core" (MEMORY.md); a sentence is known by `truth.sentence_key`. Whenever a place's
text is written, the rows of sentences no longer in it go and the new ones' rows come, in the writer's transaction.
Text written by hand gets no rows: the distinctive-word matching stays its rule."""

from __future__ import annotations

from typing import Iterable

from sqlalchemy import delete, select

from memory_core.clock import Clock
from memory_core.scope import Scope
from memory_core.text.truth import Provenance, Sources
from memory_core.store.db import Database
from memory_core.store.models import ProvenanceRow

CORE = "core"


def summary_place(section: str) -> str:
    return f"summary:{section}"


def _rows(session, scope: Scope, place: str | None = None):
    query = select(ProvenanceRow).where(ProvenanceRow.user_id == scope.user_id,
                                        ProvenanceRow.agent_name == scope.agent_name)
    if place is not None:
        query = query.where(ProvenanceRow.place == place)
    return session.execute(query.order_by(ProvenanceRow.pk)).scalars().all()


def _group(rows) -> dict[str, dict[str, Provenance]]:
    out: dict[str, dict[str, Provenance]] = {}
    for row in rows:
        known = Provenance(frozenset([row.fact_id]) if row.fact_id else frozenset(),
                           frozenset([row.source]) if row.source else frozenset())
        place = out.setdefault(row.place, {})
        place[row.text_key] = place[row.text_key] | known if row.text_key in place else known
    return out


def read_in(session, scope: Scope, place: str) -> dict[str, Provenance]:
    """{sentence key: provenance} of one place, inside the caller's transaction."""
    return _group(_rows(session, scope, place)).get(place, {})


def record_in(session, scope: Scope, place: str, present: Iterable[str], sources: Sources | None,
              now) -> None:
    """After `place` was written (inside that write's transaction): forget the rows of sentences no longer in it
    (`present`: the keys of its sentences now) and add `sources` for sentences that are in it."""
    keys = set(present)
    have: set[tuple[str, str | None, str | None]] = set()
    for row in _rows(session, scope, place):
        if row.text_key not in keys:
            session.delete(row)
        else:
            have.add((row.text_key, row.fact_id, row.source))
    for key, known in (sources or {}).items():
        if key not in keys:
            continue
        links = [(f, None) for f in sorted(known.fact_ids)] + [(None, s) for s in sorted(known.logs)]
        for fact_id, source in links:
            if (key, fact_id, source) not in have:
                have.add((key, fact_id, source))
                session.add(ProvenanceRow(user_id=scope.user_id, agent_name=scope.agent_name, place=place,
                                          text_key=key, fact_id=fact_id, source=(source or "")[:64] or None,
                                          created_at=now))
    session.flush()


def forget_in(session, scope: Scope, *, fact_id: str | None = None, place: str | None = None) -> int:
    """Drop the scope's rows (only those naming `fact_id`, or of `place`, when given); return how many went."""
    query = delete(ProvenanceRow).where(ProvenanceRow.user_id == scope.user_id,
                                        ProvenanceRow.agent_name == scope.agent_name)
    if fact_id is not None:
        query = query.where(ProvenanceRow.fact_id == fact_id)
    if place is not None:
        query = query.where(ProvenanceRow.place == place)
    return session.execute(query).rowcount or 0


class ProvenanceStore:
    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock

    def of(self, scope: Scope) -> dict[str, dict[str, Provenance]]:
        """{place: {sentence key: provenance}} of the scope."""
        with self.db.read() as s:
            return _group(_rows(s, scope))

    def place(self, scope: Scope, place: str) -> dict[str, Provenance]:
        """{sentence key: provenance} of one place of the scope."""
        with self.db.read() as s:
            return read_in(s, scope, place)
