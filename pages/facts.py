"""Facts: filter, edit (a new statement supersedes the old one), add, supersede, review near-duplicates, see history (who did what), export."""

import json
from datetime import datetime, time, timezone

import pandas as pd
import plotly.express as px
import streamlit as st

from memory_core import CATEGORIES
from memory_core.dashboard import cached
from memory_core.dashboard.erase_panel import erase_plan_panel
from memory_core.dashboard.fact_edits import Row, delete_facts, pending_edits, quote, save_edits
from memory_core.dashboard.fact_history import change_words, replaced_by, replacements, status_text
from memory_core.dashboard.fact_panel import fact_panel
from memory_core.dashboard.held import held_for_review
from memory_core.dashboard.helpers import ensure_entrypoint, escape_markdown, header, view
from memory_core.dashboard.words import action_words, actor_words

ensure_entrypoint()
memory = view()
header("Facts", memory)
if flash := st.session_state.pop("facts_flash", None):
    st.success(escape_markdown(flash))

c1, c2, c3 = st.columns([2, 2, 3])
categories = c1.multiselect("Category", CATEGORIES, key="facts_cat")
low, high = c2.slider("Confidence", 0.0, 1.0, (0.0, 1.0), 0.05, key="facts_conf")
needle = c3.text_input("Text contains", value=st.query_params.get("q", ""), key="facts_text", max_chars=200)
v1, v2 = st.columns([2, 3])
show_invalid = v1.toggle("Show superseded and invalidated facts", key="facts_invalid")
as_of_day = v2.date_input("As of (what we believed at the end of that day)", value=None, key="facts_asof")
as_of = datetime.combine(as_of_day, time.max, tzinfo=timezone.utc) if as_of_day else None

all_facts = cached.all_facts(memory)  # read once per state of the scope: the grid, the panel, the tabs
everything = {f.id: f for f in all_facts}
if as_of:
    facts = memory.facts.list(include_invalid=show_invalid, as_of=as_of)
else:
    facts = all_facts if show_invalid else [f for f in all_facts if f.valid]
valid = [f for f in facts if f.valid] if not as_of else facts
shown = [f for f in facts if (not categories or f.category in categories) and low <= f.confidence <= high
         and needle.casefold() in f.content.casefold()]
if not facts and not as_of and not show_invalid:
    st.info("No facts in this scope yet. Memory arrives three ways: **ingest** a conversation (or load the demo "
            "data), **import** another tool's export (ChatGPT, Claude, mem0, DeerFlow, a Markdown workspace), or "
            "let an **agent** write over MCP (`memory-core mcp`).", icon=":material/lightbulb:")
    e1, e2, e3 = st.columns(3)
    e1.page_link("pages/ingest.py", label="Ingest a conversation or load demo data", icon=":material/upload:")
    e2.page_link("pages/import_export.py", label="Import another tool's memory", icon=":material/swap_vert:")
    e3.page_link("pages/context_preview.py", label="See what an agent would receive", icon=":material/token:")
st.caption(f"{len(shown)} of {len(facts)} facts in {memory.scope.key}"
           + (f" as of {as_of_day.isoformat()}" if as_of_day else "")
           + ("" if memory.can_write else f" · read-only ({memory.role})"))
held_for_review(memory)


def badge(fact) -> str:
    """The status as one of Streamlit's Markdown badges (no emoji: not every browser has the font)."""
    if fact.superseded_by:
        return ":orange-badge[superseded]"  # the list says what replaced it; the id is no word for a person
    return ":gray-badge[forgotten]" + (f" {escape_markdown(fact.invalid_reason)}" if fact.invalid_reason else "")


GRID_ROWS = 1_000  # rows in the grid (the filter reaches the others)
PANEL_CHOICES = 500  # facts offered by the pickers (the panel's, the history's); a linked one always
# The grid edits what is believed now; superseded and forgotten facts are history, listed read-only below it.
current_rows = [f for f in shown if f.valid or as_of]
past_rows = [f for f in shown if not (f.valid or as_of)]
editable = memory.can_write and not as_of
injected = memory.injection_counts()  # from the injections agents asked for (MCP, record=True)


