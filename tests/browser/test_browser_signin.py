"""Sign-in and roles in the real dashboard (issue 12): `streamlit run streamlit_app.py` with `[auth]` against a
local OIDC provider, a real SQLite workspace with memory in two scopes, Debian's chromium.

One app server for the module; each identity signs in in a browser context of its own (tests/oidc_support.py).
Grants are set up in the test process through `memory.access` on the same SQLite file; the admin is a bootstrap
admin from the secrets' `[memory_core] admins`. Every page a test visits is checked for the two `[auth]` secrets.
"""

from __future__ import annotations

import os
import re
import secrets
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from memory_core import Memory, Settings
from memory_core.search.embedders import HashingEmbedder
from tests.oidc_support import (  # noqa: F401  (chromium and oidc_provider are fixtures)
    QUIET_PROVIDER_WARNINGS,
    browser_page,
    choose,
    chromium,
    oidc_provider,
    open_options,
    set_user_claims,
    sign_in,
    sign_out,
    start_streamlit,
    wait_for_app,
    write_auth_secrets,
)

pytestmark = [pytest.mark.browser, QUIET_PROVIDER_WARNINGS]
ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 30_000
ANA_FACT = "Ana keeps three beehives on the roof of the Lisbon office"
BOB_FACT = "Bob writes his hobby compilers in OCaml on Sundays"
ADMIN, VIEWER, EDITOR = "ada@acme.com", "vic@acme.com", "eddie@acme.com"
GRANTEE, STRANGER = "gus@acme.com", "nora@other.org"
PAGE_LINKS = ("Ingest", "Facts", "Daily", "Dream", "Context Preview", "Search", "Access")
# Buttons that change memory, by page (pages/ingest.py, facts.py, dream.py): a viewer must get none of them.
WRITE_BUTTONS = {"ingest": ("Ingest", "Load demo data", "Retry failed updates"),
                 "facts": ("Add", "Correct…", "Forget…", "Erase…", "Merge, keep left", "Merge, keep right"),
                 "dream": ("Run Deep Dream",)}


@dataclass(frozen=True)
class App:
    url: str
    home: Path
    hidden: tuple[str, str]  # the OIDC client secret and the cookie secret
    server: object

    def memory(self) -> Memory:
        return Memory(Settings(home=self.home, timezone="UTC"), embedder=HashingEmbedder())


@pytest.fixture(scope="module")
def app(oidc_provider, tmp_path_factory):
    folder = tmp_path_factory.mktemp("signin")
    home = folder / "home"
    with Memory(Settings(home=home, timezone="UTC"), embedder=HashingEmbedder()) as m:
        m.facts.add(ANA_FACT, "context", 0.9, user_id="ana", agent_name="bot")
        m.facts.add(BOB_FACT, "knowledge", 0.9, user_id="bob", agent_name="coder")
        m.access.grant(VIEWER, "viewer", "ana/*")
        m.access.grant(EDITOR, "editor", "ana/*")
    for email in (ADMIN, VIEWER, EDITOR, GRANTEE, STRANGER):  # their provider vouches for their addresses
        set_user_claims(oidc_provider.issuer, email, {"email": email, "email_verified": True})
    cookie_secret = secrets.token_urlsafe(32)
    secrets_file = write_auth_secrets(folder, issuer=oidc_provider.issuer, client_id=oidc_provider.client_id,
                                      client_secret=oidc_provider.client_secret, app_port=oidc_provider.app_port,
                                      cookie_secret=cookie_secret, tables={"memory_core": {"admins": [ADMIN]}})
    env = {**os.environ, "MEMORY_CORE_HOME": str(home), "MEMORY_CORE_TIMEZONE": "UTC"}
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "MEMORY_CORE_ADMINS", "MEMORY_CORE_DATABASE_URL",
                 "MEMORY_CORE_ANONYMOUS_ACCESS"):
        env.pop(name, None)
    # cwd is the repository, so its .streamlit/config.toml applies; --secrets.files keeps its secrets out.
    with start_streamlit(ROOT / "streamlit_app.py", port=oidc_provider.app_port, cwd=ROOT,
                         log_path=folder / "streamlit.log", secrets_file=secrets_file, env=env) as server:
        yield App(server.url, home, (oidc_provider.client_secret, cookie_secret), server)


def assert_no_secret(text: str, hidden: tuple[str, ...]) -> None:
    leaked = [i for i, secret in enumerate(hidden) if secret in text]
    assert not leaked, f"secret number(s) {leaked} appear"  # never print the secret itself


