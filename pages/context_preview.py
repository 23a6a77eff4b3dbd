"""Context Preview: the exact injected text, a live token counter, what the budget kept and what it dropped
(struck through in place), each fact's token cost, and the budget per section."""

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from memory_core import count_tokens
from memory_core.dashboard import preview
from memory_core.dashboard.helpers import ensure_entrypoint, escape_markdown, header, view

ensure_entrypoint()
memory = view()
header("Context Preview", memory, "what an agent's prompt receives from memory, within a token budget")

MODELS = {"gpt-4o / gpt-4o-mini (o200k_base)": "gpt-4o", "gpt-4 / gpt-3.5-turbo (cl100k_base)": "gpt-4"}
PRESETS = [100, 250, 500, 1000, 2000, 8000]
MAX_BUDGET = 8000
SHOWN_LINES = 300  # facts listed in the struck-through list; the tables below hold more
TABLE_ROWS = 1_000  # rows of the dropped table (every row travels to the browser: 1 MB at 10,000 facts)

# One budget, three ways to set it: the slider's state is the truth; presets and the number follow it.
st.session_state.setdefault("cp_budget", min(MAX_BUDGET, memory.settings.max_injection_tokens))
st.session_state["cp_budget_n"] = st.session_state["cp_budget"]


def _from_preset() -> None:
    if st.session_state.get("cp_preset"):
        st.session_state["cp_budget"] = int(st.session_state["cp_preset"])


def _preset_follows() -> None:
    """A preset stays lit only while it is the budget."""
    if st.session_state.get("cp_preset") != st.session_state["cp_budget"]:
        st.session_state["cp_preset"] = None


def _from_number() -> None:
    st.session_state["cp_budget"] = int(st.session_state["cp_budget_n"])
    _preset_follows()


c1, c2 = st.columns([3, 2])
c1.pills("Budget presets (tokens)", PRESETS, key="cp_preset", format_func=lambda n: f"{n:,}", on_change=_from_preset)
model_label = c2.selectbox("Model / encoding", list(MODELS), key="cp_model")
n1, n2 = st.columns([1, 3])
n1.number_input("Token budget", 0, MAX_BUDGET, step=50, key="cp_budget_n", on_change=_from_number)
budget = n2.slider("Token budget (slide)", 0, MAX_BUDGET, step=10, key="cp_budget", label_visibility="hidden",
                   on_change=_preset_follows)
query = st.text_input("Query (optional): what the agent is about to answer", key="cp_query", max_chars=2000,
                      placeholder="e.g. what should I cook for the user tonight?",
                      help="With a query, the facts most relevant to it are kept first, then the others by "
                           "confidence, and passages of conversations and logs that answer it fill the rest: "
                           "exactly what `format_for_injection(query=...)` and the MCP tool give.")
model = MODELS[model_label]
asked = bool(query.strip())
report = preview.injection(memory, budget, model, query)  # the library's own rule, never packed here
facts = preview.valid_facts(memory)
costs = preview.fact_costs(memory, model)
relevant = [i for i in report.relevant_fact_ids if i in facts]
kept = set(report.kept_fact_ids)


def cost(fact_id: str) -> int:
    """The fact's line in tokens (counted now if it came after the cached count)."""
    found = costs.get(fact_id)
    return found if found is not None else preview.line_tokens(facts[fact_id], model)


if asked:
    kept_relevant = sum(1 for i in relevant if i in kept)
    share = (f" The facts had {report.facts_max_tokens:,} of the {budget:,} tokens; the passages, what they left."
             if report.passages else "")
    st.caption(f"{kept_relevant} of the {len(relevant)} facts most relevant to the query were kept first; "
               f"the text lists the kept facts by confidence.{share}")
if not facts and not report.text:
    st.info("This scope has no memory yet: ingest a conversation, or open a demo scope of about fifty varied "
            "facts that shows how a budget trims.")
    st.page_link("pages/ingest.py", label="Go to Ingest", icon=":material/upload:")
if memory.can_write or not facts:
    if st.button("Open a demo scope for this page (about fifty facts)", key="cp_demo",
                 help="A new scope demo/preview-N, filled with varied facts and short summaries; this scope is "
                      "left as it is."):
        from memory_core.dashboard.demo import load_preview_demo
        from memory_core.dashboard.demo_scope import open_demo_scope

        if refusal := open_demo_scope("preview", load_preview_demo):
            st.warning(refusal)

