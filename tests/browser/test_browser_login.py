"""The sign-in harness for real: st.login against oidc-provider-mock, in Debian's chromium.

tests/apps/login_probe.py is the app; tests/oidc_support.py holds the harness (and what was found about it).
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest

from tests.oidc_support import (  # noqa: F401  (chromium and oidc_provider are fixtures)
    QUIET_PROVIDER_WARNINGS,
    browser_page,
    chromium,
    free_port,
    oidc_provider,
    redirect_uri_for,
    register_client,
    set_user_claims,
    sign_in,
    sign_out,
    start_streamlit,
    write_auth_secrets,
)

pytestmark = [pytest.mark.browser, QUIET_PROVIDER_WARNINGS]
PROBE = Path(__file__).resolve().parents[1] / "apps" / "login_probe.py"
TIMEOUT = 30_000


@pytest.fixture(scope="module")
def probe(oidc_provider, tmp_path_factory):
    """The probe app on the port the provider's client is registered for, with its own secrets file."""
    folder = tmp_path_factory.mktemp("login_probe")
    cookie_secret = secrets.token_urlsafe(32)
    secrets_file = write_auth_secrets(folder, issuer=oidc_provider.issuer, client_id=oidc_provider.client_id,
                                      client_secret=oidc_provider.client_secret, app_port=oidc_provider.app_port,
                                      cookie_secret=cookie_secret)
    with start_streamlit(PROBE, port=oidc_provider.app_port, cwd=folder, log_path=folder / "streamlit.log",
                         secrets_file=secrets_file) as app:
        yield app, (oidc_provider.client_secret, cookie_secret)


def claims_on(page) -> dict:
    """The claims the probe shows from st.user once signed in."""
    return json.loads(page.get_by_test_id("stCode").inner_text(timeout=TIMEOUT))


def assert_no_secret(text: str, hidden: tuple[str, ...]) -> None:
    leaked = [i for i, secret in enumerate(hidden) if secret in text]
    assert not leaked, f"secret number(s) {leaked} appear"  # never print the secret itself


def test_sign_in_shows_the_email_and_the_claims(probe, oidc_provider, chromium):
    app, hidden = probe
    with browser_page(chromium) as page:
        page.goto(app.url)
        page.get_by_text("Please sign in").wait_for(timeout=TIMEOUT)
        page.get_by_text("auth in secrets: True · is_logged_in in st.user: True").wait_for()
        sign_in(page, app.url, "ana@acme.com")
        page.get_by_text("Signed in as ana@acme.com").wait_for(timeout=TIMEOUT)
        claims = claims_on(page)
        assert claims["is_logged_in"] is True and claims["provider"] == "default"
        assert claims["email"] == claims["sub"] == "ana@acme.com"
        assert claims["iss"] == oidc_provider.issuer and oidc_provider.client_id in claims["aud"]
        assert "name" not in claims and "email_verified" not in claims  # the mock sends only what it was given
        assert page.get_by_text("Please sign in").count() == 0
        assert_no_secret(page.content(), hidden)
        assert_no_secret(json.dumps(page.context.cookies()), hidden)

        page.reload()  # a new session reads the identity cookie again
        page.get_by_text("Signed in as ana@acme.com").wait_for(timeout=TIMEOUT)


def test_two_browser_contexts_have_their_own_identities(probe, oidc_provider, chromium):
    app, _hidden = probe
    set_user_claims(oidc_provider.issuer, "bob@other.org",
                    {"email": "bob@other.org", "email_verified": True, "name": "Bob Builder"})
    with browser_page(chromium) as ana, browser_page(chromium) as bob:
        sign_in(ana, app.url, "ana@acme.com")
        ana.get_by_text("Signed in as ana@acme.com").wait_for(timeout=TIMEOUT)
        sign_in(bob, app.url, "bob@other.org")
        bob.get_by_text("Signed in as bob@other.org").wait_for(timeout=TIMEOUT)
        claims = claims_on(bob)
        assert (claims["email"], claims["name"], claims["email_verified"]) == ("bob@other.org", "Bob Builder", True)

        ana.reload()  # bob's sign-in changed nothing for ana
        ana.get_by_text("Signed in as ana@acme.com").wait_for(timeout=TIMEOUT)
        assert ana.get_by_text("bob@other.org").count() == 0
        assert bob.get_by_text("ana@acme.com").count() == 0


