"""The rows of a scope as plain data, and back: what a bundle carries, in SQL.

Dumped: facts (every one, valid or not, with validity), their audit log, the summaries, every MEMORY.md
version, the dream state, the days dreams have read, the plans and the episodes' turns. Timestamps travel as ISO 8601 UTC with
microseconds, so that a bundle moved SQLite -> PostgreSQL -> SQLite comes back equal. Provenance (which fact a
summary sentence or MEMORY.md bullet came from) is not carried: a loaded summary, MEMORY.md or fact drops the rows
that spoke of it, and the distinctive words judge that text until memory_core writes it again.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from typing import Any, Iterator

from sqlalchemy import delete, select, text

from memory_core.clock import utc
from memory_core.facts.api import content_key
from memory_core.scope import Scope
from memory_core.store.fact_store import invalid_key, new_fact_id
from memory_core.store.episode_store import EPISODE_PREFIX, EpisodeTurn, chunk_text, dated as _dated
from memory_core.store.models import (ChunkRow, CoreVersionRow, DreamStateRow, DreamtDayRow, EmbeddingRow,
                                      EpisodeTurnRow, FactAuditRow, FactRow, PlanRow, SummaryRow)
from memory_core.store.provenance_store import CORE, forget_in, summary_place

FACT_FIELDS = ("id", "content", "category", "confidence", "created_at", "updated_at", "source", "thread_id",
               "valid_from", "invalid_at", "superseded_by", "invalid_reason", "source_error", "held_at")
TIME_FIELDS = {"created_at", "updated_at", "valid_from", "invalid_at", "at", "last_run_at", "dreamt_at", "held_at",
               "said_at"}
EPISODE_FIELDS = ("episode_id", "thread_id", "turn_index", "role", "speaker", "text", "said_at")


def _out(value: Any) -> Any:
    return utc(value).isoformat() if isinstance(value, datetime) else value


def _in(name: str, value: Any) -> Any:
    """A bundle's value as stored: timestamps in UTC (SQLite keeps no zone, so another offset would shift)."""
    return utc(datetime.fromisoformat(value)) if name in TIME_FIELDS and value is not None else value


def _same(current: Any, value: Any) -> bool:
    """Whether a stored value equals a bundle's (SQLite gives timestamps back without their zone)."""
    if isinstance(current, datetime) and isinstance(value, datetime):
        return utc(current) == value
    return current == value


def _row(obj: Any, fields: tuple[str, ...]) -> dict[str, Any]:
    return {f: _out(getattr(obj, f)) for f in fields}


def _where(model, scope: Scope) -> tuple:
    return model.user_id == scope.user_id, model.agent_name == scope.agent_name


def dump_scope(session, scope: Scope) -> dict[str, Any]:
    """Everything of `scope` in the database but its documents, as JSON-ready data."""
    facts = session.execute(select(FactRow).where(*_where(FactRow, scope)).order_by(FactRow.pk)).scalars().all()
    audit = session.execute(select(FactAuditRow).where(*_where(FactAuditRow, scope))
                            .order_by(FactAuditRow.at, FactAuditRow.pk)).scalars().all()
    summaries = session.execute(select(SummaryRow).where(*_where(SummaryRow, scope))
                                .order_by(SummaryRow.section)).scalars().all()
    versions = session.execute(select(CoreVersionRow).where(*_where(CoreVersionRow, scope))
                               .order_by(CoreVersionRow.version)).scalars().all()
    plans = session.execute(select(PlanRow).where(*_where(PlanRow, scope)).order_by(PlanRow.created_at,
                                                                                     PlanRow.id)).scalars().all()
    state = session.get(DreamStateRow, (scope.user_id, scope.agent_name))
    dreamt = session.execute(select(DreamtDayRow).where(*_where(DreamtDayRow, scope))
                             .order_by(DreamtDayRow.day)).scalars().all()
    turns = session.execute(select(EpisodeTurnRow).where(*_where(EpisodeTurnRow, scope)).order_by(
        EpisodeTurnRow.said_at, EpisodeTurnRow.episode_id, EpisodeTurnRow.turn_index)).scalars().all()
    return {
        "facts": [_row(f, FACT_FIELDS) | {"confidence": float(f.confidence)} for f in facts],
        "audit": [_row(a, ("fact_id", "action", "reason", "at", "actor"))
                  | {"old": json.loads(a.old) if a.old else None, "new": json.loads(a.new) if a.new else None}
                  for a in audit],
        "summaries": [_row(s, ("section", "summary", "version", "updated_at")) for s in summaries],
        "core_versions": [_row(v, ("version", "content", "reason", "created_at", "actor")) for v in versions],
        "plans": [_row(p, ("id", "name", "status", "version", "created_at", "updated_at"))
                  | {"steps": json.loads(p.steps), "session_ids": json.loads(p.session_ids)} for p in plans],
        "dream_state": _row(state, ("last_hash", "consolidated_through", "last_status", "last_reason",
                                    "last_run_at")) if state else None,
        "dreamt_days": [_row(d, ("day", "content_hash", "dreamt_at")) for d in dreamt],
        "episodes": [_row(t, EPISODE_FIELDS) | {"dates": json.loads(t.dates or "[]")} for t in turns],
    }


