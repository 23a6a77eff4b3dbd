"""settle_heap: what is alive when a server starts is left to reference counting; what comes after is collected."""

import gc
import weakref

from memory_core.runtime.heap import settle_heap


class Node:
    def __init__(self) -> None:
        self.other: "Node | None" = None


def _cycle() -> weakref.ref:
    a, b = Node(), Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def test_what_is_alive_is_frozen_and_later_garbage_is_still_collected():
    before = _cycle()  # garbage already: settle_heap collects it first, it is not frozen alive
    kept = Node()
    try:
        settle_heap()
        assert before() is None
        assert gc.get_freeze_count() > 0
        assert not any(o is kept for o in gc.get_objects())  # frozen: out of the collector's walk
        after = _cycle()
        assert after() is not None
        gc.collect()
        assert after() is None  # a cycle made after settling is collected as before
    finally:
        gc.unfreeze()