def injected_text(fact_id: str) -> str:
    times, last = injected.get(fact_id, (0, None))
    return f"{times}x, last {last:%Y-%m-%d %H:%M}" if times else "never"


GRID_COLUMNS = ["content", "status", "category", "confidence", "avoid", "injected", "created", "source", "id",
                "delete"]
columns = {
    "content": st.column_config.TextColumn("Content", required=True, max_chars=memory.settings.max_fact_chars,
                                           width="large"),
    "status": st.column_config.TextColumn("Status", width="small"),
    "id": st.column_config.TextColumn("Id", width="small"),
    "source": st.column_config.TextColumn("Source"),
    "avoid": st.column_config.TextColumn("Avoid", help="For a correction: the mistake it corrects (sourceError)"),
    "category": st.column_config.SelectboxColumn("Category", options=list(CATEGORIES), required=True),
    "confidence": st.column_config.NumberColumn("Confidence", min_value=0.0, max_value=1.0, step=0.01, format="%.2f"),
    "created": st.column_config.DatetimeColumn("Created (UTC)", format="YYYY-MM-DD HH:mm"),
    "injected": st.column_config.TextColumn("Injected", help="How often agents were given it, and when last, in this "
                                            "scope's latest 10,000 recorded injections (get_memory_context records "
                                            "each)"),
    "delete": st.column_config.CheckboxColumn("Delete?", width="small"),
}


def grid_frame(rows: list[Row], by_id: dict) -> pd.DataFrame:
    """The grid's rows: the frozen values the person edits, beside the fact's other columns as they are now."""
    records = []
    for row in rows:
        f = by_id.get(row.id)
        records.append({"content": row.content, "status": status_text(f, bool(as_of)) if f else "changed",
                        "category": row.category, "confidence": row.confidence, "avoid": (f.source_error if f else "") or "",
                        "injected": injected_text(row.id), "created": f.created_at if f else None,
                        "source": (f.source if f else "") or "", "id": row.id, "delete": False})
    return pd.DataFrame(records, columns=GRID_COLUMNS)


def fact_grid(rows_now: list) -> None:
    """The editable grid. Its rows are frozen from the first edit until a save or a discard (see fact_edits),
    so an edit stays on its fact; the result of a save is said right under it."""
    state = st.session_state.setdefault(f"facts_grid:{memory.scope.key}", {"gen": 0, "rows": []})
    key = f"facts_editor:{memory.scope.key}:{state['gen']}"
    by_id = {f.id: f for f in rows_now}
    fresh = [Row.of(f) for f in rows_now]
    raw = st.session_state.get(key) or {}
    if raw.get("edited_rows") and state["rows"]:
        rows = state["rows"]
        if [(r.id, r.version) for r in rows] != [(r.id, r.version) for r in fresh]:
            st.info("The facts changed since you began editing (another tab, person or agent). The grid shows them "
                    "as you saw them until you save or discard; an edit of a fact changed meanwhile is refused.",
                    icon=":material/sync_problem:")
    else:
        rows = state["rows"] = fresh
    st.caption("Editing a fact's content replaces it by a new fact: the old statement stays in the history, no "
               "longer valid, pointing at the new one (as an agent's `update_memory` does). A new category or "
               "confidence alone changes the fact in place.")
    st.data_editor(grid_frame(rows, by_id), key=key, hide_index=True, width="stretch",
                   disabled=["id", "status", "avoid", "injected", "created", "source"], column_config=columns)
    edits = pending_edits(rows, (st.session_state.get(key) or {}).get("edited_rows"))
    changes = [e for e in edits if e.changes]
    deletes = [e.row for e in edits if e.delete]

    def restart() -> None:
        state["gen"] += 1
        state["rows"] = []

    b1, b2, b3 = st.columns(3)
    outcome = None
    if changes and b1.button(f"Save {len(changes)} change(s)", type="primary", key="facts_save"):
        outcome = save_edits(memory, changes)
    if edits:
        b3.button("Discard my edits", key="facts_discard", on_click=restart)
    if deletes:
        names = ", ".join(quote(r.content, 60) for r in deletes[:5]) + (" …" if len(deletes) > 5 else "")
        confirm = b2.checkbox(f"Yes, delete for good: {names}", key="facts_confirm")
        if b2.button(f"Delete {len(deletes)} fact(s)", disabled=not confirm, key="facts_delete"):
            outcome = delete_facts(memory, deletes)
    if outcome is not None:
        st.session_state["facts_grid_result"] = (memory.scope.key, outcome.done, outcome.refused)
        restart()
        st.session_state.pop("facts_confirm", None)
        st.rerun()
    result = st.session_state.get("facts_grid_result")
    if result and result[0] == memory.scope.key:
        if result[1]:
            st.success(escape_markdown(" ".join(result[1])))
        for line in result[2]:
            st.error(escape_markdown(line))


