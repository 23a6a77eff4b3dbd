"""Facts: filter, edit in place, add, delete, audit history, charts, export."""

import json

import pandas as pd
import plotly.express as px
import streamlit as st

from memory_core import CATEGORIES
from memory_core.dashboard import ensure_entrypoint, get_memory, scope

ensure_entrypoint()
memory = get_memory()
st.title("Facts")
if flash := st.session_state.pop("facts_flash", None):
    st.success(flash)
facts = memory.facts.list(**scope())

c1, c2, c3 = st.columns([2, 2, 3])
categories = c1.multiselect("Category", CATEGORIES, key="facts_cat")
low, high = c2.slider("Confidence", 0.0, 1.0, (0.0, 1.0), 0.05, key="facts_conf")
needle = c3.text_input("Text contains", value=st.query_params.get("q", ""), key="facts_text")
shown = [f for f in facts if (not categories or f.category in categories) and low <= f.confidence <= high
         and needle.casefold() in f.content.casefold()]
st.caption(f"{len(shown)} of {len(facts)} facts in {scope()['user_id']}/{scope()['agent_name']}")

frame = pd.DataFrame([{"delete": False, "id": f.id, "content": f.content, "category": f.category,
                       "confidence": f.confidence, "created": f.created_at, "source": f.source or ""} for f in shown],
                     columns=["delete", "id", "content", "category", "confidence", "created", "source"])
edited = st.data_editor(
    frame, key="facts_editor", hide_index=True, width="stretch", disabled=["id", "created", "source"],
    column_config={
        "delete": st.column_config.CheckboxColumn("Delete?", width="small"),
        "content": st.column_config.TextColumn("Content", required=True, max_chars=memory.settings.max_fact_chars),
        "category": st.column_config.SelectboxColumn("Category", options=list(CATEGORIES), required=True),
        "confidence": st.column_config.NumberColumn("Confidence", min_value=0.0, max_value=1.0, step=0.01, format="%.2f"),
        "created": st.column_config.DatetimeColumn("Created (UTC)", format="YYYY-MM-DD HH:mm"),
    })

changes = []
for (_, before), (_, after) in zip(frame.iterrows(), edited.iterrows()):
    diff = {k: after[k] for k in ("content", "category", "confidence") if after[k] != before[k]}
    if diff:
        changes.append((before["id"], diff))
to_delete = [row["id"] for _, row in edited.iterrows() if row["delete"]]

b1, b2 = st.columns(2)
if changes and b1.button(f"Save {len(changes)} change(s)", type="primary", key="facts_save"):
    errors = []
    for fact_id, diff in changes:
        try:
            memory.facts.update(fact_id, content=diff.get("content"), category=diff.get("category"),
                                confidence=None if "confidence" not in diff else float(diff["confidence"]))
        except (KeyError, ValueError) as exc:
            errors.append(f"{fact_id}: {exc}")
    for e in errors:
        st.error(e)
    if not errors:
        st.session_state["facts_flash"] = f"Saved {len(changes)} change(s)."
        st.rerun()
if to_delete:
    confirm = b2.checkbox(f"Yes, delete {len(to_delete)} fact(s)", key="facts_confirm")
    if b2.button("Delete selected", disabled=not confirm, key="facts_delete"):
        for fact_id in to_delete:
            try:
                memory.facts.delete(fact_id)
            except KeyError:
                pass
        st.session_state["facts_flash"] = f"Deleted {len(to_delete)} fact(s)."
        st.rerun()

with st.expander("Add a fact"):
    with st.form("add_fact", clear_on_submit=True):
        content = st.text_input("Content")
        category = st.selectbox("Category", CATEGORIES)
        confidence = st.slider("Confidence", 0.0, 1.0, 0.8, 0.05)
        if st.form_submit_button("Add"):
            try:
                fact, reason = memory.facts.add_with_reason(content, category, confidence, **scope(), source="dashboard")
                if fact:
                    st.session_state["facts_flash"] = f"Added {fact.id}."
                    st.rerun()
                else:
                    st.warning(f"Not added: {reason.replace('_', ' ')}.")
            except ValueError as exc:
                st.error(str(exc))

tab_hist, tab_charts, tab_export = st.tabs(["History", "Charts", "Export"])
with tab_hist:
    options = ["(whole scope)"] + [f.id for f in facts]
    chosen = st.selectbox("Audit history of", options, key="facts_hist")
    entries = memory.facts.history(None if chosen == "(whole scope)" else chosen, **scope(), limit=200)
    st.dataframe(pd.DataFrame([{"when": e.at, "fact": e.fact_id, "action": e.action, "old": json.dumps(e.old) if e.old else "",
                                "new": json.dumps(e.new) if e.new else "", "reason": e.reason or ""} for e in entries]),
                 hide_index=True, width="stretch")
with tab_charts:
    if facts:
        df = pd.DataFrame([{"confidence": f.confidence, "category": f.category, "created": f.created_at} for f in facts])
        a, b = st.columns(2)
        a.plotly_chart(px.histogram(df, x="confidence", nbins=20, title="Confidence"), width="stretch")
        b.plotly_chart(px.bar(df.groupby("category").size().reset_index(name="facts"), x="category", y="facts",
                              title="Facts by category"), width="stretch")
        per_day = df.assign(day=df["created"].dt.date).groupby("day").size().cumsum().reset_index(name="facts")
        st.plotly_chart(px.line(per_day, x="day", y="facts", title="Facts over time", markers=True),
                        width="stretch")
    else:
        st.info("No facts yet: ingest a conversation or load the demo data.")
with tab_export:
    records = [f.to_dict() | {"category": f.category} for f in facts]
    st.download_button("Download CSV", pd.DataFrame(records).to_csv(index=False), "facts.csv", "text/csv")
    st.download_button("Download JSON", json.dumps(records, indent=2, ensure_ascii=False), "facts.json", "application/json")