def load_scope(session, scope: Scope, data: dict[str, Any], mode: str) -> dict[str, int]:
    """Write a scope's (validated) data inside the caller's transaction; return what changed.

    `skip` keeps what exists (same fact id, same plan id, same MEMORY.md version number, a summary section
    that is set); `replace` lets the bundle win for those. A fact id already used by another scope's fact is
    given a new id here (its references follow), never dropped.
    """
    counts = {"facts": 0, "facts_skipped": 0, "audit": 0, "summaries": 0, "core_versions": 0, "plans": 0,
              "dream_state": 0}
    renamed: dict[str, str] = {}
    taken: dict[str, tuple[str, str]] = {}
    for part in _chunks([f["id"] for f in data["facts"]], 500):
        taken.update({r[0]: (r[1], r[2]) for r in session.execute(
            select(FactRow.id, FactRow.user_id, FactRow.agent_name).where(FactRow.id.in_(part))).all()})
    for fact in data["facts"]:
        owner = taken.get(fact["id"])
        if owner is not None and owner != tuple(scope):
            fresh = new_fact_id()
            while session.execute(select(FactRow.pk).where(FactRow.id == fresh)).first():
                fresh = new_fact_id()
            renamed[fact["id"]] = fresh
    written: set[str] = set()
    for fact in data["facts"]:
        fact_id = renamed.get(fact["id"], fact["id"])
        values = {k: _in(k, v) for k, v in fact.items() if k in FACT_FIELDS}
        values["id"] = fact_id
        if values.get("superseded_by") in renamed:
            values["superseded_by"] = renamed[values["superseded_by"]]
        values["content_key"] = invalid_key(fact_id) if values.get("invalid_at") else content_key(values["content"])
        existing = session.execute(select(FactRow).where(FactRow.id == fact_id)).scalars().first()
        if existing is not None and (mode == "skip" or all(_same(getattr(existing, k), v) for k, v in values.items())):
            counts["facts_skipped"] += 1
            continue
        clash = None
        if not values.get("invalid_at"):
            clash = session.execute(select(FactRow.id).where(*_where(FactRow, scope),
                                                             FactRow.content_key == values["content_key"],
                                                             FactRow.invalid_at.is_(None),
                                                             FactRow.id != fact_id)).first()
        if clash is not None:  # the same text is already another valid fact here: keep one, not two
            counts["facts_skipped"] += 1
            continue
        if existing is not None:
            for key, value in values.items():
                setattr(existing, key, value)
            session.add(existing)
            forget_in(session, scope, fact_id=fact_id)  # its text may differ now: no sentence says it came from it
        else:
            session.add(FactRow(user_id=scope.user_id, agent_name=scope.agent_name, **values))
        session.flush()
        written.add(fact_id)
        counts["facts"] += 1
    counts["audit"] = _load_audit(session, scope, data, written, renamed, mode)
    for item in data["summaries"]:
        row = session.get(SummaryRow, (scope.user_id, scope.agent_name, item["section"]))
        if row is not None and (mode == "skip" or (row.summary, row.version) == (item["summary"], item["version"])):
            continue
        row = row or SummaryRow(user_id=scope.user_id, agent_name=scope.agent_name, section=item["section"],
                                summary="", updated_at=_in("updated_at", item["updated_at"]))
        row.summary, row.version, row.updated_at = item["summary"], item["version"], _in("updated_at", item["updated_at"])
        session.add(row)
        forget_in(session, scope, place=summary_place(item["section"]))  # bundles carry no provenance: words decide
        counts["summaries"] += 1
    for item in data["core_versions"]:
        row = session.execute(select(CoreVersionRow).where(*_where(CoreVersionRow, scope),
                                                           CoreVersionRow.version == item["version"])).scalars().first()
        if row is not None and (mode == "skip" or row.content == item["content"]):
            continue
        row = row or CoreVersionRow(user_id=scope.user_id, agent_name=scope.agent_name, version=item["version"],
                                    content="", reason="", created_at=_in("created_at", item["created_at"]))
        row.content, row.reason, row.actor = item["content"], item["reason"], item.get("actor")
        row.created_at = _in("created_at", item["created_at"])
        session.add(row)
        forget_in(session, scope, place=CORE)
        counts["core_versions"] += 1
    for item in data["plans"]:
        row = session.get(PlanRow, item["id"])
        if row is not None and (row.user_id, row.agent_name) != tuple(scope):
            continue  # plan ids are random 32 bits too; another scope's plan keeps its id
        if row is not None and mode == "skip":
            continue
        row = row or PlanRow(id=item["id"], user_id=scope.user_id, agent_name=scope.agent_name, name="", steps="[]",
                             session_ids="[]", status="active", created_at=_in("created_at", item["created_at"]),
                             updated_at=_in("updated_at", item["updated_at"]))
        row.name, row.status, row.version = item["name"], item["status"], item["version"]
        row.steps, row.session_ids = json.dumps(item["steps"]), json.dumps(item["session_ids"])
        row.created_at, row.updated_at = _in("created_at", item["created_at"]), _in("updated_at", item["updated_at"])
        session.add(row)
        counts["plans"] += 1
    state = data.get("dream_state")
    if state:
        row = session.get(DreamStateRow, (scope.user_id, scope.agent_name))
        if row is None or mode == "replace":
            row = row or DreamStateRow(user_id=scope.user_id, agent_name=scope.agent_name)
            for key, value in state.items():
                setattr(row, key, _in(key, value))
            session.add(row)
            counts["dream_state"] += 1
    for item in data.get("dreamt_days") or []:  # absent from bundles written before it existed
        row = session.get(DreamtDayRow, (scope.user_id, scope.agent_name, item["day"]))
        if row is not None and (mode == "skip" or row.content_hash == item["content_hash"]):
            continue
        row = row or DreamtDayRow(user_id=scope.user_id, agent_name=scope.agent_name, day=item["day"],
                                  content_hash="", dreamt_at=_in("dreamt_at", item["dreamt_at"]))
        row.content_hash, row.dreamt_at = item["content_hash"], _in("dreamt_at", item["dreamt_at"])
        session.add(row)
        counts["dreamt_days"] = counts.get("dreamt_days", 0) + 1
    counts["episode_turns"] = _load_episodes(session, scope, data.get("episodes") or [], mode)
    return counts


