"""Access (admins): who may read or change which scopes, the agents' API tokens, and the log of changes."""

import json
from datetime import datetime, time, timezone

import pandas as pd
import streamlit as st

from memory_core.policy.access import ROLES
from memory_core.dashboard.helpers import admin_handle, code_span, ensure_entrypoint, escape_markdown, header, who

ensure_entrypoint()
admin = admin_handle()  # grants and tokens span scopes
me = who()
access = admin.access
mine = access.admin_patterns(me)
header("Access", st.session_state.get("_view"))  # the scope picked in the sidebar, as on every other page
if not mine:  # the page is listed only for admins; a crafted URL gets nothing either
    st.error("This page is for admins.")
    st.stop()
st.caption("You administer: " + ", ".join(f"`{p}`" for p in mine))
if me.kind == "operator":  # nobody signs in yet: the grants below wait for sign-in to mean anything
    st.info("**Single-operator mode**: this dashboard runs without sign-in, and whoever opens it acts as the "
            "operator with full access. The grants you set here apply once sign-in is configured (an `[auth]` "
            "table in `.streamlit/secrets.toml`).", icon=":material/person:")
if flash := st.session_state.pop("access_flash", None):
    st.success(flash)  # composed by this page: what it names (e-mails, patterns, ids) is in code spans

tab_grants, tab_tokens, tab_log = st.tabs(["People", "API tokens", "Log"])
with tab_grants:
    st.caption("A grant gives a role to an e-mail address or a whole domain (`@acme.com`) on a scope pattern: "
               "`ana/*`, `*/coder`, `*/*`. Viewers read; editors also change memory; admins also manage access.")
    grants = [g for g in access.grants() if access.may_manage(me, g.scope)]
    st.dataframe(pd.DataFrame([{"id": g.id, "who": g.subject, "role": g.role, "scope": g.scope,
                                "granted": g.created_at, "by": g.created_by or ""} for g in grants],
                              columns=["id", "who", "role", "scope", "granted", "by"]), hide_index=True, width="stretch")
    if admin.settings.admins:
        st.caption("Bootstrap admins (Settings.admins): " + ", ".join(map(code_span, admin.settings.admins)))
    with st.form("grant", clear_on_submit=True):
        g1, g2, g3 = st.columns([3, 1, 2])
        subject = g1.text_input("E-mail or @domain", max_chars=320)
        role = g2.selectbox("Role", ROLES)
        pattern = g3.text_input("Scope pattern", value=mine[0], max_chars=130)
        if st.form_submit_button("Grant", type="primary"):
            try:
                with admin.acting_as(me.actor):
                    grant = access.grant_as(me, subject, role, pattern)
                # An e-mail is shown exactly as written (a code span: no link, no emphasis, no zero-width
                # space), so that what a person copies from the message is the address.
                st.session_state["access_flash"] = (f"Granted {grant.role} on {code_span(grant.scope)} "
                                                    f"to {code_span(grant.subject)}.")
                st.rerun()
            except (ValueError, PermissionError) as exc:
                st.error(escape_markdown(str(exc)))
    if grants:
        with st.form("revoke"):
            chosen = st.selectbox("Grant", [f"{g.id}: {g.subject} {g.role} on {g.scope}" for g in grants])
            if st.form_submit_button("Revoke"):
                try:
                    with admin.acting_as(me.actor):
                        access.revoke_as(me, chosen.split(":", 1)[0])
                    st.session_state["access_flash"] = f"Revoked {code_span(chosen.split(':', 1)[0])}."
                    st.rerun()
                except (KeyError, PermissionError) as exc:
                    st.error(escape_markdown(str(exc)))

with tab_tokens:
    st.caption("An API token lets one agent reach one scope over MCP (HTTP), with one role. Its secret is shown "
               "once; only a hash is kept.")
    if created := st.session_state.pop("_new_token", None):
        token_name, secret, snippet = created
        st.success(f"Token {code_span(token_name)} created. Copy its secret now: it is not shown again.")
        st.code(secret, language=None)
        st.caption("Ready `mcpServers` entry for an MCP client over HTTP:")
        st.code(json.dumps(snippet, indent=2), language="json")
    tokens = [t for t in access.tokens() if access.may_manage(me, t.scope.key)]
    now = datetime.now(timezone.utc)
    st.dataframe(pd.DataFrame([{"id": t.id, "name": t.name, "scope": t.scope.key, "role": t.role,
                                "created": t.created_at, "expires": t.expires_at, "last used": t.last_used_at,
                                "state": "revoked" if t.revoked else ("expired" if not t.active(now) else "active")}
                               for t in tokens],
                              columns=["id", "name", "scope", "role", "created", "expires", "last used", "state"]),
                 hide_index=True, width="stretch")
    with st.form("new_token", clear_on_submit=True):
        t1, t2, t3, t4, t5 = st.columns([2, 2, 2, 1, 2])
        name = t1.text_input("Name", max_chars=64, placeholder="ci-bot")
        in_view = st.session_state.get("_view")  # the sidebar's scope prefills the form
        user = t2.text_input("User", value=in_view.scope.user_id if in_view else "", max_chars=64,
                             help="Prefilled with the scope in view")
        agent = t3.text_input("Agent", value=in_view.scope.agent_name if in_view else "default", max_chars=64)
        role = t4.selectbox("Role", ROLES, index=1)
        expires = t5.date_input("Expires (optional)", value=None)
        url = st.text_input("Server URL for the snippet", value="http://127.0.0.1:8000/mcp", max_chars=300,
                            help="Where `memory-core mcp --transport http` listens (port 8000 unless `--port` "
                                 "says otherwise), as the agent reaches it")
        if st.form_submit_button("Create token", type="primary"):
            try:
                expires_at = datetime.combine(expires, time.max, tzinfo=timezone.utc) if expires else None
                with admin.acting_as(me.actor):
                    token, secret = access.create_token_as(me, name, user_id=user.strip(), agent_name=agent.strip(),
                                                           role=role, expires_at=expires_at)
                from memory_core.mcp import mcp_client_config

                st.session_state["_new_token"] = (token.name, secret, mcp_client_config(secret, url))
                st.rerun()
            except (ValueError, PermissionError) as exc:
                st.error(escape_markdown(str(exc)))
    active = [t for t in tokens if not t.revoked]
    if active:
        with st.form("revoke_token"):
            chosen = st.selectbox("Token", [f"{t.id}: {t.name} ({t.scope.key}, {t.role})" for t in active])
            if st.form_submit_button("Revoke token"):
                try:
                    with admin.acting_as(me.actor):
                        access.revoke_token_as(me, chosen.split(":", 1)[0])
                    st.session_state["access_flash"] = f"Revoked token {code_span(chosen.split(':', 1)[0])}."
                    st.rerun()
                except (KeyError, PermissionError) as exc:
                    st.error(escape_markdown(str(exc)))

with tab_log:
    if access.is_global_admin(me):
        st.dataframe(pd.DataFrame([{"when": e.at, "by": e.actor or "library", "action": e.action,
                                    "detail": json.dumps(e.detail, sort_keys=True)} for e in access.log(300)],
                                  columns=["when", "by", "action", "detail"]), hide_index=True, width="stretch")
    else:
        st.info("The access log is for admins of every scope (`*/*`).")
