"""Answers kept while their scope is unchanged: a search's hits and an injection's report are made again only when
the scope's version differs from the one they were made at (an agent asks the same thing turn after turn).

The version is the database's (m034): every write to what a search or an injection reads gives the scope a new
one in the writing transaction, whichever process wrote, and an old one never comes back. Files are taken in
first, as a search takes them in (a changed daily log re-chunked is such a write). A version is trusted for
keeping answers only once this process has known it for SETTLED_SECONDS: the index's own caches see another
process's writes within that long, so an answer made sooner may lack them (it is served, not kept).

Kept in a cache of their own, bounded in bytes (an eighth of `search_cache_mb`: answers never push the matrices
out), and dropped with the scope's other entries by `SearchIndex.touch`. An answer is kept once it was asked for
twice (a question asked once costs no copy and takes no room); a copy is given out: a caller may change it.

Beside whole answers, the reads of a scope that a new question does not change (`read`: its summaries, its count,
its most confident facts; `rows`: the rows of search hits) are kept under the version too, from the first read, in
the same cache: a question never asked before reads only what it picks.
"""

from __future__ import annotations

import copy
import itertools
import time
from typing import Any, Callable, Hashable, Iterable, TypeVar

from memory_core.scope import Scope
from memory_core.search.cache import BytesLRU

T = TypeVar("T")


class Answers:
    def __init__(self, take_in: Callable[[Scope], Any], version: Callable[[Scope], int | None], *,
                 settled_seconds: float, max_bytes: int) -> None:
        self.take_in = take_in  # the scope's files taken into the index, as a search takes them in
        self.version = version  # the scope's version (IndexStore.scope_version)
        self.settled_seconds = settled_seconds
        self.cache = BytesLRU(max_bytes)
        self.made = 0  # answers made (not served from what was kept): for tests and benchmarks

    def forget(self, scope: Scope | None = None) -> None:
        """Drop what is kept of `scope` (of every scope when None)."""
        self.cache.drop(lambda key: scope is None or key[1] == scope)

    def recall(self, scope: Scope, key: Hashable, make: Callable[[], T], size: Callable[[T], int]) -> T:
        """What `make()` gives for `key` in `scope`: kept from an earlier call while the scope's version holds.
        `size(answer)`: about how many bytes the answer takes in memory."""
        try:
            hash(key)
        except TypeError:  # an option that cannot be a key: made each time
            return self._make(make)
        self.take_in(scope)
        version = self.version(scope)
        if version is None:  # a scope nothing was ever written to
            return self._make(make)
        cache, now = self.cache, time.monotonic()
        kept = cache.get(("answer", scope, key))
        if kept is not None and kept[0] == version and kept[1] is not None:
            return copy.deepcopy(kept[1])
        seen = cache.get(("version", scope))
        if seen is None or seen[0] != version:
            cache.put(("version", scope), (version, now), 100)
        answer = self._make(make)
        if seen is not None and seen[0] == version and now - seen[1] >= self.settled_seconds:
            asked = kept is not None and kept[0] == version  # asked before at this version: kept from now on
            cache.put(("answer", scope, key), (version, copy.deepcopy(answer) if asked else None),
                      (size(answer) if asked else 0) + 500)
        return answer

    def read(self, scope: Scope, key: Hashable, read: Callable[[], T], size: Callable[[T], int]) -> T:
        """What `read()` gives of the database for `key` in `scope`, kept while the scope's version holds (not
        settled: a read of rows is as new as the version it is kept under, or newer). The caller reads within a
        `Database.reads()` block, whose version is read once, before what it is kept with; the value is shared,
        and must not be changed."""
        version = self.version(scope)
        held, value = self._entry(scope, key, version)
        if not held:
            value = read()
            self.keep(scope, key, value, size(value), version)
        return value

    def kept(self, scope: Scope, key: Hashable, version: int | None) -> Any:
        """What `keep` kept for `key` at `version` (the scope's, read by the caller), or None."""
        return self._entry(scope, key, version)[1]

    def keep(self, scope: Scope, key: Hashable, value: Any, nbytes: int, version: int | None) -> None:
        """Keep `value`, read of the database at `version` (the scope's, read before it) or after, for `key`."""
        if version is not None:
            self.cache.put(("read", scope, key), (version, value), nbytes + 200)

    def rows(self, scope: Scope, kind: str, keys: Iterable[Hashable],
             read: Callable[[list[Hashable]], dict[Hashable, Any]], size: Callable[[Any], int]) -> dict[Hashable, Any]:
        """`read(keys)`'s rows by key (a key it does not give has none), each kept as `read` does (one read for
        those not kept at the scope's version; a key read without a row is kept as having none)."""
        version = self.version(scope)
        out: dict[Hashable, Any] = {}
        missing = []
        keys = list(keys)
        found_kept = self.cache.get_many([("read", scope, (kind, key)) for key in keys]) if version is not None else []
        for key, kept in itertools.zip_longest(keys, found_kept):
            if kept is None or kept[0] != version:
                missing.append(key)
            elif kept[1] is not None:
                out[key] = kept[1]
        if missing:
            found = read(missing)
            for key in missing:
                row = found.get(key)
                self.keep(scope, (kind, key), row, size(row) if row is not None else 0, version)
                if row is not None:
                    out[key] = row
        return out

    def _entry(self, scope: Scope, key: Hashable, version: int | None) -> tuple[bool, Any]:
        """(whether a value is kept for `key` at `version`, that value); never for a scope with no version."""
        kept = self.cache.get(("read", scope, key)) if version is not None else None
        return (True, kept[1]) if kept is not None and kept[0] == version else (False, None)

    def _make(self, make: Callable[[], T]) -> T:
        self.made += 1
        return make()


def report_bytes(report: Any) -> int:
    """About what an InjectionReport takes in memory."""
    return 2 * len(report.text) + 80 * (len(report.kept_fact_ids) + len(report.dropped_fact_ids)) + 1000


def hits_bytes(hits: list[Any]) -> int:
    """About what a list of SearchHits takes in memory."""
    return sum(2 * len(h.text) + 300 for h in hits)
