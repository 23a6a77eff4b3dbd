"""Streamlit helpers shared by the pages (imported only by the app; memory_core never needs Streamlit).

Who is asking is decided here once per run (`principal()`): a signed-in person (Streamlit's own OIDC
sign-in, `[auth]` in secrets, whose provider says the e-mail is verified), the single local operator, an
anonymous visitor in a sandbox scope of their own (opened when they ask for one), or nobody. What they may
do is decided by the access policy. Pages hold the scoped view that `view()` gives them (they cannot name another
scope, and a write the role lacks is refused by the view) or, for what spans scopes (the worker, the nightly
dream, access, usage, bundles), the admin handle that `admin_handle()` gives them; never the Memory, which only this
module holds (`_memory()`, one per process).
"""

from __future__ import annotations

import logging
import os
import re
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

import streamlit as st

from memory_core.dashboard.focus import focus_title_after_page_change
from memory_core.policy.access import NOBODY, OPERATOR, Principal
from memory_core.memory import Memory
from memory_core.views.admin import Admin
from memory_core.text.redact import install_log_redaction
from memory_core.text.tokens import get_encoding
from memory_core.scope import Scope, make_scope
from memory_core.views.scoped import ScopedMemory
from memory_core.settings import Settings

log = logging.getLogger(__name__)

# st.secrets keys mapped onto Settings fields (a [memory_core] table may also set any field by name).
SECRET_FIELDS = {"OPENAI_API_KEY": "llm_api_key", "OPENAI_BASE_URL": "llm_base_url", "DATABASE_URL": "database_url",
                 "MEMORY_CORE_DATABASE_URL": "database_url", "MEMORY_CORE_HOME": "home", "LLM_MODEL": "llm_model"}
MAX_PASTE_CHARS = 500_000  # what a text area takes
MAX_INGEST_BYTES = 5 * 1024 * 1024  # a conversation file, checked before it is read
MAX_UPLOAD_DEPTH = 8  # folders deep in a folder upload
# One import (or import preview) at a time in this process: each may hold a whole export in memory, and a few
# at once could exhaust the app's; a second is told to try again rather than queued behind a long one.
_IMPORT_SLOT = threading.Lock()


def _secrets() -> dict:
    try:
        return {k: st.secrets[k] for k in st.secrets}
    except Exception:  # no secrets.toml: environment variables and defaults only
        return {}


def settings_from_secrets() -> Settings:
    overrides: dict[str, object] = {}
    secrets = _secrets()
    for key, field in SECRET_FIELDS.items():
        if key in secrets and secrets[key]:
            overrides[field] = str(secrets[key])
    table = secrets.get("memory_core")
    if isinstance(table, dict) or hasattr(table, "items"):
        overrides.update({k: v for k, v in dict(table).items()})
    return Settings.from_env(**overrides)


def auth_secrets() -> list[str]:
    """The secrets of the `[auth]` table (OIDC client secrets, the cookie secret), to keep out of logs."""
    table = _secrets().get("auth")
    found: list[str] = []

    def walk(value: object) -> None:
        if hasattr(value, "items"):
            for key, inner in dict(value).items():
                if isinstance(inner, str) and re.search(r"secret|key|password", str(key), re.I):
                    found.append(inner)
                else:
                    walk(inner)

    walk(table)
    return [s for s in found if len(s) >= 6]


@st.cache_resource(show_spinner=False)
def _memory() -> Memory:
    """One Memory (and so one worker thread) per app process; pages reach it only as a view or the admin handle."""
    memory = Memory(settings_from_secrets())
    redaction = install_log_redaction([*memory.settings.secrets(), *auth_secrets()])
    for handler in logging.getLogger("streamlit").handlers:  # Streamlit's own handler logs uncaught errors
        if redaction not in handler.filters:
            handler.addFilter(redaction)
    memory.start()
    # The default encoding takes about half a second to build: built now, beside the landing page, so that the
    # first Context Preview does not wait for it (once per process; a daemon thread that ends when done).
    threading.Thread(target=get_encoding, name="memory-core-encoding", daemon=True).start()
    return memory


def admin_handle() -> Admin:
    """The admin handle of the app's one Memory: what spans scopes, for the entrypoint and the pages."""
    return _memory().admin


