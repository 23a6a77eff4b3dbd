"""Facts: the value type, its validation, and the `memory.facts` API."""

from __future__ import annotations

import hashlib
import logging
import math
import unicodedata
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Protocol

from memory_core.clock import iso_utc, utc
from memory_core.errors import InvalidIdError, StaleEditError
from memory_core.scope import Scope, make_scope
from memory_core.text.validation import check_memory_text, check_text

if TYPE_CHECKING:
    import numpy as np

    from memory_core.settings import Settings

log = logging.getLogger(__name__)

CATEGORIES = ("preference", "knowledge", "context", "behavior", "goal", "correction")
# The summary sections of a scope (`memory_data()`'s "user" and "history"), by group.
SUMMARY_SECTIONS = {
    "user": ("workContext", "personalContext", "topOfMind"),
    "history": ("recentMonths", "earlierContext", "longTermBackground"),
}


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
    valid_from: datetime | None = None  # always set on facts read from the store
    invalid_at: datetime | None = None
    superseded_by: str | None = None
    invalid_reason: str | None = None
    source_error: str | None = None  # a correction's mistake to avoid (DeerFlow's sourceError)
    held_at: datetime | None = None  # set while an instruction-like statement waits for a person's review

    @property
    def valid(self) -> bool:
        return self.invalid_at is None

    @property
    def held(self) -> bool:
        """Held for review: kept, but never listed, injected or searched until a person releases it."""
        return self.held_at is not None

    @property
    def scope(self) -> Scope:
        return Scope(self.user_id, self.agent_name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "content": self.content,
            "category": self.category,
            "confidence": self.confidence,
            "createdAt": iso_utc(self.created_at),
            "updatedAt": iso_utc(self.updated_at),
            "source": self.source,
            "validFrom": iso_utc(self.valid_from or self.created_at),
            "invalidAt": iso_utc(self.invalid_at) if self.invalid_at else None,
            "supersededBy": self.superseded_by,
        } | ({"sourceError": self.source_error} if self.source_error else {}) | ({"held": True} if self.held_at else {})


@dataclass(frozen=True)
class Revision:
    """What `Facts.revise` did: the fact as it is now (after a content change, the new fact), the id of the fact
    it replaced (None when changed in place or not at all), and the names of the fields that changed."""

    fact: Fact
    superseded: str | None
    changed: tuple[str, ...]


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
    actor: str | None = None


def normalise_for_key(content: str) -> str:
    """What two facts must share to be duplicates: NFKC (fullwidth letters, ligatures, composed accents),
    without invisible format characters (zero-width spaces, BOM, soft hyphens), white space folded, casefolded."""
    text = unicodedata.normalize("NFKC", content)
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    return unicodedata.normalize("NFKC", " ".join(text.split()).casefold())


def content_key(content: str) -> str:
    """The dedup key: the normalised content, hashed to a fixed width."""
    return hashlib.sha256(normalise_for_key(content).encode("utf-8")).hexdigest()


def validate_content(content: object, max_chars: int = 2000) -> str:
    content = check_memory_text(content, "content").strip()
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


def validate_fact_id(fact_id: object) -> str:
    """A fact id is a string; anything else is an unknown id and a bad argument at once (InvalidIdError)."""
    if not isinstance(fact_id, str):
        raise InvalidIdError(f"a fact id is a string like 'fact_0a1b2c3d'; got {type(fact_id).__name__}")
    return fact_id


def validate_reason(reason: object) -> str | None:
    if reason is None:
        return None
    return check_memory_text(reason, "reason", 1000).strip() or None


def validate_source(source: object) -> str | None:
    if source is None:
        return None
    return check_memory_text(source, "source", 256)


def validate_source_error(source_error: object, max_chars: int = 2000) -> str | None:
    """What a correction corrects: optional text of at most `max_chars` (max_fact_chars); blank is None."""
    if source_error is None:
        return None
    return check_memory_text(source_error, "source_error", max_chars, setting="max_fact_chars").strip() or None


def validate_as_of(as_of: object) -> datetime | None:
    if as_of is None:
        return None
    if not isinstance(as_of, datetime):
        raise ValueError(f"as_of must be a datetime; got {type(as_of).__name__}")
    return utc(as_of)


