"""The two ways a LoCoMo conversation is given to the memory, and which evidence turns a search hit finds.

- `turns`: every turn stored as a fact ("Speaker: text", source = its dia id), as the retrieval benchmark
  has always done; a hit finds the turn whose id is its source.
- `pipeline`: each session given to the memory as a person's conversation would be, at its own date: the
  first speaker is the user, the other the assistant, each message named by its speaker; `update(when=the
  session's date)` extracts facts and keeps the episode, the context tier writes the session's summary into that
  day's log, and the nightly Deep Dream consolidates `MEMORY.md`. A hit finds the evidence turns it states: those
  of its session (a fact's thread, a daily log's or an episode's day; MEMORY.md: any) whose content words it
  holds, or that hold its own (at least half of the shorter side's).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memory_core.text.words import STOPWORDS, stem, words
from memory_core.evaluation.locomo import Sample

if TYPE_CHECKING:
    from memory_core.clock import ManualClock
    from memory_core.memory import Memory
    from memory_core.search.index import SearchHit

log = logging.getLogger(__name__)
MODES = ("turns", "pipeline")
OVERLAP = 0.5  # share of the shorter side's content words that a hit and a turn must share
_DAILY = re.compile(r"memory/(\d{4}-\d{2}-\d{2})\.md|episodes/(\d{4}-\d{2}-\d{2})-[0-9a-f]+#\d+")
_THREAD = re.compile(r"thread:session_(\d+)")


def scope_user(sample: int) -> str:
    return f"locomo{sample}"


def content_stems(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in words(text) if w not in STOPWORDS)


def store_turns(memory: "Memory", samples: list[Sample]) -> int:
    """Every turn of every sample as a fact of its sample's scope; returns how many were stored."""
    stored = 0
    limit = memory.settings.max_fact_chars
    for n, sample in enumerate(samples):
        for session in sample.sessions:
            for turn in session.turns:
                text = f"{turn.speaker}: {turn.text}"
                if turn.text.strip() and memory.facts.add(text[:limit], "context", 0.9, user_id=scope_user(n),
                                                          source=turn.dia_id):
                    stored += 1
    return stored


@dataclass
class PipelineStats:
    facts: int = 0
    daily_blocks: int = 0
    dreams_updated: int = 0
    errors: list[str] = field(default_factory=list)


def feed_sessions(memory: "Memory", clock: "ManualClock", samples: list[Sample]) -> PipelineStats:
    """Each session through `update()` and the context tier at its date, then the day's Deep Dream."""
    stats = PipelineStats()
    for n, sample in enumerate(samples):
        user = scope_user(n)
        for session in sample.sessions:
            messages = [{"role": "user" if t.speaker == sample.speakers[0] else "assistant", "content": t.text,
                         "name": t.speaker} for t in session.turns if t.text.strip()]
            if not messages:
                continue
            clock.set(session.when)
            thread = f"session_{session.number}"
            result = memory.update(messages, thread_id=thread, user_id=user, when=session.when)
            stats.facts += len(result.added)
            live = memory.context(thread, user_id=user)
            for m in messages:
                live.add(m["role"], m["content"])
            if live.end():
                stats.daily_blocks += 1
            memory.contexts.wait()  # the flush writes the day's log in a thread: before the clock moves on
            dream = memory.deep_dream(1, user_id=user)
            stats.dreams_updated += dream.status == "updated"
    stats.errors.extend(memory.contexts.errors)
    return stats


class TurnFinder:
    """Which evidence turns a search hit finds, in one mode."""

    def __init__(self, mode: str, samples: list[Sample]) -> None:
        self.mode = mode
        self._turns: list[dict[str, frozenset[str]]] = []  # per sample: dia id -> content stems
        self._session_of: list[dict[str, int]] = []  # per sample: dia id -> session number
        self._days: list[dict[str, set[int]]] = []  # per sample: YYYY-MM-DD -> session numbers
        if mode == "pipeline":
            for sample in samples:
                self._turns.append({t.dia_id: content_stems(t.text) for s in sample.sessions for t in s.turns})
                self._session_of.append({t.dia_id: s.number for s in sample.sessions for t in s.turns})
                days: dict[str, set[int]] = {}
                for s in sample.sessions:
                    days.setdefault(s.when.date().isoformat(), set()).add(s.number)
                self._days.append(days)

    def found(self, sample: int, hit: "SearchHit", evidence: frozenset[str]) -> set[str]:
        if self.mode == "turns":
            return {hit.source} & evidence if hit.source else set()
        sessions = self._sessions(sample, hit)
        hit_stems = content_stems(hit.text)
        out = set()
        for dia_id in evidence:
            turn = self._turns[sample].get(dia_id)
            if not turn or not hit_stems or (sessions is not None and self._session_of[sample][dia_id] not in sessions):
                continue
            if len(turn & hit_stems) >= OVERLAP * min(len(turn), len(hit_stems)):
                out.add(dia_id)
        return out

    def _sessions(self, sample: int, hit: "SearchHit") -> set[int] | None:
        """The sessions a hit comes from, or None when it may come from any (MEMORY.md)."""
        source = hit.source or ""
        if m := _THREAD.fullmatch(source):
            return {int(m.group(1))}
        if m := _DAILY.fullmatch(source):
            return self._days[sample].get(m.group(1) or m.group(2), set())
        return None