def scope_view(who: Principal, scope: Scope) -> ScopedMemory:
    """A view of `scope` with the principal's role there; PermissionError if they may not even read it."""
    return _memory().view(who, user_id=scope.user_id, agent_name=scope.agent_name)


@st.cache_resource(show_spinner=False)
def app_icon():
    """The page icon, drawn here: a Material or emoji icon would make every browser fetch it from Google's
    font servers, and the app reaches no network but the LLM endpoint."""
    from PIL import Image, ImageDraw

    icon = Image.new("RGBA", (64, 64), (0, 0, 0, 0))
    draw = ImageDraw.Draw(icon)
    draw.ellipse((4, 4, 60, 60), fill=(94, 53, 177, 255))
    draw.ellipse((20, 20, 44, 44), fill=(255, 255, 255, 255))
    return icon


def sign_in_configured() -> bool:
    """Whether `[auth]` is set in Streamlit's secrets (then everyone signs in)."""
    return bool(_secrets().get("auth"))


def on_public_host() -> bool:
    """True on Streamlit Community Cloud (and hosts that say they are one)."""
    return bool(Path("/mount/src").exists() or os.environ.get("STREAMLIT_SHARING_MODE")
                or os.environ.get("HOSTNAME", "").startswith("streamlit"))


def on_ephemeral_disk(settings: Settings) -> bool:
    """True on hosts whose disk a reboot wipes (Streamlit Community Cloud) while data stays local."""
    return on_public_host() and settings.is_sqlite


def anonymous_mode(admin: Admin) -> str:
    return admin.access.anonymous_mode(public_host=on_public_host(), sign_in_configured=sign_in_configured())


def email_verified(settings: Settings) -> bool:
    """Whether the signed-in person's e-mail may count: their ID token says `email_verified` is true, or it
    says nothing of it and `trust_unverified_email` is set (providers that never send the claim). Anyone can
    sign up at many providers with someone else's address; only a verified one is that person's."""
    claim = st.user.get("email_verified")
    if claim is None:
        return settings.trust_unverified_email
    return claim is True or (isinstance(claim, str) and claim.strip().lower() == "true")


def principal(admin: Admin) -> Principal | None:
    """Who is asking, once per run. None shows nothing of memory, only `gate_pages()`: sign-in is configured
    and nobody has signed in (or with an e-mail not verified), or an anonymous visitor has no sandbox yet."""
    if sign_in_configured():
        if not st.user.is_logged_in or not email_verified(admin.settings):
            return None
        email = st.user.get("email")
        try:
            return Principal.person(str(email))
        except ValueError:
            return NOBODY  # an identity without an e-mail address can be granted nothing
    mode = anonymous_mode(admin)
    if mode == "full":
        return OPERATOR
    if mode == "none":
        return NOBODY
    return _sandbox(admin)


def _sandbox(admin: Admin) -> Principal | None:
    """The anonymous visitor's sandbox, or None until they open one (`sandbox_start_page`): a bare visit
    costs nothing. Its key rides in the page's URL (`?sandbox=`), so that a reload finds the same sandbox.
    Looked up on every run: a tab left open past the sandbox's expiry must not write into a removed scope
    (nothing would ever clean those rows up)."""
    key = st.session_state.get("_sandbox_key") or st.query_params.get("sandbox")
    sandbox = admin.access.sandbox_for(key)
    if sandbox is None:
        st.session_state.pop("_sandbox_key", None)
        return None
    st.session_state["_sandbox_key"] = key
    if st.query_params.get("sandbox") != key:  # page switches drop query parameters: put it back
        st.query_params["sandbox"] = key
    return sandbox


def gate_pages(deep_links: Iterable[str] = ()) -> list[st.Page]:
    """The one page shown while `principal()` is None, at the root and at every page's path (`deep_links`):
    a link to /facts then shows it too, instead of Streamlit's "page not found" dialog over it."""
    if not sign_in_configured():
        page, title, icon = sandbox_start_page, "Welcome", ":material/science:"
    elif st.user.is_logged_in:
        page, title, icon = unverified_email_page, "E-mail not verified", ":material/block:"
    else:
        page, title, icon = sign_in_page, "Sign in", ":material/login:"
    return [st.Page(page, title=title, icon=icon, default=True),
            *(st.Page(page, title=title, icon=icon, url_path=path) for path in deep_links)]


