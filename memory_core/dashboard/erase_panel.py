"""The Facts page's Erase: the fact picked, the plan shown (each passage that will become `[erased]`, where it is,
and the facts that say the same in other words, to tick), then the confirmation. One function, for the page."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from memory_core.dashboard.helpers import escape_markdown

SHOWN_PASSAGES = 200


def erase_panel(memory: Any, erasable: list) -> None:
    """Render the panel for `memory` (a scoped view) over the facts it may erase."""
    labels = {f"{f.id}: {f.content[:80]}": f.id for f in erasable}
    target = st.selectbox("Fact", list(labels), key="erase_target")
    fact_id = labels[target]
    try:
        plan = memory.facts.erase_plan(fact_id)
    except KeyError as exc:
        st.error(escape_markdown(str(exc)))
        return
    st.markdown(f"**What erasing it changes** ({len(plan.passages)} passage(s) become `[erased]`; nothing else "
                "is touched)")
    rows = [{"where": p.where, "passage": p.text} for p in plan.passages[:SHOWN_PASSAGES]]
    st.dataframe(pd.DataFrame(rows, columns=["where", "passage"]), hide_index=True, width="stretch")
    if len(plan.passages) > SHOWN_PASSAGES:
        st.caption(f"and {len(plan.passages) - SHOWN_PASSAGES} more")
    by_id = {f.id: f for f in memory.facts.list()}
    with st.form("erase_fact", clear_on_submit=True):
        also = []
        if plan.related:
            st.markdown("**Facts that say the same in other words** (tick those to erase too)")
            for other in plan.related:
                if other in by_id and st.checkbox(escape_markdown(f"{other}: {by_id[other].content[:120]}"),
                                                  key=f"erase_also_{other}"):
                    also.append(other)
        why = st.text_input("Why (kept in the history)", max_chars=200, key="erase_why")
        sure = st.checkbox("I understand that the text is erased everywhere and cannot be restored", key="erase_sure")
        if st.form_submit_button("Erase", key="erase_submit"):
            if not sure:
                st.warning("Tick the confirmation to erase.")
                return
            try:
                counts = memory.facts.erase(fact_id, reason=why or None, also=also)
            except (KeyError, ValueError, PermissionError, OSError) as exc:
                st.error(escape_markdown(str(exc)))
                return
            places = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in sorted(counts.items()))
            erased = ", ".join([fact_id, *also])
            st.session_state["facts_flash"] = f"Erased {erased} ({places})."
            st.rerun()
