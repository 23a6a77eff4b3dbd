"""Overview: the landing page. What memory holds in the scope in view and the others this person may read,
who changed what lately, the queue, the dreams, tokens spent today, and where to go next."""

import pandas as pd
import streamlit as st

from memory_core.dashboard.helpers import (admin_handle, ensure_entrypoint, escape_markdown, header, readable_scopes,
                                          scope_view, view, who)
from memory_core.dashboard import cached
from memory_core.dashboard.words import action_words, actor_words, dream_words

ensure_entrypoint()
memory = view()
admin = admin_handle()
header("Overview", memory)

MAX_SCOPES = 30  # the table reads each scope's facts; a team has a handful, a big install uses the CLI


def fact_counts(scoped) -> dict[str, int]:
    everything = cached.all_facts(scoped)
    superseded = sum(1 for f in everything if not f.valid and f.superseded_by)
    valid = sum(1 for f in everything if f.valid)
    return {"valid": valid, "superseded": superseded, "forgotten": len(everything) - valid - superseded}


def queue_counts(scoped) -> dict[str, int]:
    items = scoped.queue.items()
    return {s: sum(1 for i in items if i.status == s) for s in ("pending", "in_flight", "failed")}


counts, queue = fact_counts(memory), queue_counts(memory)
status = admin.status()
state = memory.dream_state()
m1, m2, m3, m4 = st.columns(4)
m1.metric("Valid facts", counts["valid"], help="What memory believes now: these are injected into prompts.")
m2.metric("Superseded / forgotten", f"{counts['superseded']} / {counts['forgotten']}",
          help="Superseded: replaced by a newer fact (kept for history). Forgotten: invalidated or erased.")
m3.metric("Queue: pending / failed", f"{queue['pending'] + queue['in_flight']} / {queue['failed']}",
          help="Conversations waiting to be read into facts, and those that failed (see the sidebar's last error).")
last_run = getattr(state, "last_run_at", None) if state else None
m4.metric("Last dream", f"{last_run:%Y-%m-%d %H:%M}" if last_run else "never",
          help="Deep Dream consolidates the daily logs into MEMORY.md.")
notes = []
if status.next_dream:
    notes.append(f"Next dream: {status.next_dream:%Y-%m-%d %H:%M %Z}")
if state and state.last_status:
    notes.append(f"last dream: {dream_words(state.last_status)}")
if not memory.offline:  # the usage ledger: this scope's LLM tokens today, and whether its budget pauses it
    spent = memory.spent_today()  # as the daily budget counts it
    budget = memory.settings.daily_token_budget
    notes.append(f"LLM tokens spent today: {spent:,}" + (f" of {budget:,}" if budget else ""))
    if paused := memory.budget_paused():
        st.warning(f"Paused: {escape_markdown(paused)}")
if notes:
    st.caption(" · ".join(notes))

st.subheader("Next steps")
links = st.columns(4)
links[0].page_link("pages/ingest.py", label="Ingest a conversation", icon=":material/upload:")
links[1].page_link("pages/facts.py", label="Review the facts", icon=":material/fact_check:")
links[2].page_link("pages/context_preview.py", label="Preview the injected context", icon=":material/token:")
links[3].page_link("pages/dream.py", label="Dream and review MEMORY.md", icon=":material/bedtime:")
if counts["valid"] == 0:
    st.info("This scope has no memory yet. Memory arrives three ways: **ingest** a conversation (or press "
            "**Load demo data** there), **import** another tool's export, or let an **agent** write over MCP "
            "(`memory-core mcp`).", icon=":material/lightbulb:")
    e1, e2 = st.columns(2)
    e1.page_link("pages/ingest.py", label="Ingest or load demo data", icon=":material/upload:")
    e2.page_link("pages/import_export.py", label="Import from another tool", icon=":material/swap_vert:")

left, right = st.columns([3, 2])
with left:
    st.subheader("Latest changes")
    entries = memory.facts.history(None, limit=8)
    if entries:
        texts = {f.id: f.content for f in cached.all_facts(memory)}
        st.dataframe(pd.DataFrame([{"when (UTC)": e.at.strftime("%Y-%m-%d %H:%M"), "action": action_words(e.action),
                                    "fact": texts.get(e.fact_id, e.fact_id), "by": actor_words(e.actor)}
                                   for e in entries]),
                     hide_index=True, width="stretch", column_config={"fact": st.column_config.TextColumn(width="large")})
    else:
        st.caption("No changes yet.")
with right:
    st.subheader("Scopes you can see")
    scopes = readable_scopes(admin, who())[:MAX_SCOPES]
    rows = []
    for scope in scopes:
        scoped = memory if scope == memory.scope else scope_view(who(), scope)
        rows.append({"scope": scope.key, **fact_counts(scoped), "pending": queue_counts(scoped)["pending"],
                     "failed": queue_counts(scoped)["failed"]})
    st.dataframe(pd.DataFrame(rows, columns=["scope", "valid", "superseded", "forgotten", "pending", "failed"]),
                 hide_index=True, width="stretch")
    st.caption("Pick a scope in the sidebar to work in it.")
