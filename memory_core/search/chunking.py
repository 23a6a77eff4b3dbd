"""Cutting daily logs and MEMORY.md into search chunks, each with the line range it came from."""

from __future__ import annotations

import re

from memory_core.tiers.core import BULLET, CORE_PATH
from memory_core.tiers.daily import split_blocks

# A chunk holds at most this many characters (~400 tokens of English, the size OpenClaw's memory search
# chunks by, and facts are at most 2,000): a longer daily block or MEMORY.md bullet becomes several chunks,
# cut between paragraphs, else lines, else sentences, else words, else anywhere. Part of each document's
# indexed hash, so that a new bound re-chunks what was indexed under the old one.
CHUNK_CHARS = 1_600
HEADING_CHARS = 200  # of the MEMORY.md heading that prefixes each of its bullets' chunks
CHUNKING = f"chunks<={CHUNK_CHARS}, preamble"  # how documents are cut: a change re-chunks them
_BOUNDARIES = (re.compile(r"\n[ \t]*\n\s*"), re.compile(r"\n"), re.compile(r"(?<=[.!?])\s+|(?<=[。！？])"),
               re.compile(r"\s+"))


def chunk_document(path: str, content: str) -> list[tuple[int, int, str]]:
    """Daily logs by block; MEMORY.md by bullet (with the heading it sits under); as (first line, last
    line, text), no text longer than CHUNK_CHARS."""
    if path == CORE_PATH:
        out, heading = [], ""
        for n, line in enumerate(content.split("\n"), 1):
            if line.startswith("#"):
                heading = line.lstrip("#").strip()[:HEADING_CHARS]
            elif m := BULLET.match(line):
                prefix = f"{heading}: " if heading else ""
                pieces = split_chunk(n, m.group(1), CHUNK_CHARS - len(prefix))
                out.extend((n, n, prefix + piece) for _, _, piece in pieces)
        return out
    return [piece for start, _, block in split_blocks(content) for piece in split_chunk(start, block)]


def split_chunk(first_line: int, text: str, limit: int = CHUNK_CHARS) -> list[tuple[int, int, str]]:
    """`text` (whose first line is `first_line`) in pieces of at most `limit` characters, as (first line,
    last line, piece), stripped; cut at the coarsest boundary that fits (see CHUNK_CHARS)."""
    pieces = []
    line, counted_to = first_line, 0  # lines counted as the spans go, never from the start again
    for lo, hi in _spans(text, 0, len(text), limit, 0):
        while lo < hi and text[lo].isspace():
            lo += 1
        while hi > lo and text[hi - 1].isspace():
            hi -= 1
        if lo < hi:
            line += text.count("\n", counted_to, lo)
            counted_to = lo
            pieces.append((line, line + text.count("\n", lo, hi), text[lo:hi]))
    return pieces


def _spans(text: str, lo: int, hi: int, limit: int, level: int) -> list[tuple[int, int]]:
    """Consecutive (start, end) spans covering text[lo:hi], each at most `limit` long: the segments between
    _BOUNDARIES[level] packed greedily, a segment too long for one span cut at the next level."""
    if hi - lo <= limit:
        return [(lo, hi)]
    if level == len(_BOUNDARIES):
        return [(a, min(a + limit, hi)) for a in range(lo, hi, limit)]
    cuts = [m.end() for m in _BOUNDARIES[level].finditer(text, lo, hi) if lo < m.end() < hi]
    spans: list[tuple[int, int]] = []
    open_at: int | None = None  # where the span being packed starts
    for a, b in zip([lo, *cuts], [*cuts, hi]):
        if b - a > limit:
            if open_at is not None:
                spans.append((open_at, a))
                open_at = None
            spans.extend(_spans(text, a, b, limit, level + 1))
        elif open_at is None or b - open_at > limit:
            if open_at is not None:
                spans.append((open_at, a))
            open_at = a
    if open_at is not None:
        spans.append((open_at, hi))
    return spans
