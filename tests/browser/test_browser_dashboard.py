"""The dashboard as a visitor sees it, in chromium at 1440 px and on a 390 px phone: scope switching, the
Overview, Context Preview's presets and struck-through dropped facts, Facts' status marks and empty states.
Screenshots go to test-results/ (look at them)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from memory_core import Memory, Settings
from memory_core.search.embedders import HashingEmbedder
from tests.oidc_support import (act_until, app_env, browser_page, choose, chromium, free_port, start_streamlit,  # noqa: F401
                                wait_for_app)

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "test-results" / "dashboard"
WIDE = {"width": 1440, "height": 1000}
PHONE = {"width": 390, "height": 844}
TIMEOUT = 60_000


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    home = tmp_path_factory.mktemp("dashboard") / "home"
    with start_streamlit(ROOT / "streamlit_app.py", port=free_port(), cwd=ROOT, env=app_env(home),
                         log_path=home.parent / "streamlit.log") as server:
        yield server.url, home


def store(home):
    return Memory(Settings(home=home, timezone="UTC"), embedder=HashingEmbedder())


def settle(page) -> None:
    wait_for_app(page)  # the app's own signal that its run is over, not a grace period
    assert page.locator("[data-testid=stException]").count() == 0


def shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def scope_header(page) -> str:
    return page.locator("[data-testid=stMain]").get_by_text(re.compile(r"Scope \S+/\S+")).first.inner_text()


def open_new_scope(page, user: str, agent: str) -> None:
    """The sidebar's New scope: type who and which agent, Open scope, until the page shows the scope (under load a
    rerun can redraw the sidebar between the typing and the click, and the click or a value is lost: both are
    given again, once the app's run is over)."""
    sidebar = page.locator("[data-testid=stSidebar]")

    def type_and_open() -> None:
        if not sidebar.get_by_label("User").is_visible():
            sidebar.get_by_text("New scope").click()
        for label, value in (("User", user), ("Agent", agent)):
            field = sidebar.get_by_label(label)
            field.fill(value)
            field.press("Enter")  # committed: the app reruns with it
            settle(page)
        sidebar.get_by_role("button", name="Open scope").click()

    settle(page)
    act_until(page, type_and_open, page.locator("[data-testid=stMain]").get_by_text(re.compile(rf"Scope {user}/{agent}")))
    settle(page)


def test_new_scope_open_switches_scope_and_demo_data_lands_there(app, chromium):  # noqa: F811
    url, home = app
    with browser_page(chromium, viewport=WIDE) as page:
        page.goto(f"{url}/ingest")
        page.get_by_role("heading", name="Ingest").wait_for(timeout=TIMEOUT)
        settle(page)
        assert "default/default" in scope_header(page)
        open_new_scope(page, "ana", "coder")
        nav = page.locator("[data-testid=stSidebarNav]")
        nav.get_by_role("link", name="Facts").click()  # the new, empty scope: the Facts page says what to do
        page.get_by_role("heading", name="Facts").wait_for(timeout=TIMEOUT)
        settle(page)
        assert "ana/coder" in scope_header(page)
        page.get_by_role("link", name=re.compile("Ingest a conversation")).wait_for(timeout=TIMEOUT)
        assert page.get_by_role("link", name=re.compile("Import another tool")).count() == 1
        shot(page, "facts-empty-1440")
        nav.get_by_role("link", name="Ingest").click()
        page.get_by_role("heading", name="Ingest").wait_for(timeout=TIMEOUT)
        settle(page)
        page.get_by_role("button", name="Load demo data").click()
        page.get_by_text(re.compile(r"Demo loaded: \d+ facts added")).wait_for(timeout=TIMEOUT)
        settle(page)
        with store(home) as m:
            assert len(m.facts.list(user_id="ana", agent_name="coder")) >= 5
            assert m.facts.list() == []
        page.locator("[data-testid=stSidebarNav]").get_by_role("link", name="Facts").click()
        page.get_by_role("heading", name="Facts").wait_for(timeout=TIMEOUT)
        settle(page)
        assert "ana/coder" in scope_header(page)  # kept across the app's own navigation
        shot(page, "new-scope-facts-1440")


