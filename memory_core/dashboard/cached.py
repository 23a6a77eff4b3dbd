"""What is slow to read on a big scope, read once per state of the scope and shared by the app's sessions.

The key is the scope and its `data_version()` (two small queries: how many facts, the latest change of a fact or a
summary, and the scope's version, which every write to its conversations, logs and MEMORY.md changes too), so a
change anywhere (another tab, an agent, the worker) is seen on the next run.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from memory_core.views.scoped import ScopedMemory


@st.cache_resource(max_entries=16, show_spinner=False)
def _facts(scope_key: str, storage: str, version: tuple, _view: ScopedMemory) -> list:
    return _view.facts.list(include_invalid=True)


@st.cache_resource(max_entries=16, show_spinner=False)
def _memory_data(scope_key: str, storage: str, version: tuple, _view: ScopedMemory) -> dict[str, Any]:
    return _view.memory_data()


def state(view: ScopedMemory) -> tuple[str, str, tuple]:
    """The cache key of the scope as it is now: its key, the storage, its `data_version()`."""
    from memory_core.dashboard.helpers import admin_handle

    return view.scope.key, admin_handle().storage_description(), view.data_version()


def all_facts(view: ScopedMemory) -> list:
    """Every fact of the scope, valid or not, by confidence (the list is shared: read it, never change it)."""
    return _facts(*state(view), view)


def memory_data(view: ScopedMemory) -> dict[str, Any]:
    """The scope's summaries and valid facts, as `ScopedMemory.memory_data()` (shared: never change it)."""
    return _memory_data(*state(view), view)