def sign_in_page() -> None:
    st.title("memory_core")
    st.write("This dashboard shows what agents remember. Sign in to continue.")
    st.button("Sign in", type="primary", on_click=st.login, key="sign_in")
    st.stop()


def unverified_email_page() -> None:
    st.title("Your e-mail address is not verified")
    email = st.user.get("email")
    st.error(f"Your sign-in provider does not confirm that **{escape_markdown(email or 'your address')}** is "
             "verified, so it cannot be used for access here. Verify the address with your provider, then sign "
             "in again; or ask an admin of this dashboard.")
    log.info("sign-in refused: the provider does not say the e-mail is verified")
    st.button("Sign out", on_click=st.logout, key="sign_out")
    st.stop()


def sandbox_start_page() -> None:
    """An anonymous visitor on a public host: a sandbox of their own is opened, and filled with the demo
    data, only when they ask (within the settings' caps)."""
    admin = admin_handle()
    settings = admin.settings
    st.title("memory_core")
    st.write("This public demo shows what agents remember. Open a private sandbox: a scope of your own that "
             f"nobody else sees, removed after {settings.sandbox_ttl_hours:g} hours.")
    if st.query_params.get("sandbox"):
        st.info("The sandbox of this link has expired (or was never opened here). Open a new one.")
    left, right = st.columns(2)
    demo = left.button("Open a sandbox with demo data", type="primary", key="sandbox_demo")
    empty = right.button("Open an empty sandbox", key="sandbox_empty")
    if demo or empty:
        from memory_core.policy.access import SandboxLimitError

        try:
            sandbox, key = admin.access.new_sandbox()
        except SandboxLimitError as exc:
            st.warning(str(exc))
            st.stop()
        if demo:
            from memory_core.dashboard.demo import load_demo

            with st.spinner("Preparing a private demo scope for you…"):
                load_demo(_memory().scoped(user_id=sandbox.sandbox.user_id, agent_name=sandbox.sandbox.agent_name,
                                        actor=sandbox.actor))
        st.session_state["_sandbox_key"] = key
        st.query_params["sandbox"] = key
        st.rerun()
    st.stop()


def readable_scopes(admin: Admin, who: Principal) -> list[Scope]:
    """The scopes the principal may read: those with memory, and those this session opened (a new, empty one)."""
    known = set(admin.scopes()) | set(st.session_state.get("_new_scopes", []))
    if who.kind == "sandbox" and who.sandbox:
        known = {who.sandbox}
    if who.kind == "operator":
        known.add(Scope("default", "default"))
    return admin.access.readable(who, sorted(known))


def scope_from_url(admin: Admin, who: Principal) -> None:
    """A scope named in the URL (`?scope=user/agent`) that this session has not seen there yet (a reload, a
    link from a teammate) becomes the one shown, if the person may read it; a scope with no memory yet is
    listed too (a new, empty scope survives a reload). Afterwards the picker rules, and writes the URL."""
    wanted = st.query_params.get("scope")
    if not wanted or wanted == st.session_state.get("_scope_url_seen") or who.kind == "sandbox":
        return
    st.session_state["_scope_url_seen"] = wanted
    user, _, agent = wanted.partition("/")
    try:
        scope = make_scope(user, agent or "default")
    except ValueError:
        st.warning("The address names a scope that is not well formed; showing another.")
        return
    if admin.access.readable(who, [scope]):
        if scope not in set(admin.scopes()):
            st.session_state.setdefault("_new_scopes", []).append(scope)
        st.session_state["_scope"] = scope.key
        st.session_state["_scope_switch"] = True
    else:
        st.warning("The address names a scope you may not read; showing another.")


