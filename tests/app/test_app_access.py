"""The Access page through Streamlit's AppTest, against a real SQLite workspace, with sign-in configured.

AppTest seeds `st.user` from `at.user` and replaces `st.secrets` with `at.secrets`, so the dashboard's own
`principal()` sees a signed-in person exactly as it does behind `st.login` (tests/browser/test_browser_signin.py does
the same through a real OIDC provider and browser). The `[auth]` values here are placeholders: AppTest never
signs anyone in. `ana@acme.com` is a bootstrap admin (MEMORY_CORE_ADMINS).
"""

from __future__ import annotations

import json
import re
from datetime import date, timedelta
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from memory_core.dashboard import helpers as dashboard
from memory_core.dashboard.helpers import _memory

APP = str(Path(__file__).resolve().parents[2] / "streamlit_app.py")
ADMIN = "ana@acme.com"
AUTH = {"auth": {"redirect_uri": "http://127.0.0.1:8501/oauth2callback", "cookie_secret": "placeholder-cookie",
                 "client_id": "placeholder-client", "client_secret": "placeholder-secret",
                 "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration"}}
SNIPPET_URL = "http://127.0.0.1:9123/mcp"


@pytest.fixture
def app_env(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMORY_CORE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MEMORY_CORE_TIMEZONE", "UTC")
    monkeypatch.setenv("MEMORY_CORE_ADMINS", ADMIN)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "MEMORY_CORE_DATABASE_URL", "MEMORY_CORE_ANONYMOUS_ACCESS"):
        monkeypatch.delenv(name, raising=False)
    _memory.clear()
    yield tmp_path
    _memory().close()
    _memory.clear()


@pytest.fixture
def no_cold_start(app_env, monkeypatch):
    # As in tests/app/test_app.py: AppTest resets Streamlit's legacy pages/ flag before every run, so the cold-start
    # guard would rerun (and swallow a simulated click) each time. test_a_crafted_deep_link_* runs with it.
    monkeypatch.setattr(dashboard, "ensure_entrypoint", lambda: None)
    return app_env


def signed_in(email: str) -> AppTest:
    """The app, run once as `email` signed in (so its navigation is registered)."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.secrets = AUTH
    at.user = {"is_logged_in": True, "email": email, "email_verified": True}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def access_page(email: str = ADMIN) -> AppTest:
    at = signed_in(email)
    at.switch_page("pages/access.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert [t.value for t in at.title] == ["Access"]
    return at


def widget(collection, label: str, form: str | None = None):
    """The one widget with this label (in this form: grant, revoke, new_token, revoke_token)."""
    found = [w for w in collection if w.label == label and (form is None or w.form_id == form)]
    assert len(found) == 1, (label, [w.label for w in collection])
    return found[0]


def submit(at: AppTest, label: str) -> AppTest:
    widget(at.button, label).click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def plain(markdown: str) -> str:
    """Text as it reads on the page: without escape_markdown's backslashes and zero-width spaces."""
    return re.sub(r"\\(.)", r"\1", markdown).replace("\u200b", "")


def messages(elements) -> list[str]:
    return [plain(e.value) for e in elements]


def table(at: AppTest, column: str):
    """The one data frame of the page that has `column`."""
    frames = [d.value for d in at.dataframe if column in d.value.columns]
    assert len(frames) == 1
    return frames[0]


def everything_shown(at: AppTest) -> str:
    """Every element of the page and the sidebar, as Streamlit sends it (text, code, labels, values)."""
    return "\n".join(str(getattr(node, "proto", "")) for block in (at.main, at.sidebar) for node in block)


def grant_form(at: AppTest, subject: str, role: str, pattern: str) -> AppTest:
    widget(at.text_input, "E-mail or @domain", "grant").input(subject)
    widget(at.selectbox, "Role", "grant").select(role)
    widget(at.text_input, "Scope pattern", "grant").input(pattern)
    return submit(at, "Grant")


