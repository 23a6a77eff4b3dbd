"""Usage: what memory cost, per day, scope and operation (the usage ledger), the budget, the dearest scopes and jobs,
and the injections agents asked for."""

from datetime import datetime, timedelta, timezone

import pandas as pd
import plotly.express as px
import streamlit as st

from memory_core.dashboard.helpers import (admin_handle, ensure_entrypoint, escape_markdown, header, readable_scopes,
                                          view, who)

ensure_entrypoint()
memory = view()
admin = admin_handle()
header("Usage", memory)
st.caption("Every call to an LLM or an embedding API, with the tokens the provider reported (or counted here) and "
           "its cost from `llm_prices`. Work done offline costs nothing and records nothing.")

days = st.segmented_control("Period", [1, 7, 30, 90], default=30, format_func=lambda d: "1 day" if d == 1 else f"{d} days", key="usage_days")
since = datetime.now(timezone.utc) - timedelta(days=int(days or 30))
scopes = {s.key for s in readable_scopes(admin, who())}
totals = [t for t in admin.usage_totals(since=since) if t.user_id and f"{t.user_id}/{t.agent_name}" in scopes]
budget = memory.settings.daily_token_budget
if paused := memory.budget_paused():
    st.warning(escape_markdown(paused))

if not totals:
    st.info("No LLM or embedding calls in this period for the scopes you can read."
            + (" memory_core runs offline (no API key or base URL), so nothing is spent." if memory.offline else ""))
else:
    df = pd.DataFrame([{"day": t.day, "scope": f"{t.user_id}/{t.agent_name}", "operation": t.operation,
                        "model": t.model, "calls": t.calls, "tokens": t.input_tokens + t.output_tokens,
                        "input": t.input_tokens, "output": t.output_tokens, "cost": t.cost_usd or 0.0} for t in totals])
    a, b, c = st.columns(3)
    a.metric("Tokens", f"{df['tokens'].sum():,}")
    b.metric("Calls", f"{df['calls'].sum():,}")
    c.metric("Cost", f"${df['cost'].sum():,.4f}" if df["cost"].any() else "no prices set")
    per_day = df.groupby(["day", "scope"], as_index=False)["tokens"].sum()
    fig = px.bar(per_day, x="day", y="tokens", color="scope", title="Tokens per day")
    fig.update_xaxes(type="category")  # days, never times of day
    if budget:
        fig.add_hline(y=budget, line_dash="dash", annotation_text=f"daily budget per scope ({budget:,})")
    st.plotly_chart(fig, width="stretch")
    left, right = st.columns(2)
    by_op = df.groupby("operation", as_index=False)[["tokens", "cost"]].sum().sort_values("tokens", ascending=False)
    left.plotly_chart(px.bar(by_op, x="operation", y="tokens", title="Tokens per operation"), width="stretch")
    if df["cost"].any():
        cost_day = df.groupby("day", as_index=False)["cost"].sum()
        fig = px.bar(cost_day, x="day", y="cost", title="Cost per day ($)")
        fig.update_xaxes(type="category")
        right.plotly_chart(fig, width="stretch")
    st.subheader("The dearest scopes and jobs")
    dear = df.groupby(["scope", "operation", "model"], as_index=False).agg(
        calls=("calls", "sum"), tokens=("tokens", "sum"), cost=("cost", "sum")).sort_values(
        ["cost", "tokens"], ascending=False).head(20)
    st.dataframe(dear, hide_index=True, width="stretch",
                 column_config={"cost": st.column_config.NumberColumn("cost ($)", format="%.4f")})

st.subheader(f"Injections in {memory.scope.key}")
injections = memory.injections(limit=50)
if injections:
    st.dataframe(pd.DataFrame([{"when": i.at, "by": i.actor or "library", "query": i.query or "", "tokens": i.tokens,
                                "facts": len(i.fact_ids)} for i in injections]), hide_index=True, width="stretch")
else:
    st.caption("No injection recorded yet: agents' `get_memory_context` calls over MCP are, and the library's "
               "`format_for_injection(record=True)`.")