def no_horizontal_scroll(page) -> None:
    """The main content fits the phone's width: nothing scrolls sideways (a wide grid scrolls inside itself)."""
    overflow = page.evaluate("() => { const m = document.querySelector('[data-testid=stMain]');"
                             " return [document.documentElement.scrollWidth, window.innerWidth, m.scrollWidth, m.clientWidth]; }")
    assert overflow[0] <= overflow[1] + 1 and overflow[2] <= overflow[3] + 1, overflow


def test_context_preview_presets_and_query_change_what_is_kept(app, chromium):  # noqa: F811
    url, home = app
    with store(home) as m:
        for i in range(60):
            m.facts.add(f"User once mentioned hobby number {i} with a few more words", "knowledge",
                        round(0.9 - i / 1000, 3))
        m.facts.add("User's sister Marta is allergic to peanuts", "context", 0.55)
    for name, viewport in (("1440", WIDE), ("390", PHONE)):
        with browser_page(chromium, viewport=viewport) as page:
            page.goto(f"{url}/context_preview")
            page.get_by_role("heading", name="Context Preview").wait_for(timeout=TIMEOUT)
            settle(page)
            page.locator("[data-testid=stMain] button").filter(has_text=re.compile(r"^100$")).first.click()
            page.get_by_text(re.compile(r"^\d+ / 100$")).wait_for(timeout=TIMEOUT)
            settle(page)
            struck = page.locator("[data-testid=stMain] del")
            struck.first.wait_for(timeout=TIMEOUT)
            shot(page, f"context-preview-100-{name}")
            expect(struck.filter(has_text="Marta is allergic")).to_have_count(1, timeout=TIMEOUT)  # dropped, visibly
            page.get_by_role("textbox", name=re.compile("^Query")).fill("Is Marta allergic to anything?")
            page.get_by_role("textbox", name=re.compile("^Query")).press("Enter")
            page.get_by_text(re.compile(r"facts most relevant to the query were kept first")).wait_for(timeout=TIMEOUT)
            settle(page)
            expect(struck.filter(has_text="Marta is allergic")).to_have_count(0, timeout=TIMEOUT)  # kept now
            assert "Marta is allergic" in page.locator("[data-testid=stMain]").inner_text()
            shot(page, f"context-preview-query-{name}")
            if viewport is PHONE:
                no_horizontal_scroll(page)


def test_overview_and_superseded_facts_marked(app, chromium):  # noqa: F811
    url, home = app
    with store(home) as m:
        old = m.facts.add("User drives a red Fiat", "context", 0.9, user_id="eve", agent_name="bot")
        m.facts.supersede(old.id, "User drives a blue Tesla")
    for name, viewport in (("1440", WIDE), ("390", PHONE)):
        with browser_page(chromium, viewport=viewport) as page:
            page.goto(f"{url}/")
            page.get_by_role("heading", name="Overview").wait_for(timeout=TIMEOUT)
            settle(page)
            shot(page, f"overview-{name}")
            if viewport is PHONE:
                no_horizontal_scroll(page)
                page.goto(f"{url}/facts")  # the widest page: its grid scrolls inside itself, never the page
                page.get_by_role("heading", name="Facts").wait_for(timeout=TIMEOUT)
                settle(page)
                no_horizontal_scroll(page)
                shot(page, "facts-390")
                continue
            choose(page, page.locator("[data-testid=stSidebar]").get_by_role("combobox").first,
                   page.get_by_role("option", name="eve/bot"))
            page.get_by_text(re.compile(r"Scope eve/bot")).wait_for(timeout=TIMEOUT)
            page.locator("[data-testid=stSidebarNav]").get_by_role("link", name="Facts").click()
            page.get_by_role("heading", name="Facts").wait_for(timeout=TIMEOUT)
            page.get_by_text("Show superseded and invalidated facts").click()
            struck = page.locator("[data-testid=stMain] del").filter(has_text="User drives a red Fiat")
            struck.wait_for(timeout=TIMEOUT)
            assert "superseded" in page.locator("[data-testid=stMain]").inner_text()
            shot(page, f"facts-superseded-{name}")