def test_admin_grants_and_revokes(no_cold_start):
    at = access_page()
    assert "You administer: `*/*`" in [c.value for c in at.caption]
    grant_form(at, "Vic@Acme.com", "editor", "ana/*")
    access = _memory().access
    [grant] = access.grants()
    assert (grant.subject, grant.role, grant.scope, grant.created_by) == ("vic@acme.com", "editor", "ana/*",
                                                                            f"dashboard:{ADMIN}")
    assert "Granted editor on `ana/*` to `vic@acme.com`." in messages(at.success)
    assert table(at, "who")[["id", "who", "role", "scope"]].values.tolist() == [[grant.id, "vic@acme.com",
                                                                                  "editor", "ana/*"]]
    assert access.role_for("vic@acme.com", user_id="ana", agent_name="bot") == "editor"

    grant_form(at, "not an address", "viewer", "ana/*")  # refused, with the reason, and nothing stored
    assert messages(at.error) == ["subject must be an e-mail address (ana@acme.com) or a domain (@acme.com); "
                                  "got 'not an address'"]
    assert [g.id for g in access.grants()] == [grant.id]

    grant_form(at, "@acme.com", "viewer", "*/*")
    assert {g.subject for g in access.grants()} == {"vic@acme.com", "@acme.com"}
    [flash] = at.success  # Markdown: "*/*" outside a code span would read as an emphasised "/"
    assert flash.value == "Granted viewer on `*/*` to `@acme.com`."
    revoke = widget(at.selectbox, "Grant")
    revoke.select(next(o for o in revoke.options if o.startswith(grant.id)))
    submit(at, "Revoke")
    assert [(g.subject, g.scope) for g in access.grants()] == [("@acme.com", "*/*")]  # only the chosen one
    assert messages(at.success) == [f"Revoked `{grant.id}`."]
    assert grant.id not in table(at, "who")["id"].tolist()
    assert access.role_for("vic@acme.com", user_id="ana", agent_name="bot") == "viewer"  # the domain's grant
    log = [(e.action, e.actor, e.detail.get("grant")) for e in access.log()]
    assert (("revoke", f"dashboard:{ADMIN}", grant.id) in log and ("grant", f"dashboard:{ADMIN}", grant.id) in log)


def test_an_email_in_a_success_message_reads_and_copies_as_typed(no_cold_start):
    # Before: escape_markdown wrote "boss\u200b@acme.com" (and "first\\_last"): copied, it was not the address.
    at = access_page()
    for subject, pattern in [("boss@acme.com", "ana/*"), ("first_last+ops@acme.co.uk", "*/coder"),
                             ("x*y@acme.com", "*/*")]:
        grant_form(at, subject, "viewer", pattern)
        [flash] = at.success
        assert flash.value == f"Granted viewer on `{pattern}` to `{subject}`.", flash.value
        assert "\u200b" not in flash.value and "\\" not in flash.value  # no zero-width space, no escapes
    assert {g.subject for g in _memory().access.grants()} == {"boss@acme.com", "first_last+ops@acme.co.uk",
                                                                 "x*y@acme.com"}


def test_a_token_secret_is_shown_once_with_a_ready_snippet_then_revoked(no_cold_start):
    at = access_page()
    widget(at.text_input, "Name").input("ci-bot")
    widget(at.text_input, "User").input("ana")
    widget(at.text_input, "Agent").input("bot")
    widget(at.text_input, "Server URL for the snippet").input(SNIPPET_URL)
    submit(at, "Create token")

    assert any("Copy its secret now" in s.value for s in at.success)
    secret = at.code[0].value
    access = _memory().access
    token = access.verify_token(secret)
    assert token is not None and (token.name, token.scope.key, token.role) == ("ci-bot", "ana/bot", "editor")
    snippet = json.loads(at.code[1].value)
    [server] = snippet["mcpServers"].values()
    assert server["url"] == SNIPPET_URL and server["headers"] == {"Authorization": f"Bearer {secret}"}
    rows = table(at, "state")
    assert rows[["id", "name", "scope", "role", "state"]].values.tolist() == [[token.id, "ci-bot", "ana/bot",
                                                                                "editor", "active"]]

    at.run()  # the next run: the secret is gone from the page, the token stays listed
    assert secret not in everything_shown(at) and not at.code
    assert table(at, "state")["state"].tolist() == ["active"]

    revoke = widget(at.selectbox, "Token")
    assert revoke.options == [f"{token.id}: ci-bot (ana/bot, editor)"]
    submit(at, "Revoke token")
    assert table(at, "state")[["id", "state"]].values.tolist() == [[token.id, "revoked"]]
    assert access.verify_token(secret) is None
    assert not [b for b in at.button if b.label == "Revoke token"]  # nothing active is left to revoke
    assert secret not in everything_shown(at)


