"""The Facts page's "Held for review" list: statements that instruct the agent, each with Release and Delete."""

from __future__ import annotations

import streamlit as st

from memory_core.dashboard.fact_edits import quote
from memory_core.dashboard.helpers import escape_markdown
from memory_core.views.scoped import ScopedMemory


def held_for_review(memory: ScopedMemory, *, flash_key: str = "facts_flash") -> None:
    """Draw the scope's held statements (nothing when there are none). Release makes one an ordinary fact, Delete
    removes it; both are an editor's, and a viewer sees the list without the buttons."""
    held = memory.facts.held()
    if not held:
        return
    with st.expander(f"Held for review ({len(held)})", expanded=False, icon=":material/gpp_maybe:"):
        st.caption("These read as instructions to the agent (to ignore or reveal its instructions, skip checks, obey "
                   "someone, send data out), not as facts about the user: they are kept, but never injected or "
                   "searched until a person releases them.")
        for fact in held:
            text, buttons = st.columns([6, 1]) if memory.can_write else (st.container(), None)
            why = (fact.invalid_reason or "").removeprefix("held for review: ")
            text.markdown(f"`{fact.id}` {escape_markdown(fact.content)}  \n:gray-badge[{escape_markdown(why)}] "
                          f"{escape_markdown(fact.source or '')} · {fact.held_at:%Y-%m-%d %H:%M}")
            if buttons is None:
                continue
            if buttons.button("Release", key=f"held_release_{fact.id}", help="make it an ordinary fact"):
                _act(lambda: memory.facts.release(fact.id), f"Released {quote(fact.content)}: it is memory now.", flash_key)
            if buttons.button("Delete", key=f"held_delete_{fact.id}", help="remove it for good"):
                _act(lambda: memory.facts.delete(fact.id), f"Deleted {quote(fact.content)}.", flash_key)


def _act(action, done: str, flash_key: str) -> None:
    try:
        action()
    except (KeyError, ValueError) as exc:  # released or deleted meanwhile, in another tab
        st.warning(escape_markdown(f"Nothing changed: {exc}"))
        return
    st.session_state[flash_key] = done
    st.rerun()
