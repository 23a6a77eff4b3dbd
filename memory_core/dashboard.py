"""Streamlit helpers shared by the pages (imported only by the app; memory_core never needs Streamlit)."""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from .memory import Memory
from .scope import validate_name
from .settings import Settings

# st.secrets keys mapped onto Settings fields (a [memory_core] table may also set any field by name).
SECRET_FIELDS = {"OPENAI_API_KEY": "llm_api_key", "OPENAI_BASE_URL": "llm_base_url", "DATABASE_URL": "database_url",
                 "MEMORY_CORE_DATABASE_URL": "database_url", "MEMORY_CORE_HOME": "home", "LLM_MODEL": "llm_model"}


def settings_from_secrets() -> Settings:
    overrides: dict[str, object] = {}
    try:
        secrets = {k: st.secrets[k] for k in st.secrets}
    except Exception:  # no secrets.toml: environment variables and defaults only
        secrets = {}
    for key, field in SECRET_FIELDS.items():
        if key in secrets and secrets[key]:
            overrides[field] = str(secrets[key])
    table = secrets.get("memory_core")
    if isinstance(table, dict) or hasattr(table, "items"):
        overrides.update({k: v for k, v in dict(table).items()})
    return Settings.from_env(**overrides)


@st.cache_resource(show_spinner=False)
def get_memory() -> Memory:
    """One Memory (and so one worker thread) per app process."""
    memory = Memory(settings_from_secrets())
    memory.start()
    return memory


def on_ephemeral_disk(settings: Settings) -> bool:
    """True on hosts whose disk a reboot wipes (Streamlit Community Cloud) while data stays local."""
    cloud = Path("/mount/src").exists() or os.environ.get("STREAMLIT_SHARING_MODE") or \
        os.environ.get("HOSTNAME", "").startswith("streamlit")
    return bool(cloud) and settings.is_sqlite


def scope() -> dict[str, str]:
    """The scope picked in the sidebar, as keyword arguments."""
    return {"user_id": st.session_state.get("scope_user", "default"),
            "agent_name": st.session_state.get("scope_agent", "default")}


def sidebar(memory: Memory) -> None:
    with st.sidebar:
        st.subheader("Scope")
        user = st.text_input("User", value=st.session_state.get("scope_user", "default"), key="_scope_user_input")
        agent = st.text_input("Agent", value=st.session_state.get("scope_agent", "default"), key="_scope_agent_input")
        try:
            st.session_state["scope_user"] = validate_name(user, "user_id")
            st.session_state["scope_agent"] = validate_name(agent, "agent_name")
        except ValueError as exc:
            st.error(str(exc))
        known = [f"{s.user_id}/{s.agent_name}" for s in memory.scopes()]
        if known:
            st.caption("Scopes with data: " + ", ".join(known[:12]))
        if memory.offline:
            st.info("Offline mode: no API key. Heuristic extraction, extractive summaries, deterministic dreams.",
                    icon=":material/cloud_off:")
        else:
            st.success(f"LLM: {memory.settings.llm_model}", icon=":material/cloud_done:")
        st.caption(f"Storage: {memory.storage_description()}")
        if on_ephemeral_disk(memory.settings):
            st.warning("Data is kept on this host's disk, which a reboot wipes. Set a PostgreSQL database URL in "
                       "the app's secrets to keep memory.")
        status_fragment(memory)


@st.fragment(run_every=5)
def status_fragment(memory: Memory) -> None:
    status = memory.status()
    st.caption(f"Worker {'running' if status.running else 'stopped'} · queue: {status.pending} pending, "
               f"{status.in_flight} in flight, {status.failed} failed · {status.processed} processed")
    if status.next_dream:
        st.caption(f"Next dream: {status.next_dream:%Y-%m-%d %H:%M %Z}")
    if status.last_error:
        st.caption(f"Last error: {status.last_error[:200]}")


def ensure_entrypoint() -> None:
    """Make a deep link on a freshly started server go through streamlit_app.py.

    Until the entrypoint has called st.navigation once in the process, Streamlit treats `pages/` as a
    legacy multipage folder and runs a requested page (say /facts) on its own, without the entrypoint's
    navigation and sidebar. Each page calls this first: it switches Streamlit to st.navigation and reruns,
    which lands on the same page through the entrypoint.
    """
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # pragma: no cover - a Streamlit without the legacy mode
        return
    if getattr(PagesManager, "uses_pages_directory", False):
        PagesManager.uses_pages_directory = False
        st.rerun()