class FactRepository(Protocol):
    """What `Facts` needs of its store (store.fact_store.FactStore), named here so that facts imports no store."""

    def transaction(self, scope: Scope) -> AbstractContextManager[Any]: ...
    def get(self, fact_id: str) -> Fact: ...
    def list(self, scope: Scope, category: str | None = None, *, include_invalid: bool = False,
             as_of: datetime | None = None, include_held: bool = False, limit: int | None = None) -> list[Fact]: ...
    def with_key(self, scope: Scope, key: str) -> Fact | None: ...
    def count(self, scope: Scope) -> int: ...
    def update(self, fact_id: str, changes: dict[str, Any]) -> Fact: ...
    def delete(self, fact_id: str) -> None: ...
    def held(self, scope: Scope) -> list[Fact]: ...
    def release(self, fact_id: str, max_facts: int = 500) -> Fact: ...
    def hold_instructions(self, scope: Scope) -> list[Fact]: ...
    def audit(self, fact_id: str | None = None, scope: Scope | None = None, limit: int = 500) -> list[AuditEntry]: ...


class FactEraser(Protocol):
    """What `Facts.erase` hands the work to (erase.Eraser)."""

    def erase(self, fact_id: str, reason: str | None = None, also: Any = ()) -> dict[str, int]: ...
    def plan(self, fact_id: str) -> Any: ...


