"""One panel per fact on the Facts page: its text and status, its history, where it came from, when it was
injected and by whom, and every action (correct, forget, erase), each confirmed in place, quoting the fact.

The panel is keyed to a fact id, never to a position in a list: the picker's options are ids, the fact
picked rides in the URL (`?fact=`), and a confirmation holds the id it was asked for, so an action always
lands on the fact it quotes and never moves the selection. Ids and enum names appear only in tooltips.
"""

from __future__ import annotations

from typing import Any, Callable

import streamlit as st

from memory_core.dashboard.fact_edits import quote
from memory_core.dashboard.helpers import escape_markdown
from memory_core.dashboard.words import action_words, actor_words

ERASED = "[erased]"
ALSO = "fact_erase_also"  # the related facts ticked in the erase plan
PICK = "fact_pick"
CONFIRM = "fact_confirm"  # (action, fact id) waiting for its confirmation
FOLLOW = "_fact_follow"  # the fact to pick on the next run
RESULT = "fact_result"  # (fact id, kind, message): shown in the panel, beside the actions


def status_words(fact: Any, everything: dict[str, Any]) -> str:
    if fact.content == ERASED:
        return "Erased: its text is gone from everything memory keeps."
    if fact.valid:
        return "Believed now: injected into agents' prompts when the budget allows."
    when = f" on {fact.invalid_at:%Y-%m-%d %H:%M} UTC" if fact.invalid_at else ""
    newer = everything.get(fact.superseded_by or "")
    if newer is not None:
        return f"No longer believed{when}: replaced by {quote(newer.content)}."
    return f"No longer believed{when}" + (f": {fact.invalid_reason}." if fact.invalid_reason else ".")


def pick_fact(facts: list[Any]) -> Any | None:
    """The fact the panel shows: the one in the URL (`?fact=`) on arrival, then the person's pick; the pick
    stays on its fact whatever happens to the list (a fact no longer listed falls back to the first)."""
    by_id = {f.id: f for f in facts}
    if not by_id:
        return None
    follow = st.session_state.pop(FOLLOW, None)
    if follow in by_id:  # a correction: the panel follows the fact to its new statement, and so does the URL
        st.session_state[PICK] = st.query_params["fact"] = follow
    wanted = st.query_params.get("fact")
    if wanted in by_id and st.session_state.get("_fact_url_seen") != wanted:
        st.session_state[PICK] = wanted
    st.session_state["_fact_url_seen"] = wanted
    if st.session_state.get(PICK) not in by_id:
        st.session_state[PICK] = next(iter(by_id))

    def to_url() -> None:
        st.query_params["fact"] = st.session_state[PICK]
        st.session_state["_fact_url_seen"] = st.session_state[PICK]

    chosen = st.selectbox("Fact", list(by_id), key=PICK, on_change=to_url,
                          format_func=lambda i: by_id[i].content[:110] + ("" if by_id[i].valid else " (history)"),
                          help="Every fact of the scope, current ones first. The fact picked is in the page's "
                               "address: copy it to show a teammate the same fact.")
    return by_id[chosen]


def history_lines(view: Any, fact: Any) -> list[str]:
    lines = []
    for e in view.facts.history(fact.id, limit=50):
        reason = f" ({escape_markdown(e.reason)})" if e.reason else ""
        lines.append(f"- {e.at:%Y-%m-%d %H:%M} UTC: {action_words(e.action)} by "
                     f"{escape_markdown(actor_words(e.actor))}{reason}")
    return lines


def injected_lines(view: Any, fact: Any, limit: int = 200) -> list[str]:
    lines = []
    for i in view.injections(limit=limit):
        if fact.id in i.fact_ids:
            asked = f" for {quote(i.query, 80)}" if i.query else ""
            lines.append(f"- {i.at:%Y-%m-%d %H:%M} UTC by {escape_markdown(actor_words(i.actor))}{asked}")
    return lines


def show_result(fact_id: str) -> None:
    result = st.session_state.get(RESULT)
    if result and result[0] == fact_id:
        (st.success if result[1] == "ok" else st.error)(result[2])


def fact_panel(view: Any, facts: list[Any], erase_plan: Callable[[Any, Any], list[str]] | None = None) -> None:
    """The panel of one fact, picked among `facts` (every fact of the scope, current ones first)."""
    fact = pick_fact(facts)
    if fact is None:
        return
    everything = {f.id: f for f in facts}
    with st.container(border=True, key="fact_panel"):
        st.text(fact.content)  # memory text is shown as text
        st.caption(escape_markdown(status_words(fact, everything)), help=f"id {fact.id}")
        st.caption(f"{fact.category} · confidence {fact.confidence:.2f} · since {fact.created_at:%Y-%m-%d %H:%M} UTC")
        origin = []
        if fact.thread_id:
            origin.append(f"the conversation “{escape_markdown(fact.thread_id)}”")
        if fact.source:
            origin.append(f"source {escape_markdown(fact.source)}")
        st.caption("Came from " + (", ".join(origin) if origin else "an unnamed source") + ".")
        if fact.source_error:
            st.caption(f"Corrects the mistake: {escape_markdown(fact.source_error)}")
        h, i = st.columns(2)
        with h:
            st.markdown("**History**")
            st.markdown("\n".join(history_lines(view, fact)) or "*No history recorded.*")
        with i:
            st.markdown("**Given to agents**")
            st.markdown("\n".join(injected_lines(view, fact)) or "*Never injected (as recorded).*")
        show_result(fact.id)
        if view.can_write and fact.content != ERASED:
            actions(view, fact, erase_plan)


