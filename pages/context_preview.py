"""Context Preview: the exact injected text, a live token counter, what the budget kept and what it dropped
(struck through in place), each fact's token cost, and the budget per section."""

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from memory_core import build_injection, count_tokens
from memory_core.dashboard import cached
from memory_core.dashboard.helpers import ensure_entrypoint, escape_markdown, get_memory, header, view
from memory_core.context.injection import fact_line

ensure_entrypoint()
memory = view()
header("Context Preview", memory, "what an agent's prompt receives from memory, within a token budget")

MODELS = {"gpt-4o / gpt-4o-mini (o200k_base)": "gpt-4o", "gpt-4 / gpt-3.5-turbo (cl100k_base)": "gpt-4"}
PRESETS = [100, 250, 500, 1000, 2000, 8000]
MAX_BUDGET = 8000


def memory_data(scope_key: str, storage: str, _view) -> dict:
    # Read once per state of the scope (memory_core.dashboard.cached); budget and model changes re-render at once.
    return cached.memory_data(_view)


def line_tokens(fact: dict, model: str) -> int:
    """What the fact's line costs in the injected text."""
    return count_tokens(fact_line(fact) + "\n", model)


@st.cache_data(max_entries=16, show_spinner=False)
def fact_costs(scope_key: str, storage: str, model: str, version: tuple, _view) -> dict[str, int]:
    # Each fact's line in tokens, counted once per snapshot and model: a budget change only re-sorts.
    return {f["id"]: line_tokens(f, model) for f in memory_data(scope_key, storage, _view).get("facts", [])}


SHOWN_LINES = 300  # facts listed in the struck-through list; the tables below hold them all

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
                      help="With a query, the facts most relevant to it are kept first within the budget, then the "
                           "others by confidence, as `format_for_injection(query=...)` and the MCP tool do.")
model = MODELS[model_label]
storage = get_memory().storage_description()
data = memory_data(memory.scope.key, storage, memory)
costs = fact_costs(memory.scope.key, storage, model, memory.data_version(), memory)
relevant = memory.relevant_fact_ids(query) if query.strip() else []
report = build_injection(data, budget, model=model, priority=relevant)
facts = {f["id"]: f for f in data.get("facts", [])}


def cost(fact_id: str) -> int:
    """The fact's line in tokens (counted now if it came after the cached count)."""
    found = costs.get(fact_id)
    return found if found is not None else line_tokens(facts[fact_id], model)

kept = set(report.kept_fact_ids)


def chart_sections(report) -> dict[str, int]:
    """The "used" bar's parts, adding up to exactly the tokens used: each section the report names, then what
    joins them (headings' blank lines); a text cut to fit is one part, as long as what was kept of it."""
    if report.truncated:
        return {"Text, cut to fit": report.tokens}
    parts = {name: tokens for name, tokens in report.section_tokens.items() if tokens}
    named = sum(parts.values())
    if named > report.tokens:  # a section counted on its own costs a token more than inside the text
        scale = report.tokens / named
        parts = {name: round(tokens * scale) for name, tokens in parts.items()}
        named = sum(parts.values())
    if report.tokens - named:
        parts["Between sections"] = report.tokens - named
    return {name: tokens for name, tokens in parts.items() if tokens}

if query.strip():
    kept_relevant = sum(1 for i in relevant if i in kept)
    st.caption(f"{kept_relevant} of the {len(relevant)} facts most relevant to the query were kept first; "
               "the text lists the kept facts by confidence.")
if not data.get("facts") and not report.text:
    st.info("This scope has no memory yet: ingest a conversation, or open a demo scope of about fifty varied "
            "facts that shows how a budget trims.")
    st.page_link("pages/ingest.py", label="Go to Ingest", icon=":material/upload:")
if memory.can_write or not data.get("facts"):
    if st.button("Open a demo scope for this page (about fifty facts)", key="cp_demo",
                 help="A new scope demo/preview-N, filled with varied facts and short summaries; this scope is "
                      "left as it is."):
        from memory_core.dashboard.demo import load_preview_demo
        from memory_core.dashboard.demo_scope import open_demo_scope

        if refusal := open_demo_scope("preview", load_preview_demo):
            st.warning(refusal)

