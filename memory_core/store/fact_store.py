"""Facts, their audit log and the scope summaries, in SQL."""

from __future__ import annotations

import json
import secrets
from datetime import datetime
from typing import Any, Iterable

from sqlalchemy import select, text
from sqlalchemy.exc import IntegrityError

from ..clock import Clock, iso_utc, utc
from ..facts import AuditEntry, Fact, content_key
from ..scope import Scope
from .db import Database
from .models import FactAuditRow, FactRow, SummaryRow

SUMMARY_SECTIONS = {
    "user": ("workContext", "personalContext", "topOfMind"),
    "history": ("recentMonths", "earlierContext", "longTermBackground"),
}


def new_fact_id() -> str:
    return "fact_" + secrets.token_hex(4)


def _to_fact(row: FactRow) -> Fact:
    return Fact(
        id=row.id, content=row.content, category=row.category, confidence=float(row.confidence),
        created_at=utc(row.created_at), updated_at=utc(row.updated_at), user_id=row.user_id,
        agent_name=row.agent_name, source=row.source, thread_id=row.thread_id,
    )


def _snapshot(row: FactRow) -> dict[str, Any]:
    return {"content": row.content, "category": row.category, "confidence": float(row.confidence),
            "updatedAt": iso_utc(row.updated_at)}