class Facts:
    """`memory.facts`: CRUD with dedup, threshold, max_facts eviction, validity and merging."""

    def __init__(self, store: FactRepository, settings: "Settings",
                 embed: Callable[[list[str]], "np.ndarray"] | None = None, eraser: FactEraser | None = None) -> None:
        self._store = store
        self._settings = settings
        self._embed = embed
        self.eraser = eraser

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
        source_error: str | None = None,
    ) -> Fact | None:
        """Store a fact. Returns None when it is a duplicate or below the confidence threshold. `source_error`:
        for a correction, the mistake it corrects (kept beside the content, injected as "(avoid: ...)")."""
        fact, _reason = self.add_with_reason(
            content, category, confidence, user_id=user_id, agent_name=agent_name, source=source, thread_id=thread_id,
            source_error=source_error,
        )
        return fact

    def add_with_reason(
        self, content: str, category: str, confidence: float, *, user_id: str = "default",
        agent_name: str = "default", source: str | None = None, thread_id: str | None = None,
        source_error: str | None = None,
    ) -> tuple[Fact | None, str | None]:
        """`add()`, also saying why nothing was stored: (fact, None) or (None, "duplicate"|"low_confidence")."""
        scope = make_scope(user_id, agent_name)
        content = validate_content(content, self._settings.max_fact_chars)
        category = validate_category(category)
        confidence = validate_confidence(confidence)
        source = validate_source(source)
        source_error = validate_source_error(source_error, self._settings.max_fact_chars)
        if thread_id is not None:
            check_text(thread_id, "thread_id", 256)
        with self._store.transaction(scope) as tx:
            return tx.add(content, category, confidence, source=source, thread_id=thread_id,
                          threshold=self._settings.fact_confidence_threshold, max_facts=self._settings.max_facts,
                          source_error=source_error)

    def get(self, fact_id: str) -> Fact:
        """Any fact by id, valid or not. KeyError if unknown."""
        return self._store.get(validate_fact_id(fact_id))

    def list(self, *, user_id: str = "default", agent_name: str = "default", category: str | None = None,
             include_invalid: bool = False, as_of: datetime | None = None, include_held: bool = False,
             limit: int | None = None) -> list[Fact]:
        """The scope's valid facts, confidence descending; all of them with `include_invalid` (those held for
        review too with `include_held`), or those that were valid at `as_of` ("what did we believe on that day");
        the first `limit` of them when given (read as many, not the whole scope)."""
        scope = make_scope(user_id, agent_name)
        if category is not None:
            validate_category(category)
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise ValueError(f"limit must be a positive integer; got {limit!r}")
        return self._store.list(scope, category, include_invalid=bool(include_invalid), as_of=validate_as_of(as_of),
                                include_held=bool(include_held), limit=limit)

    def duplicate_of(self, content: str, *, user_id: str = "default", agent_name: str = "default") -> Fact | None:
        """The valid fact that `add` skips `content` for as a duplicate (the same normalised content), or None."""
        return self._store.with_key(make_scope(user_id, agent_name), content_key(content))

    def update(
        self, fact_id: str, *, content: str | None = None, category: str | None = None, confidence: float | None = None
    ) -> Fact:
        """Change the given fields of a fact in place (the library's raw edit; `created_at` never changes). To
        edit a fact as the dashboard and MCP do (a new statement supersedes the old one), use `revise`."""
        changes: dict[str, Any] = {}
        if content is not None:
            changes["content"] = validate_content(content, self._settings.max_fact_chars)
        if category is not None:
            changes["category"] = validate_category(category)
        if confidence is not None:
            changes["confidence"] = validate_confidence(confidence)
        return self._store.update(validate_fact_id(fact_id), changes)

    def revise(self, fact_id: str, *, content: str | None = None, category: str | None = None,
               confidence: float | None = None, reason: str | None = None,
               made_on: datetime | None = None) -> Revision:
        """Edit a fact the way a person or an agent means it, the one rule for every client (dashboard, MCP):
        a new statement supersedes the fact (the old one stays in history, invalid, pointing at the new one,
        which takes the new category and confidence if given); the same statement (same `content_key`) is no
        change; a new category or confidence alone changes the fact in place. A fact that is no longer valid is
        refused (ValueError): edit the current one. KeyError for an unknown id. `made_on`: the `updated_at` of
        the fact the edit was made on (a form, a grid); if the fact changed since, the edit is refused
        (StaleEditError, a ValueError) rather than applied to a statement its author never saw."""
        fact_id = validate_fact_id(fact_id)
        if content is not None:
            content = validate_content(content, self._settings.max_fact_chars)
        if category is not None:
            validate_category(category)
        if confidence is not None:
            confidence = validate_confidence(confidence)
        reason = validate_reason(reason)
        old = self._store.get(fact_id)
        if made_on is not None and old.updated_at != made_on:
            raise StaleEditError(f"{fact_id} changed since this edit was made (now: {old.content[:80]!r}); "
                                 "look at it again and redo the edit")
        if not old.valid:
            raise ValueError(f"{fact_id} is no longer valid (replaced by {old.superseded_by or 'nothing'}); "
                             "change the current fact instead")
        if content is not None and content_key(content) == content_key(old.content):
            content = None  # the same statement: nothing to supersede
        changed = tuple(name for name, value, was in (("category", category, old.category),
                                                      ("confidence", confidence, old.confidence))
                        if value is not None and value != was)
        if content is not None:
            new = self.supersede(fact_id, content, category=category, confidence=confidence, reason=reason)
            return Revision(new, fact_id, ("content", *changed))
        if not changed:
            return Revision(old, None, ())
        return Revision(self.update(fact_id, category=category, confidence=confidence), None, changed)

    def delete(self, fact_id: str) -> None:
        """Remove a fact for good (audited). To record that it stopped being true, `invalidate` it instead."""
        self._store.delete(validate_fact_id(fact_id))

    def supersede(self, fact_id: str, content: str, *, category: str | None = None, confidence: float | None = None,
                  reason: str | None = None) -> Fact:
        """Replace a valid fact by a new one: the new fact is added (category and confidence default to the
        old one's) and the old one is invalid from now on, pointing at it. If the new text is already a valid
        fact of the scope, that fact is the replacement. Returns the new (or existing) fact."""
        fact_id = validate_fact_id(fact_id)
        content = validate_content(content, self._settings.max_fact_chars)
        if category is not None:
            validate_category(category)
        if confidence is not None:
            validate_confidence(confidence)
        reason = validate_reason(reason)
        old = self._store.get(fact_id)
        with self._store.transaction(old.scope) as tx:
            fact, _new = tx.supersede(fact_id, content, category=category, confidence=confidence, reason=reason,
                                      threshold=self._settings.fact_confidence_threshold,
                                      max_facts=self._settings.max_facts)
        return fact

    def invalidate(self, fact_id: str, *, reason: str | None = None) -> Fact:
        """Mark a fact as no longer true from now on. It is kept (and audited), but no longer listed,
        injected, searched or deduplicated against. Invalidating an invalid fact changes nothing."""
        fact_id = validate_fact_id(fact_id)
        reason = validate_reason(reason)
        old = self._store.get(fact_id)
        with self._store.transaction(old.scope) as tx:
            return tx.invalidate(fact_id, reason=reason)

    def erase_plan(self, fact_id: str, *, user_id: str | None = None, agent_name: str | None = None) -> Any:
        """What `erase` would do, changing nothing: `.passages` (each `.where`, `.text`) that state the fact, and
        `.related`, ids of valid facts saying the same in other words. KeyError for an unknown id (or one of
        another scope than the one named)."""
        fact = self._erasable(fact_id, user_id, agent_name)
        return self.eraser.plan(fact.id)

    def erase(self, fact_id: str, *, reason: str | None = None, also: Any = (),
              user_id: str | None = None, agent_name: str | None = None) -> dict[str, int]:
        """Erase a fact for good: invalidated, its text and exactly the passages of its plan removed from
        everything memory_core stores (they become `[erased]`), plus the facts in `also` (each by its own plan);
        a tombstone keeps what was taken in earlier from bringing it back; one audit row per fact says that it
        happened, without the text. Returns how many rows, files and passages changed per place. KeyError for
        an unknown id."""
        reason = validate_reason(reason)
        fact = self._erasable(fact_id, user_id, agent_name)
        if isinstance(also, str):
            raise ValueError("also is a list of fact ids, not one id")
        extra = [self._erasable(i, fact.user_id, fact.agent_name).id for i in also]
        return self.eraser.erase(fact.id, reason, extra)

    def _erasable(self, fact_id: str, user_id: str | None, agent_name: str | None) -> Fact:
        fact = self._store.get(validate_fact_id(fact_id))  # KeyError before anything is touched
        if (user_id is not None or agent_name is not None) and \
                fact.scope != make_scope(user_id or "default", agent_name or "default"):
            raise KeyError(fact_id)  # another scope's id is unknown there
        if self.eraser is None:
            raise RuntimeError("these facts were built without an eraser (compose() gives them one)")
        return fact

    def merge(self, keep_id: str, drop_id: str) -> Fact:
        """Merge two valid facts of one scope: `drop_id` is superseded by `keep_id`, which keeps the higher
        confidence of the two. Returns the kept fact."""
        keep_id, drop_id = validate_fact_id(keep_id), validate_fact_id(drop_id)
        if keep_id == drop_id:
            raise ValueError("cannot merge a fact with itself")
        keep = self._store.get(keep_id)
        if self._store.get(drop_id).scope != keep.scope:
            raise KeyError(drop_id)  # another scope's id is unknown here
        with self._store.transaction(keep.scope) as tx:
            return tx.merge(keep_id, drop_id)

    def near_duplicates(self, *, user_id: str = "default", agent_name: str = "default",
                        threshold: float = 0.9) -> list[tuple[Fact, Fact, float]]:
        """Pairs of valid facts of the scope that say the same thing (embedding similarity plus lexical
        overlap, negations and different values vetoed), most similar first."""
        from memory_core.facts.duplicates import find_near_duplicates

        threshold = validate_confidence(threshold)
        facts = self.list(user_id=user_id, agent_name=agent_name)
        if len(facts) < 2 or self._embed is None:
            return []
        vectors = self._embed([f.content for f in facts])
        return [(facts[i], facts[j], score) for i, j, score in find_near_duplicates(
            [f.content for f in facts], vectors, threshold)]

    def held(self, *, user_id: str = "default", agent_name: str = "default") -> list[Fact]:
        """The scope's statements held for review, oldest first: they instruct the agent (to ignore or reveal its
        instructions, skip checks, obey someone, ...) rather than tell something about the user, so they are kept
        but never listed, injected or searched until a person releases them (or deletes them)."""
        return self._store.held(make_scope(user_id, agent_name))

    def hold_instructions(self, *, user_id: str = "default", agent_name: str = "default") -> list[Fact]:
        """Hold the scope's valid facts that instruct the agent: those stored before memory_core held them on the
        way in (a database from before migration m020). Returns them; none the second time."""
        return self._store.hold_instructions(make_scope(user_id, agent_name))

    def release(self, fact_id: str, *, user_id: str = "default", agent_name: str = "default") -> Fact:
        """A person's decision that a held statement is memory after all: it becomes an ordinary fact, valid from
        now (audited "released", with the actor). Returns it (or the valid fact that already said the same).
        KeyError for an unknown id or another scope's; ValueError for a fact that is not held."""
        scope = make_scope(user_id, agent_name)
        fact = self._store.get(validate_fact_id(fact_id))
        if fact.scope != scope:
            raise KeyError(fact_id)  # another scope's id is as unknown as a made-up one
        return self._store.release(fact_id, self._settings.max_facts)

    def count(self, *, user_id: str = "default", agent_name: str = "default") -> int:
        """Valid facts in the scope."""
        return self._store.count(make_scope(user_id, agent_name))

    def history(self, fact_id: str | None = None, *, user_id: str = "default", agent_name: str = "default",
                limit: int = 500) -> list[AuditEntry]:
        """The audit log of one fact (any scope), or of a whole scope, newest first."""
        if fact_id is not None:
            validate_fact_id(fact_id)
        scope = None if fact_id else make_scope(user_id, agent_name)
        return self._store.audit(fact_id=fact_id, scope=scope, limit=limit)