# All the text a page shows: its visible text and the cells of its data grids (drawn on a canvas; their
# accessibility table holds the cells in view, and the content column is in view at this width).
PAGE_TEXT = """() => [document.body.innerText,
  ...[...document.querySelectorAll('[data-testid=stDataFrame] [role=gridcell]')].map(c => c.textContent),
  ...[...document.querySelectorAll('input, textarea')].map(i => i.value)].join('\\n')"""


def page_text(page) -> str:
    return page.evaluate(PAGE_TEXT).replace("\u200b", "")  # escape_markdown's zero-width spaces


def settle(page, app: App) -> str:
    """Wait until the page is drawn (the app's run over); check its HTML for the secrets; return its text."""
    wait_for_app(page, TIMEOUT)
    assert page.locator("[data-testid=stException]").count() == 0
    assert_no_secret(page.content(), app.hidden)
    return page_text(page)


def open_page(page, app: App, path: str, heading: str) -> str:
    page.goto(f"{app.url}/{path}")
    page.get_by_role("heading", name=heading).first.wait_for(timeout=TIMEOUT)
    return settle(page, app)


@contextmanager
def signed_in(chromium, app: App, email: str):  # noqa: F811
    """A browser context signed in as `email`, on the app's root."""
    with browser_page(chromium, viewport={"width": 1400, "height": 1000}) as page:
        sign_in(page, app.url, email)
        sidebar = page.locator("[data-testid=stSidebar]")
        sidebar.get_by_text("Signed in as").wait_for(timeout=TIMEOUT)
        assert f"Signed in as {email}" in sidebar.inner_text()  # as typed: nothing invisible inside the address
        yield page


def scope_options(page) -> list[str]:
    """Every scope the sidebar's picker offers; [] when there is no picker."""
    sidebar = page.locator("[data-testid=stSidebar]")
    picker = sidebar.locator("[data-testid=stSelectbox]")
    picker.or_(sidebar.get_by_text("You have access to no scope yet")).first.wait_for(timeout=TIMEOUT)
    wait_for_app(page, TIMEOUT)  # what the sidebar says once the app's run is over
    if picker.count() == 0:
        return []
    return open_options(page, picker.first, page.get_by_role("option"))


def nav_links(page) -> set[str]:
    sidebar = page.locator("[data-testid=stSidebar]")
    return {name for name in PAGE_LINKS if sidebar.get_by_role("link", name=name, exact=True).count()}


def facts_in(app: App, user: str, agent: str) -> list[str]:
    with app.memory() as m:
        return [f.content for f in m.facts.list(user_id=user, agent_name=agent)]


def test_before_sign_in_nothing_of_memory_is_shown(app, chromium):  # noqa: F811
    with browser_page(chromium) as page:
        for path in ("", "facts", "access"):  # deep links too: they all land on the sign-in page
            page.goto(f"{app.url}/{path}")
            page.get_by_role("button", name="Sign in", exact=True).wait_for(timeout=TIMEOUT)
            text = settle(page, app)
            assert "Sign in to continue" in text
            assert ANA_FACT not in text and BOB_FACT not in text and "ana/bot" not in text
            assert page.locator("[data-testid=stSelectbox]").count() == 0  # no scope picker
            assert page.get_by_text("Scope", exact=True).count() == 0
            assert nav_links(page) == set()
            assert page.get_by_role("heading", name=re.compile("Facts|Access|Ingest")).count() == 0


