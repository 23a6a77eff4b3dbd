"""`memory.scoped(...)`: the memory of one scope, as a capability, and the home of per-scope behaviour.

A view is built from the parts (`memory_core.views.parts.Parts`) with a bound scope, role and actor. Its calls
take no `user_id`/`agent_name`, so code that holds only a view (a dashboard page, the MCP server) cannot name
another scope at all; another scope's fact, plan or proposal id is unknown here (`KeyError`), exactly like a
made-up one. A write the role does not allow raises `PermissionError` here, whatever the caller's widgets said.
Changes made through a view are recorded with its actor. `Memory`'s per-scope methods are one-line calls into an
admin view of the scope they name.
"""

from __future__ import annotations

import asyncio
import logging
import re
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ContextManager, Iterator

from memory_core.clock import utc
from memory_core.store.actors import acting_as, current_actor
from memory_core.consistency.doctor import Finding, check
from memory_core.tiers.documents import LocalDocumentStore, export_documents
from memory_core.errors import BudgetExceeded, LLMError, LLMReplyError
from memory_core.context.rerank import rerank_hits
from memory_core.context.evidence import (Turn, evidence_depth, merge_rankings, select_passages, sub_queries,
                                         with_passages)
from memory_core.context.injection import InjectionReport, build_injection
from memory_core.text.messages import strip_scheduled_pairs, validate_messages
from memory_core.runtime.queue import validate_thread_id
from memory_core.policy.roles import rank, validate_role
from memory_core.search.one_hit import one_hit_per_statement
from memory_core.search.answers import hits_bytes, report_bytes
from memory_core.text.truth import Retired, says_retired, says_same, stale
from memory_core.store.episode_store import retired_facts
from memory_core.store.import_store import ImportLedger
from memory_core.facts.api import SUMMARY_SECTIONS
from memory_core.views.kept_reads import fact_count, injection_data
from memory_core.views.subviews import ScopedDaily, ScopedFacts, ScopedImports, ScopedPlans, ScopedQueue
from memory_core.tiers.core import CoreTier
from memory_core.tiers.episodes import dated_messages
from memory_core.extraction.updating import UpdateResult, apply_reply
from memory_core.policy.usage import metering, usage_records
from memory_core.text.dates import day_text
from memory_core.text.validation import check_memory_text

if TYPE_CHECKING:
    from memory_core.views.parts import Parts
    from memory_core.scope import Scope
    from memory_core.search.index import SearchHit
    from memory_core.store.episode_store import EpisodeTurn
    from memory_core.store.proposal_store import DreamProposal
    from memory_core.store.usage_store import Injection, UsageRecord
    from memory_core.tiers.context import ContextSession
    from memory_core.tiers.core import CoreVersion
    from memory_core.tiers.dream import DreamResult

log = logging.getLogger(__name__)
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
# With a query, injection keeps first at most this many facts that search ranks most relevant to it, then the
# rest by confidence. On LoCoMo dev (`memory-core eval`, turns mode) the answer was in the injected text for
# 0.18 of questions without a query, 0.39 / 0.42 / 0.44 / 0.45 with 10 / 20 / 40 / 80: 40 gets most of the gain
# and leaves about half of the default budget to the most confident facts.
RELEVANT_FACTS = 40
# With a query, the share of the budget kept for passages of episodes and logs (context.evidence); the facts
# take the rest, and passages what the facts leave. Chosen on LoCoMo dev (see README, `python -m bench eval`).
PASSAGE_SHARE = 0.9
def _when(when: Any) -> datetime | None:
    """`update()`'s `when`, checked: a timezone-aware datetime (ValueError otherwise), or None."""
    if when is None:
        return None
    if not isinstance(when, datetime) or when.tzinfo is None:
        raise ValueError("when must be a timezone-aware datetime (or None for now)")
    return when