def test_sign_out_returns_to_the_prompt_and_forgets_the_user(probe, chromium):
    app, hidden = probe
    with browser_page(chromium) as page:
        sign_in(page, app.url, "ana@acme.com")
        page.get_by_text("Signed in as ana@acme.com").wait_for(timeout=TIMEOUT)
        sign_out(page)
        page.get_by_text("Please sign in").wait_for(timeout=TIMEOUT)
        assert page.get_by_role("button", name="Sign out").count() == 0
        assert not {"_streamlit_user", "_streamlit_user_tokens"} & {c["name"] for c in page.context.cookies()}
        assert_no_secret(page.content(), hidden)

        page.reload()  # the cookie is gone, not just this session's copy of the user
        page.get_by_text("Please sign in").wait_for(timeout=TIMEOUT)
        assert page.get_by_text("Signed in as").count() == 0


def test_secrets_never_reach_the_server_log(probe, chromium):
    app, hidden = probe
    with browser_page(chromium) as page:  # a whole round here, so the log is not empty whatever ran before
        sign_in(page, app.url, "ana@acme.com")
        page.get_by_text("Signed in as ana@acme.com").wait_for(timeout=TIMEOUT)
        sign_out(page)
        page.get_by_text("Please sign in").wait_for(timeout=TIMEOUT)
    log = app.log_text()
    assert "Running script" in log  # it is the debug-level log of this server, not an empty file
    assert_no_secret(log, hidden)


def test_a_wrong_client_secret_is_refused_and_stays_out_of_the_log(oidc_provider, chromium, tmp_path):
    """The provider checks the secret, so a harness that passes proves the configured secret is the right one."""
    port = free_port()
    client_id, _secret = register_client(oidc_provider.issuer, [redirect_uri_for(port)])
    wrong = secrets.token_urlsafe(16)
    secrets_file = write_auth_secrets(tmp_path, issuer=oidc_provider.issuer, client_id=client_id,
                                      client_secret=wrong, app_port=port, cookie_secret=secrets.token_urlsafe(32))
    with start_streamlit(PROBE, port=port, cwd=tmp_path, log_path=tmp_path / "streamlit.log",
                         secrets_file=secrets_file) as app, \
            browser_page(chromium) as page:
        sign_in(page, app.url, "ana@acme.com")
        page.get_by_text("Please sign in").wait_for(timeout=TIMEOUT)
        assert page.get_by_text("Signed in as").count() == 0
        log = app.log_text()
    assert "OAuth token exchange failed" in log and "invalid_client" in log
    assert_no_secret(log, (wrong,))


def test_without_auth_the_app_can_tell_and_nothing_raises(oidc_provider, chromium, tmp_path):
    # An [auth] table in cwd/.streamlit that must NOT be read: --secrets.files replaces the whole search.
    write_auth_secrets(tmp_path, issuer=oidc_provider.issuer, client_id=oidc_provider.client_id,
                       client_secret=oidc_provider.client_secret, app_port=oidc_provider.app_port,
                       cookie_secret=secrets.token_urlsafe(32))
    port = free_port()
    with start_streamlit(PROBE, port=port, cwd=tmp_path, log_path=tmp_path / "streamlit.log",
                         secrets_file=tmp_path / "none" / "secrets.toml") as app, \
            browser_page(chromium) as page:
        page.goto(app.url)
        page.get_by_text("auth in secrets: False · is_logged_in in st.user: False").wait_for(timeout=TIMEOUT)
        page.get_by_text("Please sign in").wait_for()
        assert page.get_by_test_id("stException").count() == 0
