"""Agent frameworks' key-value memories as memory_core items, framework-neutral (LangGraph's store is
`memory_core.integrations.langgraph`, over this).

A namespace is `(user_id, agent_name, *more)`: the scope, then the framework's own labels. An item whose
value holds a `"content"` string is a fact of the scope: the team sees it on the dashboard, search finds
it, injection uses it, and a correction made there is what the agent reads back (the fact is the truth,
its key and other fields are kept beside it). Deleting such an item invalidates the fact, and a fact
forgotten on the dashboard is an item that no longer exists. Any other value is kept as it is.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Mapping

from memory_core.facts.api import CATEGORIES, Fact, content_key
from memory_core.scope import Scope, make_scope
from memory_core.store.item_store import ItemStore, StoredItem
from memory_core.text.credentials import without_secrets

if TYPE_CHECKING:
    from memory_core.memory import Memory

log = logging.getLogger(__name__)

DEFAULT_CATEGORY = "context"
DEFAULT_CONFIDENCE = 0.8  # what an agent's `remember` gets over MCP too
MAX_KEY_CHARS = 512
MAX_VALUE_CHARS = 1_000_000
_CHAIN = 50  # supersessions followed from an item's fact to the fact that replaced it


class NamespaceError(ValueError):
    """A namespace that does not start with a valid (user_id, agent_name)."""


@dataclass(frozen=True)
class AgentItem:
    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    fact_id: str | None = None
    score: float | None = None


def split_namespace(namespace: tuple[str, ...]) -> tuple[Scope, str]:
    """(scope, path) of a full namespace; NamespaceError when it does not start with a valid scope."""
    if len(namespace) < 2:
        raise NamespaceError(f"a namespace starts with (user_id, agent_name); got {namespace!r:.120}")
    for label in namespace[2:]:
        if not isinstance(label, str) or not label or "." in label or "\x00" in label:
            raise NamespaceError(f"namespace labels are non-empty strings without '.'; got {label!r:.80}")
    try:
        scope = make_scope(namespace[0], namespace[1])
    except ValueError as exc:
        raise NamespaceError(f"namespace {namespace!r:.120}: {exc}") from None
    return scope, ".".join(namespace[2:])


class AgentItems:
    """Items over a memory, as `actor` (recorded with every fact change)."""

    def __init__(self, memory: "Memory", *, actor: str = "langgraph", source: str = "langgraph") -> None:
        self.memory = memory
        self.actor = actor
        self.source = source
        self._store = ItemStore(memory.db, memory.clock)

    # -- reading ------------------------------------------------------------------------------------

    def get(self, namespace: tuple[str, ...], key: str) -> AgentItem | None:
        scope, path = split_namespace(namespace)
        row = self._store.get(scope, path, _key(key))
        if row is None and not path and key.startswith("fact_"):  # what search gave for a fact without an item
            return self._fact_item(scope, key)
        return self._live(row) if row else None

    def items(self, prefix: tuple[str, ...] = ()) -> list[AgentItem]:
        """The live items under a namespace prefix, most recently updated first."""
        user = prefix[0] if prefix else None
        agent = prefix[1] if len(prefix) > 1 else None
        rows = self._store.items(user, agent)
        found = (self._live(row) for row in rows)
        return [item for item in found if item is not None and item.namespace[:len(prefix)] == tuple(prefix)]

    def search(self, prefix: tuple[str, ...], query: str, *, limit: int, offset: int = 0,
               keep: Any = None) -> list[AgentItem]:
        """Items under `prefix` for `query`: the facts memory_core's search ranks (best first, with its
        score), then the items that are not facts (no score), as LangGraph's own store fills up with the
        items it has no vectors for. A prefix that is a whole scope, `(user_id, agent_name)`, searches that
        scope's memory: a fact added any other way (the library, MCP, the dashboard, `update()`) comes as a
        fact item (`fact_item`). `keep(item)` filters before paging."""
        everything = self.items(prefix)
        candidates = [item for item in everything if keep is None or keep(item)]
        facts = {item.fact_id: item for item in candidates if item.fact_id}
        linked = {item.fact_id for item in everything if item.fact_id}
        whole = split_namespace(prefix)[0] if len(prefix) == 2 else None
        scopes = {(i.namespace[0], i.namespace[1]) for i in facts.values()} | ({tuple(whole)} if whole else set())
        ranked: list[AgentItem] = []
        depth = min(50, max(10, (offset + limit) * 3))
        for scope in sorted(scopes):
            for hit in self.memory.search(query, k=depth, user_id=scope[0], agent_name=scope[1]):
                if hit.kind != "fact":
                    continue
                item = facts.pop(hit.ref, None)
                if item is None and whole is not None and hit.ref not in linked:
                    linked.add(hit.ref)
                    item = self._fact_item(whole, hit.ref)
                    item = item if item is not None and (keep is None or keep(item)) else None
                if item is not None:
                    ranked.append(_scored(item, float(hit.score)))
        ranked.sort(key=lambda item: -(item.score or 0.0))
        plain = [item for item in candidates if not item.fact_id]
        return (ranked + plain)[offset:offset + limit]

    def _fact_item(self, scope: Scope, fact_id: str) -> AgentItem | None:
        """A valid fact of `scope` that no item holds, as an item: namespace `(user_id, agent_name)`, key its fact
        id, value its content, category and confidence."""
        try:
            fact = self.memory.facts.get(fact_id)
        except KeyError:
            return None
        if not fact.valid or (fact.user_id, fact.agent_name) != tuple(scope):
            return None
        value = {"content": fact.content, "category": fact.category, "confidence": fact.confidence}
        return AgentItem((scope.user_id, scope.agent_name), fact.id, value, fact.created_at, fact.updated_at, fact.id)

    def namespaces(self) -> list[tuple[str, ...]]:
        return sorted({item.namespace for item in self.items()})

    # -- writing ------------------------------------------------------------------------------------

    def put(self, namespace: tuple[str, ...], key: str, value: Mapping[str, Any]) -> None:
        """Create or replace an item; a value with a "content" string is (or changes) the item's fact."""
        scope, path = split_namespace(namespace)
        key = _key(key)
        if not isinstance(value, Mapping):
            raise ValueError(f"an item's value is a dict; got {type(value).__name__}")
        value = masked(value)
        try:
            text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"an item's value must be JSON: {exc}") from None
        if len(text) > MAX_VALUE_CHARS:
            raise ValueError(f"an item's value is at most {MAX_VALUE_CHARS:,} characters of JSON")
        with self.memory.acting_as(self.actor):
            old = self._store.get(scope, path, key)
            current = self._current(old) if old and old.fact_id else None
            fact_id = None
            if current is not None and self._shared(scope, path, key, old, current):
                current = None  # another key holds it too: this key's change is its own, the other keeps it
            if isinstance(value.get("content"), str):
                fact_id = self._fact_for(scope, path, key, value, current)
            elif current is not None:
                self.memory.facts.invalidate(current.id, reason=f"item {key!r:.80} is no longer a fact")
            self._store.put(scope, path, key, text, fact_id)

    def delete(self, namespace: tuple[str, ...], key: str) -> None:
        """Remove the item; its fact, if it has one, is invalidated (kept in its history)."""
        scope, path = split_namespace(namespace)
        key = _key(key)
        with self.memory.acting_as(self.actor):
            old = self._store.get(scope, path, key)
            if old is None:
                return
            current = self._current(old) if old.fact_id else None
            if current is not None and not self._shared(scope, path, key, old, current):
                self.memory.facts.invalidate(current.id, reason=f"deleted through {self.source}")
            self._store.delete(scope, path, key)

    # -- the facts behind items ---------------------------------------------------------------------

    def _shared(self, scope: Scope, path: str, key: str, row: StoredItem, current: Fact) -> bool:
        """Whether another key's item is the same fact (each key is its own item: changing or deleting one
        never touches the other's)."""
        return self._store.sharing(scope, {i for i in (row.fact_id, current.id) if i}, path, key) > 0

    def _fact_for(self, scope: Scope, path: str, key: str, value: dict[str, Any], current: Fact | None) -> str | None:
        content = value["content"]
        category = value.get("category") if value.get("category") in CATEGORIES else None
        confidence = value.get("confidence")
        if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 <= confidence <= 1:
            confidence = None
        if current is not None:
            if content_key(content) != content_key(current.content):
                return self.memory.facts.supersede(current.id, content, category=category, confidence=confidence,
                                                   reason=f"updated through {self.source}").id
            if (category or current.category, current.confidence if confidence is None else confidence) != \
                    (current.category, current.confidence):
                self.memory.facts.update(current.id, category=category, confidence=confidence)
            return current.id
        source = f"{self.source}:{'/'.join([*filter(None, [path.replace('.', '/')]), key])}"[:256]
        fact, skipped = self.memory.facts.add_with_reason(
            content, category or DEFAULT_CATEGORY, DEFAULT_CONFIDENCE if confidence is None else confidence,
            user_id=scope.user_id, agent_name=scope.agent_name, source=source)
        if fact is not None:
            return fact.id
        if skipped == "duplicate":  # the scope knows it already: the item is that fact
            wanted = content_key(content)
            same = next((f for f in self.memory.facts.list(user_id=scope.user_id, agent_name=scope.agent_name)
                         if content_key(f.content) == wanted), None)
            return same.id if same else None
        log.info("item %s of %s kept as a plain item: its confidence is below the threshold", key[:80], scope.key)
        return None

    def _current(self, row: StoredItem) -> Fact | None:
        """The valid fact an item's fact is now (itself, or what replaced it), or None."""
        if row.fact_id is None:
            return None
        if row.fact_valid:
            return self.memory.facts.get(row.fact_id)
        fact_id: str | None = row.fact_superseded_by
        for _ in range(_CHAIN):
            if fact_id is None:
                return None
            try:
                fact = self.memory.facts.get(fact_id)
            except KeyError:
                return None
            if fact.valid:
                return fact
            fact_id = fact.superseded_by
        return None

    def _live(self, row: StoredItem) -> AgentItem | None:
        value = json.loads(row.value)
        namespace = (row.scope.user_id, row.scope.agent_name, *(row.path.split(".") if row.path else ()))
        if row.fact_id is None:
            return AgentItem(namespace, row.key, value, row.created_at, row.updated_at)
        fact = self._current(row)
        if fact is None:  # forgotten (here or on the dashboard): the item is gone
            return None
        value["content"] = fact.content
        if "category" in value and value["category"] in CATEGORIES:
            value["category"] = fact.category
        if "confidence" in value:
            value["confidence"] = fact.confidence
        return AgentItem(namespace, row.key, value, row.created_at, max(row.updated_at, fact.updated_at), fact.id)


def masked(value: Any) -> Any:
    """`value` with credentials masked in every string it holds, keys of nested dicts included: an item's
    value is memory like a fact's text, whatever field it is in."""
    if isinstance(value, str):
        return without_secrets(value)
    if isinstance(value, Mapping):
        return {masked(k) if isinstance(k, str) else k: masked(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [masked(v) for v in value]
    return value


def _key(key: object) -> str:
    if not isinstance(key, str) or not key or len(key) > MAX_KEY_CHARS or "\x00" in key:
        raise ValueError(f"an item's key is a non-empty string of at most {MAX_KEY_CHARS} characters")
    return key


def _scored(item: AgentItem, score: float) -> AgentItem:
    return AgentItem(item.namespace, item.key, item.value, item.created_at, item.updated_at, item.fact_id, score)