if not facts:  # the empty state above says what to do; an empty grid would say nothing
    pass
else:
    # The grid's rows all travel to the browser on every render (1.6 MB at 10,000 facts): the first GRID_ROWS
    # shown, most confident first; the filter above reaches the others.
    grid_rows = current_rows[:GRID_ROWS]
    if len(current_rows) > GRID_ROWS:
        st.caption(f"The grid holds the first {GRID_ROWS:,} of these {len(current_rows):,} facts, most confident "
                   "first: filter above (category, confidence, text) to reach the others.")
    if editable:
        fact_grid(grid_rows)
    else:
        st.dataframe(grid_frame([Row.of(f) for f in grid_rows], {f.id: f for f in grid_rows}).drop(columns=["delete"]),
                     key="facts_table", hide_index=True, width="stretch", column_config=columns)
if past_rows:
    st.markdown("**No longer believed** (kept for history: never injected)")
    lines = []
    now = replaced_by(past_rows, everything)
    for f in past_rows:
        then = f" → now: {escape_markdown(now[f.id])}" if f.id in now else ""
        lines.append(f"- {badge(f)} ~~{escape_markdown(f.content)}~~{then}")
    st.markdown("\n".join(lines))


def add_fact() -> None:
    """Add a fact; a text over the limit is refused with its length, never cut or emptied."""
    limit = memory.settings.max_fact_chars
    if done := st.session_state.pop("add_result", None):  # beside the form, not folded away in it
        st.success(escape_markdown(done))
    with st.expander("Add a fact"):
        content = st.text_area("Content", key="add_content", height=80,
                               help=f"One statement, at most {limit:,} characters.")
        category = st.selectbox("Category", CATEGORIES, key="add_category")
        confidence = st.slider("Confidence", 0.0, 1.0, 0.8, 0.05, key="add_confidence")
        if len(content) > limit:
            st.warning(f"This text is {len(content):,} characters; a fact holds at most {limit:,}. Shorten it "
                       "(or split it in two) to add it.")
        if st.button("Add", key="add_go", disabled=len(content) > limit):
            try:
                fact, reason = memory.facts.add_with_reason(content, category, confidence, source="dashboard")
            except ValueError as exc:
                st.error(escape_markdown(str(exc)))
            else:
                if fact:
                    st.session_state["add_result"] = (
                        f"Held {quote(fact.content)} for review: it reads as an instruction to the agent, so it is "
                        "kept but never given to agents until you release it (below)." if fact.held
                        else f"Added {quote(fact.content)}.")
                    st.session_state.pop("add_content", None)
                    st.rerun()
                st.warning(f"Not added: {(reason or 'refused').replace('_', ' ')}.")


if memory.can_write:
    add_fact()
