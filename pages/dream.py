"""Dream: MEMORY.md, run Deep Dream, diff and roll back versions (who wrote each), diaries, the schedule."""

import streamlit as st

from memory_core.dashboard.helpers import admin_handle, ensure_entrypoint, escape_markdown, header, view, who
from memory_core.text.words import sha256_text
from memory_core.tiers.core import CoreTier
from memory_core.dashboard import cached
from memory_core.dashboard.words import dream_words as outcome_words, reason_words

def dream_words(status: str | None, reason: str | None = None) -> str:
    return escape_markdown(outcome_words(status, reason))


ensure_entrypoint()
memory = view()
fact_texts = {f.id: f.content for f in cached.all_facts(memory)}
header("Deep Dream", memory)
if flash := st.session_state.pop("dream_flash", None):
    st.success(flash)  # composed in words by this page

core = memory.read_core()
left, right = st.columns([3, 2])
with left:
    st.subheader("MEMORY.md")
    if core:
        st.code(core, language="markdown", wrap_lines=True)  # shown as text: nothing in memory is rendered
    else:
        st.info("No MEMORY.md yet: run a dream once there are daily logs.")
with right:
    if memory.can_write:
        st.subheader("Run now")
        lookback = st.number_input("Look back (days)", 1, 90, 1, key="dream_lookback")
        force = st.checkbox("Force (ignore unchanged logs and the mass-loss guard)", key="dream_force")
        if st.button("Run Deep Dream", type="primary", key="dream_run"):
            with st.spinner("Dreaming…"):
                result = memory.deep_dream(int(lookback), force=force)
            message = dream_words(result.status, result.reason)
            if result.diary_path:
                message += " A dream diary says what it consolidated (Dream diaries, below)."
            if result.status in ("updated", "proposed"):
                st.session_state["dream_flash"] = message
                st.rerun()
            st.warning(message, icon=":material/info:")
            for removed in result.removed:
                st.caption(f"Removed as unsupported: {escape_markdown(removed)}")
    st.subheader("Schedule")
    admin = admin_handle()  # the nightly dream is one switch for every scope
    may_switch = admin.access.is_global_admin(who())
    if may_switch or memory.can_write:  # a viewer gets no writing widget, not even a disabled one
        enabled = st.toggle("Nightly dream (all scopes)", value=admin.dreams_enabled, key="dream_sched",
                            disabled=not may_switch)
        if not may_switch:
            st.caption("The nightly dream runs for every scope: only an admin of all scopes (`*/*`) may switch it.")
        elif enabled != admin.dreams_enabled:
            admin.set_dreams_enabled(enabled, principal=who())
    nxt = admin.next_dream()
    st.caption(f"Next run: {nxt:%Y-%m-%d %H:%M %Z}" if nxt else "Scheduled dreams are off.")
    state = memory.dream_state()
    if state and state.last_status:
        st.caption(f"Last run: {dream_words(state.last_status, state.last_reason)}", help=state.last_status)

proposals = memory.dream_proposals()
if proposals or memory.settings.dream_review:
    st.subheader("Waiting for review")
    if not proposals:
        st.caption("Dreams propose a new MEMORY.md here instead of writing it (dream review is on). Nothing waits now.")
for proposal in proposals:
    with st.container(border=True):
        st.caption(f"Proposed {proposal.created_at:%Y-%m-%d %H:%M} UTC from the logs of "
                   f"{', '.join(proposal.notes.get('days', [])) or 'recent days'}", help=proposal.id)
        # The difference against MEMORY.md as it is now, not as it was when the dream read it.
        against_now = CoreTier.diff(core or "", proposal.text, "MEMORY.md now", "proposed")
        stale = sha256_text(core or "") != proposal.base_hash
        if stale:
            st.warning("MEMORY.md has changed since this dream read it, so it cannot be approved: reject it and run "
                       "a new dream.")
        if against_now:
            st.code(against_now, language="diff")
        else:
            st.info("This proposal is the same as MEMORY.md now: approving it would change nothing.")
        for line in proposal.notes.get("left_out", []):
            st.caption(f"Left out, no longer true: {escape_markdown(line)}")
        if memory.can_write:
            a, r = st.columns(2)
            if against_now and not stale and a.button("Approve", type="primary", key=f"approve_{proposal.id}"):
                try:
                    memory.approve_dream(proposal.id)
                    st.session_state["dream_flash"] = "Approved: MEMORY.md has the proposed text now."
                    st.rerun()
                except (KeyError, ValueError) as exc:
                    st.error(escape_markdown(str(exc)))
            if r.button("Reject" if against_now else "Dismiss", key=f"reject_{proposal.id}"):
                memory.reject_dream(proposal.id)
                st.session_state["dream_flash"] = "Rejected: MEMORY.md stays as it is."
                st.rerun()

versions = memory.core_versions()
if versions:
    st.subheader("Versions")
    numbers = [v.version for v in versions]
    a, b = st.columns(2)
    new = a.selectbox("Version", numbers, key="dream_v_new",
                      format_func=lambda n: f"v{n}" + (" (current)" if n == numbers[0] else ""))
    old_choices = [n for n in numbers if n < new] or [None]
    old = b.selectbox("Compare with", old_choices, key="dream_v_old", format_func=lambda n: f"v{n}" if n else "(empty)")
    by_number = {v.version: v for v in versions}
    diff = CoreTier.diff(by_number[old].content if old else "", by_number[new].content, f"v{old}", f"v{new}")
    st.code(diff or "(no difference)", language="diff")
    chosen = by_number[new]
    st.caption(f"v{new}: {escape_markdown(reason_words(chosen.reason, fact_texts))}, by "
               f"{escape_markdown(getattr(chosen, 'actor', None) or 'library')}, {chosen.created_at:%Y-%m-%d %H:%M} UTC",
               help=chosen.reason)
    if new == numbers[0] or chosen.content == (core or ""):
        st.caption(f"v{new} is MEMORY.md's text now.")
    elif memory.can_write and st.button(f"Roll back to v{new}", key="dream_rollback"):
        memory.rollback_core(new)
        st.success(f"MEMORY.md is v{new}'s text again (saved as a new version).")
        st.rerun()

diaries = memory.dream_diaries()
if diaries:
    st.subheader("Dream diaries")
    diary = st.selectbox("Diary", list(reversed(diaries)), key="dream_diary")
    st.code(memory.read_document(diary) or "", language="markdown", wrap_lines=True)
