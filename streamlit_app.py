"""memory_core dashboard: the entrypoint decides who is asking, then routes (st.navigation over pages/)."""

import logging

import streamlit as st

from memory_core.dashboard.helpers import admin_handle, app_icon, gate_pages, principal, sidebar

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
st.set_page_config(page_title="memory_core", page_icon=app_icon(), layout="wide")

PAGES = [
    st.Page("pages/overview.py", title="Overview", icon=":material/dashboard:", default=True),
    st.Page("pages/ingest.py", title="Ingest", icon=":material/upload:"),
    st.Page("pages/facts.py", title="Facts", icon=":material/fact_check:"),
    st.Page("pages/daily.py", title="Daily", icon=":material/calendar_month:"),
    st.Page("pages/episodes.py", title="Conversations", icon=":material/forum:"),
    st.Page("pages/dream.py", title="Dream", icon=":material/bedtime:"),
    st.Page("pages/context_preview.py", title="Context Preview", icon=":material/token:"),
    st.Page("pages/search.py", title="Search", icon=":material/search:"),
    st.Page("pages/import_export.py", title="Import / Export", icon=":material/swap_vert:"),
    st.Page("pages/usage.py", title="Usage", icon=":material/paid:"),
]
ACCESS_PAGE = st.Page("pages/access.py", title="Access", icon=":material/admin_panel_settings:")

admin = admin_handle()  # what spans scopes; the pages get a view of the scope picked in the sidebar
who = principal(admin)
if who is None:  # nothing of any memory is shown: sign in, an e-mail not verified, or a sandbox not opened yet
    deep_links = [p.url_path for p in (*PAGES, ACCESS_PAGE) if p.url_path]
    st.navigation(gate_pages(deep_links), position="hidden").run()
    st.stop()
st.session_state["_principal"] = who

if admin.access.admin_patterns(who):
    PAGES.append(ACCESS_PAGE)

page = st.navigation(PAGES)
sidebar(admin, who)
page.run()
