"""Dream: MEMORY.md, run Deep Dream, diff and roll back versions, diaries, the schedule."""

import streamlit as st

from memory_core.dashboard import ensure_entrypoint, get_memory, scope
from memory_core.scope import make_scope
from memory_core.tiers.core import CoreTier

ensure_entrypoint()
memory = get_memory()
st.title("Deep Dream")

core = memory.read_core(**scope())
left, right = st.columns([3, 2])
with left:
    st.subheader("MEMORY.md")
    if core:
        st.markdown(core)
    else:
        st.info("No MEMORY.md yet: run a dream once there are daily logs.")
with right:
    st.subheader("Run now")
    lookback = st.number_input("Look back (days)", 1, 90, 1, key="dream_lookback")
    force = st.checkbox("Force (ignore unchanged logs and the mass-loss guard)", key="dream_force")
    if st.button("Run Deep Dream", type="primary", key="dream_run"):
        with st.spinner("Dreaming…"):
            result = memory.deep_dream(int(lookback), force=force, **scope())
        message = f"Status: {result.status}" + (f" — {result.reason}" if result.reason else "")
        (st.success if result.status == "updated" else st.warning)(message)
        for removed in result.removed:
            st.caption(f"Removed as unsupported: {removed}")
        if result.status == "updated":
            st.rerun()
    st.subheader("Schedule")
    enabled = st.toggle("Nightly dream", value=memory.worker.dream_enabled, key="dream_sched")
    memory.worker.dream_enabled = enabled
    nxt = memory.worker.next_dream()
    st.caption(f"Next run: {nxt:%Y-%m-%d %H:%M %Z}" if nxt else "Scheduled dreams are off.")
    state = memory.dreamer.state(make_scope(**scope()))
    if state and state.last_status:
        st.caption(f"Last run: {state.last_status}" + (f" ({state.last_reason})" if state.last_reason else ""))

versions = memory.core_versions(**scope())
if len(versions) >= 1:
    st.subheader("Versions")
    numbers = [v.version for v in versions]
    a, b = st.columns(2)
    new = a.selectbox("Version", numbers, key="dream_v_new", format_func=lambda n: f"v{n}")
    old_choices = [n for n in numbers if n < new] or [None]
    old = b.selectbox("Compare with", old_choices, key="dream_v_old", format_func=lambda n: f"v{n}" if n else "(empty)")
    by_number = {v.version: v for v in versions}
    diff = CoreTier.diff(by_number[old].content if old else "", by_number[new].content, f"v{old}", f"v{new}")
    st.code(diff or "(no difference)", language="diff")
    st.caption(f"v{new}: {by_number[new].reason}, {by_number[new].created_at:%Y-%m-%d %H:%M} UTC")
    if new != numbers[0] and st.button(f"Roll back to v{new}", key="dream_rollback"):
        memory.rollback_core(new, **scope())
        st.success(f"MEMORY.md is v{new}'s text again (saved as a new version).")
        st.rerun()

diaries = memory.dream_diaries(**scope())
if diaries:
    st.subheader("Dream diaries")
    chosen = st.selectbox("Diary", list(reversed(diaries)), key="dream_diary")
    st.markdown(memory.read_document(chosen, **scope()) or "")