def test_viewer_reads_ana_but_changes_nothing_and_never_sees_bob(app, chromium):  # noqa: F811
    with signed_in(chromium, app, VIEWER) as page:
        assert scope_options(page) == ["ana/bot"]
        assert "Access" not in nav_links(page) and "Facts" in nav_links(page)
        open_page(page, app, "facts", "Facts")
        page.get_by_text(re.compile(r"1 of 1 facts in ana/bot · read-only \(viewer\)")).wait_for(timeout=TIMEOUT)
        page.wait_for_function("t => document.body.innerText.includes('read-only') && "
                               "[...document.querySelectorAll('[role=gridcell]')].some(c => c.textContent.includes(t))",
                               arg=ANA_FACT, timeout=TIMEOUT)
        text = page_text(page)
        assert ANA_FACT in text and BOB_FACT not in text and "bob/coder" not in text
        assert page.get_by_text("Add a fact").count() == 0 and page.get_by_text("Correct a fact").count() == 0
        assert page.locator(".gdg-input").count() == 0  # a read-only grid, not the editor
        for path, heading in (("ingest", "Ingest"), ("facts", "Facts"), ("dream", "Deep Dream")):
            open_page(page, app, path, heading)
            for name in WRITE_BUTTONS[path]:
                assert page.get_by_role("button", name=name, exact=True).count() == 0, (path, name)
        assert "Your role in ana/bot is viewer" in open_page(page, app, "ingest", "Ingest")
        assert page.get_by_label("Conversation").count() == 0
        open_page(page, app, "dream", "Deep Dream")
        assert page.get_by_text("Nightly dream").count() == 0  # the worker's switch is for global admins

        sign_out(page)  # (f) sign-out: the sign-in page again, and a reload stays there
        page.get_by_role("button", name="Sign in", exact=True).wait_for(timeout=TIMEOUT)
        page.reload()
        page.get_by_role("button", name="Sign in", exact=True).wait_for(timeout=TIMEOUT)
        text = settle(page, app)
        assert ANA_FACT not in text and "Signed in as" not in text and "ana/bot" not in text
        assert nav_links(page) == set()
        page.goto(f"{app.url}/facts")
        page.get_by_role("button", name="Sign in", exact=True).wait_for(timeout=TIMEOUT)
        assert ANA_FACT not in settle(page, app)


def test_editor_adds_a_fact_to_ana_and_cannot_reach_bob(app, chromium):  # noqa: F811
    new_fact = "Ana moved the beehives to the garden in spring"
    with signed_in(chromium, app, EDITOR) as page:
        assert scope_options(page) == ["ana/bot"]
        assert "Access" not in nav_links(page)
        open_page(page, app, "facts", "Facts")
        page.get_by_text("Add a fact").click()
        page.get_by_label("Content", exact=True).fill(new_fact)
        page.get_by_label("Content", exact=True).press("Control+Enter")  # the text is the app's before Add
        wait_for_app(page)
        page.get_by_role("button", name="Add", exact=True).click()
        page.get_by_text(re.compile(r"Added “Ana moved the beehives")).wait_for(timeout=TIMEOUT)
        assert new_fact in facts_in(app, "ana", "bot")
        assert new_fact not in facts_in(app, "bob", "coder") and BOB_FACT not in page_text(page)
        with app.memory() as m:
            added = next(f for f in m.facts.list(user_id="ana", agent_name="bot") if f.content == new_fact)
            assert m.facts.history(added.id)[0].actor == f"dashboard:{EDITOR}"

        # Opening bob/coder by name (the sidebar's "New scope") is refused: it needs the editor role there.
        page.get_by_text("New scope").click()
        page.get_by_label("User", exact=True).fill("bob")
        page.get_by_label("Agent", exact=True).fill("coder")
        page.get_by_test_id("stSidebar").locator("button[kind=secondary]").filter(has_text="Open").click()
        page.get_by_text("You may not create bob/coder").wait_for(timeout=TIMEOUT)
        assert scope_options(page) == ["ana/bot"] and BOB_FACT not in page_text(page)


def test_admin_grants_and_revokes_through_the_access_page(app, chromium):  # noqa: F811
    with signed_in(chromium, app, GRANTEE) as grantee, signed_in(chromium, app, ADMIN) as admin:
        assert scope_options(grantee) == []  # no grant yet
        assert "Access" in nav_links(admin)
        open_page(admin, app, "access", "Access")
        admin.get_by_label("E-mail or @domain").fill(GRANTEE)
        admin.get_by_label("Scope pattern").fill("*/c*")  # bob/coder, not ana/bot
        admin.get_by_role("button", name="Grant", exact=True).click()
        flash = admin.get_by_test_id("stAlertContentSuccess")
        flash.wait_for(timeout=TIMEOUT)
        # Shown literally: Markdown would make "*/c*" an emphasised "/c" and the e-mail a mailto: link; in code
        # spans, the e-mail reads and copies as typed (no zero-width space inside).
        assert flash.inner_text() == f"Granted viewer on */c* to {GRANTEE}."
        assert flash.locator("em, a").count() == 0 and flash.locator("code").all_inner_texts() == ["*/c*", GRANTEE]
        with app.memory() as m:
            granted = [g for g in m.access.grants() if g.subject == GRANTEE]
        assert [(g.role, g.scope, g.created_by) for g in granted] == [("viewer", "*/c*", f"dashboard:{ADMIN}")]

        grantee.reload()  # a new session: the grant is read again
        grantee.locator("[data-testid=stSidebar]").get_by_text("Signed in as").wait_for(timeout=TIMEOUT)
        assert scope_options(grantee) == ["bob/coder"]
        open_page(grantee, app, "facts", "Facts")
        grantee.wait_for_function("t => [...document.querySelectorAll('[role=gridcell]')]"
                                  ".some(c => c.textContent.includes(t))", arg=BOB_FACT, timeout=TIMEOUT)
        assert ANA_FACT not in page_text(grantee)

        settle(admin, app)
        choose(admin, admin.locator("[data-testid=stForm]").filter(has_text="Revoke").locator("[data-testid=stSelectbox]"),
               admin.get_by_role("option", name=re.compile(re.escape(f"{granted[0].id}: {GRANTEE}"))))
        admin.get_by_role("button", name="Revoke", exact=True).click()
        admin.get_by_text(f"Revoked {granted[0].id}.").wait_for(timeout=TIMEOUT)
        with app.memory() as m:
            assert GRANTEE not in {g.subject for g in m.access.grants()}
            assert {VIEWER, EDITOR} <= {g.subject for g in m.access.grants()}  # only the chosen grant went

        grantee.reload()
        grantee.locator("[data-testid=stSidebar]").get_by_text("Signed in as").wait_for(timeout=TIMEOUT)
        grantee.get_by_text("You have access to no scope yet").wait_for(timeout=TIMEOUT)
        assert scope_options(grantee) == []
        assert BOB_FACT not in settle(grantee, app)


