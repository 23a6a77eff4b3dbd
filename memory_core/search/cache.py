"""A least-recently-used cache bounded in bytes: the search index's per-scope matrices and IDF weights (and, an entry
counted as one, injection's token counts of fact lines).

Each entry says what it holds in bytes; putting one evicts the least recently used until the total is within
the bound (an entry larger than the whole bound is not kept at all). Thread-safe.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable, Hashable


class BytesLRU:
    def __init__(self, max_bytes: int) -> None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0:
            raise ValueError("max_bytes must be a non-negative integer")
        self.max_bytes = max_bytes
        self._items: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def bytes(self) -> int:
        """What the entries held now say they take."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._items)

    def keys(self) -> list[Hashable]:
        with self._lock:
            return list(self._items)

    def get(self, key: Hashable) -> Any:
        """The value (now the most recently used), or None."""
        with self._lock:
            found = self._items.get(key)
            if found is None:
                return None
            self._items.move_to_end(key)
            return found[0]

    def get_many(self, keys: list[Hashable]) -> list[Any]:
        """`get` of each key, in one hold of the lock (a search looks up the rows of fifty candidates)."""
        out: list[Any] = []
        with self._lock:
            items = self._items
            for key in keys:
                found = items.get(key)
                if found is None:
                    out.append(None)
                else:
                    items.move_to_end(key)
                    out.append(found[0])
        return out

    def put(self, key: Hashable, value: Any, nbytes: int) -> None:
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            if nbytes > self.max_bytes:
                return
            self._items[key] = (value, nbytes)
            self._bytes += nbytes
            while self._bytes > self.max_bytes:
                _key, (_value, size) = self._items.popitem(last=False)
                self._bytes -= size

    def pop(self, key: Hashable) -> Any:
        with self._lock:
            old = self._items.pop(key, None)
            if old is None:
                return None
            self._bytes -= old[1]
            return old[0]

    def drop(self, where: Callable[[Hashable], bool] = lambda _key: True) -> None:
        """Drop the entries whose key `where` accepts (all by default)."""
        with self._lock:
            for key in [k for k in self._items if where(k)]:
                self._bytes -= self._items.pop(key)[1]