metrics = st.columns(5 if asked else 4)
metrics[0].metric("Tokens used / budget", f"{report.tokens} / {budget}")
metrics[1].metric("Facts kept", f"{len(report.kept_fact_ids)} / {len(report.kept_fact_ids) + report.dropped_count}")
metrics[2].metric("Facts dropped", report.dropped_count,
                  help="Whole facts left out because they did not fit: the least relevant (or least confident) go "
                       "first. They are struck through below.")
metrics[3].metric("Cut mid-text", "yes" if report.truncated else "no",
                  help="Yes when even the kept part did not fit and the text itself was cut off, ending with a "
                       "marker. Dropping whole facts is not cutting: the text stays whole.")
if asked:
    metrics[4].metric("Passages", len(report.passages), help="Passages of conversations, daily logs and MEMORY.md "
                      "that the query brings in, listed below with their dates and token costs.")
st.progress(min(1.0, report.tokens / budget) if budget else 0.0)

fig = go.Figure()
for section, tokens in preview.chart_sections(report).items():
    fig.add_trace(go.Bar(name=section, x=[tokens], y=["used"], orientation="h", text=[tokens], textposition="inside"))
dropped_ids = [i for i in preview.considered(report, facts) if i not in kept]
dropped_tokens = sum(cost(i) for i in dropped_ids)
if dropped_tokens:
    fig.add_trace(go.Bar(name="Dropped facts", x=[dropped_tokens], y=["would need"], orientation="h",
                         marker_color="lightgray"))
fig.add_vline(x=budget, line_dash="dash", line_color="red", annotation_text="budget")
fig.update_layout(barmode="stack", height=220, margin=dict(l=10, r=10, t=40, b=10), title="Tokens per section",
                  legend=dict(orientation="h", y=-0.25))
st.plotly_chart(fig, width="stretch")

st.subheader("Injected text, with what did not fit struck through")
st.caption("Every fact in the order the budget considered it (the most relevant to the query first, then by "
           "confidence), with its cost in tokens; the struck-through ones are not in the prompt.")
order = preview.considered(report, facts)
lines = []
for fact_id in order[:SHOWN_LINES]:
    # memory text stays text: escaped, then struck through with Markdown's own ~~ ~~
    text = escape_markdown(preview.line(facts[fact_id])[2:])
    tokens = cost(fact_id)
    lines.append(f"- `{tokens:>3} tok` {text}" if fact_id in kept else f"- `{tokens:>3} tok` ~~{text}~~ *(dropped)*")
if len(order) > SHOWN_LINES:
    rest = order[SHOWN_LINES:]
    rest_kept = sum(1 for i in rest if i in kept)
    lines.append(f"- *... and {len(rest):,} more facts ({rest_kept:,} kept, {len(rest) - rest_kept:,} dropped): "
                 "see the tables below*")
with st.container(height=360 if len(lines) > 12 else "content", border=True):
    st.markdown("\n".join(lines) if lines else "*No facts in this scope.*")

if asked:
    st.subheader("Passages the query brings in")
    if report.passages:
        section = report.section_tokens.get("Relevant passages", 0)
        count = f"{len(report.passages)} passage" + ("s" if len(report.passages) != 1 else "")
        st.caption(f"{count}, {section:,} tokens with the section's heading, in the order of the "
                   "text (by date); each costs its lines and, when it is the first of its day, the day's header.")
        st.dataframe(pd.DataFrame(preview.passage_rows(report), columns=["date", "from", "passage", "tokens"]),
                     hide_index=True, width="stretch")
    else:
        st.caption("No passage of a conversation, daily log or MEMORY.md answers it (or none fitted): the facts "
                   "had the whole budget.")

with st.expander("Exactly as sent (the text the agent's prompt receives)", expanded=True):
    st.caption("The copy button at the box's top right copies exactly this text"
               + (", as `format_for_injection(query=...)` gives it." if asked else "."))
    st.code(report.text or "(empty)", language="markdown", wrap_lines=True)

