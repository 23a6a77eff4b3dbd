"""Erase: for what must be gone, not just retired (a person's right to have something forgotten).

An erase is a plan, then a journal that carries it out. `plan` changes nothing: it lists exactly the passages that
state the fact (by stored provenance where memory_core wrote the sentence from it, else by erase_match's rule:
every carrying word, name and value of the statement, not a shared word) in every place memory_core keeps text
(`PLACES`: the database's text columns, MEMORY.md and the logs on disk, live sessions), and the valid facts that
say the same in other words (`related`, for the person to tick). `erase` writes the plan's passage keys (hashes,
no text) and a tombstone per statement (keyed hashes and the time) in one transaction, then carries the plan out
step by step (`STEPS`); a journal entry left by a kill or a full disk is finished the next time the memory is
opened (or by the next erase). What was taken in before a tombstone cannot bring its statement back (`Guard`).

For tests, MEMORY_CORE_ERASE_STOP=<step> ends the process at that step (printing "erase stopped at <step>" on
stderr) and MEMORY_CORE_ERASE_FAULT=<step> raises OSError(ENOSPC) there, as a full disk would."""

from __future__ import annotations

import errno
import logging
import os
import sys
import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Callable, Iterable

import numpy as np

from memory_core.consistency.erase_match import (ERASED, Marks, by_keys, keyed, marks_of, passage_key, passages,
                                                 related, rewrite, states)
from memory_core.text.truth import sentence_key
from memory_core.store.actors import current_actor
from memory_core.tiers.documents import DatabaseDocumentStore

if TYPE_CHECKING:
    from memory_core.facts.api import Fact
    from memory_core.scope import Scope
    from memory_core.search.index import SearchIndex
    from memory_core.store.erase_store import EraseStore
    from memory_core.store.fact_store import FactStore
    from memory_core.store.provenance_store import ProvenanceStore
    from memory_core.store.tombstone_store import JournalEntry, TombstoneStore
    from memory_core.tiers.documents import DocumentStore

log = logging.getLogger(__name__)

FOLDERS = ("", "memory", "memory/dreams")
STEPS = ("journal", "invalidate", "database", "files", "sessions", "index", "reclaim", "finish")
STOP_ENV, FAULT_ENV = "MEMORY_CORE_ERASE_STOP", "MEMORY_CORE_ERASE_FAULT"
RELATED_SIMILARITY = 0.85  # embedding cosine from which a valid fact is offered as saying the same thing
RELATED_EMBED_LIMIT = 5000  # beyond this many valid facts in the scope, related facts are found by words only


def _step(name: str) -> None:
    if os.environ.get(STOP_ENV) == name:
        print(f"erase stopped at {name}", file=sys.stderr, flush=True)
        os._exit(137)
    if os.environ.get(FAULT_ENV) == name:
        raise OSError(errno.ENOSPC, f"No space left on device (erase step {name})")


@dataclass(frozen=True)
class Passage:
    where: str  # "file:memory/2026-05-01.md", "documents:MEMORY.md", "core_versions:3", "facts:fact_…", ...
    text: str


@dataclass
class ErasePlan:
    fact_id: str
    scope: "Scope"
    passages: list[Passage] = field(default_factory=list)
    related: list[str] = field(default_factory=list)  # ids of valid facts saying the same in other words

    @property
    def keys(self) -> set[str]:
        return {passage_key(p.text) for p in self.passages if not p.where.startswith("facts:")}


class Guard:
    """The tombstones made after something was taken in: whether a statement (or a passage) of it is erased."""

    def __init__(self, key: bytes, stones: Iterable[tuple[str, Marks, datetime]]) -> None:
        self.key = key
        self.stones = list(stones)  # (keyed hash of the normalised statement, keyed marks, when it was erased)

    def refuses(self, statement: str, taken_in: datetime | None = None) -> bool:
        """Whether `statement` states one of the erased statements (erased after `taken_in`, when given)."""
        from memory_core.facts.api import normalise_for_key

        whole = keyed(self.key, normalise_for_key(statement))
        return any((taken_in is None or at > taken_in) and (whole == key or states(statement, marks, self.key))
                   for key, marks, at in self.stones)

    def screen(self, text: str) -> tuple[str, int]:
        """`text` with each passage that states an erased statement replaced by `[erased]`."""
        return rewrite(text, self.refuses)

    def drop(self, text: str) -> str:
        """`text` without the passages that state an erased statement."""
        return rewrite(text, self.refuses, replacement="")[0]