if all_facts:
    st.subheader("One fact")
    st.caption("Its history, where it came from, when agents were given it, and what you can do with it."
               + (f" The picker offers the first {PANEL_CHOICES} facts shown: filter above to find another."
                  if len(shown) > PANEL_CHOICES else ""))
    offered = {f.id: f for f in sorted(shown if shown else all_facts,
                                       key=lambda f: (not f.valid, f.content == "[erased]"))[:PANEL_CHOICES]}
    for wanted in (st.query_params.get("fact"), st.session_state.get("fact_pick"), st.session_state.get("_fact_follow")):
        if wanted in everything and wanted not in offered:
            offered[wanted] = everything[wanted]
    fact_panel(memory, list(offered.values()), erase_plan=erase_plan_panel)


CHECK_AT_ONCE = 1_000  # facts up to which the Consistency check runs with the page


def fingerprint(facts: list) -> tuple:
    """What changes whenever a fact does: how many, and the latest change."""
    return len(facts), max((f.updated_at for f in facts), default=None)


@st.cache_data(ttl=600, max_entries=32, show_spinner=False)
def doctor_findings(scope_key: str, facts_state: tuple, _view) -> list:
    """The Consistency check, once per state of the scope's facts (it reads every copy: slow on a big scope).
    A summary or MEMORY.md changed by hand shows within ten minutes, or at once after any fact changes."""
    return _view.doctor()


tab_chains, tab_dupes, tab_check, tab_hist, tab_charts, tab_export = st.tabs(
    ["Changes", "Duplicates", "Consistency", "History", "Charts", "Export"])
with tab_check:
    st.caption("Where the copies of what memory knows disagree: a summary or MEMORY.md sentence that states a "
               "fact no longer true, or two valid facts that give one thing two values. "
               "(`memory-core doctor` runs the same check.)")
    # Tabs all run on every render: on a big scope the check (seconds at 10,000 facts) waits to be asked for.
    if st.toggle("Run the check", key="facts_check", value=len(all_facts) <= CHECK_AT_ONCE,
                 help=f"Run at once up to {CHECK_AT_ONCE:,} facts; on a bigger scope it takes a few seconds the "
                      "first time, then is kept until a fact changes."):
        findings = doctor_findings(memory.scope.key, fingerprint(all_facts), memory)
        if findings:
            st.dataframe(pd.DataFrame([{"kind": f.kind, "where": f.place, "text": f.text,
                                        "facts": ", ".join(f.fact_ids), "what to do": f.advice} for f in findings]),
                         hide_index=True, width="stretch")
        else:
            st.success("No contradictions: every copy agrees with the facts.")
with tab_chains:
    chains = replacements(everything)
    if chains:
        st.caption("What changed: each superseded fact beside the one that replaced it, newest first.")
        st.dataframe(pd.DataFrame(chains), hide_index=True, width="stretch")
    else:
        st.info("No fact has been superseded in this scope yet.")
with tab_dupes:
    st.caption("Pairs of valid facts that say the same thing (meaning and wording; negations never pair up).")
    threshold = st.slider("Similarity threshold", 0.5, 1.0, 0.9, 0.01, key="dupes_threshold")
    if st.button("Look for near-duplicates", key="dupes_find"):
        st.session_state["_dupes"] = (memory.scope.key, threshold)
    dismissed = st.session_state.setdefault("_kept_both", set())
    pairs = []
    if st.session_state.get("_dupes") == (memory.scope.key, threshold):
        pairs = [(a, b, score) for a, b, score in memory.facts.near_duplicates(threshold=threshold)
                 if (a.id, b.id) not in dismissed]
        if not pairs:
            st.info("No near-duplicate pairs at this threshold.")
    for n, (a, b, score) in enumerate(pairs[:30]):
        with st.container(border=True):
            st.caption(f"similarity {score:.2f}")
            left, right = st.columns(2)
            left.text(f"{a.id} · {a.category} · {a.confidence:.2f}\n{a.content}")
            right.text(f"{b.id} · {b.category} · {b.confidence:.2f}\n{b.content}")
            if memory.can_write:
                m1, m2, m3 = st.columns(3)
                keep_a = m1.button("Merge, keep left", key=f"merge_a_{n}")
                keep_b = m2.button("Merge, keep right", key=f"merge_b_{n}")
                if m3.button("Keep both", key=f"keep_both_{n}"):
                    dismissed.add((a.id, b.id))
                    st.rerun()
                if keep_a or keep_b:
                    keep, drop = (a, b) if keep_a else (b, a)
                    try:
                        memory.facts.merge(keep.id, drop.id)
                        st.session_state["facts_flash"] = f"Merged {quote(drop.content)} into {quote(keep.content)}."
                        st.rerun()
                    except (KeyError, ValueError) as exc:
                        st.error(escape_markdown(str(exc)))