def scope_picker(admin: Admin, who: Principal) -> Scope | None:
    """The sidebar's scope picker: only scopes the person may read, plus "new scope" where they may create one."""
    scope_from_url(admin, who)
    scopes = readable_scopes(admin, who)
    labels = [s.key for s in scopes]
    current = st.session_state.get("_scope")
    chosen = None
    if labels:
        # The widget keeps its own state (its `index` counts only on first draw), so the scope to show is put
        # into that state before it is drawn: a scope just opened is selected, and a value no longer on the
        # list (a grant revoked) falls back to the first.
        if current in labels and st.session_state.get("_scope_switch"):
            st.session_state["scope_select"] = current
        if st.session_state.get("scope_select") not in labels:  # a new session opens on default/default
            fallback = "default/default" if "default/default" in labels else labels[0]
            st.session_state["scope_select"] = current if current in labels else fallback
        st.session_state.pop("_scope_switch", None)
        label = st.selectbox("Scope", labels, key="scope_select", help="user/agent: whose memory you are looking at")
        chosen = scopes[labels.index(label)]
        st.session_state["_scope"] = chosen.key
        if who.kind != "sandbox":  # the scope rides in the URL: a reload, a new tab or a link opens the same one
            st.session_state["_scope_url_seen"] = chosen.key
            if st.query_params.get("scope") != chosen.key:
                st.query_params["scope"] = chosen.key
    else:
        st.info("You have access to no scope yet. Ask an admin for a grant.")
    if who.kind in ("operator", "person"):
        with st.expander("New scope"):
            user = st.text_input("User", key="new_scope_user")
            agent = st.text_input("Agent", value="default", key="new_scope_agent")
            if st.button("Open scope", key="new_scope_open"):
                try:
                    scope = make_scope(user.strip(), agent.strip())
                except ValueError as exc:
                    st.error(str(exc))
                else:
                    if admin.access.role(who, scope) in ("editor", "admin"):
                        st.session_state.setdefault("_new_scopes", []).append(scope)
                        st.session_state["_scope"] = scope.key
                        st.session_state["_scope_switch"] = True
                        st.rerun()
                    else:
                        st.error(f"You may not create {scope.key}: that needs the editor role there.")
    return chosen


def identity(who: Principal) -> None:
    if who.kind == "person":
        # Plain text, not Markdown: escape_markdown's zero-width spaces would make a copied address wrong.
        st.text(f"Signed in as {who.email or ''}")
        st.button("Sign out", on_click=st.logout, key="sign_out")
    elif who.kind == "operator":
        st.caption("Single-operator mode: no sign-in, running locally. Configure `[auth]` to share it with a team.")
    elif who.kind == "sandbox":
        st.caption("Sandbox: a private demo scope for this browser session. Nobody else sees it; it expires "
                   "after a day.")
    else:
        st.warning("Anonymous access is off here.")


def sidebar(admin: Admin, who: Principal) -> ScopedMemory | None:
    """Identity, the scope picker, the mode and the scope's queue; returns the view pages work through."""
    with st.sidebar:
        identity(who)
        chosen = scope_picker(admin, who)
        view = None
        if chosen is not None:
            view = scope_view(who, chosen)
            st.caption(f"Your role here: **{view.role}**")
        if admin.offline:
            st.info("Offline mode: no API key. Heuristic extraction, extractive summaries, deterministic dreams.",
                    icon=":material/cloud_off:")
        else:
            st.success(f"LLM: {escape_markdown(admin.settings.llm_model)}", icon=":material/cloud_done:")
        if who.kind == "operator" or admin.access.is_global_admin(who):
            st.caption(f"Storage: {escape_markdown(admin.storage_description())}")
        if on_ephemeral_disk(admin.settings):
            st.warning("Data is kept on this host's disk, which a reboot wipes. Set a PostgreSQL database URL in "
                       "the app's secrets to keep memory.")
        if view is not None:
            status_fragment(admin, view)
    st.session_state["_view"] = view
    return view


@st.fragment(run_every=5)
def status_fragment(admin: Admin, view: ScopedMemory) -> None:
    status = admin.status()
    items = view.queue.items()
    counts = {s: sum(1 for i in items if i.status == s) for s in ("pending", "in_flight", "failed")}
    st.caption(f"Worker {'running' if status.running else 'stopped'} · this scope's queue: {counts['pending']} "
               f"pending, {counts['in_flight']} in flight, {counts['failed']} failed")
    if status.next_dream:
        st.caption(f"Next dream: {status.next_dream:%Y-%m-%d %H:%M %Z}")
    if paused := status.budget_paused.get(view.scope.key):
        st.warning(f"Paused: {escape_markdown(paused)}")
    errors = [i.last_error for i in items if i.last_error]
    if errors:
        st.caption(f"Last error: {escape_markdown(errors[-1][:200])}")
    problems = [p for p in status.llm_problems if p.scope == view.scope.key]
    if problems:  # what the LLM last got wrong in this scope (a small local model, say)
        st.caption(f"Last LLM problem: {escape_markdown(problems[-1].detail[:200])}")


