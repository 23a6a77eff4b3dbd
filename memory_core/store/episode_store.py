"""The SQL of episodes: the dated turns of every conversation taken in, and their searchable copies in `chunks`.

A turn is kept in `episode_turns` (who, when, the text as taken in, the dates its relative expressions mean) and,
in the same transaction, as a chunk of kind "episode" (path "episodes/<episode id>", start and end line = the turn
index) whose text is the speaker and the dated text: keyword search, vectors and their upkeep treat it like any
chunk. Removing turns removes both, and the chunks' vectors.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Callable, Iterable, NamedTuple, Sequence

from sqlalchemy import bindparam, delete, func, select, tuple_

from memory_core.clock import utc
from memory_core.scope import Scope
from memory_core.store.db import Database
from memory_core.store.models import ChunkRow, EmbeddingRow, EpisodeTurnRow, FactAuditRow, FactRow

EPISODE_PREFIX = "episodes/"
# How a search hit names a turn (`EpisodeTurn.source`): "episodes/<day>-<hex>#<index>"; groups: the day, the index.
TURN_SOURCE = re.compile(r"episodes/(\d{4}-\d{2}-\d{2})-[0-9a-f]+#(\d+)")


class TailTurn(NamedTuple):
    """A turn at the end of a thread: what it said (role, speaker, text) and where it is kept."""
    role: str
    speaker: str | None
    text: str
    episode_id: str
    index: int
    said_at: datetime


@dataclass(frozen=True)
class EpisodeTurn:
    episode_id: str
    thread_id: str
    index: int
    role: str
    speaker: str | None
    text: str  # as taken in (masked)
    dated: str  # the text with the absolute date after each relative expression
    said_at: datetime
    dates: tuple[tuple[str, int, int, str], ...]  # (expression, start, end, value)

    @property
    def who(self) -> str:
        return self.speaker or self.role

    @property
    def source(self) -> str:
        """How a search hit names it: "episodes/<episode id>#<turn index>"."""
        return f"{EPISODE_PREFIX}{self.episode_id}#{self.index}"


def dated(text: str, dates: Sequence[Sequence]) -> str:
    """`text` with each resolved date's value written after its expression: "yesterday (7 May 2023)"."""
    out, last = [], 0
    for _expr, _start, end, value in dates:
        out.append(text[last:end])
        out.append(f" ({value})")
        last = end
    out.append(text[last:])
    return "".join(out)


def chunk_text(turn: EpisodeTurn) -> str:
    """What search indexes of a turn: "<speaker>: <dated text>"."""
    return f"{turn.who}: {turn.dated}"


# Built once (building a statement costs more than running it): the turns named by (episode id, index) and the
# chunks named by (path, line) of a scope (:u, :a), as plain rows. The episodes (:episodes, :paths) and indices
# (:indices) are named apart too, so that the index is searched for them: SQLite's planner searches by none of a
# row value's columns, and (episode id, index) IN (...) alone read every turn of the scope.
_AROUND = select(EpisodeTurnRow.episode_id, EpisodeTurnRow.turn_index, EpisodeTurnRow.role, EpisodeTurnRow.speaker,
                 EpisodeTurnRow.text, EpisodeTurnRow.dates).where(
    EpisodeTurnRow.user_id == bindparam("u"), EpisodeTurnRow.agent_name == bindparam("a"),
    EpisodeTurnRow.episode_id.in_(bindparam("episodes", expanding=True)),
    EpisodeTurnRow.turn_index.in_(bindparam("indices", expanding=True)),
    tuple_(EpisodeTurnRow.episode_id, EpisodeTurnRow.turn_index).in_(bindparam("pairs", expanding=True)))
_TURN_CHUNKS = select(ChunkRow.pk, ChunkRow.path, ChunkRow.start_line, ChunkRow.text).where(
    ChunkRow.user_id == bindparam("u"), ChunkRow.agent_name == bindparam("a"),
    ChunkRow.path.in_(bindparam("paths", expanding=True)),
    tuple_(ChunkRow.path, ChunkRow.start_line).in_(bindparam("pairs", expanding=True)))