def test_a_person_without_a_grant_sees_no_scope_no_memory_and_no_access_page(app, chromium):  # noqa: F811
    with signed_in(chromium, app, STRANGER) as page:
        page.get_by_text("You have access to no scope yet. Ask an admin for a grant.").wait_for(timeout=TIMEOUT)
        page.get_by_text("No scope to show.").wait_for(timeout=TIMEOUT)
        text = settle(page, app)
        assert ANA_FACT not in text and BOB_FACT not in text and "ana/bot" not in text and "bob/coder" not in text
        assert scope_options(page) == []
        assert "Access" not in nav_links(page)
        for path in ("facts", "access"):  # deep links: no memory, and no Access page
            page.goto(f"{app.url}/{path}")
            page.get_by_text("No scope to show.").wait_for(timeout=TIMEOUT)
            text = settle(page, app)
            assert ANA_FACT not in text and BOB_FACT not in text
            assert page.get_by_label("E-mail or @domain").count() == 0
            assert page.get_by_role("heading", name="Access").count() == 0


def test_an_unverified_email_signs_in_as_nobody(app, chromium, oidc_provider):  # noqa: F811
    """Issue 19: a provider with self-sign-up hands out ID tokens for any address. The admin's address with
    email_verified=false, or with no such claim at all, gets a clear page and nothing of memory."""
    set_user_claims(oidc_provider.issuer, "mallory", {"email": ADMIN, "email_verified": False})
    for subject in ("mallory", "unvouched@acme.com"):  # the second: the mock's default claims, no email_verified
        with browser_page(chromium, viewport={"width": 1400, "height": 1000}) as page:
            sign_in(page, app.url, subject)
            page.get_by_role("heading", name="Your e-mail address is not verified").wait_for(timeout=TIMEOUT)
            text = settle(page, app)
            assert "cannot be used for access here" in text
            assert ANA_FACT not in text and BOB_FACT not in text and "ana/bot" not in text
            assert "Signed in as" not in text and nav_links(page) == set()
            assert page.locator("[data-testid=stSelectbox]").count() == 0
            for path in ("facts", "access"):  # deep links land on the same page
                page.goto(f"{app.url}/{path}")
                page.get_by_role("heading", name="Your e-mail address is not verified").wait_for(timeout=TIMEOUT)
                text = settle(page, app)
                assert ANA_FACT not in text and BOB_FACT not in text and page.get_by_label("E-mail or @domain").count() == 0
            sign_out(page)
            page.get_by_role("button", name="Sign in", exact=True).wait_for(timeout=TIMEOUT)


def test_the_secrets_are_not_in_the_log(app, chromium):  # noqa: F811
    """Last in the module: by now the log holds every sign-in, page, grant and sign-out above."""
    with signed_in(chromium, app, ADMIN) as page:  # one more round, so the log is never empty
        settle(page, app)
        sign_out(page)
    log = app.server.log_text()
    assert "Running script" in log and "OAuth callback" in log  # the debug-level log of this very server
    assert_no_secret(log, app.hidden)
