"""A new scope for a demo, opened from a page: named "demo/<what>-<n>" (the first free), shown at once."""

from __future__ import annotations

from typing import Callable

import streamlit as st

from memory_core.dashboard.helpers import admin_handle, scope_view, who
from memory_core.scope import Scope
from memory_core.views.scoped import ScopedMemory


def open_demo_scope(what: str, fill: Callable[[ScopedMemory], object]) -> str | None:
    """Open the first free "demo/<what>-<n>" scope, `fill` it, and make it the one shown (the sidebar and the
    URL follow on the rerun). Returns a refusal in words, or None when done (then the page reruns)."""
    person = who()
    existing = set(admin_handle().scopes())
    scope = next(s for n in range(1, 10_000) if (s := Scope("demo", f"{what}-{n}")) not in existing)
    try:
        view = scope_view(person, scope)
    except PermissionError:
        return f"You may not create {scope.key}: that needs the editor role on demo/*."
    if not view.can_write:
        return f"You may not create {scope.key}: that needs the editor role on demo/*."
    fill(view)
    st.session_state.setdefault("_new_scopes", []).append(scope)
    st.session_state["_scope"] = scope.key
    st.session_state["_scope_switch"] = True
    st.rerun()
    return None