def _dates(stored: str | None) -> tuple[tuple, ...]:
    """A turn's resolved dates as stored (JSON; most turns have none)."""
    return () if stored in (None, "", "[]") else tuple(tuple(d) for d in json.loads(stored))


def _turn(row) -> EpisodeTurn:
    """An EpisodeTurnRow as an EpisodeTurn."""
    dates = _dates(row.dates)
    return EpisodeTurn(row.episode_id, row.thread_id, row.turn_index, row.role, row.speaker, row.text,
                       dated(row.text, dates), utc(row.said_at), dates)


class EpisodeStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def add(self, scope: Scope, episode_id: str, thread_id: str, said_at: datetime,
            turns: Iterable[tuple[str, str | None, str, Sequence[tuple[str, int, int, str]]]], start: int = 0) -> int:
        """Keep `turns` as (role, speaker, text, dates) in an episode, numbered from `start` (an episode that goes on
        gains turns after its last); returns how many turns were kept. The day is `said_at`'s own (the memory's
        timezone's, as the caller gives it); the time is kept in UTC (SQLite keeps no zone)."""
        day = said_at.date().isoformat()
        said_at = utc(said_at)
        path = EPISODE_PREFIX + episode_id
        n = 0
        with self.db.write(lock=f"index:{scope.key}:{path}") as s:
            for index, (role, speaker, text, dates) in enumerate(turns, start):
                row = EpisodeTurnRow(user_id=scope.user_id, agent_name=scope.agent_name, episode_id=episode_id,
                                     thread_id=thread_id[:256], turn_index=index, role=role, speaker=speaker,
                                     text=text, dates=json.dumps([list(d) for d in dates]), said_at=said_at, day=day)
                s.add(row)
                s.add(ChunkRow(user_id=scope.user_id, agent_name=scope.agent_name, kind="episode", path=path,
                               start_line=index, end_line=index, text=chunk_text(_turn(row)), day=day))
                n += 1
        return n

    def thread_tail(self, scope: Scope, thread_id: str, limit: int) -> list[TailTurn]:
        """The last `limit` turns (at least one) kept of a thread, in the order they were kept, oldest first: what a
        conversation given again may repeat, and the episode it may go on (read by m033's index)."""
        with self.db.rows() as s:
            rows = s.execute(select(EpisodeTurnRow.role, EpisodeTurnRow.speaker, EpisodeTurnRow.text,
                                    EpisodeTurnRow.episode_id, EpisodeTurnRow.turn_index, EpisodeTurnRow.said_at).where(
                *self._of(scope), EpisodeTurnRow.thread_id == thread_id[:256]).order_by(EpisodeTurnRow.pk.desc())
                .limit(max(1, limit))).all()
        return [TailTurn(role, speaker, text, episode_id, index, utc(said_at))
                for role, speaker, text, episode_id, index, said_at in reversed(rows)]

    def turns(self, scope: Scope, episode_id: str, indices: Iterable[int] | None = None) -> list[EpisodeTurn]:
        """The episode's turns (those of `indices` when given), in order."""
        with self.db.read() as s:
            q = select(EpisodeTurnRow).where(*self._of(scope), EpisodeTurnRow.episode_id == episode_id)
            if indices is not None:
                q = q.where(EpisodeTurnRow.turn_index.in_(sorted(set(indices))))
            return [_turn(r) for r in s.execute(q.order_by(EpisodeTurnRow.turn_index)).scalars()]

    def around(self, scope: Scope, wanted: dict[str, set[int]]) -> dict[tuple[str, int], tuple[str, str]]:
        """Who said each turn named by {episode id: turn indices} and its dated text (`EpisodeTurn.who` and
        `.dated`), in one read, by (episode id, index): what a passage shows of a turn, and nothing else (a query's
        passages read a few hundred turns)."""
        if not wanted:
            return {}
        pairs = sorted((e, i) for e, found in wanted.items() for i in found)
        with self.db.rows() as s:
            rows = s.execute(_AROUND, {"u": scope.user_id, "a": scope.agent_name, "pairs": pairs,
                                       "episodes": sorted(wanted), "indices": sorted({i for _, i in pairs})}).all()
        return {(episode, index): (speaker or role, dated(text, _dates(dates)))
                for episode, index, role, speaker, text, dates in rows}

    def days(self, scope: Scope) -> list[str]:
        """The days (YYYY-MM-DD) the scope has episodes of, newest first."""
        with self.db.read() as s:
            return list(s.execute(select(EpisodeTurnRow.day).where(*self._of(scope)).distinct()
                                  .order_by(EpisodeTurnRow.day.desc())).scalars())

    def of_day(self, scope: Scope, day: str) -> list[EpisodeTurn]:
        """Every turn said on `day` (YYYY-MM-DD), episode by episode, in order."""
        with self.db.read() as s:
            rows = s.execute(select(EpisodeTurnRow).where(*self._of(scope), EpisodeTurnRow.day == day).order_by(
                EpisodeTurnRow.said_at, EpisodeTurnRow.episode_id, EpisodeTurnRow.turn_index)).scalars()
            return [_turn(r) for r in rows]

    def all(self, scope: Scope) -> list[EpisodeTurn]:
        """Every turn of the scope, oldest episode first (for bundles)."""
        with self.db.read() as s:
            rows = s.execute(select(EpisodeTurnRow).where(*self._of(scope)).order_by(
                EpisodeTurnRow.said_at, EpisodeTurnRow.episode_id, EpisodeTurnRow.turn_index)).scalars()
            return [_turn(r) for r in rows]

    def count(self, scope: Scope) -> int:
        with self.db.read() as s:
            return s.execute(select(func.count()).select_from(EpisodeTurnRow).where(*self._of(scope))).scalar() or 0

    def remove(self, scope: Scope, turns: Iterable[tuple[str, int]]) -> int:
        """Remove the turns named (episode id, index), their chunks and the chunks' vectors; how many went."""
        by_episode: dict[str, set[int]] = {}
        for episode_id, index in turns:
            by_episode.setdefault(episode_id, set()).add(int(index))
        removed = 0
        with self.db.write(lock=f"episodes:{scope.key}") as s:
            for episode_id, indices in by_episode.items():
                chunk_pks = s.execute(select(ChunkRow.pk).where(
                    ChunkRow.user_id == scope.user_id, ChunkRow.agent_name == scope.agent_name,
                    ChunkRow.path == EPISODE_PREFIX + episode_id, ChunkRow.start_line.in_(sorted(indices)))).scalars().all()
                if chunk_pks:
                    s.execute(delete(EmbeddingRow).where(EmbeddingRow.owner.in_([f"c:{pk}" for pk in chunk_pks])))
                    s.execute(delete(ChunkRow).where(ChunkRow.pk.in_(chunk_pks)))
                removed += s.execute(delete(EpisodeTurnRow).where(
                    *self._of(scope), EpisodeTurnRow.episode_id == episode_id,
                    EpisodeTurnRow.turn_index.in_(sorted(indices)))).rowcount or 0
        return removed

    def remove_stating(self, scope: Scope, states: Callable[[str], bool]) -> int:
        """Remove the turns whose text (as taken in, or dated) `states(text)` says state something erased."""
        with self.db.read() as s:
            rows = s.execute(select(EpisodeTurnRow).where(*self._of(scope))).scalars().all()
        doomed = [(r.episode_id, r.turn_index) for r in rows
                  if states(r.text) or states(_turn(r).dated)]
        return self.remove(scope, doomed) if doomed else 0

    def remove_before(self, scope: Scope, cutoff: datetime) -> int:
        """Remove the episodes said before `cutoff` (retention); how many turns went."""
        with self.db.read() as s:
            old = s.execute(select(EpisodeTurnRow.episode_id, EpisodeTurnRow.turn_index).where(
                *self._of(scope), EpisodeTurnRow.said_at < cutoff)).all()
        return self.remove(scope, [(e, i) for e, i in old]) if old else 0

    def scopes(self) -> set[Scope]:
        with self.db.read() as s:
            return {Scope(u, a) for u, a in s.execute(
                select(EpisodeTurnRow.user_id, EpisodeTurnRow.agent_name).distinct()).all()}

    @staticmethod
    def _of(scope: Scope) -> tuple:
        return EpisodeTurnRow.user_id == scope.user_id, EpisodeTurnRow.agent_name == scope.agent_name


