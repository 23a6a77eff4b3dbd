"""Evidence for a question: the passages of episodes, daily logs and MEMORY.md that search ranks most relevant,
with their neighbouring turns and their dates, formatted within a token budget.

The section, after the seed's sections of `injection` (and only when a query brought passages):

    Relevant passages:
    [8 May 2023]
    - Caroline: I went to a LGBTQ support group yesterday (7 May 2023).
    - Melanie: How was it?
    [9 June 2023, daily log]
    - User planned a trip to Lisbon.

A passage is a turn of a conversation with the turns around it (NEIGHBOURS each side; touching ones merged), a
chunk of a daily log, or a bullet of MEMORY.md. Relevance decides which passages go in (best first, each that
fits); they are listed by date, oldest first, under one header a day (a day's turns in the order they were said),
so that the story reads in order. Every text is folded to one
line and starts with "- ", so that nothing said can forge a section. A turn that states a fact since retired
carries what replaced it: "(no longer current; now: ...)" or "(no longer current)".
"""

from __future__ import annotations

import re
from itertools import zip_longest
from dataclasses import dataclass, field, replace
from datetime import date
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Sequence

from memory_core.context.injection import InjectedPassage
from memory_core.search.asked import split_speaker
from memory_core.store.episode_store import TURN_SOURCE
from memory_core.text.dates import day_text
from memory_core.text.tokens import get_encoding, token_byte_lengths

if TYPE_CHECKING:
    from memory_core.context.injection import InjectionReport

TITLE = "Relevant passages:"
NEIGHBOURS = 1  # turns each side of a turn that search found
# A neighbour goes in after the turns search ranked up to this many places below the turn it is beside: search
# lends a turn's score to its neighbours already, so the turns it ranked come first (10 -> 40, with the speaker
# rule (search.asked): LoCoMo conv-26, tuned on, 0.711 -> 0.724 at 2,000 tokens and 0.671 -> 0.684 at 1,000; conv-30,
# checked on, 0.778 unchanged and 0.741 -> 0.753 at 1,000).
NEIGHBOUR_LAG = 40
HITS = 80  # the search hits passages are made of, at most
_DAILY = re.compile(r"memory/(\d{4}-\d{2}-\d{2})\.md")
_WS = re.compile(r"\s+")
MULTI_QUERY = True
PASSAGE_KINDS = ("episode", "daily", "core")
# With a query, how many candidates each of keyword and vector search gives the fusion (search's default for the 80
# hits asked is 400). LoCoMo dev pipeline, answer in context at 2,000 / 1,000 tokens, by depth: 200 0.755 / 0.708,
# 150 0.764 / 0.721, 100 0.755 / 0.717, 80 0.755 / 0.717 (conv-26, tuned on: 0.737 / 0.697, 0.757 / 0.704, 0.757 /
# 0.704, 0.737 / 0.704; conv-30, checked on: 0.790 / 0.728, 0.790 / 0.728, 0.778 / 0.753, 0.765 / 0.753); `bench
# evidence`, the depths alternated in one process: 41.9, 37.1, 35.4 ms at 200, 150, 100. That is at the default
# budget: a smaller one holds fewer passages and facts, and its search goes as deep as its share of the default
# (`evidence_depth`; not under search's own 50): an MCP agent's get_memory_context(query) at 500 tokens 8.3 -> 5.7 ms.
EVIDENCE_DEPTH = 150
EVIDENCE_DEPTH_AT = 2000


