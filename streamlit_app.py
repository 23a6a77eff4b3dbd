"""memory_core dashboard: the entrypoint only routes (st.navigation over pages/)."""

import logging

import streamlit as st

from memory_core.dashboard import get_memory, sidebar

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
st.set_page_config(page_title="memory_core", page_icon=":material/psychology:", layout="wide")

PAGES = [
    st.Page("pages/ingest.py", title="Ingest", icon=":material/upload:", default=True),
    st.Page("pages/facts.py", title="Facts", icon=":material/fact_check:"),
    st.Page("pages/daily.py", title="Daily", icon=":material/calendar_month:"),
    st.Page("pages/dream.py", title="Dream", icon=":material/bedtime:"),
    st.Page("pages/context_preview.py", title="Context Preview", icon=":material/token:"),
    st.Page("pages/search.py", title="Search", icon=":material/search:"),
]

page = st.navigation(PAGES)
sidebar(get_memory())
page.run()
