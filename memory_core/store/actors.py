"""Who did it: the actor recorded with every change, set per thread (and per asyncio task) by `acting_as`."""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator

from memory_core.text.validation import check_text

_actor: ContextVar[str | None] = ContextVar("memory_core_actor", default=None)


@contextmanager
def acting_as(actor: str | None) -> Iterator[None]:
    """Record `actor` (e.g. "dashboard:ana@acme.com", "mcp:ci-bot") with every change made inside the block,
    in this thread. Blocks nest; the innermost wins."""
    if actor is not None:
        check_text(actor, "actor", 256, allow_empty=False)
    token = _actor.set(actor)
    try:
        yield
    finally:
        _actor.reset(token)


def current_actor() -> str | None:
    return _actor.get()