def evidence_depth(budget: int) -> int:
    """How many candidates each of keyword and vector search gives the fusion for an injection of `budget` tokens:
    EVIDENCE_DEPTH at the budget it was measured at (EVIDENCE_DEPTH_AT) and above, in proportion below it, 50 at
    least (search's own floor)."""
    return max(50, min(EVIDENCE_DEPTH, EVIDENCE_DEPTH * budget // EVIDENCE_DEPTH_AT))


@dataclass
class Passage:
    when: str  # YYYY-MM-DD, "" when undated (MEMORY.md)
    where: str  # conversation, daily log, MEMORY.md
    lines: list[str]  # "Speaker: text", or a log's text
    rank: float  # its best hit's place in the search (0 = best); a neighbour's, NEIGHBOUR_LAG below its turn's
    sources: list[str] = field(default_factory=list)
    episode: str | None = None
    turns: set[int] = field(default_factory=set)

    def header(self) -> str:
        """"[8 May 2023]" for a conversation, "[8 May 2023, daily log]", "[MEMORY.md]"."""
        if not self.when:
            return f"[{self.where}]"
        day = day_text(date.fromisoformat(self.when))
        return f"[{day}]" if self.where == "conversation" else f"[{day}, {self.where}]"

    def body(self) -> str:
        return "\n".join(f"- {line}" for line in self.lines)


@dataclass(frozen=True)
class Turn:
    """What `select_passages` needs of an episode's turn."""

    who: str
    text: str  # dated
    current: str | None = None  # see SearchHit.current


def _one_line(text: str) -> str:
    return _WS.sub(" ", text).strip()


def _marked(line: str, current: str | None) -> str:
    if current is None:
        return line
    return line + (f" (no longer current; now: {_one_line(current)})" if current else " (no longer current)")


def _turn_line(turn: Turn) -> str:
    return _marked(f"{_one_line(turn.who)}: {_one_line(turn.text)}", turn.current)


def select_passages(hits: Sequence, turns_of: Callable[[dict[str, set[int]]], Mapping[tuple[str, int], Turn]],
                    *, neighbours: int | None = None, limit: int | None = None) -> list[Passage]:
    """Passages from search `hits` (best first; SearchHit-like: kind, source, text, current): the first `limit`
    episode, daily and MEMORY.md hits, each turn with `neighbours` turns each side read by `turns_of({episode id:
    indices})`; a turn already in a passage joins it. Facts are left to the Facts section."""
    neighbours = NEIGHBOURS if neighbours is None else neighbours
    limit = HITS if limit is None else limit
    picked: list[tuple[int, object]] = [(rank, h) for rank, h in enumerate(hits) if h.kind in PASSAGE_KINDS]
    picked = picked[:limit]
    wanted: dict[str, set[int]] = {}
    for _rank, h in picked:
        if h.kind == "episode" and (m := TURN_SOURCE.fullmatch(h.source or "")):
            episode = (h.source or "").rpartition("#")[0][len("episodes/"):]
            index = int(m.group(2))
            wanted.setdefault(episode, set()).update(range(max(0, index - neighbours), index + neighbours + 1))
    turns = turns_of(wanted) if wanted else {}
    passages: list[Passage] = []
    units: dict[tuple[str, int], Passage] = {}  # one a turn: the turns a search found, and their neighbours
    for rank, h in picked:
        if h.kind == "episode":
            m = TURN_SOURCE.fullmatch(h.source or "")
            if not m:
                continue
            episode = (h.source or "").rpartition("#")[0][len("episodes/"):]
            index = int(m.group(2))
            if (episode, index) not in turns:  # the hit's own text stands in for a turn not read back
                turns = {**turns, (episode, index): Turn(*split_speaker(h.text), getattr(h, "current", None))}
            around = [(i, rank + NEIGHBOUR_LAG) for i in range(index - neighbours, index + neighbours + 1)
                      if i != index and (episode, i) in turns]
            for i, place in [(index, rank)] + around:
                unit = units.get((episode, i))
                if unit is None:
                    unit = units[(episode, i)] = Passage(m.group(1), "conversation", [], place, [], episode, {i})
                    passages.append(unit)
                unit.rank = min(unit.rank, place)
            units[(episode, index)].sources.append(h.source)
        elif h.kind == "daily":
            m = _DAILY.fullmatch(h.source or "")
            text = "; ".join(_one_line(line.lstrip("-* ")) for line in h.text.splitlines()
                             if line.strip() and not line.lstrip().startswith("#"))
            if text:
                passages.append(Passage(m.group(1) if m else "", "daily log", [_marked(text, getattr(h, "current", None))],
                                        rank, [h.ref]))
        else:
            text = _one_line(h.text)
            if text:
                passages.append(Passage("", "MEMORY.md", [_marked(text, getattr(h, "current", None))], rank, [h.ref]))
    for p in passages:
        if p.episode is not None:
            p.lines = [_turn_line(turns[(p.episode, i)]) for i in sorted(p.turns) if (p.episode, i) in turns]
    return sorted((p for p in passages if p.lines), key=lambda p: p.rank)


_ASKS = re.compile(r"(?:what|when|where|who|whom|whose|why|how|which|did|does|do|is|was|are|were|has|have|can)\b", re.I)
_SPLIT = re.compile(r"(?:(?<!\s)\s+)?(?:,|;|\band\b|\bor\b|\balso\b)\s*", re.I)  # a run of blanks: tried once


def sub_queries(query: str) -> list[str]:
    """The parts of a question that asks two things ("What did Melanie paint and where did she camp?"), each a
    query of its own; [] when it asks one. A part needs three words or more, so a list of things asked about
    ("pottery, camping and painting") stays one query."""
    if not MULTI_QUERY:
        return []
    parts = [p.strip(" ?.!") for p in _SPLIT.split(query)]
    parts = [p for p in parts if len(p.split()) >= 3]
    if len(parts) < 2 or not all(_ASKS.match(p) for p in parts[1:]):
        return []
    return parts


def merge_rankings(rankings: Sequence[Sequence]) -> list:
    """Hits of several searches, best first, taken in turn from each (the first ranking leads), each once."""
    out, seen = [], set()
    for row in zip_longest(*rankings):
        for h in row:
            if h is not None and (h.kind, h.ref) not in seen:
                seen.add((h.kind, h.ref))
                out.append(h)
    return out


def fit_passages(passages: Iterable[Passage], max_tokens: int, model: str | None = None) -> tuple[str, list[Passage]]:
    """The section's text with the best passages (in the given order) that fit in `max_tokens`, listed by date;
    ("", []) when none fits. The count is exact: the text is encoded once more at the end, and the passage
    taken last dropped should it disagree."""
    if max_tokens <= 0:
        return "", []
    encode = get_encoding(model).encode_ordinary
    used = len(encode(TITLE))
    kept: list[Passage] = []
    headers: set[str] = set()
    for p in passages:
        header = p.header()
        cost = len(encode("\n" + p.body())) + (0 if header in headers else len(encode("\n" + header)))
        if used + cost <= max_tokens:
            kept.append(p)
            headers.add(header)
            used += cost
        elif used + 40 > max_tokens:  # nothing more of any size will fit
            break
    while kept:
        text = render(kept)
        if len(encode(text)) <= max_tokens:
            return text, kept
        kept = kept[:-1]
    return "", []


def _by_date(passages: Sequence[Passage]) -> list[Passage]:
    """`passages` in the order of the text: by date (undated last), a day's turns in the order they were said."""
    return sorted(passages, key=lambda p: (p.when == "", p.when, p.where, p.episode or "", min(p.turns, default=0),
                                           p.rank))


def _pieces(passages: Sequence[Passage]) -> list[tuple[Passage, str, str]]:
    """Each passage in the order of the text, with its header and what it adds after the title: its header when
    it is the first under it, then its lines (each piece starts with a newline)."""
    out, last = [], None
    for p in _by_date(passages):
        header = p.header()
        out.append((p, header, ("\n" + header if header != last else "") + "\n" + p.body()))
        last = header
    return out


def render(passages: Sequence[Passage]) -> str:
    """The section with `passages` listed by date (undated last) under one header a day and place; a day's
    turns in the order they were said."""
    return TITLE + "".join(piece for _p, _header, piece in _pieces(passages))


def with_passages(report: "InjectionReport", passages: Sequence[Passage], max_tokens: int,
                  model: str | None = None) -> "InjectionReport":
    """`report` (the seed's sections) with the passages that fit in what is left of `max_tokens` after it."""
    encode = get_encoding(model).encode_ordinary
    separator = "\n\n" if report.text else ""
    room = max_tokens - report.tokens - len(encode(separator)) - 1  # a merge at the joint costs at most one
    section, kept = fit_passages(passages, room, model)
    if not kept:
        return report
    text = report.text + separator + section
    tokens = len(encode(text))
    while tokens > max_tokens and kept:  # not expected (see `room`)
        kept = kept[:-1]
        section = render(kept) if kept else ""
        text = report.text + (separator + section if kept else "")
        tokens = len(encode(text))
    return replace(report, text=text, tokens=tokens,
                   section_tokens={**report.section_tokens, "Relevant passages": len(encode(section))},
                   passage_sources=[s for p in kept for s in p.sources], passages=injected(kept, model))


def injected(passages: Sequence[Passage], model: str | None = None) -> list[InjectedPassage]:
    """`passages` as the section lists them, each with the tokens it adds to the section (its lines, and its
    header when it is the first under it): the section is encoded once and each token counted where it starts,
    so that with TITLE's they add up to the section's tokens exactly, merges at the joints included."""
    import numpy as np

    pieces = _pieces(passages)
    texts = [TITLE] + [piece for _p, _header, piece in pieces]
    starts = np.cumsum([0] + [len(text.encode()) for text in texts])  # each piece's first byte
    ids = get_encoding(model).encode_ordinary("".join(texts))
    token_starts = np.concatenate(([0], np.cumsum(token_byte_lengths(model)[ids])[:-1])) if ids else np.zeros(0)
    counts = np.diff(np.searchsorted(token_starts, starts, side="left"))
    return [InjectedPassage(p.when, p.where, header, list(p.lines), int(n), list(p.sources))
            for (p, header, _piece), n in zip(pieces, counts[1:])]


__all__ = ["Passage", "Turn", "TITLE", "select_passages", "fit_passages", "render", "with_passages", "injected"]
