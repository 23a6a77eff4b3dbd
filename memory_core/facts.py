"""Facts: the value type, its validation, and the `memory.facts` API."""

from __future__ import annotations

import hashlib
import logging
import math
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .clock import iso_utc
from .scope import make_scope

if TYPE_CHECKING:
    from .settings import Settings
    from .store.fact_store import FactStore

log = logging.getLogger(__name__)

CATEGORIES = ("preference", "knowledge", "context", "behavior", "goal", "correction")


@dataclass(frozen=True)
class Fact:
    id: str
    content: str
    category: str
    confidence: float
    created_at: datetime
    updated_at: datetime
    user_id: str
    agent_name: str
    source: str | None = None
    thread_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "content": self.content,
            "category": self.category,
            "confidence": self.confidence,
            "createdAt": iso_utc(self.created_at),
            "updatedAt": iso_utc(self.updated_at),
            "source": self.source,
        }


@dataclass(frozen=True)
class AuditEntry:
    fact_id: str
    action: str
    old: dict | None
    new: dict | None
    reason: str | None
    at: datetime
    user_id: str
    agent_name: str


def content_key(content: str) -> str:
    """The dedup key: casefolded content with runs of white space folded, hashed to a fixed width."""
    return hashlib.sha256(" ".join(content.split()).casefold().encode("utf-8")).hexdigest()


def validate_content(content: object, max_chars: int = 2000) -> str:
    if not isinstance(content, str):
        raise ValueError(f"content must be a string; got {type(content).__name__}")
    content = content.strip()
    if not content:
        raise ValueError("content must not be empty")
    if len(content) > max_chars:
        raise ValueError(f"content is {len(content)} characters; the limit is {max_chars}")
    return content


def validate_category(category: object) -> str:
    if category not in CATEGORIES:
        raise ValueError(f"category must be one of {', '.join(CATEGORIES)}; got {category!r:.40}")
    return category  # type: ignore[return-value]


def validate_confidence(confidence: object) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)):
        raise ValueError(f"confidence must be a number between 0 and 1; got {confidence!r:.40}")
    value = float(confidence)
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise ValueError(f"confidence must be between 0 and 1; got {value}")
    return value


class Facts:
    """`memory.facts`: CRUD with dedup, threshold and max_facts eviction."""

    def __init__(self, store: "FactStore", settings: "Settings") -> None:
        self._store = store
        self._settings = settings

    def add(
        self,
        content: str,
        category: str,
        confidence: float,
        *,
        user_id: str = "default",
        agent_name: str = "default",
        source: str | None = None,
        thread_id: str | None = None,
    ) -> Fact | None:
        """Store a fact. Returns None when it is a duplicate or below the confidence threshold."""
        fact, _reason = self.add_with_reason(
            content, category, confidence, user_id=user_id, agent_name=agent_name, source=source, thread_id=thread_id
        )
        return fact

    def add_with_reason(
        self, content: str, category: str, confidence: float, *, user_id: str = "default",
        agent_name: str = "default", source: str | None = None, thread_id: str | None = None,
    ) -> tuple[Fact | None, str | None]:
        scope = make_scope(user_id, agent_name)
        content = validate_content(content, self._settings.max_fact_chars)
        category = validate_category(category)
        confidence = validate_confidence(confidence)
        if source is not None and (not isinstance(source, str) or len(source) > 256):
            raise ValueError("source must be a string of at most 256 characters")
        threshold = self._settings.fact_confidence_threshold
        if confidence < threshold:
            log.info("skipped low-confidence fact (%.2f < %.2f) in %s: %.80s", confidence, threshold, scope.key, content)
            return None, "low_confidence"
        fact = self._store.add(scope, content, category, confidence, source, thread_id, self._settings.max_facts)
        if fact is None:
            log.info("skipped duplicate fact in %s: %.80s", scope.key, content)
            return None, "duplicate"
        return fact, None

    def get(self, fact_id: str) -> Fact:
        return self._store.get(fact_id)

    def list(self, *, user_id: str = "default", agent_name: str = "default", category: str | None = None) -> list[Fact]:
        scope = make_scope(user_id, agent_name)
        if category is not None:
            validate_category(category)
        return self._store.list(scope, category)

    def update(
        self, fact_id: str, *, content: str | None = None, category: str | None = None, confidence: float | None = None
    ) -> Fact:
        changes: dict[str, Any] = {}
        if content is not None:
            changes["content"] = validate_content(content, self._settings.max_fact_chars)
        if category is not None:
            changes["category"] = validate_category(category)
        if confidence is not None:
            changes["confidence"] = validate_confidence(confidence)
        return self._store.update(fact_id, changes)

    def delete(self, fact_id: str) -> None:
        self._store.delete(fact_id)

    def count(self, *, user_id: str = "default", agent_name: str = "default") -> int:
        return self._store.count(make_scope(user_id, agent_name))

    def history(self, fact_id: str | None = None, *, user_id: str = "default", agent_name: str = "default",
                limit: int = 500) -> list[AuditEntry]:
        """The audit log of one fact (any scope), or of a whole scope, newest first."""
        scope = None if fact_id else make_scope(user_id, agent_name)
        return self._store.audit(fact_id=fact_id, scope=scope, limit=limit)
