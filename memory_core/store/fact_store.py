"""Facts, their audit log and the scope summaries, in SQL.

Every change goes through a `FactTransaction`: one database transaction per call, serialised per scope, so
that an update that adds, supersedes and invalidates several facts is applied whole or not at all.
"""

from __future__ import annotations

import json
import logging
import secrets
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from sqlalchemy import bindparam, func, or_, select, text
from sqlalchemy.exc import IntegrityError

from memory_core.store.actors import current_actor
from memory_core.clock import Clock, iso_utc, utc
from memory_core.facts.api import SUMMARY_SECTIONS, AuditEntry, Fact, content_key  # noqa: F401 (named here before)
from memory_core.scope import Scope
from memory_core.text.truth import Provenance, Retired, Sources, sentences_of, sentence_key
from memory_core.store.db import Database
from memory_core.store import fact_reads
from memory_core.store.fact_reads import in_scope
from memory_core.store.import_store import record_imported
from memory_core.store.leading_facts import injected_fact, leading_rows, rank
from memory_core.store.models import FactAuditRow, FactRow, SummaryRow
from memory_core.store.provenance_store import ProvenanceStore, read_in, record_in, summary_place
from memory_core.text.instructions import instruction_reason

log = logging.getLogger(__name__)

FACT_COUNT = text("SELECT n FROM fact_counts WHERE user_id = :u AND agent_name = :a")  # a scope's valid facts
_SUMMARIES = select(SummaryRow.section, SummaryRow.summary, SummaryRow.updated_at).where(
    SummaryRow.user_id == bindparam("u"), SummaryRow.agent_name == bindparam("a"))
ID_ATTEMPTS = 16  # fact ids are 32 random bits: a clash is rare, a second one in a row rarer still


def new_fact_id() -> str:
    return "fact_" + secrets.token_hex(4)


def invalid_key(fact_id: str) -> str:
    """The dedup key of an invalid fact: unique, so that invalid facts never block their text coming back."""
    return f"invalid:{fact_id}"


def _to_fact(row: FactRow) -> Fact:
    return Fact(
        id=row.id, content=row.content, category=row.category, confidence=float(row.confidence),
        created_at=utc(row.created_at), updated_at=utc(row.updated_at), user_id=row.user_id,
        agent_name=row.agent_name, source=row.source, thread_id=row.thread_id,
        valid_from=utc(row.valid_from or row.created_at), invalid_at=utc(row.invalid_at) if row.invalid_at else None,
        superseded_by=row.superseded_by, invalid_reason=row.invalid_reason, source_error=row.source_error,
        held_at=utc(row.held_at) if row.held_at else None,
    )


def _snapshot(row: FactRow) -> dict[str, Any]:
    snap = {"content": row.content, "category": row.category, "confidence": float(row.confidence),
            "updatedAt": iso_utc(row.updated_at)}
    if row.source_error:
        snap["sourceError"] = row.source_error
    if row.held_at is not None:
        snap["held"] = True
    elif row.invalid_at is not None:
        snap["invalidAt"] = iso_utc(row.invalid_at)
        if row.superseded_by:
            snap["supersededBy"] = row.superseded_by
    return snap


