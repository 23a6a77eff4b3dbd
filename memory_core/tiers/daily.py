"""The daily tier: `memory/YYYY-MM-DD.md`, created lazily, append-only blocks."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Callable, Mapping

from memory_core.scope import Scope, make_scope
from memory_core.text.words import sha256_text
from memory_core.text.validation import check_memory_text

if TYPE_CHECKING:
    from memory_core.clock import Clock
    from memory_core.tiers.documents import DocumentStore
    from memory_core.settings import Settings

_DAY_FILE = re.compile(r"memory/(\d{4}-\d{2}-\d{2})\.md")
_HEADING_LINE = re.compile(r"^(#+)", re.M)
TITLE_MAX_CHARS = 256  # a block's heading line; its text has the document limit


def daily_path(day: date) -> str:
    return f"memory/{day.isoformat()}.md"


def daily_header(day: date) -> str:
    return f"# Daily Memory: {day.isoformat()}\n\n"


def format_block(title: str, when: datetime, text: str) -> str:
    """One block: `## {title} (HH:MM)` and the text; headings inside the text are escaped so that
    nothing written can forge a block of its own."""
    title = " ".join(str(title).split()) or "Note"
    body = _HEADING_LINE.sub(r"\\\1", text.strip("\n"))
    return f"## {title} ({when.strftime('%H:%M')})\n{body}\n\n"


class DailyTier:
    """`memory.daily`."""

    def __init__(self, store: "DocumentStore", settings: "Settings", clock: "Clock",
                 on_append: Callable[[Scope, str], None] | None = None,
                 before_append: Callable[[Scope], None] | None = None,
                 screen: Callable[[Scope], Callable[[str], str] | None] | None = None) -> None:
        self.store = store
        self.settings = settings
        self.clock = clock
        self.on_append = on_append
        # From the composition root: an erase left unfinished in the scope (a full disk) ends before an append,
        # and until it has, `read` leaves its passages out (screen(scope): text -> text, None when none).
        self.before_append = before_append
        self.screen = screen

    def append(self, text: str, *, title: str = "Trimmed Context", when: datetime | None = None,
               user_id: str = "default", agent_name: str = "default") -> str:
        """Append a block to the day's file (creating it with its header) and return its relative path.

        ValueError, with nothing written, for empty text, a non-string, NUL characters, lone surrogates, a
        text longer than `Settings.max_document_chars` or a title longer than TITLE_MAX_CHARS."""
        scope = make_scope(user_id, agent_name)
        text = check_memory_text(text, "text", self.settings.max_document_chars, allow_empty=False)
        title = check_memory_text(title, "title", TITLE_MAX_CHARS)
        when = when or self.clock.now()
        if when.tzinfo is None:
            when = when.replace(tzinfo=self.settings.tz)
        local = when.astimezone(self.settings.tz)
        path = daily_path(local.date())
        if self.before_append:
            self.before_append(scope)
        self.store.append(scope, path, format_block(title, local, text), daily_header(local.date()))
        if self.on_append:
            self.on_append(scope, path)
        return path

    def read(self, day: date, *, user_id: str = "default", agent_name: str = "default") -> str | None:
        if isinstance(day, datetime):
            day = day.date()
        if not isinstance(day, date):
            raise ValueError(f"day must be a datetime.date; got {type(day).__name__}")
        scope = make_scope(user_id, agent_name)
        text = self.store.read(scope, daily_path(day))
        screen = self.screen(scope) if text and self.screen else None
        return screen(text) if screen is not None else text

    def days(self, *, user_id: str = "default", agent_name: str = "default") -> list[date]:
        """The days that have a log, oldest first."""
        found = []
        for path in self.store.list(make_scope(user_id, agent_name), "memory"):
            match = _DAY_FILE.fullmatch(path)
            if match:
                found.append(date.fromisoformat(match.group(1)))
        return sorted(found)

    def today(self) -> date:
        return self.clock.now().astimezone(self.settings.tz).date()

    def recent(self, lookback_days: int, scope: Scope) -> list[tuple[date, str]]:
        """(day, text) of the last `lookback_days` days that have content, oldest first."""
        today = self.today()
        screen = (self.screen(scope) if self.screen else None) or (lambda text: text)  # read once
        out = []
        for offset in range(lookback_days - 1, -1, -1):
            day = today - timedelta(days=offset)
            text = self.store.read(scope, daily_path(day))
            if text and text.strip() and text.strip() != daily_header(day).strip():
                out.append((day, screen(text)))
        return out

    def remove_older_than(self, scope: Scope, keep_days: int, dreamt: Mapping[str, str]) -> list[str]:
        """Delete logs older than `keep_days` that a dream has read as they are now (`dreamt`: {YYYY-MM-DD:
        hash of the text read}); a log no dream read (imported for an old day, say) or appended to since is kept."""
        cutoff = self.today() - timedelta(days=keep_days)
        removed = []
        for day in self.days(user_id=scope.user_id, agent_name=scope.agent_name):
            if day >= cutoff or day.isoformat() not in dreamt:
                continue
            text = self.store.read(scope, daily_path(day)) or ""
            if sha256_text(text) == dreamt[day.isoformat()]:
                self.store.delete(scope, daily_path(day))
                removed.append(daily_path(day))
        return removed


def split_blocks(text: str) -> list[tuple[int, int, str]]:
    """The blocks of a daily file as (first line, last non-blank line, text), 1-based: each `## ` block, and
    first whatever stands between the `# ` day header and the first block (a log written by another tool)."""
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines, 1) if line.startswith("## ")]
    blocks: list[tuple[int, int, str]] = []
    head = [(i, line) for i, line in enumerate(lines[:starts[0] - 1] if starts else lines, 1)
            if line.strip() and not (i == 1 and line.startswith("# "))]
    if head:
        first, last = head[0][0], head[-1][0]
        blocks.append((first, last, "\n".join(lines[first - 1:last]).strip()))
    for n, start in enumerate(starts):
        end = starts[n + 1] - 1 if n + 1 < len(starts) else len(lines)
        while end > start and not lines[end - 1].strip():
            end -= 1
        blocks.append((start, end, "\n".join(lines[start - 1:end]).strip()))
    return blocks
