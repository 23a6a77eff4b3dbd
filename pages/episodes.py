"""Conversations: what was said on a day, turn by turn, as memory keeps it (episodes, with their dates)."""

import streamlit as st

from memory_core.dashboard.helpers import ensure_entrypoint, header, view

ensure_entrypoint()
memory = view()
header("Conversations", memory)
days = memory.episode_days()
if not days:
    st.info("No conversations yet. Every conversation given to update(), the queue or an import is kept here, "
            "dated, turn by turn.")
    st.stop()

wanted = st.query_params.get("day")
start = days.index(wanted) if wanted in days else 0
day = st.selectbox("Day", days, index=start, key="episodes_day")
needle = st.text_input("Filter turns containing", key="episodes_filter", max_chars=200)
turns = memory.episodes_of_day(day)
if needle:
    turns = [t for t in turns if needle.casefold() in t.dated.casefold() or needle.casefold() in t.who.casefold()]
st.caption(f"{len(turns)} turn(s) on {day}; relative dates are written out in brackets, as search and injection "
           "give them to agents.")
episode = None
for turn in turns:
    if turn.episode_id != episode:
        episode = turn.episode_id
        st.subheader(f"{turn.said_at:%H:%M} · {turn.thread_id}", divider="gray")
    # Memory text is shown as text: nothing in it is rendered (no markdown, no link, no image).
    st.text(f"{turn.who}: {turn.dated}")