class FactStore:
    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock
        self.listeners: list = []  # called with (event, scope) after a committed change

    def _changed(self, scope: Scope) -> None:
        for listener in self.listeners:
            listener(scope)

    def _audit(self, session, row: FactRow, action: str, old: dict | None, new: dict | None, reason: str | None = None) -> None:
        session.add(FactAuditRow(
            fact_id=row.id, user_id=row.user_id, agent_name=row.agent_name, action=action,
            old=json.dumps(old) if old else None, new=json.dumps(new) if new else None, reason=reason,
            at=self.clock.now(),
        ))

    def add(self, scope: Scope, content: str, category: str, confidence: float, source: str | None,
            thread_id: str | None, max_facts: int) -> Fact | None:
        """Insert a fact, or return None when the scope already has the same content (casefolded)."""
        key = content_key(content)
        now = self.clock.now()
        try:
            with self.db.write(lock=f"facts:{scope.key}") as s:
                if s.execute(select(FactRow.pk).where(
                        FactRow.user_id == scope.user_id, FactRow.agent_name == scope.agent_name,
                        FactRow.content_key == key)).first():
                    return None
                count = self._count(s, scope)
                if count >= max_facts:
                    victims = s.execute(select(FactRow).where(
                        FactRow.user_id == scope.user_id, FactRow.agent_name == scope.agent_name,
                    ).order_by(FactRow.confidence.asc(), FactRow.created_at.asc(), FactRow.pk.asc())
                        .limit(count - max_facts + 1)).scalars().all()
                    for victim in victims:
                        self._audit(s, victim, "evicted", _snapshot(victim), None,
                                    f"max_facts={max_facts} reached; lowest confidence goes first")
                        s.delete(victim)
                    s.flush()
                row = FactRow(id=new_fact_id(), user_id=scope.user_id, agent_name=scope.agent_name, content=content,
                              content_key=key, category=category, confidence=confidence, created_at=now,
                              updated_at=now, source=source, thread_id=thread_id)
                s.add(row)
                s.flush()
                self._audit(s, row, "added", None, _snapshot(row), f"source={source}" if source else None)
                fact = _to_fact(row)
        except IntegrityError:
            # Another process stored the same content between our check and our insert.
            return None
        self._changed(scope)
        return fact

    def get(self, fact_id: str) -> Fact:
        with self.db.read() as s:
            row = s.execute(select(FactRow).where(FactRow.id == fact_id)).scalars().first()
        if row is None:
            raise KeyError(fact_id)
        return _to_fact(row)

    def list(self, scope: Scope, category: str | None = None) -> list[Fact]:
        query = select(FactRow).where(FactRow.user_id == scope.user_id, FactRow.agent_name == scope.agent_name)
        if category:
            query = query.where(FactRow.category == category)
        query = query.order_by(FactRow.confidence.desc(), FactRow.created_at.asc(), FactRow.pk.asc())
        with self.db.read() as s:
            return [_to_fact(r) for r in s.execute(query).scalars().all()]

    @staticmethod
    def _count(session, scope: Scope) -> int:
        """Facts in the scope, from the trigger-kept `fact_counts` (O(1) at any store size)."""
        return session.execute(text("SELECT n FROM fact_counts WHERE user_id = :u AND agent_name = :a"),
                               {"u": scope.user_id, "a": scope.agent_name}).scalar() or 0

    def count(self, scope: Scope) -> int:
        with self.db.read() as s:
            return self._count(s, scope)

    def _scope_of(self, fact_id: str) -> Scope:
        fact = self.get(fact_id)
        return Scope(fact.user_id, fact.agent_name)

    def update(self, fact_id: str, changes: dict[str, Any]) -> Fact:
        scope = self._scope_of(fact_id)
        try:
            with self.db.write(lock=f"facts:{scope.key}") as s:
                row = s.execute(select(FactRow).where(FactRow.id == fact_id)).scalars().first()
                if row is None:
                    raise KeyError(fact_id)
                old = _snapshot(row)
                if "content" in changes:
                    key = content_key(changes["content"])
                    clash = s.execute(select(FactRow.id).where(
                        FactRow.user_id == row.user_id, FactRow.agent_name == row.agent_name,
                        FactRow.content_key == key, FactRow.id != fact_id)).first()
                    if clash:
                        raise ValueError(f"content duplicates {clash[0]} in the same scope")
                    row.content, row.content_key = changes["content"], key
                if "category" in changes:
                    row.category = changes["category"]
                if "confidence" in changes:
                    row.confidence = changes["confidence"]
                if changes:
                    row.updated_at = self.clock.now()
                    s.add(row)
                    s.flush()
                    self._audit(s, row, "updated", old, _snapshot(row))
                fact = _to_fact(row)
        except IntegrityError as exc:
            raise ValueError("content duplicates another fact in the same scope") from exc
        self._changed(scope)
        return fact

    def delete(self, fact_id: str, action: str = "deleted", reason: str | None = None) -> None:
        scope = self._scope_of(fact_id)
        with self.db.write(lock=f"facts:{scope.key}") as s:
            row = s.execute(select(FactRow).where(FactRow.id == fact_id)).scalars().first()
            if row is None:
                raise KeyError(fact_id)
            self._audit(s, row, action, _snapshot(row), None, reason)
            s.delete(row)
        self._changed(scope)

    def remove_in_scope(self, scope: Scope, fact_ids: Iterable[str], reason: str) -> list[str]:
        """Delete those of `fact_ids` that belong to `scope`; return the ids removed."""
        removed: list[str] = []
        ids = [i for i in fact_ids if isinstance(i, str)]
        if not ids:
            return removed
        with self.db.write(lock=f"facts:{scope.key}") as s:
            rows = s.execute(select(FactRow).where(FactRow.id.in_(ids), FactRow.user_id == scope.user_id,
                                                FactRow.agent_name == scope.agent_name)).scalars().all()
            for row in rows:
                self._audit(s, row, "removed", _snapshot(row), None, reason)
                s.delete(row)
                removed.append(row.id)
        if removed:
            self._changed(scope)
        return removed

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
                           user_id=r.user_id, agent_name=r.agent_name) for r in rows]

    # -- summaries (user context and history) --------------------------------------------------

    def summaries(self, scope: Scope) -> dict[str, dict[str, dict[str, str]]]:
        with self.db.read() as s:
            rows = s.execute(select(SummaryRow).where(SummaryRow.user_id == scope.user_id,
                                                   SummaryRow.agent_name == scope.agent_name)).scalars().all()
        found = {r.section: r for r in rows}
        data: dict[str, dict[str, dict[str, str]]] = {}
        for group, sections in SUMMARY_SECTIONS.items():
            data[group] = {}
            for name in sections:
                row = found.get(name)
                data[group][name] = {"summary": row.summary if row else "",
                                     "updatedAt": iso_utc(row.updated_at) if row else ""}
        return data

    def set_summaries(self, scope: Scope, updates: dict[str, str]) -> None:
        """Replace the named sections' summaries in one transaction (serialised per scope)."""
        if not updates:
            return
        now = self.clock.now()
        with self.db.write(lock=f"facts:{scope.key}") as s:
            for section, summary in updates.items():
                row = s.get(SummaryRow, (scope.user_id, scope.agent_name, section))
                if row is None:
                    s.add(SummaryRow(user_id=scope.user_id, agent_name=scope.agent_name, section=section,
                                     summary=summary, updated_at=now))
                else:
                    row.summary, row.updated_at, row.version = summary, now, row.version + 1
                    s.add(row)

    def scopes(self) -> list[Scope]:
        """Every scope that has facts or summaries."""
        with self.db.read() as s:
            rows = s.execute(select(FactRow.user_id, FactRow.agent_name).distinct()).all()
            rows += s.execute(select(SummaryRow.user_id, SummaryRow.agent_name).distinct()).all()
        return sorted({Scope(u, a) for u, a in rows})
