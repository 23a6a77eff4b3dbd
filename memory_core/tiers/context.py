"""The context tier: live sessions in memory (an LRU), trimmed and flushed to the daily tier."""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from memory_core.context.compression import compress_messages
from memory_core.errors import BudgetExceeded
from memory_core.text.messages import ROLES, strip_scheduled_pairs
from memory_core.scope import Scope
from memory_core.text.tokens import count_tokens
from memory_core.policy.usage import metering
from memory_core.text.validation import check_memory_text
from memory_core.tiers.summarizer import ExtractiveSummarizer

if TYPE_CHECKING:
    from memory_core.context.plans import Plan

log = logging.getLogger(__name__)
def message_hash(message: dict[str, Any]) -> str:
    return hashlib.md5(f"{message.get('role')}\x00{message.get('content')}".encode("utf-8")).hexdigest()


class FlushedHashes:
    """The MD5s of messages already flushed, per scope; bounded, oldest forgotten first."""

    def __init__(self, limit: int = 20_000) -> None:
        self.limit = limit
        self._seen: OrderedDict[tuple[Scope, str], None] = OrderedDict()
        self._lock = threading.Lock()

    def fresh(self, scope: Scope, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        with self._lock:
            for m in messages:
                key = (scope, message_hash(m))
                if key in self._seen:
                    self._seen.move_to_end(key)
                    continue
                self._seen[key] = None
                out.append(m)
            while len(self._seen) > self.limit:
                self._seen.popitem(last=False)
        return out

    def __len__(self) -> int:
        return len(self._seen)


class ContextSession:
    """One live conversation: messages, exact token usage (the sum of the contents' tokens in o200k_base),
    and a running summary."""

    def __init__(self, manager: "ContextManager", session_id: str, scope: Scope, budget: int,
                 on_flush: Callable[[str], None] | None) -> None:
        self._manager = manager
        self.session_id = session_id
        self.scope = scope
        self.budget = budget
        self.on_flush = on_flush
        self.messages: list[dict[str, Any]] = []
        self.summary = ""
        self.tokens = 0
        self.plan: "Plan | None" = None
        self.started_at: Any = None  # set by the manager from the memory's clock
        self.ended = False
        self._lock = threading.RLock()
        self._epochs: dict[str, tuple[int, str]] = {}
        self._epoch_counter = 0

    def add(self, role: str, content: str) -> None:
        if role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}; got {role!r}")
        content = check_memory_text(content, "content")
        with self._lock:
            if self.ended:
                raise ValueError(f"session {self.session_id} has ended")
            self.messages.append({"role": role, "content": content})
            self.tokens += count_tokens(content)
            over = self.tokens > self.budget
        if over:
            self.trim()

    @staticmethod
    def _tokens_of(messages: list[dict[str, Any]]) -> int:
        return sum(count_tokens(str(m.get("content") or "")) for m in messages)

    def _recount(self) -> None:
        self.tokens = self._tokens_of(self.messages)

    def trim(self, keep_turns: int = 2) -> str | None:
        """Summarise and flush the oldest part, never splitting a user message from its reply.

        Returns the daily path the summary goes to, or None when nothing could be trimmed.
        """
        with self._lock:
            compressed = compress_messages(self.messages, protect_turns=keep_turns, purge_errors_after=keep_turns)
            self.messages = compressed.messages
            user_at = [i for i, m in enumerate(self.messages) if m["role"] == "user"]
            if len(user_at) <= keep_turns:
                # Too few turns to keep whole ones: cut at the latest user message after the first.
                cut = user_at[-1] if len(user_at) > 1 else 0
            else:
                cut = user_at[len(user_at) - keep_turns]
                half = user_at[len(user_at) // 2] if len(user_at) > 1 else cut
                cut = max(cut, half) if self.tokens - self._tokens_of(self.messages[:cut]) > self.budget else cut
            if cut <= 0:
                self._recount()
                return None
            part, self.messages = self.messages[:cut], self.messages[cut:]
            self._recount()
        return self._manager.flush(self, part, "Trimmed Context")

    def end(self) -> str | None:
        """Flush what is left and close the session."""
        with self._lock:
            if self.ended:
                return None
            self.ended = True
            part, self.messages = self.messages, []
            self.tokens = 0
        self._manager.forget(self)
        return self._manager.flush(self, part, "Session End") if part else None

    def _set_summary(self, text: str) -> None:
        with self._lock:
            combined = f"{self.summary}\n{text}".strip() if self.summary else text
            # The running summary stays bounded: the newest lines win.
            lines = combined.splitlines()
            while lines and count_tokens("\n".join(lines)) > max(200, self.budget // 4):
                lines.pop(0)
            self.summary = "\n".join(lines)

    # -- system context with epochs -------------------------------------------------------------

    def _source(self, name: str, text: str) -> int:
        current = self._epochs.get(name)
        if current is None or current[1] != text:
            self._epoch_counter += 1
            self._epochs[name] = (self._epoch_counter, text)
        return self._epochs[name][0]

    def context_sources(self) -> dict[str, dict[str, Any]]:
        """The typed sources of the system context, each with the epoch at which it last changed."""
        memory_text = self._manager.parts.injection(self.scope)
        from memory_core.context.plans import plan_text

        if self.plan is not None:
            self.plan = self._manager.parts.plan(self.plan.id)
        texts = {"memory": memory_text,
                 "plan": plan_text(self.plan) if self.plan and self.plan.status == "active" else "",
                 "summary": f"Earlier in this session:\n{self.summary}" if self.summary else ""}
        with self._lock:
            return {name: {"epoch": self._source(name, text), "text": text} for name, text in texts.items()}

    def system_context(self) -> str:
        return "\n\n".join(s["text"] for s in self.context_sources().values() if s["text"])

    def changed_since(self, epoch: int) -> dict[str, str]:
        """The sources whose epoch is newer than `epoch`: what an agent must re-inject."""
        return {name: s["text"] for name, s in self.context_sources().items() if s["epoch"] > epoch}

    @property
    def epoch(self) -> int:
        return self._epoch_counter


@dataclass(frozen=True)
class ContextParts:
    """What the context tier needs of the rest, as callables (it knows nothing of Memory)."""

    summarize: Callable[[list[dict[str, Any]]], str]  # messages -> a summary
    append_daily: Callable[[str, str, Scope], object]  # (summary, title, scope): into the day's log
    today: Callable[[], Any]  # the daily tier's today (a date), to name the file a flush goes to
    injection: Callable[[Scope], str]  # the scope's memory as injected into a system prompt
    plan: Callable[[str], "Plan | None"]  # a plan by id, as it is now
    now: Callable[[], Any] | None = None  # the memory's clock: when a session started
    # (text, scope, session start) -> the text without what was erased since the session started (erase.Guard)
    screen: Callable[[str, Scope, Any], str] | None = None


class ContextManager:
    def __init__(self, parts: ContextParts, max_sessions: int, budget: int) -> None:
        self.parts = parts
        self.max_sessions = max_sessions
        self.budget = budget
        self.hashes = FlushedHashes()
        self._sessions: OrderedDict[tuple[Scope, str], ContextSession] = OrderedDict()
        self._lock = threading.Lock()
        self._threads: set[threading.Thread] = set()
        self.errors: list[str] = []

    def session(self, session_id: str, scope: Scope, on_flush: Callable[[str], None] | None = None,
                budget: int | None = None) -> tuple[ContextSession, bool]:
        evicted = []
        with self._lock:
            key = (scope, session_id)
            existing = self._sessions.get(key)
            if existing is not None:
                self._sessions.move_to_end(key)
                if on_flush is not None:
                    existing.on_flush = on_flush
                return existing, False
            session = ContextSession(self, session_id, scope, budget or self.budget, on_flush)
            session.started_at = self.parts.now() if self.parts.now is not None else None
            self._sessions[key] = session
            while len(self._sessions) > self.max_sessions:
                evicted.append(self._sessions.popitem(last=False)[1])
        for old in evicted:
            log.info("context session %s pushed out of the LRU; flushing it", old.session_id)
            old.end()
        return session, True

    def forget(self, session: ContextSession) -> None:
        with self._lock:
            self._sessions.pop((session.scope, session.session_id), None)

    def sessions(self) -> list[ContextSession]:
        with self._lock:
            return list(self._sessions.values())

    def flush(self, session: ContextSession, part: list[dict[str, Any]], title: str) -> str | None:
        """Summarise `part` and append it to the daily tier, in a daemon thread."""
        part = self.hashes.fresh(session.scope, strip_scheduled_pairs(part))
        part = [m for m in part if m.get("role") in ("user", "assistant") and str(m.get("content") or "").strip()]
        if not part:
            return None
        from memory_core.tiers.daily import daily_path

        path = daily_path(self.parts.today())

        def run() -> None:
            try:
                try:
                    with metering(session.scope, "summarize"):
                        summary = self.parts.summarize(part)
                except BudgetExceeded as exc:  # no LLM call: the offline summary keeps the part, nothing lost
                    log.info("context flush of session %s summarised offline: %s", session.session_id, exc)
                    summary = ExtractiveSummarizer().summarize(part)
                if self.parts.screen is not None:  # a statement erased since the session started stays out
                    summary = self.parts.screen(summary, session.scope, session.started_at)
                if not summary.strip():
                    return
                self.parts.append_daily(summary, title, session.scope)
                session._set_summary(summary)
                if session.on_flush is not None:
                    session.on_flush(summary)
            except Exception as exc:  # a failed flush must not kill the agent; it is recorded
                log.exception("context flush of session %s failed", session.session_id)
                self.errors.append(f"{session.session_id}: {exc}")
            finally:
                with self._lock:
                    self._threads.discard(threading.current_thread())

        thread = threading.Thread(target=run, name=f"memory-flush-{session.session_id}", daemon=True)
        with self._lock:
            self._threads.add(thread)
        thread.start()
        return path

    def wait(self, timeout: float | None = 30.0) -> None:
        """Wait for the flushes in flight."""
        with self._lock:
            threads = list(self._threads)
        for t in threads:
            t.join(timeout)

    def close(self) -> None:
        for session in self.sessions():
            session.end()
        self.wait()