# A place erase reaches: plan(scope, visit(where, text)) shows it each text it keeps; carry(scope, scrub) rewrites
# them (scrub: text -> (new text, passages replaced)) and returns how many items changed. Adding a place is one
# function pair here (the database's tables are one entry each in store.erase_store.TEXT_COLUMNS).
Visit = Callable[[str, str], None]
Scrub = Callable[[str], "tuple[str, int]"]


class Eraser:
    def __init__(self, store: "FactStore", erase_store: "EraseStore", documents: "DocumentStore",
                 index: "SearchIndex", sessions: Callable[[], list] | None = None, *,
                 tombstones: "TombstoneStore", provenance: "ProvenanceStore",
                 embed: Callable[[list[str]], np.ndarray] | None = None) -> None:
        self.store = store
        self.erase_store = erase_store
        self.documents = documents
        self.index = index
        self.sessions = sessions  # the live context sessions of this process (their messages are memory too)
        self.tombstones = tombstones
        self.provenance = provenance
        self.embed = embed
        # One carrying-out at a time in this process: an append that finishes a pending erase first waits for
        # one under way rather than rewriting the same files beside it.
        self._lock = threading.RLock()
        # The scopes with an erase this process could not finish (a full disk): an append to one of them finishes
        # it first. Kept here so that appends elsewhere ask the database nothing; another process's leftovers are
        # finished on the next open, and the index and the reads screen them meanwhile (pending_screen).
        self._unfinished: set["Scope"] = set()

    # -- the places ------------------------------------------------------------------------------

    def _survey_files(self, scope: "Scope", visit: Visit) -> None:
        if isinstance(self.documents, DatabaseDocumentStore):
            return  # its documents are rows of the database: surveyed there
        for folder in FOLDERS:
            for path in self.documents.list(scope, folder):
                text = self.documents.read(scope, path)
                if text:
                    visit(f"file:{path}", text)

    def _carry_files(self, scope: "Scope", scrub: Scrub) -> int:
        """MEMORY.md, the daily logs and the dream diaries on disk, each rewritten whole where it stated the fact."""
        changed = 0
        surveyed: list[tuple[str, str]] = []
        self._survey_files(scope, lambda where, text: surveyed.append((where, text)))
        for where, text in surveyed:
            new, n = scrub(text)
            if n:
                self.documents.write(scope, where.removeprefix("file:"), new)
                changed += 1
        return changed

    def _survey_sessions(self, scope: "Scope", visit: Visit) -> None:
        for session in self.sessions() if self.sessions else ():
            if session.scope == scope:
                for message in session.messages:
                    if isinstance(message.get("content"), str):
                        visit(f"context_session:{session.session_id}", message["content"])
                if session.summary:
                    visit(f"context_session:{session.session_id}", session.summary)

    def _carry_sessions(self, scope: "Scope", scrub: Scrub) -> int:
        changed = 0
        for session in self.sessions() if self.sessions else ():
            if session.scope != scope:
                continue
            n = 0
            for message in session.messages:
                if isinstance(message.get("content"), str):
                    message["content"], k = scrub(message["content"])
                    n += k
            session.summary, k = scrub(session.summary or "")
            changed += bool(n + k)
        return changed

    def _survey(self, scope: "Scope", visit: Visit) -> None:
        self.erase_store.survey(scope, visit)
        self._survey_files(scope, visit)
        self._survey_sessions(scope, visit)

    # -- the plan --------------------------------------------------------------------------------

    def plan(self, fact_id: str) -> ErasePlan:
        """What erasing `fact_id` would do; changes nothing. KeyError for an unknown id."""
        fact = self.store.get(fact_id)
        plan = ErasePlan(fact.id, fact.scope)
        if fact.content == ERASED:
            return plan  # erased already: no statement left to look for (a second erase touches nothing)
        marks = marks_of(fact.content)
        written_from = {key for place in self.provenance.of(fact.scope).values()
                        for key, known in place.items() if fact.id in known.fact_ids}
        seen: set[tuple[str, str]] = set()

        def visit(where: str, text: str) -> None:
            for passage in passages(text):
                if passage != ERASED and (where, passage) not in seen and (
                        states(passage, marks) or sentence_key(passage) in written_from):
                    seen.add((where, passage))
                    plan.passages.append(Passage(where, passage))

        plan.passages.append(Passage(f"facts:{fact.id}", fact.content))
        self._survey(fact.scope, visit)
        plan.related = self._related(fact)
        return plan

    def _related(self, fact: "Fact") -> list[str]:
        others = [f for f in self.store.list(fact.scope) if f.id != fact.id]
        if not others:
            return []
        close = {f.id for f in others if related(fact.content, f.content)}
        if self.embed is not None and len(others) <= RELATED_EMBED_LIMIT:
            vectors = np.asarray(self.embed([fact.content] + [f.content for f in others]), dtype=np.float32)
            norms = np.linalg.norm(vectors, axis=1)
            norms[norms == 0] = 1.0
            scores = (vectors[1:] @ vectors[0]) / (norms[1:] * norms[0])
            close |= {f.id for f, score in zip(others, scores) if score >= RELATED_SIMILARITY}
        return [f.id for f in others if f.id in close]

    # -- erasing ---------------------------------------------------------------------------------

    def erase(self, fact_id: str, reason: str | None = None, also: Iterable[str] = ()) -> dict[str, int]:
        """Erase one fact (and the facts in `also`, each by its own plan) everywhere; returns how many rows, files
        and passages changed per place. A journal entry left over for these facts is finished first."""
        fact = self.store.get(fact_id)
        ids = [fact.id] + [i for i in dict.fromkeys(also) if i != fact.id]
        counts: dict[str, int] = {}
        for entry in self.tombstones.pending(fact.scope):
            if set(entry.fact_ids) & set(ids):
                _add(counts, self._carry_out(entry))
        plans = [self.plan(i) for i in ids]
        for plan in plans:
            if plan.scope != fact.scope:
                raise KeyError(plan.fact_id)  # another scope's id is unknown here
        todo = [(p, self.store.get(p.fact_id)) for p in plans]
        todo = [(p, f) for p, f in todo if f.content != ERASED]
        if not todo:
            return counts
        _step("journal")
        key = self.tombstones.secret()
        from memory_core.facts.api import normalise_for_key

        stones = [(keyed(key, normalise_for_key(f.content)), marks_of(f.content).hashed(key).to_json())
                  for _p, f in todo]
        entry = self.tombstones.begin(fact.scope, [f.id for _p, f in todo], set().union(*(p.keys for p, _ in todo)),
                                      stones, reason, current_actor())
        _add(counts, self._carry_out(entry))
        log.info("erased %s in %s (%s)", ", ".join(entry.fact_ids), fact.scope.key,
                 ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
        return counts

    def _carry_out(self, entry: "JournalEntry") -> dict[str, int]:
        """Every step of one journal entry; each may run again after a kill (it changes only what still
        states the erased passages)."""
        with self._lock:
            try:
                counts = self._carry_out_steps(entry)
            except BaseException:
                self._unfinished.add(entry.scope)
                raise
            if entry.scope in self._unfinished and not self.tombstones.pending(entry.scope):
                self._unfinished.discard(entry.scope)
            return counts

    def _carry_out_steps(self, entry: "JournalEntry") -> dict[str, int]:
        scope, ids = entry.scope, list(entry.fact_ids)
        scrub = self._scrub_of(entry)
        _step("invalidate")
        with self.store.transaction(scope) as tx:
            for fact_id in ids:
                if tx.row(fact_id).invalid_at is None:
                    tx.invalidate(fact_id, reason="erased", action="invalidated")
                    # Not a retirement to propagate: its word matching would take passages that merely share
                    # a word; erase rewrites exactly its plan's passages itself (summaries and MEMORY.md too).
                    tx.retired.pop(fact_id, None)
        _step("database")
        counts = self.erase_store.erase(scope, ids, scrub, entry.reason)
        _step("files")
        if files := self._carry_files(scope, scrub):
            counts["files"] = files
        _step("sessions")
        if live := self._carry_sessions(scope, scrub):
            counts["context_sessions"] = live
        _step("index")
        self.index.touch(scope)
        self.index.sync_documents(scope)
        _step("reclaim")
        self.erase_store.reclaim()
        _step("finish")
        self.tombstones.done(entry.pk)
        return counts

    def _scrub_of(self, entry: "JournalEntry") -> Scrub:
        # The plan's passages, and what states the same statements by the tombstones' keyed marks: a passage
        # written between the plan and the journal (a worker's update, a flush) by the same rule.
        stones = [(t.statement_key, Marks.from_json(t.marks), t.erased_at) for t in self.tombstones.of(entry)]
        return _scrub(entry.passage_keys, Guard(self.tombstones.secret(), stones) if stones else None)

    def pending_screen(self, scope: "Scope") -> Callable[[str], str] | None:
        """Text without the passages of the erases of `scope` journaled and not finished yet (a full disk or a
        kill between the database and the files), or None when there are none: until the retry rewrites the
        files, what indexes them passes their text through this, so that search never serves those passages."""
        scrubs = [self._scrub_of(entry) for entry in self.tombstones.pending(scope)]
        if not scrubs:
            return None

        def screen(text: str) -> str:
            for scrub in scrubs:
                text = scrub(text)[0]
            return text

        return screen

    def finish_scope(self, scope: "Scope") -> None:
        """Finish the erases of `scope` that this process could not finish (a full disk, here or in the retry at
        open of what a kill or another process left) before something is appended to its documents. One that fails again stays
        journaled, logged, and the append goes on: the index screens the passages meanwhile (`pending_screen`)."""
        if scope not in self._unfinished:
            return
        with self._lock:  # an erase under way in this process ends first; its entry is then done
            for entry in self.tombstones.pending(scope):
                log.warning("finishing an unfinished erase of %s in %s before an append", ", ".join(entry.fact_ids),
                            scope.key)
                try:
                    self._carry_out(entry)
                except Exception:  # noqa: BLE001 - the append must not be lost for it; the journal keeps it
                    log.exception("an unfinished erase in %s could not be finished yet", scope.key)
                    return

    def finish_pending(self) -> int:
        """Finish every erase a kill or a full disk left unfinished (run when the memory is opened)."""
        finished = 0
        try:
            entries = self.tombstones.pending()
        except Exception:  # noqa: BLE001 - never in the way of opening (a schema not yet migrated, say)
            log.exception("the erase journal could not be read; an interrupted erase is finished on the next open")
            return 0
        for entry in entries:
            log.warning("finishing an interrupted erase of %s in %s", ", ".join(entry.fact_ids), entry.scope.key)
            try:
                self._carry_out(entry)
                finished += 1
            except OSError:  # the disk still full: left journaled for the next open or erase
                log.exception("an interrupted erase in %s could not be finished yet", entry.scope.key)
        return finished

    # -- what comes in after -----------------------------------------------------------------------

    def guard(self, scope: "Scope", taken_in: datetime | None) -> Guard | None:
        """The tombstones of `scope` made after `taken_in` (something taken in then cannot bring their
        statements back); None when there are none."""
        stones = self.tombstones.since(scope, taken_in)
        if not stones:
            return None
        return Guard(self.tombstones.secret(), [(t.statement_key, Marks.from_json(t.marks), t.erased_at)
                                                 for t in stones])


def _scrub(keys: Iterable[str], guard: Guard | None = None) -> Scrub:
    planned = by_keys(keys)

    def gone(passage: str) -> bool:
        return planned(passage) or (guard is not None and guard.refuses(passage))

    return lambda text: rewrite(text, gone)


def _add(counts: dict[str, int], more: dict[str, int]) -> None:
    for k, v in more.items():
        counts[k] = counts.get(k, 0) + v