def view() -> ScopedMemory:
    """The view of the scope picked in the sidebar, for a page to draw; stops the page when there is none."""
    current = st.session_state.get("_view")
    if current is None:
        st.info("No scope to show.")
        st.stop()
    return current


def header(title: str, memory: ScopedMemory | None, caption: str | None = None) -> None:
    """A page's title and, under it, the scope it shows (every page, so nobody edits the wrong scope)."""
    st.title(title)
    focus_title_after_page_change(title)
    if memory is None:  # a page that is not about one scope (Access) with no scope picked
        return
    line = f":material/folder_shared: Scope **{escape_markdown(memory.scope.key)}** · {memory.role}"
    st.caption(line + (f" · {caption}" if caption else ""))


def who() -> Principal:
    return st.session_state.get("_principal") or NOBODY


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~:$=])")
_ZWSP = "\u200b"


def escape_markdown(text: str) -> str:
    """Text safe to put inside Markdown (captions, messages, labels): nothing in it can become a link, an
    image, an icon or a colour. Backslashes escape Markdown's own syntax; Streamlit also turns bare URLs,
    `www.` and e-mail addresses into links and `:name:` into icons on the text that is left, so an invisible
    zero-width space breaks those patterns (after every ":", before "@", inside "www.")."""
    text = _MARKDOWN_SPECIAL.sub(r"\\\1", str(text)).replace("\n", " ")
    text = text.replace(":", ":" + _ZWSP).replace("@", _ZWSP + "@")
    return re.sub(r"(?i)(www)(\\?\.)", lambda m: m.group(1) + _ZWSP + m.group(2), text)


def code_span(text: str) -> str:
    """Text as Markdown inline code: shown exactly as written, for what a person copies (an e-mail address, a
    scope pattern): no link, no emphasis and no zero-width space, unlike `escape_markdown`."""
    text = str(text).replace("\n", " ")
    ticks = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


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


@contextmanager
def import_slot() -> Iterator[bool]:
    """Yields True while this run holds the process's one import slot, False (at once) when another has it."""
    got = _IMPORT_SLOT.acquire(blocking=False)
    try:
        yield got
    finally:
        if got:
            _IMPORT_SLOT.release()


def upload_limit_mib(admin: Admin, who: Principal, default_mib: int) -> int:
    """How big an upload this visitor may send: anonymous sandbox visitors get `sandbox_max_upload_mb`."""
    if who.kind == "sandbox":
        return min(default_mib, admin.settings.sandbox_max_upload_mb)
    return default_mib


def safe_upload_parts(name: str) -> list[str]:
    """A browser-given name (a folder upload's is its path, "ws/memory/2026-01-15.md") as safe path parts:
    no empty, "." or ".." parts, odd characters replaced; a part of a name is kept, so MEMORY.md stays."""
    parts = [re.sub(r"[^A-Za-z0-9._-]", "_", p)[-100:] for p in re.split(r"[/\\]", name)]
    return [p for p in parts if p.strip(".")][-MAX_UPLOAD_DEPTH:] or ["upload"]


def save_uploads(uploads: list, folder: str) -> Path:
    """The upload (one file) or the uploaded folder's files, written under `folder`; the path to import."""
    root = Path(folder)
    if len(uploads) == 1 and len(safe_upload_parts(uploads[0].name)) == 1:
        path = root / safe_upload_parts(uploads[0].name)[0]
        _write_upload(uploads[0], path)
        return path
    for upload in uploads:
        target = root.joinpath("upload", *safe_upload_parts(upload.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        _write_upload(upload, target)
    return root / "upload"


def _write_upload(upload, path: Path) -> None:
    """The upload's bytes to `path` without another copy of them in memory (getvalue() would make one)."""
    with upload.getbuffer() as view:
        path.write_bytes(view)
