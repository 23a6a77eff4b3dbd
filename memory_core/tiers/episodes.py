"""Episodes: every conversation taken in, kept as it was said, dated, with its relative dates written down.

`update()`, `aupdate()`, the queue and the importers (through the queue) give each conversation here once its
update is applied. Its turns are kept in order with who said each (the message's `name` when it has one, the label
of a conversation written as a transcript, "Caroline: ...", when it is one, else the name the other side addresses
it by, "Thanks, Melanie!", when it is one (`text.speakers`), else its role) and
when (the date the caller gave, else the time it was taken in); each turn's relative expressions ("yesterday",
"last Saturday") are resolved against that date (`text.dates`). Scheduler pairs and system messages are left out;
a conversation keeps at most MAX_TURNS turns (its last ones) and a turn at most MAX_TURN_CHARS characters. The text
is the one `validate_messages` checked: credentials already masked.

A thread given again (agents give the whole conversation after each turn, and the queue takes it in again once it
has been quiet for a while) keeps only what is new: the turns that repeat the end of what its thread kept are left
out, so that a turn is kept once, dated when it was first taken in. A thread given in parts (an agent that gives each
exchange as it happens) goes on in one episode: the turns of a thread taken in on the day of its last kept turn and
within CONTINUES of it are that episode's next turns, so that a passage reads its neighbours as when the
conversation is given whole.
"""

from __future__ import annotations

import logging
import secrets
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Callable, Sequence

from memory_core.store.episode_store import EpisodeStore, EpisodeTurn
from memory_core.text.dates import annotate, resolve_dates
from memory_core.text.speakers import addressed_speakers, speaker_labels

if TYPE_CHECKING:
    from memory_core.scope import Scope

log = logging.getLogger(__name__)
MAX_TURNS = 2_000
MAX_TURN_CHARS = 8_000
ADDRESSED_CONTEXT = 40  # the thread's last turns read with a conversation that names nobody (text.speakers)
CONTINUES = timedelta(minutes=30)  # a thread's next turns within this of its last one go on in its episode
KEPT_ROLES = ("user", "assistant")


def new_episode_id(said_at: datetime) -> str:
    """"YYYY-MM-DD-<12 hex>": sorted by day when listed, unique."""
    return f"{said_at.date().isoformat()}-{secrets.token_hex(6)}"


def dated_messages(messages: list[dict[str, Any]], said_at: datetime) -> list[dict[str, Any]]:
    """The messages with each relative date written out (what extraction reads, so that a fact says when)."""
    return [{**m, "content": annotate(m["content"], said_at)} if m.get("role") in KEPT_ROLES and m.get("content") else m
            for m in messages]


def _repeated(kept: Sequence[Sequence], turns: list[tuple]) -> int:
    """How many of a conversation's first `turns` repeat what its thread already kept (`kept`: the thread's last
    turns, oldest first, each (role, speaker, text, ...)): the longest run that ends what was kept and begins the
    conversation, so that a thread given again whole (as agents give it after each turn), or in a window that slid
    on, keeps only its new turns. A run of one turn counts only when it is all the thread kept or all the
    conversation says (two conversations of a thread may both begin with "Hi!")."""
    said = [(role, speaker, text) for role, speaker, text, _dates in turns]
    kept = [tuple(turn[:3]) for turn in kept]
    if not said:
        return 0
    starts = [i for i, turn in enumerate(kept) if turn == said[0] and len(kept) - i <= len(said)]  # oldest first
    for i in starts:  # the longest run first
        n = len(kept) - i
        if kept[i:] == said[:n] and (n > 1 or len(kept) == 1 or len(said) == 1):
            return n
    return 0


class Episodes:
    def __init__(self, store: EpisodeStore, added: Callable[["Scope"], None], removed: Callable[["Scope"], None]) -> None:
        """`added(scope)`: turns were added to the scope's search index (SearchIndex.rows_added: the next search embeds
        and appends them); `removed(scope)`: some went (SearchIndex.touch: its cached vectors are stale)."""
        self.store = store
        self.added = added
        self.removed = removed

    def record(self, scope: "Scope", messages: list[dict[str, Any]], *, thread_id: str, said_at: datetime) -> str | None:
        """Keep the conversation as an episode; its id, or None when it had no turn to keep."""
        turns = []
        labels = speaker_labels(messages, KEPT_ROLES)
        named = any(labels) or any(isinstance(m.get("name"), str) and m["name"].strip() for m in messages)
        # what a conversation given again may repeat; for one that names nobody, the thread's last turns too
        wanted = len(messages) if named else max(len(messages), ADDRESSED_CONTEXT)
        tail = self.store.thread_tail(scope, thread_id, wanted)
        # "Thanks, Melanie!": read with what the thread said before, as a thread given an exchange at a time
        addressed = {} if named else addressed_speakers([{"role": t.role, "content": t.text} for t in tail]
                                                        + list(messages), KEPT_ROLES)
        for m, labelled in zip(messages, labels):
            text = str(m.get("content") or "").strip()
            if m.get("role") not in KEPT_ROLES or not text:
                continue
            speaker = m.get("name") if isinstance(m.get("name"), str) and m.get("name").strip() else None
            if labelled is not None:  # a transcript's "Caroline: ..." (text.speakers)
                speaker, text = labelled[0], labelled[1].strip()
            speaker = speaker or addressed.get(m["role"])
            text = text[:MAX_TURN_CHARS]
            dates = [(r.expression, r.start, r.end, r.value) for r in resolve_dates(text, said_at)]
            turns.append((m["role"], speaker.strip()[:64] if speaker else None, text, dates))
        if not turns:
            return None
        repeated = _repeated(tail, turns)
        if repeated:  # the thread given again: only what it says that is new is an episode
            turns = turns[repeated:]
            if not turns:
                return None
        if len(turns) > MAX_TURNS:
            log.info("episode of %s kept its last %d of %d turns", thread_id, MAX_TURNS, len(turns))
            turns = turns[-MAX_TURNS:]
        last = tail[-1] if tail else None
        if (last is not None and last.said_at.astimezone(said_at.tzinfo).date() == said_at.date()
                and abs(said_at - last.said_at) <= CONTINUES
                and last.index + 1 + len(turns) <= MAX_TURNS):  # the thread goes on: its episode's next turns
            episode_id, start = last.episode_id, last.index + 1
        else:
            episode_id, start = new_episode_id(said_at), 0
        self.store.add(scope, episode_id, thread_id, said_at, turns, start)
        self.added(scope)
        return episode_id

    def of_day(self, scope: "Scope", day: str) -> list[EpisodeTurn]:
        return self.store.of_day(scope, day)

    def days(self, scope: "Scope") -> list[str]:
        return self.store.days(scope)

    def remove(self, scope: "Scope", turns: list[tuple[str, int]]) -> int:
        removed = self.store.remove(scope, turns)
        if removed:
            self.removed(scope)
        return removed

    def remove_older_than(self, scope: "Scope", days: int | None, now: datetime) -> int:
        """Retention: the episodes said more than `days` days before `now` (None: kept forever)."""
        if days is None:
            return 0
        removed = self.store.remove_before(scope, now - timedelta(days=days))
        if removed:
            self.removed(scope)
        return removed
