"""Spans of a text that do not overlap, kept in order."""

from __future__ import annotations

from bisect import bisect_right


class Spans:
    """Spans of a text that do not overlap, in order: whether a new one overlaps any is two comparisons (each against
    every span taken was quadratic in a text of many dates)."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def overlaps(self, start: int, end: int) -> bool:
        i = bisect_right(self.starts, start)
        return (i > 0 and self.ends[i - 1] > start) or (i < len(self.starts) and self.starts[i] < end)

    def add(self, start: int, end: int) -> None:
        i = bisect_right(self.starts, start)
        self.starts.insert(i, start)
        self.ends.insert(i, end)


__all__ = ["Spans"]
