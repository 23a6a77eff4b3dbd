"""`MemoryCoreStore`: memory_core as LangGraph's long-term memory (`langgraph.store.base.BaseStore`).

    store = MemoryCoreStore(Memory())
    graph = builder.compile(store=store)          # nodes get it as `store` / `runtime.store`
    store.put(("ana", "coder", "memories"), "m1", {"content": "User prefers dark mode"})

Namespaces are `(user_id, agent_name, *more)`. An item whose value holds a `"content"` string is a fact of
that scope (its `category` and `confidence` read from the value when they are valid, defaults otherwise):
on the dashboard, in search and in injection like any other, and a correction made there is what the graph
reads back. `search(namespace, query=...)` uses memory_core's search; searching a whole scope,
`(user_id, agent_name)`, finds every valid fact of it, and a fact no item holds (added by the library, MCP,
the dashboard or `update()`) comes as an item of that namespace keyed by its fact id (`get` reads it back).
`delete` invalidates the fact. Other values are kept as they are. Needs `langgraph` (`pip install memory_core[langgraph]`).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Iterable

try:
    from langgraph.store.base import (
        BaseStore, GetOp, InvalidNamespaceError, Item, ListNamespacesOp, MatchCondition, Op, PutOp, Result,
        SearchItem, SearchOp)
except ImportError as exc:  # pragma: no cover - the message is the point
    raise ImportError("memory_core.integrations.langgraph needs LangGraph: pip install 'memory_core[langgraph]'") from exc

from memory_core.integrations.items import AgentItem, AgentItems, NamespaceError

if TYPE_CHECKING:
    from memory_core.memory import Memory


class MemoryCoreStore(BaseStore):
    """A LangGraph store over a `Memory`; changes are recorded as `actor` (default "langgraph")."""

    __slots__ = ("memory", "_items")

    def __init__(self, memory: "Memory", *, actor: str = "langgraph") -> None:
        self.memory = memory
        self._items = AgentItems(memory, actor=actor, source="langgraph")

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the operations: reads first, in order, then the writes (the last write of a key wins), as
        LangGraph's own stores do."""
        ops = list(ops)
        results: list[Result] = []
        writes: dict[tuple[tuple[str, ...], str], PutOp] = {}
        try:
            for op in ops:
                if isinstance(op, GetOp):
                    found = self._items.get(tuple(op.namespace), op.key)
                    results.append(_item(found) if found else None)
                elif isinstance(op, SearchOp):
                    results.append(self._search(op))
                elif isinstance(op, ListNamespacesOp):
                    results.append(self._namespaces(op))
                elif isinstance(op, PutOp):
                    writes[(tuple(op.namespace), op.key)] = op
                    results.append(None)
                else:
                    raise ValueError(f"unknown operation: {type(op).__name__}")
            for (namespace, key), op in writes.items():
                if op.value is None:
                    self._items.delete(namespace, key)
                else:
                    self._items.put(namespace, key, op.value)
        except NamespaceError as exc:
            raise InvalidNamespaceError(str(exc)) from None
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """`batch` in a worker thread (the memory's calls are blocking database calls)."""
        return await asyncio.to_thread(self.batch, list(ops))

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        keep = (lambda item: _matches_filter(item.value, op.filter)) if op.filter else None
        if op.query:
            found = self._items.search(prefix, op.query, limit=op.limit, offset=op.offset, keep=keep)
        else:
            found = [item for item in self._items.items(prefix) if keep is None or keep(item)]
            found = found[op.offset:op.offset + op.limit]
        return [SearchItem(item.namespace, item.key, item.value, item.created_at, item.updated_at, item.score)
                for item in found]

    def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        namespaces = [ns for ns in self._items.namespaces()
                      if all(_matches_namespace(condition, ns) for condition in op.match_conditions or ())]
        if op.max_depth is not None:
            namespaces = sorted({ns[:op.max_depth] for ns in namespaces})
        return namespaces[op.offset:op.offset + op.limit]


def _item(found: AgentItem) -> Item:
    return Item(value=found.value, key=found.key, namespace=found.namespace, created_at=found.created_at,
                updated_at=found.updated_at)


def _matches_namespace(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    pairs = zip(namespace, path) if condition.match_type == "prefix" else zip(reversed(namespace), reversed(path))
    return all(want == "*" or have == want for have, want in pairs)


def _matches_filter(value: Any, wanted: dict[str, Any]) -> bool:
    """LangGraph's filter semantics: exact (nested) matches and $eq $ne $gt $gte $lt $lte."""
    return all(_compare(value.get(k) if isinstance(value, dict) else None, v) for k, v in wanted.items())


def _compare(have: Any, want: Any) -> bool:
    if isinstance(want, dict):
        if any(k.startswith("$") for k in want):
            return all(_operator(have, op, operand) for op, operand in want.items())
        return isinstance(have, dict) and all(_compare(have.get(k), v) for k, v in want.items())
    if isinstance(want, (list, tuple)):
        return isinstance(have, (list, tuple)) and len(have) == len(want) and all(map(_compare, have, want))
    return have == want


def _operator(have: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return have == operand
    if op == "$ne":
        return have != operand
    if op not in ("$gt", "$gte", "$lt", "$lte"):
        raise ValueError(f"unsupported filter operator: {op}")
    try:
        a, b = float(have), float(operand)
    except (TypeError, ValueError):
        return False
    return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]


__all__ = ["MemoryCoreStore"]