class FactTransaction:
    """The writes of one call, in one transaction of one scope. Obtained from `FactStore.transaction()`."""

    def __init__(self, store: "FactStore", session, scope: Scope) -> None:
        self.store = store
        self.s = session
        self.scope = scope
        self.now = store.clock.now()
        self.changed = False
        self.retired: dict[str, tuple[str, str | None]] = {}  # id -> (content, replacement content) ended here

    # -- reading inside the transaction -------------------------------------------------------------

    def row(self, fact_id: str) -> FactRow:
        """A fact of this scope, or KeyError (another scope's id is as unknown as a made-up one)."""
        row = self.s.execute(select(FactRow).where(FactRow.id == fact_id, *in_scope(self.scope))).scalars().first()
        if row is None:
            raise KeyError(fact_id)
        return row

    def valid_with_key(self, key: str) -> FactRow | None:
        return self.s.execute(select(FactRow).where(*in_scope(self.scope), FactRow.content_key == key,
                                                    FactRow.invalid_at.is_(None))).scalars().first()

    def count(self) -> int:
        return self.store._count(self.s, self.scope)

    def record_imported(self, items: dict[str, str]) -> None:
        """Remember {source_key: content_hash} as imported into this scope, committed with these facts."""
        record_imported(self.s, self.scope, items, self.now)

    # -- writing ------------------------------------------------------------------------------------

    def audit(self, row: FactRow, action: str, old: dict | None, new: dict | None, reason: str | None = None) -> None:
        self.s.add(FactAuditRow(
            fact_id=row.id, user_id=row.user_id, agent_name=row.agent_name, action=action,
            old=json.dumps(old) if old else None, new=json.dumps(new) if new else None, reason=reason,
            at=self.now, actor=current_actor(),
        ))
        self.changed = True

    def add(self, content: str, category: str, confidence: float, *, source: str | None = None,
            thread_id: str | None = None, threshold: float = 0.0, max_facts: int = 500,
            reason: str | None = None, created_at: datetime | None = None,
            evict: bool = True, source_error: str | None = None) -> tuple[Fact | None, str | None]:
        """Store a (validated) fact: (fact, None), or (None, "low_confidence"|"duplicate"|"full"). `created_at`
        backdates an imported fact (it is also valid from then). With `evict=False` a full scope keeps its
        facts and the new one is not stored ("full"). `source_error`: what a correction corrects.

        Every way in comes here, so here a statement that instructs the agent is held (`Fact.held`): stored, but
        invalid from now and never listed, injected, searched or counted until a person releases it."""
        if confidence < threshold:
            log.info("skipped low-confidence fact (%.2f < %.2f) in %s: %.80s", confidence, threshold,
                     self.scope.key, content)
            return None, "low_confidence"
        key = content_key(content)
        held = instruction_reason(content) or (instruction_reason(source_error) if source_error else None)
        if held is not None:
            return self._hold(content, key, category, confidence, held, source, thread_id, source_error)
        if self.valid_with_key(key) is not None:
            log.info("skipped duplicate fact in %s: %.80s", self.scope.key, content)
            return None, "duplicate"
        if not evict and self.count() >= max_facts:
            return None, "full"
        self._evict(max_facts)
        since = min(utc(created_at), self.now) if created_at is not None else self.now
        for _attempt in range(ID_ATTEMPTS):
            row = FactRow(id=new_fact_id(), user_id=self.scope.user_id, agent_name=self.scope.agent_name,
                          content=content, content_key=key, category=category, confidence=confidence,
                          created_at=since, updated_at=self.now, valid_from=since, source=source,
                          thread_id=thread_id, source_error=source_error)
            try:
                with self.s.begin_nested():
                    self.s.add(row)
                    self.s.flush()
            except IntegrityError:
                if self.valid_with_key(key) is not None:  # the same text, stored by a racing writer
                    return None, "duplicate"
                log.warning("fact id %s is taken; drawing another", row.id)
                continue
            self.audit(row, "added", None, _snapshot(row), reason or (f"source={source}" if source else None))
            return _to_fact(row), None
        raise RuntimeError(f"no free fact id after {ID_ATTEMPTS} draws")  # pragma: no cover - 2**-500 odds

    def held_rows(self) -> list[FactRow]:
        """The scope's held facts, oldest first."""
        return list(self.s.execute(select(FactRow).where(*in_scope(self.scope), FactRow.held_at.is_not(None))
                                   .order_by(FactRow.held_at.asc(), FactRow.pk.asc())).scalars().all())

    def _hold(self, content: str, key: str, category: str, confidence: float, why: str, source: str | None,
              thread_id: str | None, source_error: str | None) -> tuple[Fact | None, str | None]:
        if any(content_key(row.content) == key for row in self.held_rows()) or self.valid_with_key(key) is not None:
            return None, "duplicate"
        log.warning("held for review in %s (%s): an instruction-like statement is kept out of what agents read",
                    self.scope.key, why)
        for _attempt in range(ID_ATTEMPTS):
            fact_id = new_fact_id()
            row = FactRow(id=fact_id, user_id=self.scope.user_id, agent_name=self.scope.agent_name,
                          content=content, content_key=invalid_key(fact_id), category=category,
                          confidence=confidence, created_at=self.now, updated_at=self.now, valid_from=self.now,
                          invalid_at=self.now, invalid_reason=f"held for review: {why}", held_at=self.now,
                          source=source, thread_id=thread_id, source_error=source_error)
            try:
                with self.s.begin_nested():
                    self.s.add(row)
                    self.s.flush()
            except IntegrityError:
                continue
            self.audit(row, "held", None, _snapshot(row), why)
            return _to_fact(row), None
        raise RuntimeError(f"no free fact id after {ID_ATTEMPTS} draws")  # pragma: no cover - 2**-500 odds

    def release(self, fact_id: str, max_facts: int = 500) -> Fact:
        """Make a held fact an ordinary valid one (from now), audited with the current actor. Releasing a text
        that a valid fact already states leaves that one, and the held one points at it. ValueError if the
        fact is not held."""
        row = self.row(fact_id)
        if row.held_at is None:
            raise ValueError(f"{fact_id} is not held for review")
        before = _snapshot(row)
        key = content_key(row.content)
        twin = self.valid_with_key(key)
        row.held_at, row.updated_at = None, self.now
        if twin is not None:
            row.superseded_by, row.invalid_reason = twin.id, "released; the same as a valid fact"
            self.s.add(row)
            self.s.flush()
            self.audit(row, "released", before, _snapshot(row), f"the same as {twin.id}")
            return _to_fact(twin)
        self._evict(max_facts)
        row.invalid_at, row.invalid_reason, row.valid_from, row.content_key = None, None, self.now, key
        self.s.add(row)
        self.s.flush()
        self.audit(row, "released", before, _snapshot(row), "released by a person")
        return _to_fact(row)

    def _evict(self, max_facts: int) -> None:
        count = self.count()
        if count < max_facts:
            return
        victims = self.s.execute(select(FactRow).where(*in_scope(self.scope), FactRow.invalid_at.is_(None))
                                 .order_by(FactRow.confidence.asc(), FactRow.created_at.asc(), FactRow.pk.asc())
                                 .limit(count - max_facts + 1)).scalars().all()
        for victim in victims:
            self.audit(victim, "evicted", _snapshot(victim), None,
                       f"max_facts={max_facts} reached; lowest confidence goes first")
            self.s.delete(victim)
        self.s.flush()

    def _mark_invalid(self, row: FactRow, reason: str | None, superseded_by: str | None = None) -> dict[str, Any]:
        """End a fact's validity now; return its snapshot from before, for the audit entry."""
        before = _snapshot(row)
        self.retired.setdefault(row.id, (row.content, None))
        row.invalid_at, row.superseded_by, row.invalid_reason = self.now, superseded_by, reason
        row.content_key, row.updated_at = invalid_key(row.id), self.now
        self.s.add(row)
        self.s.flush()
        return before

    def end(self, row: FactRow, action: str, reason: str | None, superseded_by: str | None = None) -> None:
        """End a valid fact's validity now (`action`: invalidated, superseded, merged), audited."""
        self._end(row, action, reason, superseded_by)

    def _end(self, row: FactRow, action: str, reason: str | None, superseded_by: str | None = None) -> None:
        before = self._mark_invalid(row, reason, superseded_by)
        self.audit(row, action, before, _snapshot(row), reason)

    def invalidate(self, fact_id: str, *, reason: str | None = None, action: str = "invalidated") -> Fact:
        row = self.row(fact_id)
        if row.invalid_at is None:
            self._end(row, action, reason)
        return _to_fact(row)

    def supersede(self, fact_id: str, content: str, *, category: str | None = None, confidence: float | None = None,
                  reason: str | None = None, threshold: float = 0.0, max_facts: int = 500,
                  source: str | None = None, thread_id: str | None = None) -> tuple[Fact, bool]:
        """Supersede a valid fact; return its replacement, and whether that is a new fact (False: an existing
        valid fact already said the new text)."""
        old = self.row(fact_id)
        if old.invalid_at is not None:
            raise ValueError(f"{fact_id} is no longer valid (superseded by {old.superseded_by or 'nothing'}); "
                             "supersede the current fact instead")
        key = content_key(content)
        if key == old.content_key:
            raise ValueError("the new content says the same as the fact it would supersede")
        if (why := instruction_reason(content)) is not None:
            raise ValueError(f"the new content reads as an instruction to the agent ({why}), not as something about "
                             "the user; nothing changed (added as a fact of its own, it is held for a person's review)")
        confidence = float(old.confidence) if confidence is None else confidence
        if confidence < threshold:
            raise ValueError(f"confidence {confidence:.2f} is below the threshold {threshold:.2f}; nothing changed")
        replacement = self.valid_with_key(key)
        reason = reason or "superseded"
        before = self._mark_invalid(old, reason)  # first, so that it neither counts for max_facts nor is evicted
        if replacement is None:
            fact, _ = self.add(content, category or old.category, confidence, source=source or old.source,
                               thread_id=thread_id, max_facts=max_facts, reason=f"supersedes {old.id}")
            assert fact is not None  # its key was checked free just above
        else:
            fact = _to_fact(replacement)
        old.superseded_by = fact.id
        self.s.add(old)
        self.s.flush()
        self.audit(old, "superseded", before, _snapshot(old), reason)
        return fact, replacement is None

    def merge(self, keep_id: str, drop_id: str) -> Fact:
        keep, drop = self.row(keep_id), self.row(drop_id)
        for row in (keep, drop):
            if row.invalid_at is not None:
                raise ValueError(f"{row.id} is no longer valid; only valid facts can be merged")
        if drop.confidence > keep.confidence:
            before = _snapshot(keep)
            keep.confidence, keep.updated_at = drop.confidence, self.now
            self.s.add(keep)
            self.s.flush()
            self.audit(keep, "updated", before, _snapshot(keep), f"merged with {drop.id}")
        self._end(drop, "merged", f"merged into {keep.id}", superseded_by=keep.id)
        return _to_fact(keep)

    def valid_texts(self, keys: Iterable[str] | None = None, ids: Iterable[str] | None = None) -> dict[str, str]:
        """{id: text} of every valid fact of the scope (or of those with one of the dedup `keys`, or one of the
        `ids`), as this transaction sees it."""
        found = fact_reads.valid_texts(self.s, self.scope, keys, ids)
        self.store.rows_read += len(found)
        return found

    def summary_texts(self) -> dict[str, str]:
        """{section: summary} of the scope, as this transaction sees it."""
        rows = self.s.execute(select(SummaryRow).where(SummaryRow.user_id == self.scope.user_id,
                                                       SummaryRow.agent_name == self.scope.agent_name)).scalars().all()
        return {r.section: r.summary for r in rows if r.summary}

    def retirements(self) -> list[Retired]:
        """The facts this transaction ended or removed, each with the text of its replacement (if any)."""
        out = []
        for fact_id, (content, replacement) in self.retired.items():
            replacement_id = fact_id if replacement is not None else None  # an edit: the fact says the new text
            if replacement is None:
                row = self.s.execute(select(FactRow).where(FactRow.id == fact_id)).scalars().first()
                if row is not None and row.superseded_by:
                    target = self.s.execute(select(FactRow.content).where(
                        FactRow.id == row.superseded_by)).scalars().first()
                    replacement, replacement_id = target, row.superseded_by if target is not None else None
            out.append(Retired(fact_id, content, replacement, replacement_id))
        return out

    def provenance(self, section: str) -> dict[str, Provenance]:
        """{sentence key: provenance} of a summary section, as this transaction sees it."""
        return read_in(self.s, self.scope, summary_place(section))

    def set_summaries(self, updates: dict[str, str], sources: Mapping[str, Sources] | None = None) -> None:
        """Write summary sections; each one's provenance follows (rows of sentences gone go, `sources`
        ({section: {sentence key: provenance}}) of the sentences written from facts come)."""
        for section, summary in updates.items():
            record_in(self.s, self.scope, summary_place(section), {sentence_key(x) for x in sentences_of(summary)},
                      (sources or {}).get(section), self.now)
            row = self.s.get(SummaryRow, (self.scope.user_id, self.scope.agent_name, section))
            if row is None:
                self.s.add(SummaryRow(user_id=self.scope.user_id, agent_name=self.scope.agent_name, section=section,
                                      summary=summary, updated_at=self.now))
            else:
                row.summary, row.updated_at, row.version = summary, self.now, row.version + 1
                self.s.add(row)
        self.changed = self.changed or bool(updates)


