"""The erase plan on the Facts page, before the person confirms: each passage that will become `[erased]` and where
it is, and the facts that say the same in other words, to tick (erased too)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from memory_core.dashboard.helpers import escape_markdown

SHOWN_PASSAGES = 200


def erase_plan_panel(memory: Any, fact: Any) -> list[str]:
    """Show `fact`'s erase plan (for `memory`, a scoped view); return the ids of the related facts ticked."""
    try:
        plan = memory.facts.erase_plan(fact.id)
    except KeyError as exc:
        st.error(escape_markdown(str(exc)))
        return []
    st.markdown(f"**What erasing it changes**: {len(plan.passages)} passage(s) that state it are erased (listed "
                "here); a passage that merely shares a word with it is not touched.")
    rows = [{"where": p.where, "passage": p.text} for p in plan.passages[:SHOWN_PASSAGES]]
    st.dataframe(pd.DataFrame(rows, columns=["where", "passage"]), hide_index=True, width="stretch")
    if len(plan.passages) > SHOWN_PASSAGES:
        st.caption(f"and {len(plan.passages) - SHOWN_PASSAGES} more")
    by_id = {f.id: f for f in memory.facts.list()}
    also = []
    related = [other for other in plan.related if other in by_id]
    if related:
        st.markdown("**Facts that say the same in other words** (tick those to erase too)")
        for other in related:
            if st.checkbox(escape_markdown(by_id[other].content[:160]), key=f"erase_also_{other}", help=other):
                also.append(other)
    return also
