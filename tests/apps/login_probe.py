"""A throwaway app for tests/browser/test_browser_login.py: Streamlit's own OIDC sign-in (st.login) and nothing else.

It draws what the harness needs to see: whether `[auth]` is configured (asked two ways, neither raising),
the sign-in prompt, and once signed in the e-mail and every claim `st.user` holds (tokens left out).
"""

from __future__ import annotations

import json

import streamlit as st


def auth_configured() -> bool:
    """True when the secrets hold an `[auth]` table; False, not an exception, when there is no secrets file."""
    try:
        return "auth" in st.secrets
    except FileNotFoundError:  # StreamlitSecretNotFoundError: no secrets file at all
        return False


st.title("Login probe")
# Streamlit sets is_logged_in (False) only when [auth] is configured, so this asks the same without st.secrets.
st.caption(f"auth in secrets: {auth_configured()} · is_logged_in in st.user: {'is_logged_in' in st.user}")

if not st.user.get("is_logged_in", False):
    st.write("Please sign in")
    if st.button("Sign in"):
        st.login()
else:
    st.write(f"Signed in as {st.user.get('email')}")
    claims = {key: value for key, value in st.user.to_dict().items() if key != "tokens"}
    st.code(json.dumps(claims, sort_keys=True, default=str), language="json")
    if st.button("Sign out"):
        st.logout()
