"""The signed-in person's e-mail reads as typed on every page (no zero-width space or other character inside:
copied, it is the address), and every page, the Access page too, says which scope it shows (issue 32). The real
dashboard with `[auth]` against a local OIDC provider, in Debian's chromium."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import pytest

from memory_core import Memory, Settings
from memory_core.search.embedders import HashingEmbedder
from tests.oidc_support import (  # noqa: F401  (chromium and oidc_provider are fixtures)
    QUIET_PROVIDER_WARNINGS,
    browser_page,
    chromium,
    oidc_provider,
    set_user_claims,
    sign_in,
    start_streamlit,
    write_auth_secrets,
)

pytestmark = [pytest.mark.browser, QUIET_PROVIDER_WARNINGS]
ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 30_000
BOSS = "boss@acme.com"
PAGES = {"facts": "Facts", "search": "Search", "access": "Access"}


@pytest.fixture(scope="module")
def app_url(oidc_provider, tmp_path_factory):
    folder = tmp_path_factory.mktemp("identity")
    home = folder / "home"
    with Memory(Settings(home=home, timezone="UTC"), embedder=HashingEmbedder()) as m:
        m.facts.add("Ana keeps bees on the roof", "context", 0.9, user_id="ana", agent_name="bot")
    set_user_claims(oidc_provider.issuer, BOSS, {"email": BOSS, "email_verified": True})
    secrets_file = write_auth_secrets(folder, issuer=oidc_provider.issuer, client_id=oidc_provider.client_id,
                                      client_secret=oidc_provider.client_secret, app_port=oidc_provider.app_port,
                                      cookie_secret=secrets.token_urlsafe(32),
                                      tables={"memory_core": {"admins": [BOSS]}})
    env = {**os.environ, "MEMORY_CORE_HOME": str(home), "MEMORY_CORE_TIMEZONE": "UTC"}
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "MEMORY_CORE_ADMINS", "MEMORY_CORE_DATABASE_URL",
                 "MEMORY_CORE_ANONYMOUS_ACCESS"):
        env.pop(name, None)
    with start_streamlit(ROOT / "streamlit_app.py", port=oidc_provider.app_port, cwd=ROOT,
                         log_path=folder / "streamlit.log", secrets_file=secrets_file, env=env) as server:
        yield server.url


def test_the_signed_in_email_reads_as_typed_and_every_page_names_its_scope(app_url, chromium):  # noqa: F811
    with browser_page(chromium, viewport={"width": 1400, "height": 1000}) as page:
        sign_in(page, app_url, BOSS)
        for path, title in PAGES.items():
            page.goto(f"{app_url}/{path}")
            page.get_by_role("heading", name=title).first.wait_for(timeout=TIMEOUT)
            page.wait_for_load_state("networkidle")
            page.locator("[data-testid=stStatusWidget]").wait_for(state="detached", timeout=TIMEOUT)
            sidebar = page.locator("[data-testid=stSidebar]")
            line = sidebar.get_by_text("Signed in as").first
            line.wait_for(timeout=TIMEOUT)
            shown = line.inner_text().strip()  # as a person reads and copies it: nothing stripped here
            assert shown == f"Signed in as {BOSS}", (path, ascii(shown))
            assert page.locator("a[href^='mailto:']").count() == 0, path  # text, not a link
            body = page.locator("body").inner_text()
            assert BOSS.replace("@", "\u200b@") not in body and BOSS in body, path  # wherever it is shown
            main = page.locator("[data-testid=stMain]")
            header = main.locator("[data-testid=stCaptionContainer]").filter(has_text="Scope").first
            header.wait_for(timeout=TIMEOUT)
            assert "Scope ana/bot · admin" in header.inner_text().replace("\u200b", ""), \
                (path, ascii(header.inner_text()))