with tab_hist:
    texts = {f.id: f.content[:100] for f in all_facts}
    # The picker offers the facts shown, as the panel's does (every option travels to the browser).
    offered_ids = [f.id for f in (shown or all_facts)[:PANEL_CHOICES]]
    if (picked := st.session_state.get("facts_hist")) in texts and picked not in offered_ids:
        offered_ids.append(picked)
    if len(shown or all_facts) > PANEL_CHOICES:
        st.caption(f"The picker offers the first {PANEL_CHOICES} facts shown: filter above to find another.")
    chosen = st.selectbox("Audit history of", ["(whole scope)"] + offered_ids, key="facts_hist",
                          format_func=lambda i: texts.get(i, i))
    entries = memory.facts.history(None if chosen == "(whole scope)" else chosen, limit=200)
    st.dataframe(pd.DataFrame([{"when": e.at, "fact": texts.get(e.fact_id, e.fact_id), "what": action_words(e.action),
                                "by": actor_words(e.actor), "change": change_words(e.old, e.new),
                                "reason": e.reason or "", "id": e.fact_id} for e in entries],
                              columns=["when", "fact", "what", "by", "change", "reason", "id"]),
                 hide_index=True, width="stretch", column_config={"id": st.column_config.TextColumn("id", width="small")})


@st.cache_resource(max_entries=8, show_spinner=False)
def charts(scope_key: str, facts_state: tuple, _valid: list) -> list:
    """The three charts, drawn once per state of the scope's facts (plotly takes a moment on a big scope)."""
    df = pd.DataFrame([{"confidence": f.confidence, "category": f.category, "created": f.created_at} for f in _valid])
    per_day = df.assign(day=df["created"].dt.strftime("%Y-%m-%d")).groupby("day").size().cumsum()
    over_time = px.line(per_day.reset_index(name="facts"), x="day", y="facts", title="Facts over time", markers=True)
    over_time.update_xaxes(type="category", title=None)  # days, never hour ticks on a one-day chart
    return [px.histogram(df, x="confidence", nbins=20, title="Confidence"),
            px.bar(df.groupby("category").size().reset_index(name="facts"), x="category", y="facts",
                   title="Facts by category"), over_time]


with tab_charts:
    if not valid:
        st.info("No facts yet: ingest a conversation or load the demo data.")
    elif as_of or st.toggle("Draw the charts", key="facts_charts", value=len(valid) <= 1_000,
                            help="Drawn on demand on a big scope: they take a moment there."):
        confidence, categories, over_time = charts(memory.scope.key, (fingerprint(all_facts), as_of_day), valid)
        a, b = st.columns(2)
        a.plotly_chart(confidence, width="stretch")
        b.plotly_chart(categories, width="stretch")
        st.plotly_chart(over_time, width="stretch")
with tab_export:
    if st.button(f"Prepare the export of {len(facts):,} facts", key="facts_export"):
        records = [f.to_dict() for f in facts]
        st.download_button("Download CSV", pd.DataFrame(records).to_csv(index=False), "facts.csv", "text/csv",
                           on_click="ignore")
        st.download_button("Download JSON", json.dumps(records, indent=2, ensure_ascii=False), "facts.json",
                           "application/json", on_click="ignore")
