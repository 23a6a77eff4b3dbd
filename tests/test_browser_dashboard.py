"""The dashboard as a visitor sees it, in chromium at 1440 px and on a 390 px phone: scope switching, the
Overview, Context Preview's presets and struck-through dropped facts, Facts' status marks and empty states.
Screenshots go to test-results/ (look at them)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memory_core import Memory, Settings
from memory_core.search.embedders import HashingEmbedder
from tests.oidc_support import app_env, browser_page, chromium, free_port, start_streamlit  # noqa: F401

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[1]
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
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(500)
    assert page.locator("[data-testid=stException]").count() == 0


def shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def scope_header(page) -> str:
    return page.locator("[data-testid=stMain]").get_by_text(re.compile(r"Scope \S+/\S+")).first.inner_text()


def test_new_scope_open_switches_scope_and_demo_data_lands_there(app, chromium):  # noqa: F811
    url, home = app
    with browser_page(chromium, viewport=WIDE) as page:
        page.goto(f"{url}/ingest")
        page.get_by_role("heading", name="Ingest").wait_for(timeout=TIMEOUT)
        settle(page)
        assert "default/default" in scope_header(page)
        sidebar = page.locator("[data-testid=stSidebar]")
        sidebar.get_by_text("New scope").click()
        sidebar.get_by_label("User").fill("ana")
        sidebar.get_by_label("Agent").fill("coder")
        sidebar.get_by_label("Agent").press("Enter")
        sidebar.get_by_role("button", name="Open scope").click()
        page.get_by_text(re.compile(r"Scope ana/coder")).wait_for(timeout=TIMEOUT)
        settle(page)
        page.get_by_role("button", name="Load demo data").click()
        page.get_by_text(re.compile(r"demo", re.I)).first.wait_for(timeout=TIMEOUT)
        settle(page)
        with store(home) as m:
            assert len(m.facts.list(user_id="ana", agent_name="coder")) >= 5
            assert m.facts.list() == []
        page.locator("[data-testid=stSidebarNav]").get_by_role("link", name="Facts").click()
        page.get_by_role("heading", name="Facts").wait_for(timeout=TIMEOUT)
        settle(page)
        assert "ana/coder" in scope_header(page)  # kept across the app's own navigation
        shot(page, "new-scope-facts-1440")
