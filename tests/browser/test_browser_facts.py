"""The Facts page in chromium, as issue 34 found it: a grid edit lands on its fact once (and a second tab adding
a fact meanwhile changes nothing of it), an edit of a fact changed elsewhere is refused with a message, Erase
acts on the fact picked and quoted, and the scope and the fact ride in the URL across a reload.
Each test works in a scope of its own, opened by its URL. Screenshots go to test-results/facts/."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from memory_core import Memory, Settings
from memory_core.search.embedders import HashingEmbedder
from tests.oidc_support import (act_until, app_env, browser_page, choose, chromium, free_port, start_streamlit,  # noqa: F401
                                wait_for_app)

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "test-results" / "facts"
TIMEOUT = 60_000
WIDE = {"width": 1440, "height": 1000}


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    home = tmp_path_factory.mktemp("facts") / "home"
    with start_streamlit(ROOT / "streamlit_app.py", port=free_port(), cwd=ROOT, env=app_env(home),
                         log_path=home.parent / "streamlit.log") as server:
        yield server.url, home


def store(home):
    return Memory(Settings(home=home, timezone="UTC"), embedder=HashingEmbedder())


def contents(home, user: str) -> dict[str, bool]:
    with store(home) as m:
        return {f.content: f.valid for f in m.facts.list(user_id=user, agent_name="t", include_invalid=True)}


def open_facts(page, url: str, query: str, facts: int) -> None:
    page.goto(f"{url}/facts?{query}")
    page.get_by_role("heading", name="Facts").wait_for(timeout=TIMEOUT)
    page.get_by_text(re.compile(rf"{facts} of {facts} facts in ")).wait_for(timeout=TIMEOUT)
    page.wait_for_load_state("networkidle")
    assert page.locator("[data-testid=stException]").count() == 0


def type_into_content(page, row: int, text: str) -> None:
    """Double-click the Content cell of `row` (the grid is a canvas: rows 35 px under a 35 px header), type,
    Enter, until the app offers to save (a rerun under load can drop the keys: they are typed again)."""
    grid = page.locator("[data-testid=stDataFrameResizable]").first
    grid.wait_for(timeout=TIMEOUT)
    save = page.get_by_role("button", name=re.compile(r"^Save \d+ change"))
    for attempt in range(3):
        wait_for_app(page)
        box = grid.bounding_box()
        page.mouse.dblclick(box["x"] + 80, box["y"] + 36 + 17 + 35 * row)
        editor = page.locator(".gdg-input").first
        try:  # a rerun under load can redraw the grid between the clicks: no editor opens, and it is tried again
            editor.wait_for(timeout=15_000)
            editor.fill(text)  # the whole value at once: key presses can be dropped under load
            expect(editor).to_have_value(text, timeout=10_000)
            editor.press("Enter")
            save.wait_for(timeout=20_000)
            return
        except Exception:
            if attempt == 2:
                SHOTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(SHOTS / "type-failed.png"), full_page=True)
                raise
            page.keyboard.press("Escape")  # an editor left open takes no double-click


def test_a_grid_edit_supersedes_its_fact_once_and_the_editor_empties(app, chromium):  # noqa: F811
    url, home = app
    with store(home) as m:
        m.facts.add("User lives in Berlin", "context", 0.95, user_id="grid", agent_name="t")
        m.facts.add("User's manager is Tomas", "context", 0.9, user_id="grid", agent_name="t")
    with browser_page(chromium, viewport=WIDE) as page:
        open_facts(page, url, "scope=grid/t", 2)
        type_into_content(page, 0, "User lives in Hamburg")
        page.get_by_role("button", name="Save 1 change(s)").click()
        page.get_by_text(re.compile(r"“User lives in Berlin” is now “User lives in Hamburg”")).wait_for(timeout=TIMEOUT)
        expect(page.get_by_role("button", name=re.compile(r"^Save \d+ change"))).to_have_count(0)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "grid-saved.png"), full_page=True)
    assert contents(home, "grid") == {"User lives in Berlin": False, "User lives in Hamburg": True,
                                      "User's manager is Tomas": True}


def test_two_tabs_an_edit_pending_in_one_while_the_other_adds_then_a_change_elsewhere(app, chromium):  # noqa: F811
    url, home = app
    with store(home) as m:
        m.facts.add("User drinks tea", "preference", 0.79, user_id="tabs", agent_name="t")
        m.facts.add("User likes jazz", "preference", 0.7, user_id="tabs", agent_name="t")
    with browser_page(chromium, viewport=WIDE) as a, browser_page(chromium, viewport=WIDE) as b:
        open_facts(a, url, "scope=tabs/t", 2)
        type_into_content(a, 0, "User drinks green tea")  # pending in tab A, on the first row
        a.get_by_role("button", name="Save 1 change(s)").wait_for(timeout=TIMEOUT)

        open_facts(b, url, "scope=tabs/t", 2)  # tab B adds a fact that sorts first (0.8): tea is row 2 now
        b.get_by_text("Add a fact").click()
        b.get_by_label("Content", exact=True).fill("User plays the cello")
        b.get_by_label("Content", exact=True).press("Control+Enter")  # the text is the app's before Add
        wait_for_app(b)
        b.get_by_role("button", name="Add", exact=True).click()
        # the fact stored, not its toast, which a rerun of the page can take away before it is seen under load
        deadline = time.monotonic() + TIMEOUT / 1000
        while "User plays the cello" not in contents(home, "tabs"):
            assert time.monotonic() < deadline, "the fact added in tab B was never stored"
            time.sleep(0.2)

        a.get_by_role("button", name="Save 1 change(s)").click()
        a.get_by_text(re.compile(r"“User drinks tea” is now “User drinks green tea”")).wait_for(timeout=TIMEOUT)
        assert contents(home, "tabs") == {"User likes jazz": True, "User drinks tea": False,
                                          "User drinks green tea": True, "User plays the cello": True}

        open_facts(a, url, "scope=tabs/t", 3)  # tab A again, afresh
        type_into_content(a, 0, "User plays the viola")  # the cello, now the first row
        a.get_by_role("button", name="Save 1 change(s)").wait_for(timeout=TIMEOUT)
        with store(home) as m:  # meanwhile elsewhere (another tab, an agent) the fact changes
            cello = next(f for f in m.facts.list(user_id="tabs", agent_name="t") if f.content == "User plays the cello")
            m.facts.revise(cello.id, confidence=0.5)
        a.get_by_role("button", name="Save 1 change(s)").click()
        a.get_by_text(re.compile(r"“User plays the cello” was changed elsewhere after you began editing it")).wait_for(
            timeout=TIMEOUT)
    assert contents(home, "tabs")["User plays the cello"] is True and "User plays the viola" not in contents(home, "tabs")


def pick(page, text: str) -> None:
    panel = page.locator(".st-key-fact_panel")
    choose(page, page.locator(".st-key-fact_pick"), page.get_by_role("option", name=re.compile(re.escape(text))).first)
    panel.get_by_text(text, exact=True).wait_for(timeout=TIMEOUT)


def test_erase_acts_on_the_fact_picked_quoting_it_and_keeps_the_selection(app, chromium):  # noqa: F811
    url, home = app
    with store(home) as m:
        m.facts.add("User's name is Priya", "context", 0.95, user_id="erase", agent_name="t")
        mypy = m.facts.add("User always runs mypy in CI", "preference", 0.9, user_id="erase", agent_name="t")
    with browser_page(chromium, viewport=WIDE) as page:
        open_facts(page, url, "scope=erase/t", 2)
        pick(page, "User always runs mypy in CI")
        assert f"fact={mypy.id}" in page.url  # the fact picked is in the address
        page.get_by_role("button", name="Erase…").click()
        page.get_by_text(re.compile(r"Erase “User always runs mypy in CI” everywhere")).wait_for(timeout=TIMEOUT)
        page.get_by_role("button", name="Cancel").click()
        expect(page.get_by_text(re.compile(r"Erase “User always runs mypy"))).to_have_count(0, timeout=TIMEOUT)
        page.get_by_role("button", name="Erase…").click()
        page.get_by_label("Why (kept in the history, never the text)").fill("asked by the user")
        page.get_by_label("Why (kept in the history, never the text)").press("Enter")
        page.get_by_role("button", name="Yes, erase it for good").click()
        page.get_by_text(re.compile(r"Erased:\u200b? the fact.s text is gone")).wait_for(timeout=TIMEOUT)
        panel = page.locator(".st-key-fact_panel")
        panel.get_by_text("[erased]", exact=True).wait_for(timeout=TIMEOUT)  # still the same fact, now erased
        assert f"fact={mypy.id}" in page.url
    assert contents(home, "erase") == {"User's name is Priya": True, "[erased]": False}


def test_scope_and_fact_in_the_url_survive_a_reload_and_page_changes(app, chromium):  # noqa: F811
    url, home = app
    with store(home) as m:
        fact = m.facts.add("Ana keeps bees on the roof", "context", 0.9, user_id="link", agent_name="t")
        m.facts.add("Ana drinks mate", "preference", 0.95, user_id="link", agent_name="t")
    with browser_page(chromium, viewport=WIDE) as page:
        page.goto(f"{url}/context_preview?scope=fresh/empty")  # a new, empty scope
        page.get_by_text(re.compile(r"Scope fresh/empty")).wait_for(timeout=TIMEOUT)
        page.reload()
        page.get_by_text(re.compile(r"Scope fresh/empty")).wait_for(timeout=TIMEOUT)
        page.locator("[data-testid=stSidebarNav]").get_by_role("link", name="Search").click()
        page.get_by_role("heading", name="Search").wait_for(timeout=TIMEOUT)
        page.wait_for_url(re.compile(r"scope=fresh(%2F|/)empty"), timeout=TIMEOUT)
        page.reload()
        page.get_by_text(re.compile(r"Scope fresh/empty")).wait_for(timeout=TIMEOUT)

        open_facts(page, url, f"scope=link/t&fact={fact.id}", 2)  # a teammate's link to one fact
        page.locator(".st-key-fact_panel").get_by_text("Ana keeps bees on the roof", exact=True).wait_for(
            timeout=TIMEOUT)
        page.reload()
        page.locator(".st-key-fact_panel").get_by_text("Ana keeps bees on the roof", exact=True).wait_for(
            timeout=TIMEOUT)
        assert "Scope link/t" in page.locator("[data-testid=stMain]").inner_text()


def focused(page) -> str:
    return page.evaluate("() => { const e = document.activeElement; return e ? e.tagName + ':' + "
                         "(e.getAttribute('aria-label') || e.textContent || '').trim().slice(0, 40) : ''; }")


def test_a_page_change_moves_keyboard_focus_to_the_title_and_typing_keeps_its_place(app, chromium):  # noqa: F811
    url, _home = app
    with browser_page(chromium, viewport=WIDE) as page:
        open_facts(page, url, "scope=focus/t", 0)
        nav = page.locator("[data-testid=stSidebarNav]")
        link = nav.get_by_role("link", name="Search")  # a keyboard user on the sidebar's link
        act_until(page, lambda: (link.focus(), page.keyboard.press("Enter")), page.get_by_role("heading", name="Search"))
        page.wait_for_function("() => document.activeElement && document.activeElement.tagName === 'H1'"
                               " && document.activeElement.textContent.includes('Search')", timeout=TIMEOUT)
        page.keyboard.press("Tab")  # from the title on into the page, never back in the sidebar
        assert page.evaluate("() => !document.querySelector('[data-testid=stSidebar]').contains(document.activeElement)"
                             " && document.querySelector('[data-testid=stMain]').contains(document.activeElement)")

        box = page.get_by_label("Query", exact=True)
        box.click()
        box.fill("bees on the roof")
        box.press("Enter")  # a rerun of the same page: focus stays where the person is
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(1_000)  # the script retries for up to 3 s: long enough to see it does nothing here
        assert page.evaluate("() => document.activeElement && document.activeElement.tagName === 'INPUT'"), focused(page)
        expect(box).to_have_value("bees on the roof")

        nav.get_by_role("link", name="Context Preview").click()  # by mouse too
        page.get_by_role("heading", name="Context Preview").wait_for(timeout=TIMEOUT)
        page.wait_for_function("() => document.activeElement && document.activeElement.tagName === 'H1'"
                               " && document.activeElement.textContent.includes('Context Preview')", timeout=TIMEOUT)
