"""A public host without sign-in: every anonymous browser session gets a sandbox of its own (real app, chromium)."""

from __future__ import annotations

import re

import pytest

from memory_core import Memory, Settings
from memory_core.search.embedders import HashingEmbedder
from tests.oidc_support import app_env, chromium, free_port, open_all, open_options, start_streamlit  # noqa: F401  (chromium: a fixture)
from tests.browser.test_browser import ROOT, browser  # noqa: F401  (the browser fixture)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def public_app(tmp_path_factory):
    home = tmp_path_factory.mktemp("public") / "home"
    with Memory(Settings(home=home, timezone="UTC"), embedder=HashingEmbedder()) as m:
        m.facts.add("User is the real Ana, whose memory visitors must never see", "context", 0.9,
                    user_id="ana", agent_name="bot")
    with start_streamlit(ROOT / "streamlit_app.py", port=free_port(), cwd=ROOT, log_path=home.parent / "streamlit.log",
                         env={**app_env(home), "STREAMLIT_SHARING_MODE": "streamlit"}) as server:  # a public host
        yield server.url, home


def visit(browser, url, path=""):  # noqa: F811
    """A new visitor opens the app, asks for a sandbox with the demo data, and goes to `path` in it."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.goto(f"{url}/{path}")
    page.get_by_role("button", name="Open a sandbox with demo data").click(timeout=90_000)
    page.get_by_text(re.compile("Sandbox: a private demo scope")).wait_for(timeout=90_000)
    page.wait_for_url(re.compile(r"\?sandbox="), timeout=30_000)
    if path:  # on through the sidebar, as a visitor goes (the key stays in the URL)
        page.locator("[data-testid=stSidebar]").get_by_role("link", name=path.capitalize(), exact=True).click()
        page.wait_for_url(re.compile(rf"/{path}\?sandbox="), timeout=30_000)
    return context, page


def sandboxes_opened(home) -> int:
    with Memory(Settings(home=home, timezone="UTC"), embedder=HashingEmbedder()) as m:
        return sum(1 for e in m.access.log() if e.action == "sandbox_created")


def sandbox_of(page) -> tuple[str, int]:
    """The sandbox scope the Facts page shows, and how many facts it has."""
    page.get_by_text(re.compile(r"\d+ of \d+ facts in sandbox-")).wait_for(timeout=60_000)
    caption = page.get_by_text(re.compile(r"facts in sandbox-")).first.inner_text()
    found = re.search(r"\d+ of (\d+) facts in (sandbox-[0-9a-f]+/demo)", caption)
    return found.group(2), int(found.group(1))


def scope_options(page) -> list[str]:
    """Every scope the sidebar's picker offers."""
    return open_options(page, page.locator("[data-testid=stSidebar] [data-testid=stSelectbox]").first,
                        page.get_by_role("option"))


def search(page, url, query):
    page.goto(f"{url}/search?" + page.url.split("?", 1)[1] if "?" in page.url else f"{url}/search")
    page.get_by_label("Query").fill(query)
    page.get_by_label("Query").press("Enter")
    expanders = page.locator("[data-testid=stExpander]")
    expanders.first.wait_for(timeout=30_000)  # the run with the hits has drawn them (a fresh page has none)
    open_all(page, expanders)  # the hits' texts are inside their expanders
    return page.locator("[data-testid=stMain]").inner_text()


def test_a_bare_visit_opens_no_sandbox(public_app, browser):  # noqa: F811
    url, home = public_app
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        for path in ("", "facts"):
            page.goto(f"{url}/{path}")
            page.get_by_role("button", name="Open an empty sandbox").wait_for(timeout=90_000)
            page.wait_for_load_state("networkidle")
            assert "real Ana" not in page.locator("body").inner_text()
            assert page.locator("[data-testid=stSidebar] [data-testid=stSelectbox]").count() == 0
        assert sandboxes_opened(home) == 0
    finally:
        context.close()


def test_two_visitors_get_two_sandboxes_and_see_nothing_else(public_app, browser):  # noqa: F811
    url, home = public_app
    one, page_one = visit(browser, url, "facts")
    two, page_two = visit(browser, url, "facts")
    try:
        (first, count_one), (second, _count_two) = sandbox_of(page_one), sandbox_of(page_two)
        assert first != second
        assert scope_options(page_one) == [first] and scope_options(page_two) == [second]
        with Memory(Settings(home=home, timezone="UTC"), embedder=HashingEmbedder()) as m:
            user, agent = first.split("/")
            demo = [f.content for f in m.facts.list(user_id=user, agent_name=agent)]
            assert any("Priya" in c for c in demo) and len(demo) == count_one  # pre-filled with the demo data
            m.facts.add("User keeps a secret pebble collection", "context", 0.9, user_id=user, agent_name=agent)
        page_one.reload()  # the same visitor after a reload: the same sandbox (its key is in the URL)
        assert sandbox_of(page_one) == (first, count_one + 1)
        assert "secret pebble collection" in search(page_one, url, "pebble collection")
        assert "visitors must never see" not in search(page_one, url, "real Ana")  # (the query itself is echoed)
        seen_by_two = search(page_two, url, "pebble collection")
        assert "secret pebble" not in seen_by_two and "No good match" in seen_by_two  # not the other's memory
        assert "Priya" in search(page_two, url, "Priya")  # its own demo memory
        assert "visitors must never see" not in search(page_two, url, "real Ana whose memory")
        # A sandbox's visitor may do everything there: the Ingest page offers ingesting.
        page_two.goto(f"{url}/ingest?" + page_two.url.split("?", 1)[1])  # its link: a bare visit opens nothing
        page_two.get_by_label("Conversation").wait_for(timeout=60_000)
    finally:
        one.close()
        two.close()