if asked:
    st.subheader("No query beside this query")
    plain = preview.injection(memory, budget, model)
    only_query = [i for i in report.kept_fact_ids if i not in set(plain.kept_fact_ids)]
    only_plain = [i for i in plain.kept_fact_ids if i not in kept]
    q1, q2 = st.columns(2)
    q1.metric("No query: tokens used", f"{plain.tokens} / {budget}",
              help=f"{len(plain.kept_fact_ids)} facts, no passages")
    q2.metric("With this query: tokens used", f"{report.tokens} / {budget}",
              help=f"{len(report.kept_fact_ids)} facts, {len(report.passages)} passages")
    q1.caption(f"{len(plain.kept_fact_ids)} facts. Only without the query:")
    q2.caption(f"{len(report.kept_fact_ids)} facts and {len(report.passages)} passages. Facts only with it:")
    q1.markdown("\n".join(f"- {escape_markdown(facts[i].content)}" for i in only_plain if i in facts)
                or "*Nothing that the query leaves out.*")
    q2.markdown("\n".join(f"- {escape_markdown(facts[i].content)}" for i in only_query if i in facts)
                or "*Nothing that only the query brings in.*")
    q1.code(plain.text or "(empty)", language="markdown", wrap_lines=True)
    q2.code(report.text or "(empty)", language="markdown", wrap_lines=True)

rank = {fact_id: n for n, fact_id in enumerate(relevant, 1)}


def table(ids: list[str], with_rank: bool) -> pd.DataFrame:
    rows = [{"content": facts[i].content, "tokens": cost(i), "confidence": facts[i].confidence,
             "relevance": rank.get(i), "id": i} for i in ids if i in facts]
    return pd.DataFrame(rows, columns=["content", "tokens", "confidence", "relevance", "id"] if with_rank
                        else ["content", "tokens", "confidence", "id"])


k, d = st.columns(2)
k.caption("Kept")
k.dataframe(table(report.kept_fact_ids, bool(relevant)), hide_index=True)
d.caption("Dropped by the budget" + (f": the first {TABLE_ROWS:,} of {len(dropped_ids):,} (the rest are less relevant "
                                     "or less confident)" if len(dropped_ids) > TABLE_ROWS else ""))
d.dataframe(table(dropped_ids[:TABLE_ROWS], False), hide_index=True)

st.subheader("Recent injections")
recent = memory.injections(limit=20)
if recent:
    st.caption("What agents were given (the MCP tool `get_memory_context` records every call; the library with "
               "`format_for_injection(record=True)`). Replay one to see what the same query and budget give now.")
    st.dataframe(pd.DataFrame([{"when (UTC)": i.at.strftime("%Y-%m-%d %H:%M"), "by": i.actor or "library",
                                "query": i.query or "", "tokens": i.tokens, "budget": i.max_tokens,
                                "facts": len(i.fact_ids)} for i in recent]), hide_index=True, width="stretch")

    def _replay() -> None:
        chosen = recent[st.session_state["cp_replay"]]
        st.session_state["cp_query"] = chosen.query or ""
        st.session_state["cp_budget"] = max(0, min(MAX_BUDGET, chosen.max_tokens or st.session_state["cp_budget"]))
        st.session_state["cp_replayed"] = chosen.fact_ids

    r1, r2 = st.columns([3, 1])
    r1.selectbox("Injection", range(len(recent)), key="cp_replay", format_func=lambda n: (
        f"{recent[n].at:%Y-%m-%d %H:%M} · {recent[n].actor or 'library'} · {recent[n].query or '(no query)'}"[:120]))
    r2.button("Replay", key="cp_replay_go", on_click=_replay)
    if then := st.session_state.get("cp_replayed"):
        gone = [i for i in then if i not in kept]
        st.caption(f"Then: {len(then)} facts went in; now {len(then) - len(gone)} of them do"
                   + (f" ({len(gone)} no longer: changed, retired or outranked)" if gone else "") + ".")
else:
    st.caption("No injection recorded yet in this scope: agents' `get_memory_context` calls over MCP are, and the "
               "library's `format_for_injection(record=True)`.")

st.subheader("Count any text")
pasted = st.text_area("Text", key="cp_text", height=120, max_chars=500_000)
st.metric("Tokens", count_tokens(pasted, model))

sessions = memory.sessions()
if sessions:
    from memory_core import compress_messages

    st.subheader("Live sessions")
    for s in sessions:
        saved = compress_messages(s.messages)
        st.caption(f"{escape_markdown(s.session_id)}: {s.tokens} tokens; compression would save {saved.tokens_saved} tokens "
                   f"({saved.removed} messages)")