def turn_chunks(db: Database, scope: Scope, sources: Iterable[str]) -> list[tuple[int, str, str]]:
    """(chunk pk, source, text) of the episode turns named "episodes/<episode id>#<turn index>", of the scope
    (for search's neighbouring turns)."""
    by_path: dict[str, set[int]] = {}
    for source in sources:
        path, _, index = source.rpartition("#")
        if path.startswith(EPISODE_PREFIX) and index.isdigit():
            by_path.setdefault(path, set()).add(int(index))
    if not by_path:
        return []
    pairs = sorted((path, i) for path, found in by_path.items() for i in found)
    with db.rows() as s:
        rows = s.execute(_TURN_CHUNKS, {"u": scope.user_id, "a": scope.agent_name, "pairs": pairs,
                                        "paths": sorted(by_path)}).all()
    return [(pk, f"{path}#{line}", text) for pk, path, line, text in rows]


# What every search reads, built once (building a statement costs more than running these): a scope's (:u, :a)
# latest :n retired facts but the erased, valid facts by id, and the latest :n deleted facts' audit entries.
_RETIRED = select(FactRow.id, FactRow.content, FactRow.superseded_by).where(
    FactRow.user_id == bindparam("u"), FactRow.agent_name == bindparam("a"), FactRow.invalid_at.is_not(None),
    FactRow.content != "[erased]").order_by(FactRow.invalid_at.desc()).limit(bindparam("n"))