def test_a_token_that_expired_is_listed_as_expired(no_cold_start):
    at = access_page()
    widget(at.text_input, "Name").input("old-bot")
    widget(at.text_input, "User").input("bob")
    at.date_input[0].set_value(date.today() - timedelta(days=2))
    submit(at, "Create token")
    secret = at.code[0].value
    assert _memory().access.verify_token(secret) is None
    assert table(at, "state")[["name", "scope", "state"]].values.tolist() == [["old-bot", "bob/default", "expired"]]


def test_a_person_who_is_not_admin_gets_no_access_page(no_cold_start):
    _memory().access.grant("vic@acme.com", "editor", "ana/*")
    at = signed_in("vic@acme.com")
    assert "Signed in as" in " ".join(t.value for t in at.sidebar.text)
    with pytest.raises(ValueError, match="Could not find a navigation page"):  # not in the navigation
        at.switch_page("pages/access.py")
    admin = signed_in(ADMIN)
    admin.switch_page("pages/access.py")  # while an admin's navigation does list it


def test_an_admin_who_loses_the_role_gets_nothing_from_the_page(no_cold_start):
    access = _memory().access
    scoped = access.grant("carol@acme.com", "admin", "ana/*")
    at = access_page("carol@acme.com")
    assert "You administer: `ana/*`" in [c.value for c in at.caption]
    grant_form(at, "dan@acme.com", "viewer", "bob/*")  # outside what carol administers: refused
    assert messages(at.error) == ["managing access to bob/* needs the admin role there"]
    assert [g.subject for g in access.grants()] == ["carol@acme.com"]

    access.revoke(scoped.id)  # carol is no admin any more; her page runs again
    at.run()
    assert not at.exception
    assert [t.value for t in at.title] == ["Access"] and [e.value for e in at.error] == ["This page is for admins."]
    assert len(list(at.main)) == 3  # the main block, the title, the error: nothing else
    assert not at.text_input and not at.button and not at.dataframe and not at.tabs


def test_a_crafted_deep_link_to_the_access_page_goes_through_the_entrypoint(app_env):
    """With the real cold-start guard: a non-admin asking for pages/access.py by name before any run (as a fresh
    server's legacy pages/ mode would serve it) is routed through streamlit_app.py, which does not list it."""
    _memory().access.grant("vic@acme.com", "viewer", "ana/*")
    _memory().facts.add("Ana keeps bees", "context", 0.9, user_id="ana", agent_name="bot")
    at = AppTest.from_file(APP, default_timeout=60)
    at.secrets = AUTH
    at.user = {"is_logged_in": True, "email": "vic@acme.com", "email_verified": True}
    at.switch_page("pages/access.py")
    at.run()
    assert not at.exception
    assert "Access" not in [t.value for t in at.title] and not any("admins" in e.value for e in at.error)
    shown = everything_shown(at)
    assert "E-mail or @domain" not in shown and "API tokens" not in shown and "Create token" not in shown
    assert "Signed in as" in " ".join(t.value for t in at.sidebar.text)


def dream_page(email: str) -> AppTest:
    at = signed_in(email)
    at.switch_page("pages/dream.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_nightly_dream_switch_is_a_global_admins_and_disabled_for_others(no_cold_start):
    memory = _memory()
    memory.facts.add("Ana keeps bees", "context", 0.9, user_id="ana", agent_name="bot")
    memory.access.grant("ed@acme.com", "admin", "ana/*")  # admin of some scopes: not of all
    memory.access.grant("vera@acme.com", "viewer", "ana/*")
    at = dream_page("ed@acme.com")
    switch = at.toggle(key="dream_sched")
    assert switch.disabled and switch.value is True
    assert any("only an admin of all scopes" in c.value for c in at.caption)
    assert not dream_page("vera@acme.com").get("toggle")  # a viewer gets no writing widget at all
    assert memory.worker.dream_enabled

    at = dream_page(ADMIN)
    assert not at.toggle(key="dream_sched").disabled
    at.toggle(key="dream_sched").set_value(False).run()
    assert not at.exception and not memory.worker.dream_enabled
    assert any("Scheduled dreams are off" in c.value for c in at.caption)
    switch = [e for e in memory.access.log() if e.action == "worker_switch"]
    assert len(switch) == 1 and switch[0].actor == f"dashboard:{ADMIN}"