def _ask(action: str, fact_id: str) -> None:
    st.session_state[CONFIRM] = (action, fact_id)
    st.session_state.pop(RESULT, None)


def _cancel() -> None:
    st.session_state.pop(CONFIRM, None)


def actions(view: Any, fact: Any, erase_plan: Callable[[Any, Any], list[str]] | None = None) -> None:
    """Correct / Forget / Erase: a button asks, a confirmation quoting the fact acts, in place."""
    b1, b2, b3 = st.columns(3)
    if fact.valid:
        b1.button("Correct…", key="fact_ask_correct", on_click=_ask, args=("correct", fact.id),
                  help="Say what is true now: the fact is replaced, its history kept.")
        b2.button("Forget…", key="fact_ask_forget", on_click=_ask, args=("forget", fact.id),
                  help="No longer true: the fact is kept in the history, never injected again.")
    b3.button("Erase…", key="fact_ask_erase", on_click=_ask, args=("erase", fact.id),
              help="For what must be gone, not just corrected: the text is removed everywhere, for good.")
    waiting = st.session_state.get(CONFIRM)
    if not waiting or waiting[1] != fact.id:
        return
    action = waiting[0]
    with st.container(border=True, key="fact_confirm_box"):
        if action == "correct":
            st.markdown(f"Correct {escape_markdown(quote(fact.content))}: what is true now?")
            new_text = st.text_area("What is true now", key="fact_correct_text", height=80)
            why = st.text_input("Why (optional, kept in the history)", max_chars=200, key="fact_correct_why")
        elif action == "forget":
            st.warning(f"Forget {escape_markdown(quote(fact.content))}? It stays in the history as no longer "
                       "true and is never injected again.")
            why = st.text_input("Why (kept in the history)", max_chars=200, key="fact_forget_why")
        else:
            st.warning(f"Erase {escape_markdown(quote(fact.content))} everywhere? Its text is removed from the "
                       "fact and its history, the summaries, MEMORY.md and its versions, daily logs, dream "
                       "diaries, the search index and queued conversations. This cannot be undone. To record "
                       "that it stopped being true, forget or correct it instead.")
            # the plan: the passages that will read `[erased]`, and the facts saying the same to tick (erased too)
            st.session_state[ALSO] = list(erase_plan(view, fact) or ()) if erase_plan is not None else []
            why = st.text_input("Why (kept in the history, never the text)", max_chars=200, key="fact_erase_why")
        c1, c2 = st.columns(2)
        go = c1.button({"correct": "Save the correction", "forget": "Yes, forget it",
                        "erase": "Yes, erase it for good"}[action], type="primary", key="fact_confirm_go")
        c2.button("Cancel", key="fact_confirm_cancel", on_click=_cancel)
    if go:
        _act(view, fact, action, why)


def _act(view: Any, fact: Any, action: str, why: str) -> None:
    """Do the confirmed action on exactly the fact it quoted; the result is said in the panel."""
    try:
        if action == "correct":
            text = st.session_state.get("fact_correct_text", "")
            # The one rule for editing a fact, on the version the person saw (a change since is refused).
            new = view.facts.revise(fact.id, content=text, reason=why or None, made_on=fact.updated_at).fact
            message = f"Corrected: {quote(fact.content)} is now {quote(new.content)}."
            st.session_state[FOLLOW] = new.id  # the next run picks the new statement (the picker is drawn)
            result_id = new.id
        elif action == "forget":
            view.facts.invalidate(fact.id, reason=why or "forgotten on the dashboard")
            message, result_id = f"Forgotten: {quote(fact.content)} is kept in the history, no longer true.", fact.id
        else:
            counts = view.facts.erase(fact.id, reason=why or None, also=st.session_state.get(ALSO) or ())
            places = sum(int(v) for v in counts.values() if isinstance(v, int))
            message = f"Erased: the fact's text is gone from the {places} place(s) memory kept it."
            result_id = fact.id
    except (KeyError, ValueError, PermissionError) as exc:
        st.session_state[RESULT] = (fact.id, "error", f"Nothing was changed: {escape_markdown(str(exc))}")
    else:
        st.session_state[RESULT] = (result_id, "ok", escape_markdown(message))
        st.session_state.pop(CONFIRM, None)
        for key in ("fact_correct_text", "fact_correct_why", "fact_forget_why", "fact_erase_why"):
            st.session_state.pop(key, None)
    st.rerun()
