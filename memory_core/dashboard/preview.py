"""What the Context Preview page draws, all from the library's own rule: `ScopedMemory.injection_report` (the
text `format_for_injection` gives, with or without a query), read once per state of the scope, budget, model
and query, and the facts' token costs, counted once per state of the scope and model.

The page never packs a budget itself: the kept and dropped facts, the passages a query brings in (with their
dates and token costs) and the sections' tokens are the report's, so the chart and the numbers say what the
text is.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import streamlit as st

from memory_core.context.injection import InjectionReport, fact_line
from memory_core.dashboard import cached
from memory_core.text.dates import day_text
from memory_core.text.tokens import count_tokens
from memory_core.views.scoped import ScopedMemory


@st.cache_resource(max_entries=64, show_spinner=False)
def _plain(scope_key: str, storage: str, version: tuple, budget: int, model: str,
           _view: ScopedMemory) -> InjectionReport:
    return _view.injection_report(max_tokens=budget, model=model)


@st.cache_resource(max_entries=64, show_spinner=False)  # a query's passages too: data_version follows them
def _with_query(scope_key: str, storage: str, version: tuple, budget: int, model: str, query: str,
                _view: ScopedMemory) -> InjectionReport:
    return _view.injection_report(max_tokens=budget, model=model, query=query)


def injection(view: ScopedMemory, budget: int, model: str, query: str = "") -> InjectionReport:
    """What `format_for_injection(max_tokens=budget, model=model, query=query)` gives now, with its report (a
    blank query is none). Shared between runs and sessions: read it, never change it."""
    if query.strip():
        return _with_query(*cached.state(view), budget, model, query, view)
    return _plain(*cached.state(view), budget, model, view)


def valid_facts(view: ScopedMemory) -> dict[str, Any]:
    """The scope's valid facts by id, most confident first (from the shared read of `cached.all_facts`)."""
    return {f.id: f for f in cached.all_facts(view) if f.valid}


@st.cache_resource(max_entries=16, show_spinner=False)
def _costs(scope_key: str, storage: str, version: tuple, model: str, _view: ScopedMemory) -> dict[str, int]:
    return {fact_id: line_tokens(f, model) for fact_id, f in valid_facts(_view).items()}


def line(fact: Any) -> str:
    """The fact's line as the injected text has it."""
    return fact_line({"category": fact.category, "confidence": fact.confidence, "content": fact.content,
                      "sourceError": fact.source_error})


def line_tokens(fact: Any, model: str) -> int:
    """What the fact's line costs in the injected text, its newline included."""
    return count_tokens(line(fact) + "\n", model)


def fact_costs(view: ScopedMemory, model: str) -> dict[str, int]:
    """Each valid fact's line in tokens (shared: never change it)."""
    return _costs(*cached.state(view), model, view)


def considered(report: InjectionReport, facts: dict[str, Any]) -> list[str]:
    """The facts in the order the budget considered them: those most relevant to the query first, then the
    others by confidence (the order of `facts`)."""
    return list(dict.fromkeys([i for i in report.relevant_fact_ids if i in facts] + list(facts)))


def chart_sections(report: InjectionReport) -> dict[str, int]:
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


def passage_rows(report: InjectionReport) -> list[dict[str, Any]]:
    """One row a passage the query brought in, in the order of the text: its date, where it comes from, what
    it says (as written there) and what it costs."""
    return [{"date": day_text(date.fromisoformat(p.when)) if p.when else "", "from": p.where,
             "passage": "\n".join(p.lines), "tokens": p.tokens} for p in report.passages]


__all__ = ["injection", "valid_facts", "fact_costs", "line", "line_tokens", "considered", "chart_sections", "passage_rows"]