class FactStore:
    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock
        # called after a committed change with the scope and whether facts were only added (nothing ended,
        # deleted or edited in its text)
        self.listeners: list = []
        # One truth: `before_retire(tx, retired)` runs inside a transaction that ended facts (the summaries
        # follow in the same commit); `retire_listeners(scope, retired)` run after it (MEMORY.md follows).
        self.before_retire: Callable[[FactTransaction, list[Retired]], None] | None = None
        self.retire_listeners: list[Callable[[Scope, list[Retired]], None]] = []
        self.provenance = ProvenanceStore(db, clock)  # what summary sentences and MEMORY.md bullets came from
        # facts read by `leading`, `extraction_facts` and `valid_texts` (what injection, extraction and propagation
        # read; tests check it)
        self.rows_read = 0

    def _changed(self, scope: Scope, added_only: bool = False) -> None:
        for listener in self.listeners:
            listener(scope, added_only)

    @contextmanager
    def transaction(self, scope: Scope) -> Iterator[FactTransaction]:
        """One write transaction on the facts of `scope`; listeners hear of it after the commit."""
        with self.db.write(lock=f"facts:{scope.key}") as s:
            tx = FactTransaction(self, s, scope)
            yield tx
            retired = tx.retirements() if tx.retired else []
            if retired and self.before_retire is not None:
                self.before_retire(tx, retired)
        if tx.changed:
            self._changed(scope, not tx.retired)
        for listener in self.retire_listeners if retired else ():
            listener(scope, retired)

    def get(self, fact_id: str) -> Fact:
        with self.db.read() as s:
            row = s.execute(select(FactRow).where(FactRow.id == fact_id)).scalars().first()
        if row is None:
            raise KeyError(fact_id)
        return _to_fact(row)

    def list(self, scope: Scope, category: str | None = None, *, include_invalid: bool = False,
             as_of: datetime | None = None, include_held: bool = False, limit: int | None = None) -> list[Fact]:
        query = select(FactRow).where(*in_scope(scope))
        if category:
            query = query.where(FactRow.category == category)
        if as_of is not None:
            query = query.where(FactRow.valid_from <= as_of,
                                or_(FactRow.invalid_at.is_(None), FactRow.invalid_at > as_of))
        elif not include_invalid:
            query = query.where(FactRow.invalid_at.is_(None))
        elif not include_held:
            query = query.where(FactRow.held_at.is_(None))
        query = query.order_by(FactRow.confidence.desc(), FactRow.created_at.asc(), FactRow.pk.asc())
        if limit is not None:
            query = query.limit(limit)
        with self.db.read() as s:
            return [_to_fact(r) for r in s.execute(query).scalars().all()]

    def with_key(self, scope: Scope, key: str) -> Fact | None:
        """The scope's valid fact whose dedup key is `key` (there is at most one), by the key's index."""
        with self.db.read() as s:
            row = s.execute(select(FactRow).where(*in_scope(scope), FactRow.content_key == key,
                                                  FactRow.invalid_at.is_(None))).scalars().first()
            return _to_fact(row) if row is not None else None

    def held(self, scope: Scope) -> list[Fact]:
        """The scope's facts held for review, oldest first."""
        with self.db.read() as s:
            rows = s.execute(select(FactRow).where(*in_scope(scope), FactRow.held_at.is_not(None))
                             .order_by(FactRow.held_at.asc(), FactRow.pk.asc())).scalars().all()
            return [_to_fact(r) for r in rows]

    def hold_instructions(self, scope: Scope) -> list[Fact]:
        """Hold the scope's valid facts that instruct the agent (stored before they were held at write); audited."""
        held = []
        with self.transaction(scope) as tx:
            for row in tx.s.execute(select(FactRow).where(*in_scope(scope), FactRow.invalid_at.is_(None))).scalars():
                if (why := instruction_reason(row.content)) is None:
                    continue
                before = _snapshot(row)
                tx.retired[row.id] = (row.content, None)
                row.held_at = row.invalid_at = row.updated_at = tx.now
                row.invalid_reason, row.content_key = f"held for review: {why}", invalid_key(row.id)
                tx.s.add(row)
                tx.audit(row, "held", before, _snapshot(row), why)
                held.append(row)
            tx.s.flush()
            return [_to_fact(r) for r in held]

    def release(self, fact_id: str, max_facts: int = 500) -> Fact:
        """Release a held fact (see `FactTransaction.release`)."""
        with self.transaction(self.get(fact_id).scope) as tx:
            return tx.release(fact_id, max_facts)

    def leading(self, scope: Scope, limit: int, ids: Iterable[str] = ()) -> list[Fact]:
        """The scope's valid facts named in `ids` and its `limit` most confident others, in `list`'s order (see
        `leading_rows`): what injection and extraction read, never the whole scope."""
        rows = leading_rows(self.db, scope, limit, ids)
        self.rows_read += len(rows)
        return [_to_fact(r) for r in rows]

    def injected(self, scope: Scope, limit: int, ids: Iterable[str] = ()) -> list[dict[str, Any]]:
        """`leading`'s facts as injection reads them, and only the keys it formats (no Fact built, no date read)."""
        return [fact for _key, fact in self.injected_ranked(scope, limit, ids)]

    def injected_ranked(self, scope: Scope, limit: int, ids: Iterable[str] = ()) -> list[tuple[tuple, dict[str, Any]]]:
        """`injected`'s facts, each after its place in `list`'s order (a key that sorts them: `leading_facts.rank`)."""
        rows = leading_rows(self.db, scope, limit, ids, brief=True)
        self.rows_read += len(rows)
        return [(rank(r), injected_fact(r)) for r in rows]

    def extraction_facts(self, scope: Scope, limit: int, ids: Sequence[str] = ()) -> list[dict[str, Any]]:
        """What extraction reads of the scope's facts (see `store.fact_reads.extraction_facts`)."""
        with self.db.read() as s:
            found = fact_reads.extraction_facts(s, scope, limit, ids)
        self.rows_read += len(found)
        return found

    @staticmethod
    def _count(session, scope: Scope) -> int:
        """Valid facts in the scope, from the trigger-kept `fact_counts` (O(1) at any store size)."""
        return session.execute(FACT_COUNT, {"u": scope.user_id, "a": scope.agent_name}).scalar() or 0

    def count(self, scope: Scope) -> int:
        with self.db.rows() as s:
            return self._count(s, scope)

    def update(self, fact_id: str, changes: dict[str, Any]) -> Fact:
        scope = self.get(fact_id).scope
        with self.transaction(scope) as tx:
            row = tx.row(fact_id)
            old = _snapshot(row)
            why = None
            if "content" in changes:
                key = content_key(changes["content"])
                why = instruction_reason(changes["content"]) if row.invalid_at is None else None
                if why is not None:  # an edit into an instruction: held, like any other way in
                    tx.retired[row.id] = (row.content, None)
                    row.held_at, row.invalid_at, row.invalid_reason = tx.now, tx.now, f"held for review: {why}"
                    row.content_key = invalid_key(row.id)
                elif row.invalid_at is None:
                    clash = tx.valid_with_key(key)
                    if clash is not None and clash.id != fact_id:
                        raise ValueError(f"content duplicates {clash.id} in the same scope")
                    row.content_key = key
                    if row.content != changes["content"]:
                        tx.retired[row.id] = (row.content, changes["content"])
                row.content = changes["content"]
            if "category" in changes:
                row.category = changes["category"]
            if "confidence" in changes:
                row.confidence = changes["confidence"]
            if changes:
                row.updated_at = tx.now
                tx.s.add(row)
                tx.s.flush()
                tx.audit(row, "held" if why else "updated", old, _snapshot(row), why)
            return _to_fact(row)

    def delete(self, fact_id: str, action: str = "deleted", reason: str | None = None) -> None:
        scope = self.get(fact_id).scope
        with self.transaction(scope) as tx:
            row = tx.row(fact_id)
            tx.audit(row, action, _snapshot(row), None, reason)
            if row.invalid_at is None:
                tx.retired[row.id] = (row.content, None)
            tx.s.delete(row)

    def audit(self, fact_id: str | None = None, scope: Scope | None = None, limit: int = 500) -> list[AuditEntry]:
        query = select(FactAuditRow)
        if fact_id:
            query = query.where(FactAuditRow.fact_id == fact_id)
        if scope:
            query = query.where(FactAuditRow.user_id == scope.user_id, FactAuditRow.agent_name == scope.agent_name)
        query = query.order_by(FactAuditRow.at.desc(), FactAuditRow.pk.desc()).limit(limit)
        with self.db.read() as s:
            rows = s.execute(query).scalars().all()
        return [AuditEntry(fact_id=r.fact_id, action=r.action, old=json.loads(r.old) if r.old else None,
                           new=json.loads(r.new) if r.new else None, reason=r.reason, at=utc(r.at),
                           user_id=r.user_id, agent_name=r.agent_name, actor=r.actor) for r in rows]

    def purge_invalid(self, before: datetime) -> int:
        """Delete facts that became invalid before `before` (the retention of history); audited."""
        with self.db.read() as s:
            scopes = {Scope(u, a) for u, a in s.execute(select(FactRow.user_id, FactRow.agent_name).where(
                FactRow.invalid_at.is_not(None), FactRow.invalid_at < before,
                FactRow.held_at.is_(None)).distinct()).all()}
        purged = 0
        for scope in sorted(scopes):
            with self.transaction(scope) as tx:
                for row in tx.s.execute(select(FactRow).where(*in_scope(scope), FactRow.invalid_at.is_not(None),
                                                              FactRow.invalid_at < before,
                                                              FactRow.held_at.is_(None))).scalars().all():
                    tx.audit(row, "purged", _snapshot(row), None, "older than the retention of invalid facts")
                    tx.s.delete(row)
                    purged += 1
        return purged

    # -- summaries (user context and history) --------------------------------------------------

    def version(self, scope: Scope) -> tuple:
        """(facts, latest fact change, latest summary change) of the scope: changes whenever a fact or a summary
        does, so that a reader may cache what it built from them (the dashboard does)."""
        where_facts = (FactRow.user_id == scope.user_id, FactRow.agent_name == scope.agent_name)
        with self.db.read() as s:
            count, latest = s.execute(select(func.count(FactRow.id), func.max(FactRow.updated_at))
                                      .where(*where_facts)).one()
            summarised = s.execute(select(func.max(SummaryRow.updated_at)).where(
                SummaryRow.user_id == scope.user_id, SummaryRow.agent_name == scope.agent_name)).scalar()
        return int(count or 0), str(latest), str(summarised)  # compared, never read: the raw values serve

    def summaries(self, scope: Scope) -> dict[str, dict[str, dict[str, str]]]:
        with self.db.rows() as s:
            rows = s.execute(_SUMMARIES, {"u": scope.user_id, "a": scope.agent_name}).all()
        found = {r.section: r for r in rows}
        data: dict[str, dict[str, dict[str, str]]] = {}
        for group, sections in SUMMARY_SECTIONS.items():
            data[group] = {}
            for name in sections:
                row = found.get(name)
                data[group][name] = {"summary": row.summary if row else "",
                                     "updatedAt": iso_utc(row.updated_at) if row else ""}
        return data

    def valid_texts(self, scope: Scope, ids: Iterable[str] | None = None) -> dict[str, str]:
        """{id: text} of every valid fact of the scope, or of those of the `ids`, oldest first."""
        with self.db.read() as s:
            found = fact_reads.valid_texts(s, scope, None, ids)
        self.rows_read += len(found)
        return found

    def summary_texts(self, scope: Scope) -> dict[str, str]:
        """{section: summary} of the scope's non-empty summaries."""
        with self.db.read() as s:
            rows = s.execute(select(SummaryRow).where(SummaryRow.user_id == scope.user_id,
                                                   SummaryRow.agent_name == scope.agent_name)).scalars().all()
        return {r.section: r.summary for r in rows if r.summary}

    def set_summaries(self, scope: Scope, updates: dict[str, str]) -> None:
        """Replace the named sections' summaries in one transaction (serialised per scope)."""
        if updates:
            with self.transaction(scope) as tx:
                tx.set_summaries(updates)

    def scopes(self) -> list[Scope]:
        """Every scope that has facts or summaries."""
        with self.db.read() as s:
            rows = s.execute(select(FactRow.user_id, FactRow.agent_name).distinct()).all()
            rows += s.execute(select(SummaryRow.user_id, SummaryRow.agent_name).distinct()).all()
        return sorted({Scope(u, a) for u, a in rows})