def _load_episodes(session, scope: Scope, turns: list[dict[str, Any]], mode: str) -> int:
    """The bundle's episode turns, with their searchable chunks; `skip` keeps an episode that is here, `replace`
    writes the bundle's in its place. A resolved date whose expression is not where it says (the text was
    masked on the way in) is dropped. Returns how many turns were written."""
    by_episode: dict[str, list[dict[str, Any]]] = {}
    for turn in turns:
        by_episode.setdefault(turn["episode_id"], []).append(turn)
    written = 0
    for episode_id, items in by_episode.items():
        here = session.execute(select(EpisodeTurnRow.pk).where(*_where(EpisodeTurnRow, scope),
                                                               EpisodeTurnRow.episode_id == episode_id)).first()
        if here is not None and mode == "skip":
            continue
        path = EPISODE_PREFIX + episode_id
        old = session.execute(select(ChunkRow.pk).where(*_where(ChunkRow, scope), ChunkRow.path == path)).scalars().all()
        if old:
            session.execute(delete(EmbeddingRow).where(EmbeddingRow.owner.in_([f"c:{pk}" for pk in old])))
            session.execute(delete(ChunkRow).where(ChunkRow.pk.in_(old)))
        session.execute(delete(EpisodeTurnRow).where(*_where(EpisodeTurnRow, scope), EpisodeTurnRow.episode_id == episode_id))
        for item in items:
            said_at = _in("said_at", item["said_at"])
            dates = [d for d in item["dates"] if item["text"][d[1]:d[2]] == d[0]]
            row = EpisodeTurnRow(user_id=scope.user_id, agent_name=scope.agent_name, episode_id=episode_id,
                                 thread_id=item["thread_id"], turn_index=item["turn_index"], role=item["role"],
                                 speaker=item.get("speaker"), text=item["text"], dates=json.dumps(dates),
                                 said_at=said_at, day=said_at.date().isoformat())
            session.add(row)
            turn = EpisodeTurn(episode_id, row.thread_id, row.turn_index, row.role, row.speaker, row.text,
                               _dated(row.text, dates), said_at, tuple(tuple(d) for d in dates))
            session.add(ChunkRow(user_id=scope.user_id, agent_name=scope.agent_name, kind="episode", path=path,
                                 start_line=row.turn_index, end_line=row.turn_index, text=chunk_text(turn),
                                 day=row.day))
            written += 1
    return written


