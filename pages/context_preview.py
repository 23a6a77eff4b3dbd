"""Context Preview: the exact injected text, a live token counter, what the budget kept and dropped."""

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from memory_core import build_injection, count_tokens
from memory_core.dashboard import ensure_entrypoint, escape_markdown, header, view

ensure_entrypoint()
memory = view()
header("Context Preview", memory)

MODELS = {"gpt-4o / gpt-4o-mini (o200k_base)": "gpt-4o", "gpt-4 / gpt-3.5-turbo (cl100k_base)": "gpt-4"}


@st.cache_data(ttl=3, show_spinner=False)
def memory_data(scope_key: str, _view) -> dict:
    # Read once per scope every few seconds; budget and model changes re-render from this copy at once.
    return _view.memory_data()


c1, c2 = st.columns([2, 3])
model_label = c1.selectbox("Model / encoding", list(MODELS), key="cp_model")
budget = c2.slider("Token budget", 0, 8000, memory.settings.max_injection_tokens, 50, key="cp_budget")
query = st.text_input("Query (optional): what the agent is about to answer", key="cp_query", max_chars=2000,
                      help="With a query, the facts most relevant to it are kept first within the budget, then the "
                           "others by confidence, as `format_for_injection(query=...)` and the MCP tool do.")
data = memory_data(memory.scope.key, memory)
relevant = memory.relevant_fact_ids(query) if query.strip() else []
report = build_injection(data, budget, model=MODELS[model_label], priority=relevant)
if query.strip():
    kept_relevant = sum(1 for i in relevant if i in set(report.kept_fact_ids))
    st.caption(f"{kept_relevant} of the {len(relevant)} facts most relevant to the query were kept first; "
               "the text lists the kept facts by confidence.")
if not report.text:
    st.info("This scope has no memory yet: ingest a conversation, or press **Load demo data** on the Ingest page.")

m1, m2, m3 = st.columns(3)
m1.metric("Tokens used / budget", f"{report.tokens} / {budget}")
m2.metric("Facts kept", f"{len(report.kept_fact_ids)} / {len(report.kept_fact_ids) + len(report.dropped_fact_ids)}")
m3.metric("Truncated", "yes" if report.truncated else "no")
st.progress(min(1.0, report.tokens / budget) if budget else 0.0)

fig = go.Figure()
for section, tokens in report.section_tokens.items():
    fig.add_trace(go.Bar(name=section, x=[tokens], y=["tokens"], orientation="h"))
fig.add_vline(x=budget, line_dash="dash", line_color="red", annotation_text="budget")
fig.update_layout(barmode="stack", height=180, margin=dict(l=10, r=10, t=30, b=10), title="Tokens per section")
st.plotly_chart(fig, width="stretch")

st.subheader("Injected text")
st.code(report.text or "(empty)", language="markdown")

facts = {f["id"]: f for f in data.get("facts", [])}
rank = {fact_id: n for n, fact_id in enumerate(relevant, 1)}
k, d = st.columns(2)
k.caption("Kept")
k.dataframe(pd.DataFrame([{**facts[i], "relevance": rank.get(i)} for i in report.kept_fact_ids if i in facts],
                         columns=["id", "content", "confidence", "relevance"] if relevant else ["id", "content", "confidence"]),
            hide_index=True)
d.caption("Dropped by the budget")
d.dataframe(pd.DataFrame([facts[i] for i in report.dropped_fact_ids if i in facts], columns=["id", "content", "confidence"]),
            hide_index=True)

st.subheader("Count any text")
pasted = st.text_area("Text", key="cp_text", height=120, max_chars=500_000)
st.metric("Tokens", count_tokens(pasted, MODELS[model_label]))

sessions = memory.sessions()
if sessions:
    from memory_core import compress_messages

    st.subheader("Live sessions")
    for s in sessions:
        saved = compress_messages(s.messages)
        st.caption(f"{escape_markdown(s.session_id)}: {s.tokens} tokens; compression would save {saved.tokens_saved} tokens "
                   f"({saved.removed} messages)")
