"""Daily: the days that have logs, one day's log as text, a text filter."""

import pandas as pd
import plotly.express as px
import streamlit as st

from memory_core.dashboard.helpers import ensure_entrypoint, header, view
from memory_core.tiers.daily import split_blocks

ensure_entrypoint()
memory = view()
header("Daily logs", memory)
days = memory.daily.days()
if not days:
    st.info("No daily logs yet. Ingesting a conversation feeds the context tier, whose trims and session ends land here.")
    st.stop()

texts = {d: memory.daily.read(d) or "" for d in days[-120:]}
# Days as day strings on a category axis: a date axis over one day shows hour ticks ("23:59:59.9996").
activity = pd.DataFrame([{"day": d.isoformat(), "blocks": len(split_blocks(t))} for d, t in texts.items()])
chart = px.bar(activity, x="day", y="blocks", title="Blocks per day")
chart.update_xaxes(type="category", title=None)
st.plotly_chart(chart, width="stretch")

needle = st.text_input("Filter blocks containing", key="daily_filter", max_chars=200)
choices = list(reversed(days))
wanted = st.query_params.get("day")  # set by the Search page's links
start = next((i for i, d in enumerate(choices) if d.isoformat() == wanted), 0)
day = st.selectbox("Day", choices, index=start, format_func=lambda d: d.isoformat(), key="daily_day")
text = memory.daily.read(day) or ""
st.caption(f"memory/{day.isoformat()}.md")
# Memory text is shown as text: nothing in it is rendered (no remote image, no live link).
if needle:
    blocks = [(a, b, t) for a, b, t in split_blocks(text) if needle.casefold() in t.casefold()]
    st.write(f"{len(blocks)} matching block(s)")
    for a, b, block in blocks:
        st.code(block, language="markdown", wrap_lines=True)
        st.caption(f"lines {a}-{b}")
else:
    st.code(text, language="markdown", wrap_lines=True)