def _load_audit(session, scope: Scope, data: dict[str, Any], written: set[str], renamed: dict[str, str],
                mode: str) -> int:
    """The audit entries of the facts just written, and those of facts that no longer exist (deleted, evicted,
    purged: who removed what is history too), the latter once only; in bundle order. Returns how many."""
    in_bundle = {f["id"] for f in data["facts"]}
    orphans = {e["fact_id"] for e in data["audit"]} - in_bundle
    if mode == "replace" and written:
        session.execute(delete(FactAuditRow).where(*_where(FactAuditRow, scope), FactAuditRow.fact_id.in_(written)))
    have: Counter[tuple[str, str, datetime]] = Counter()  # the orphans' entries already here, each as often
    for part in _chunks(sorted(orphans), 500):
        have.update((r.fact_id, r.action, utc(r.at)) for r in session.execute(
            select(FactAuditRow.fact_id, FactAuditRow.action, FactAuditRow.at).where(
                *_where(FactAuditRow, scope), FactAuditRow.fact_id.in_(part))).all())
    added = 0
    for entry in data["audit"]:
        fact_id = renamed.get(entry["fact_id"], entry["fact_id"])
        at = _in("at", entry["at"])
        if fact_id not in written:
            if entry["fact_id"] not in orphans:
                continue
            if have[(fact_id, entry["action"], at)] > 0:
                have[(fact_id, entry["action"], at)] -= 1
                continue
        session.add(FactAuditRow(fact_id=fact_id, user_id=scope.user_id, agent_name=scope.agent_name,
                                 action=entry["action"], reason=entry.get("reason"), at=at, actor=entry.get("actor"),
                                 old=json.dumps(entry["old"]) if entry.get("old") else None,
                                 new=json.dumps(entry["new"]) if entry.get("new") else None))
        added += 1
    return added


def fact_owners(session, ids: list[str]) -> dict[str, tuple[str, str]]:
    """{fact id: (user_id, agent_name)} of those of `ids` that are facts in the database."""
    owners: dict[str, tuple[str, str]] = {}
    for part in _chunks(sorted(set(ids)), 500):
        owners.update({r[0]: (r[1], r[2]) for r in session.execute(
            select(FactRow.id, FactRow.user_id, FactRow.agent_name).where(FactRow.id.in_(part))).all()})
    return owners


def _chunks(values: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(values), size):
        yield values[i:i + size]


def bundle_scopes(session) -> list[Scope]:
    """Every scope with rows worth a bundle."""
    found: set[Scope] = set()
    for table in ("facts", "fact_audit", "scope_summaries", "core_versions", "plans", "documents", "dream_state",
                  "dreamt_days", "episode_turns"):
        found |= {Scope(u, a) for u, a in session.execute(text(f"SELECT DISTINCT user_id, agent_name FROM {table}"))}
    return sorted(found)