m1, m2, m3, m4 = st.columns(4)
m1.metric("Tokens used / budget", f"{report.tokens} / {budget}")
m2.metric("Facts kept", f"{len(report.kept_fact_ids)} / {len(report.kept_fact_ids) + len(report.dropped_fact_ids)}")
m3.metric("Facts dropped", len(report.dropped_fact_ids),
          help="Whole facts left out because they did not fit: the least relevant (or least confident) go first. "
               "They are struck through below.")
m4.metric("Cut mid-text", "yes" if report.truncated else "no",
          help="Yes when even the kept part did not fit and the text itself was cut off, ending with a marker. "
               "Dropping whole facts is not cutting: the text stays whole.")
st.progress(min(1.0, report.tokens / budget) if budget else 0.0)

fig = go.Figure()
for section, tokens in chart_sections(report).items():
    fig.add_trace(go.Bar(name=section, x=[tokens], y=["used"], orientation="h", text=[tokens], textposition="inside"))
dropped_tokens = sum(cost(i) for i in report.dropped_fact_ids if i in facts)
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
order = ([i for i in relevant if i in facts] + [i for i in report.kept_fact_ids if i not in relevant]
         + [i for i in report.dropped_fact_ids if i not in relevant])
order = list(dict.fromkeys(order))
lines = []
for fact_id in order[:SHOWN_LINES]:
    # memory text stays text: escaped, then struck through with Markdown's own ~~ ~~
    text = escape_markdown(fact_line(facts[fact_id])[2:])
    tokens = cost(fact_id)
    lines.append(f"- `{tokens:>3} tok` {text}" if fact_id in kept else f"- `{tokens:>3} tok` ~~{text}~~ *(dropped)*")
if len(order) > SHOWN_LINES:
    rest = order[SHOWN_LINES:]
    rest_kept = sum(1 for i in rest if i in kept)
    lines.append(f"- *... and {len(rest):,} more facts ({rest_kept:,} kept, {len(rest) - rest_kept:,} dropped): "
                 "see the tables below*")
with st.container(height=360 if len(lines) > 12 else "content", border=True):
    st.markdown("\n".join(lines) if lines else "*No facts in this scope.*")
with st.expander("Exactly as sent (the text the agent's prompt receives)", expanded=True):
    st.caption("The copy button at the box's top right copies exactly this text.")
    st.code(report.text or "(empty)", language="markdown", wrap_lines=True)

if query.strip():
    st.subheader("No query beside this query")
    plain = build_injection(data, budget, model=model)
    only_query = [i for i in report.kept_fact_ids if i not in set(plain.kept_fact_ids)]
    only_plain = [i for i in plain.kept_fact_ids if i not in kept]
    q1, q2 = st.columns(2)
    q1.metric("No query: facts kept", len(plain.kept_fact_ids), help=f"{plain.tokens} tokens")
    q2.metric("With this query: facts kept", len(report.kept_fact_ids), help=f"{report.tokens} tokens")
    q1.markdown("\n".join(f"- {escape_markdown(facts[i]['content'])}" for i in only_plain if i in facts)
                or "*Nothing that the query leaves out.*")
    q2.markdown("\n".join(f"- {escape_markdown(facts[i]['content'])}" for i in only_query if i in facts)
                or "*Nothing that only the query brings in.*")

rank = {fact_id: n for n, fact_id in enumerate(relevant, 1)}

k, d = st.columns(2)
k.caption("Kept")
k.dataframe(pd.DataFrame([{**facts[i], "relevance": rank.get(i), "tokens": cost(i)}
                          for i in report.kept_fact_ids if i in facts],
                         columns=(["content", "tokens", "confidence", "relevance", "id"] if relevant
                                  else ["content", "tokens", "confidence", "id"])),
            hide_index=True)
d.caption("Dropped by the budget")
d.dataframe(pd.DataFrame([{**facts[i], "tokens": cost(i)} for i in report.dropped_fact_ids if i in facts],
                         columns=["content", "tokens", "confidence", "id"]), hide_index=True)

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