_VALID = select(FactRow.id, FactRow.content).where(FactRow.id.in_(bindparam("ids", expanding=True)),
                                                   FactRow.invalid_at.is_(None))
_DELETED = select(FactAuditRow.fact_id, FactAuditRow.old).where(
    FactAuditRow.user_id == bindparam("u"), FactAuditRow.agent_name == bindparam("a"),
    FactAuditRow.action == "deleted").order_by(FactAuditRow.at.desc()).limit(bindparam("n"))


def retired_facts(db: Database, scope: Scope, limit: int = 500) -> list[tuple[str, str, str | None]]:
    """(id, content, content of the valid fact that replaced it, or None) of the scope's latest retired facts, at
    most `limit`, erased ones left out (their text is gone), deleted ones read from the audit log: what a passage
    must not give as current. A chain of
    replacements (Lisbon -> "moved to Porto" -> "lives in Porto") is followed to the fact that is valid now."""
    params = {"u": scope.user_id, "a": scope.agent_name, "n": limit}
    with db.rows() as s:
        rows = s.execute(_RETIRED, params).all()
        by_id = {i: (c, nxt) for i, c, nxt in rows}
        ends: dict[str, str | None] = {}
        for fact_id, (_content, nxt) in by_id.items():
            seen = {fact_id}
            while nxt in by_id and nxt not in seen:  # retired in turn: follow on
                seen.add(nxt)
                nxt = by_id[nxt][1]
            ends[fact_id] = nxt
        wanted = sorted({e for e in ends.values() if e})
        valid = dict(s.execute(_VALID, {"ids": wanted}).all()) if wanted else {}
        deleted = s.execute(_DELETED, params).all()
    out = [(i, by_id[i][0], valid.get(ends[i]) if ends[i] else None) for i in by_id]
    for fact_id, old in deleted:  # deleted facts leave their row; the audit log keeps what they said
        content = (json.loads(old) or {}).get("content") if old else None
        if isinstance(content, str) and content and content != "[erased]" and fact_id not in by_id:
            out.append((fact_id, content, None))
    return out