# Extraction reads every stored fact of a scope of up to EXTRACTION_FACTS (the LLM extractor's prompt shows 200);
# of a larger one, the candidates a new statement may repeat or replace: at most EXTRACTION_FOUND facts that keyword
# search finds for what the user said, so that an update reads the same at any scope size.
EXTRACTION_FACTS = 200
EXTRACTION_FOUND = 50


class ScopedMemory:
    def __init__(self, parts: "Parts", scope: "Scope", role: str = "admin", actor: str | None = None, *,
                 importer: Callable[..., Any] | None = None) -> None:
        """`importer(view, path, **options)` imports a file into a view (portability.importer.import_file,
        given by the composition root so that the view does not import the importers that use it)."""
        self._parts = parts
        self._importer = importer
        self.scope = scope
        self.role = validate_role(role)
        self.actor = actor
        self.facts = ScopedFacts(scope, self.writing, parts.facts)
        self.daily = ScopedDaily(scope, self.writing, parts.daily)
        self.queue = ScopedQueue(scope, self.writing, parts.queue)
        self.plans = ScopedPlans(scope, self.writing, parts.plans)

    def __repr__(self) -> str:
        return f"ScopedMemory({self.scope.key}, role={self.role})"

    @property
    def user_id(self) -> str:
        return self.scope.user_id

    @property
    def agent_name(self) -> str:
        return self.scope.agent_name

    @property
    def can_write(self) -> bool:
        return rank(self.role) >= rank("editor")

    @property
    def can_admin(self) -> bool:
        return self.role == "admin"

    @property
    def offline(self) -> bool:
        return self._parts.offline

    @property
    def settings(self):
        return self._parts.settings

    @contextmanager
    def writing(self, what: str = "change memory") -> Iterator[None]:
        """Refuse a write the role lacks; record the view's actor with what is written."""
        if not self.can_write:
            raise PermissionError(f"the {self.role} role may not {what} in {self.scope.key}")
        if self.actor is None:
            yield
        else:
            with acting_as(self.actor):
                yield

    def _check_budget(self) -> None:
        if not self._parts.offline:
            self._parts.ledger.check(self.scope)  # BudgetExceeded: the daily token budget is spent, nothing changes

    # -- facts and updates --------------------------------------------------------------------------

    def update(self, messages: list[dict[str, str]], *, thread_id: str, when: datetime | None = None) -> UpdateResult:
        """Extract facts from a conversation with the LLM (or offline heuristics) and persist them, and keep the
        conversation as a dated episode (tiers.episodes).

        Applied whole or not at all: invalidations, new facts, supersessions and summaries go in one
        transaction. Raises ValueError for bad input (before any LLM call), LLMError when the LLM fails and
        LLMReplyError when its reply is unusable; in every case nothing stored changes. `when`: when the
        conversation took place (a timezone-aware datetime; default now), which its relative dates are read
        against; a message's optional `name` is kept as its speaker.
        """
        return self._update(messages, thread_id=thread_id, taken_in=self._parts.clock.now(), when=when)

    def _update(self, messages: list[dict[str, str]], *, thread_id: str, taken_in: datetime,
                when: datetime | None = None) -> UpdateResult:
        """`update`, for messages taken in at `taken_in`: a statement erased since then is refused ("erased")."""
        with self.writing("update memory"):
            parts, scope = self._parts, self.scope
            thread_id = validate_thread_id(thread_id)
            # the day a conversation took place, which its episode and "yesterday" are read in: a `when`'s own (the
            # caller's zone), else today where the memory lives (`timezone`)
            said_at = _when(when) or parts.clock.now().astimezone(parts.settings.tz)
            messages = strip_scheduled_pairs(validate_messages(messages, parts.settings.max_conversation_chars))
            current = self._extraction_data(messages)
            self._check_budget()
            try:
                with metering(scope, "extract"):
                    # An LLM reads the conversation with its relative dates written out and is asked for absolute
                    # ones; the offline heuristics, tuned on plain text, read it as it was said (the episode keeps
                    # the dates).
                    said = messages if parts.extractor.offline else dated_messages(messages, said_at)
                    reply = parts.extractor.extract(said, current, said_on=day_text(said_at))  # may raise
            except (LLMError, LLMReplyError) as exc:
                parts.llm_problems.add(scope.key, "reply" if isinstance(exc, LLMReplyError) else "call", str(exc))
                raise
            result = UpdateResult(offline=parts.offline, input_tokens=reply.input_tokens,
                                  output_tokens=reply.output_tokens)
            result.skipped.extend((content, "invalid") for content, _why in reply.invalid)
            result.notes.extend(reply.notes)
            for content, why in reply.invalid:
                log.info("skipped invalid extracted fact (%s): %.80s", why, content)
                parts.llm_problems.add(scope.key, "item", f"skipped {content[:60]!r}: {why}")
            eraser = parts.facts.eraser
            guard = eraser.guard(scope, taken_in) if eraser is not None else None  # read after the LLM's reply
            with parts.store.transaction(scope) as tx:
                apply_reply(tx, reply, thread_id, result, parts.settings, guard=guard)
            if guard is not None:  # what was erased since the conversation was taken in stays out of its episode too
                messages = [{**m, "content": guard.screen(m["content"])[0]} if isinstance(m.get("content"), str) else m
                            for m in messages]
            result.episode_id = parts.episodes.record(scope, messages, thread_id=thread_id, said_at=said_at)
            return result

    async def aupdate(self, messages: list[dict[str, str]], *, thread_id: str,
                      when: datetime | None = None) -> UpdateResult:
        """`update()` for async agents: runs in the queue's thread pool, never blocking the event loop."""
        actor = current_actor()

        def run() -> UpdateResult:
            with acting_as(actor):
                return self.update(messages, thread_id=thread_id, when=when)

        return await asyncio.get_running_loop().run_in_executor(self._parts.queue.executor, run)

    def apply_queued(self, messages: list[dict[str, str]], *, thread_id: str, options: dict[str, Any]) -> UpdateResult:
        """What the queue runs for one conversation: the update (its episode dated `options["when"]`, ISO 8601, when
        given, else when it was queued, `options["taken_in"]`, not when the queue got to it), and for such a dated
        conversation (an import's) a daily block dated when it happened (`options["title"]`)."""
        queued = utc(datetime.fromisoformat(options["taken_in"])) if options.get("taken_in") else None
        when = options.get("when")
        said_at = datetime.fromisoformat(when) if when else None
        if said_at is not None and said_at.tzinfo is None:  # a date queued without its zone: read as UTC
            said_at = said_at.replace(tzinfo=timezone.utc)
        taken = [t for t in (queued, said_at) if t is not None]
        taken_in = min(taken) if taken else self._parts.clock.now()  # an import's conversation: when it was held
        if said_at is None and queued is not None:  # queued at that time, where the memory lives
            said_at = queued.astimezone(self._parts.settings.tz)
        result = self._update(messages, thread_id=thread_id, taken_in=taken_in, when=said_at)
        if when:
            with metering(self.scope, "summarize"):
                summary = self._parts.summarizer.summarize([m for m in messages if m["role"] in ("user", "assistant")])
            if summary.strip():
                self.daily.append(summary, title=str(options.get("title") or "Imported conversation")[:120],
                                  when=datetime.fromisoformat(when))
        return result

    def erasure_guard(self, taken_in: datetime | None = None) -> Any:
        """The erasures of this scope made after `taken_in` (all for None), as an `erase.Guard`, or None: what an
        importer checks before it brings a statement back."""
        eraser = self._parts.facts.eraser
        return eraser.guard(self.scope, taken_in) if eraser is not None else None

    def data_version(self) -> tuple:
        """A cache key that changes with anything this scope's pages read: facts, summaries, conversations, logs and
        MEMORY.md (files taken in first, as a search takes them in)."""
        self._parts.index.answers.take_in(self.scope)
        return (*self._parts.store.version(self.scope), self._parts.index.answers.version(self.scope))

    def memory_data(self) -> dict[str, Any]:
        """The scope's summaries and every valid fact (injection and update read only what they use)."""
        data: dict[str, Any] = self._parts.store.summaries(self.scope)
        data["facts"] = [f.to_dict() for f in self._parts.store.list(self.scope)]
        return data

    def _injection_data(self, budget: int, priority: list[str] | None) -> dict[str, Any]:
        """`memory_data()` with only the facts that can reach a text of `budget` tokens (views.kept_reads): the text is
        the same as from the whole scope; the report's `dropped_fact_ids` lists the dropped facts read (the next
        most confident), `dropped_count` all."""
        return injection_data(self._parts.store, self._parts.index.answers, self.scope, budget, priority)

    def _extraction_data(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        """What extraction reads: the summaries and the facts a new statement may repeat or replace, with the keys
        extractors read (`store.fact_reads.EXTRACTION_KEYS`). A scope of up to EXTRACTION_FACTS facts gives them
        all (in `memory_data()`'s order); a larger one gives the facts that keyword search finds for what the user
        said (at most EXTRACTION_FOUND, best first). A repeat that search misses is still caught by its dedup key
        when it is written. One connection for all its reads."""
        store = self._parts.store
        with self._parts.db.reads():
            data: dict[str, Any] = store.summaries(self.scope)
            if store.count(self.scope) <= EXTRACTION_FACTS:
                data["facts"] = store.extraction_facts(self.scope, EXTRACTION_FACTS)
                return data
            said = " ".join(m["content"] for m in messages if m.get("role") == "user")[-2000:]
            found = self._parts.index.keyword_facts(self.scope, said, EXTRACTION_FOUND) if said.strip() else []
            data["facts"] = store.extraction_facts(self.scope, 0, found) if found else []
        return data

    def set_summaries(self, summaries: dict[str, str]) -> None:
        """Set user-context/history summaries by hand (workContext, personalContext, topOfMind, ...)."""
        with self.writing("set summaries"):
            allowed = {s for group in SUMMARY_SECTIONS.values() for s in group}
            unknown = set(summaries) - allowed
            if unknown:
                raise ValueError(f"unknown summary sections {sorted(unknown)}; allowed: {sorted(allowed)}")
            limit = self._parts.settings.max_document_chars
            checked = {k: check_memory_text(v, f"summary {k}", limit, setting="max_document_chars").strip()
                       for k, v in summaries.items()}
            self._parts.store.set_summaries(self.scope, checked)

    def injection_report(self, *, max_tokens: int | None = None, model: str | None = None,
                         query: str | None = None, record: bool = False, relevance: bool = True) -> InjectionReport:
        """What `format_for_injection` gives, with what was kept and dropped. With a `query`, the facts that
        search ranks most relevant to it (at most RELEVANT_FACTS, `relevant_fact_ids`) are kept first, then the
        rest by confidence, and passages fill what the facts leave. With `record=True` the injection is kept (who
        asked, when, the query, the tokens, the facts that went in): see `injections()`. `relevance=False`: where
        the query cannot change the text (a scope of facts alone, every one of which fits), the same text is made
        without a search and `relevant_fact_ids` is left empty (as `format_for_injection` and the MCP tool do)."""
        with self._parts.db.reads():  # one connection for all its reads
            parts = self._parts
            budget = parts.settings.max_injection_tokens if max_tokens is None else max_tokens
            if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
                raise ValueError(f"max_tokens must be a non-negative integer; got {budget!r}")
            report = self._kept(("context", budget, model, query, relevance),
                                lambda: self._report(budget, model, query, relevance), report_bytes)
            if record:
                parts.ledger.store.add_injection(self.scope, parts.clock.now(), self.actor or current_actor(),
                                                 query if isinstance(query, str) and query.strip() else None,
                                                 report.tokens, report.max_tokens, report.kept_fact_ids)
            return report

    def _report(self, budget: int, model: str | None, query: str | None, relevance: bool) -> InjectionReport:
        count = fact_count(self._parts.store, self._parts.index.answers, self.scope)
        if query is None:
            report = build_injection(self._injection_data(budget, None), budget, model=model)
        else:
            report = ((None if relevance else self._all_facts(query, budget, model, count))
                      or self._with_evidence(query, budget, model))
        report.dropped_count = max(0, count - len(report.kept_fact_ids))
        return report

    def _kept(self, key: tuple, make: Callable[[], Any], size: Callable[[Any], int]) -> Any:
        """`make()`, or what it gave for `key` on the same day while nothing the scope's searches read has changed
        (search.answers); an LLM's rerank is asked each time (its reply may differ, or fail and leave search's
        order)."""
        parts = self._parts
        if parts.settings.llm_rerank and parts.llm is not None:
            return make()
        return parts.index.answers.recall(self.scope, key + (self.role, parts.clock.now().date()), make, size)

    def format_for_injection(self, *, max_tokens: int | None = None, model: str | None = None,
                             query: str | None = None, record: bool = False) -> str:
        """The memory text for a system prompt, within `max_tokens` (see `injection_report`)."""
        return self.injection_report(max_tokens=max_tokens, model=model, query=query, record=record,
                                     relevance=False).text

    def injections(self, *, limit: int = 50) -> list["Injection"]:
        """The recorded injections of this scope, newest first."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError("limit must be a positive integer")
        return self._parts.ledger.store.injections(self.scope, min(limit, 10_000))

    def injection_counts(self) -> dict:
        """{fact id: (how often injected, when last)} of this scope, from the recorded injections."""
        return self._parts.ledger.store.injection_counts(self.scope)

    def usage(self, *, since: datetime | None = None) -> list["UsageRecord"]:
        """The recorded LLM and embedding calls of this scope, newest first."""
        return usage_records(self._parts.ledger.store, user_id=self.scope.user_id,
                             agent_name=self.scope.agent_name, since=since)

    def spent_today(self) -> int:
        """The LLM tokens this scope spent today (in `timezone`), as its daily_token_budget counts them (summed by the
        database, with those its calls in flight hold)."""
        return self._parts.ledger.spent_today(self.scope)

    def budget_paused(self) -> str | None:
        """Why this scope's LLM work waits today (its daily_token_budget is spent), or None."""
        return None if self._parts.offline else self._parts.ledger.paused(self.scope)

    def _all_facts(self, query: str, budget: int, model: str | None, count: int) -> InjectionReport | None:
        """The injection without a query where a query would change nothing, or None: a scope of facts alone (no
        episode, daily log or MEMORY.md to give a passage) whose `count` facts all fit in `budget`, so that there is
        no fact to choose before another either. Such a scope, an agent's that only calls `remember`, is given its
        facts without a search (`bench mcp`'s 20-fact scopes: `injection_report(500, query)` 1.6 -> 0.7 ms in
        process)."""
        if not isinstance(query, str) or count > budget // 9 or self._parts.index.has_passages(self.scope):
            return None  # a fact line is 9 tokens at least: more facts than budget // 9 cannot all fit
        report = build_injection(self._injection_data(budget, None), budget, model=model)
        return report if len(report.kept_fact_ids) == count and not report.truncated else None

    def _with_evidence(self, query: str, budget: int, model: str | None) -> InjectionReport:
        """The injection for a query: the facts search ranks most relevant to it kept first, within the budget
        less the passages' share (PASSAGE_SHARE), then the passages (context.evidence) in what is left."""
        if not isinstance(query, str):
            raise ValueError("query must be a string")
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
            raise ValueError(f"max_tokens must be a non-negative integer; got {budget!r}")
        # searched as `search` does, in this injection's reads, and not kept apart from it (search.answers)
        hits = self._search(query, RELEVANT_FACTS * 2, {"depth": evidence_depth(budget)}) if query.strip() else []
        if parts := sub_queries(query):  # a question that asks two things: each part searched too
            hits = merge_rankings([hits] + [self._search(part, RELEVANT_FACTS, {"depth": max(50, RELEVANT_FACTS * 5)})
                                            for part in parts])
        hits = self._reranked(query, hits)
        priority = [h.ref for h in hits if h.kind == "fact"][:RELEVANT_FACTS]

        def turns_of(wanted: dict[str, set[int]]) -> dict[tuple[str, int], Turn]:
            # the scope's retired facts are read only when there are turns to judge (search read them for its hits)
            return self._turns_of(wanted, self._current_of([h.text for h in hits if h.kind == "fact"]))

        passages = select_passages(hits, turns_of)  # search ranked who and when the query names (search.asked)
        facts_budget = budget - int(budget * PASSAGE_SHARE) if passages else budget
        report = build_injection(self._injection_data(facts_budget, priority), facts_budget, model=model,
                                 priority=priority)
        report.max_tokens = budget
        return with_passages(report, passages, budget, model)

    def _reranked(self, query: str, hits: list["SearchHit"]) -> list["SearchHit"]:
        """`hits` as the LLM reranks them when `llm_rerank` is on (context.rerank); search's order otherwise, and when
        the call fails, its reply is unusable or the day's token budget is spent (reported as an LLM problem)."""
        parts = self._parts
        if not (parts.settings.llm_rerank and parts.llm is not None and len(hits) > 1):  # no llm: offline
            return hits
        try:
            self._check_budget()
            with metering(self.scope, "rerank"):
                return rerank_hits(parts.llm, query, hits, candidates=parts.settings.llm_rerank_candidates,
                                   max_output_tokens=parts.settings.llm_max_output_tokens)
        except (LLMError, LLMReplyError, BudgetExceeded) as exc:
            parts.llm_problems.add(self.scope.key, "rerank", f"search's order kept: {exc}")
            return hits

    def _turns_of(self, wanted: dict[str, set[int]], current: Callable[..., str | None]) -> dict[tuple[str, int], Turn]:
        found = self._parts.episodes.store.around(self.scope, wanted)
        return {key: Turn(who, text, current(text, True)) for key, (who, text) in found.items()}

    def relevant_fact_ids(self, query: str, *, k: int = RELEVANT_FACTS) -> list[str]:
        """The ids of the scope's valid facts most relevant to `query`, best first, by the hybrid search
        (whose other hits, daily logs and MEMORY.md, are left out). A blank query ranks nothing."""
        if not isinstance(query, str):
            raise ValueError("query must be a string")
        if not query.strip():
            return []
        hits = self.search(query, k=k * 2)
        return [h.ref for h in hits if h.kind == "fact"][:k]

    def search(self, query: str, *, k: int = 10, **options: Any) -> list["SearchHit"]:
        """Facts, daily logs and MEMORY.md, best first, one hit per statement (a fact stands for the bullet or
        log line that says the same)."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError("k must be a positive integer")
        # Twice as many hits as shown, since some may be dropped as saying what a fact says, ranked as the k shown
        # would be (the depth of k): asking for more must not reorder the best.
        with self._parts.db.reads():  # one connection for all its reads
            options.setdefault("depth", max(50, k * 5))
            return self._kept(("search", query, k, tuple(sorted(options.items()))),
                              lambda: self._search(query, k, options), hits_bytes)

    def _search(self, query: str, k: int, options: dict[str, Any]) -> list["SearchHit"]:
        with metering(self.scope, "embed"):  # an API embedder's calls are this scope's
            hits = self._parts.index.search(self.scope, query, k * 2, **options)
        hits = one_hit_per_statement(hits, k)
        if all(h.kind == "fact" for h in hits):  # a valid fact is current: no retired fact to read
            return hits
        now = self._current_of([h.text for h in hits if h.kind == "fact"])  # an episode's turn is said (text.truth.stale)
        return [h if h.kind == "fact" or (c := now(h.text, h.kind == "episode")) is None else replace(h, current=c) for h in hits]

    def _current_of(self, valid: list[str]) -> Callable[..., str | None]:
        """A passage's `SearchHit.current`: for one that states a retired fact (text.truth), what replaced
        it ("" when nothing did); None for an ordinary passage. `valid`: texts known to be current (a passage
        that one of them says is not stale)."""
        db = self._parts.db  # read once a reads() block: a search and the injection it serves share them
        retired = [Retired(i, c, r) for i, c, r in db.once(("retired", self.scope), lambda: retired_facts(db, self.scope))]
        if not retired:
            return lambda _text, _said=False: None
        known = valid + [r.replacement for r in retired if r.replacement]

        def current(text: str, said: bool = False) -> str | None:  # said: a turn of a conversation (text.truth.stale)
            old = stale(text, retired, known, said=said) or next((r for r in retired if says_retired(text, r, said=said)), None)
            if old is None or (old.replacement and says_same(text, old.replacement)):  # it says what is true now
                return None
            return old.replacement or ""
        return current

    def episode_days(self) -> list[str]:
        """The days (YYYY-MM-DD) this scope has conversations of, newest first."""
        return self._parts.episodes.days(self.scope)

    def episodes_of_day(self, day: str) -> list["EpisodeTurn"]:
        """What was said on `day` (YYYY-MM-DD): every turn of that day's conversations, in order, each with who
        said it, when, and its relative dates written out (`.dated`)."""
        if not isinstance(day, str) or not _DAY.fullmatch(day):
            raise ValueError("day must be YYYY-MM-DD")
        return self._parts.episodes.of_day(self.scope, day)

    def doctor(self) -> list[Finding]:
        """Where the copies of what this scope knows disagree (see memory_core.consistency.doctor)."""
        parts = self._parts
        return check(parts.store.summary_texts(self.scope), parts.core.read(self.scope),
                     parts.store.list(self.scope, include_invalid=True), parts.store.provenance.of(self.scope))

    def search_info(self) -> str:
        """One line on how the scope's search vectors are made (model, token-frequency snapshot)."""
        return self._parts.index.describe(self.scope)

    # -- tiers --------------------------------------------------------------------------------------

    def _unerased(self, text: str | None) -> str | None:
        """`text` (a document served to a person or an agent) without the passages of an erase of this scope that
        is journaled but not finished (a full disk before its file rewrites): nothing serves them meanwhile."""
        eraser = self._parts.facts.eraser
        screen = eraser.pending_screen(self.scope) if text and eraser is not None else None
        return screen(text) if screen is not None else text

    def read_core(self) -> str | None:
        return self._unerased(self._parts.core.read(self.scope))

    def write_core(self, text: str, *, reason: str = "edited by hand") -> "CoreVersion":
        """Replace the scope's MEMORY.md (a new recorded version, with the current actor). ValueError, with
        nothing written, for non-text, NUL characters, lone surrogates or more than max_document_chars."""
        with self.writing("write MEMORY.md"):
            return self._parts.core.write(self.scope, text, reason)

    def core_versions(self) -> list["CoreVersion"]:
        return self._parts.core.versions(self.scope)

    def rollback_core(self, version: int) -> "CoreVersion":
        with self.writing("roll back MEMORY.md"):
            return self._parts.core.rollback(self.scope, version)

    def deep_dream(self, lookback_days: int = 1, *, force: bool = False) -> "DreamResult":
        with self.writing("run Deep Dream"):
            self._check_budget()
            with metering(self.scope, "dream"):
                result = self._parts.dreamer.run(self.scope, lookback_days, force)
            if result.status == "rejected" and not self._parts.offline:
                self._parts.llm_problems.add(self.scope.key, "dream", f"dream rejected: {result.reason}")
            return result

    def dream_proposals(self) -> list["DreamProposal"]:
        """The scope's open dream proposals (Settings.dream_review), newest first, each with its diff against
        the current MEMORY.md."""
        current = self.read_core() or ""
        return [replace(p, diff=CoreTier.diff(current, p.text, "MEMORY.md", p.id))
                for p in self._parts.dreamer.proposals.open(self.scope)]

    def _proposal(self, proposal_id: str):
        proposal = self._parts.dreamer.proposals.get(proposal_id)
        if (proposal.user_id, proposal.agent_name) != (self.scope.user_id, self.scope.agent_name):
            raise KeyError(proposal_id)  # another scope's proposal is as unknown as a made-up one
        return proposal

    def approve_dream(self, proposal_id: str) -> "DreamResult":
        """Write a proposal as MEMORY.md's new version. KeyError if unknown or no longer open
        (approved or rejected); ValueError if MEMORY.md changed since the proposal."""
        self._proposal(proposal_id)
        with self.writing("approve a dream"):
            return self._parts.dreamer.approve(proposal_id)

    def reject_dream(self, proposal_id: str) -> None:
        """Drop a proposal (KeyError if unknown or no longer open)."""
        self._proposal(proposal_id)
        with self.writing("reject a dream"):
            self._parts.dreamer.reject(proposal_id)

    def dream_state(self):
        """The scope's last dream: status, reason, when (or None)."""
        return self._parts.dreamer.state(self.scope)

    def dream_diaries(self) -> list[str]:
        return self._parts.documents.list(self.scope, "memory/dreams")

    def read_document(self, path: str) -> str | None:
        """One of the scope's own documents (`MEMORY.md`, `memory/...`), or None if it does not exist yet.
        Any other path (another scope's files, the database file, ..) raises KeyError."""
        return self._unerased(self._parts.documents.read(self.scope, path))

    def export_documents(self, target: Path | str) -> list[str]:
        """Write the scope's documents (from whichever store holds them) out as files under `target`."""
        return export_documents(self._parts.documents, LocalDocumentStore(lambda _s: Path(target)), self.scope,
                                self._unerased)

    def context(self, session_id: str, *, on_flush: Callable[[str], None] | None = None,
                budget_tokens: int | None = None) -> "ContextSession":
        """The live session `session_id`; a new one resumes the scope's active plan."""
        with self.writing("record a session"):
            if not isinstance(session_id, str) or not session_id:
                raise ValueError("session_id must be a non-empty string")
            session, new = self._parts.contexts.session(session_id, self.scope, on_flush, budget_tokens)
            if new:
                plan = self.plans.active()
                if plan is not None:
                    session.plan = self._parts.plans.record_session(plan.id, session_id)
            return session

    def import_file(self, path: Path | str, *, format: str | None = None, dry_run: bool = False,
                    progress: Any = None):
        """Another tool's memory or conversations into this scope (see `Memory.import_file`)."""
        if self._importer is None:
            raise RuntimeError("this view was made without an importer")
        return self._importer(self, path, format=format, dry_run=dry_run, progress=progress)

    # -- for importers and bundles: what they write, through the view's role and actor ---------------

    def fact_transaction(self) -> ContextManager[Any]:
        """One transaction over the scope's facts (`FactStore.transaction`, the one there is); wrap it in
        `writing(...)`."""
        return self._parts.store.transaction(self.scope)

    def import_ledger(self) -> ScopedImports:
        """What was imported into this scope (so that importing again adds nothing)."""
        return ScopedImports(self.scope, self.writing, ImportLedger(self._parts.db, self._parts.clock))

    def write_document(self, path: str, text: str, *, what: str = "write documents") -> None:
        """Write one of the scope's documents as it is (a daily log, a diary); reindex with `reindex_documents`."""
        with self.writing(what):
            self._parts.documents.write(self.scope, path, text)

    def reindex_documents(self) -> None:
        """Bring the search index up to date with the scope's documents."""
        self._parts.index.sync_documents(self.scope)

    def wait_for_flushes(self, timeout: float | None = 30.0) -> None:
        """Wait until the context flushes in flight have reached the daily log."""
        self._parts.contexts.wait(timeout)

    def sessions(self) -> list["ContextSession"]:
        """The scope's live context sessions in this process."""
        return [s for s in self._parts.contexts.sessions() if s.scope == self.scope]
