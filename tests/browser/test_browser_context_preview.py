"""Context Preview in chromium, as the flagship demo: a budget keeps filling after a fact too long for it, the
chart's "used" bar adds up to the tokens the metric says, at 1440 px and on a 390 px phone (nothing scrolls
sideways there, on the Facts page either). Screenshots go to test-results/context-preview/."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

import pytest
from playwright.sync_api import expect

from memory_core import Memory, Settings
from memory_core.search.embedders import HashingEmbedder
from tests.oidc_support import (app_env, browser_page, chromium, act_until, free_port,  # noqa: F401
                                start_streamlit, wait_for_app)

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "test-results" / "context-preview"
TIMEOUT = 60_000
LONG = "User wrote a long note about " + "the planning of the data platform and its teams " * 40


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    home = tmp_path_factory.mktemp("preview") / "home"
    with Memory(Settings(home=home, timezone="UTC"), embedder=HashingEmbedder()) as m:
        scope = {"user_id": "cp", "agent_name": "t"}
        m.facts.add(LONG, "knowledge", 0.95, **scope)
        for i in range(8):
            m.facts.add(f"User likes item {i}", "preference", round(0.8 - i / 100, 2), **scope)
        m.set_summaries({"workContext": "User is a data scientist at Initech."}, **scope)
        talk = {"user_id": "cpq", "agent_name": "t"}  # a conversation, for a query's passages
        m.update([{"role": "user", "content": "I went to a LGBTQ support group yesterday.", "name": "Caroline"},
                  {"role": "assistant", "content": "That's great! How did it go?", "name": "Melanie"}],
                 thread_id="s1", when=datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc), **talk)
        for i in range(30):
            m.facts.add(f"User once mentioned hobby number {i} with a few more words", "knowledge",
                        round(0.9 - i / 1000, 3), **talk)
    with start_streamlit(ROOT / "streamlit_app.py", port=free_port(), cwd=ROOT, env=app_env(home),
                         log_path=home.parent / "streamlit.log") as server:
        yield server.url, home


def used_in_chart(page) -> int:
    return page.evaluate("""() => {
      const plot = document.querySelector('[data-testid=stMain] .js-plotly-plot');
      return plot.data.filter(t => t.y && t.y[0] === 'used').reduce((sum, t) => sum + t.x[0], 0);
    }""")


def no_horizontal_scroll(page) -> None:
    sizes = page.evaluate("() => { const m = document.querySelector('[data-testid=stMain]');"
                          " return [document.documentElement.scrollWidth, window.innerWidth, m.scrollWidth, m.clientWidth]; }")
    assert sizes[0] <= sizes[1] + 1 and sizes[2] <= sizes[3] + 1, sizes


@pytest.mark.parametrize("width", [1440, 390])
def test_the_budget_fills_past_the_long_fact_and_the_chart_agrees(app, chromium, width):  # noqa: F811
    url, _home = app
    with browser_page(chromium, viewport={"width": width, "height": 1000}) as page:
        page.goto(f"{url}/context_preview?scope=cp/t")
        page.get_by_role("heading", name="Context Preview").wait_for(timeout=TIMEOUT)
        page.get_by_text(re.compile(r"Scope cp/t")).wait_for(timeout=TIMEOUT)
        metric = page.get_by_text(re.compile(r"^\d+ / 250$"))
        act_until(page, page.locator("[data-testid=stMain] button").filter(has_text=re.compile(r"^250$")).first.click,
                  metric, timeout_ms=TIMEOUT // 2)
        wait_for_app(page)  # the metric is drawn before the list below it: the run must be over
        used = int(metric.inner_text().split(" / ")[0])
        struck = page.locator("[data-testid=stMain] del")
        expect(struck).to_have_count(1, timeout=TIMEOUT)  # only the long fact is left out
        assert "long note" in struck.first.inner_text()
        code = page.locator("[data-testid=stMain] [data-testid=stCode]").first.inner_text()
        assert "User likes item 7" in code and "long note" not in code
        page.locator("[data-testid=stMain] .js-plotly-plot").first.wait_for(timeout=TIMEOUT)
        assert used_in_chart(page) == used
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"budget-250-{width}.png"), full_page=True)
        if width == 390:
            no_horizontal_scroll(page)
            page.goto(f"{url}/facts?scope=cp/t")
            page.get_by_text(re.compile(r"9 of 9 facts in cp/t")).wait_for(timeout=TIMEOUT)
            page.locator(".st-key-fact_panel").wait_for(timeout=TIMEOUT)
            no_horizontal_scroll(page)
            page.screenshot(path=str(SHOTS / "facts-390.png"), full_page=True)


def test_one_click_demo_scope_opens_and_shows_trimming(app, chromium):  # noqa: F811
    url, home = app
    with browser_page(chromium, viewport={"width": 1440, "height": 1000}) as page:
        page.goto(f"{url}/context_preview?scope=cp/t")
        page.get_by_text(re.compile(r"Scope cp/t")).wait_for(timeout=TIMEOUT)
        act_until(page, page.get_by_role("button", name=re.compile(r"Open a demo scope")).click,
                  page.get_by_text(re.compile(r"Scope demo/preview-1")), timeout_ms=TIMEOUT // 2)
        page.wait_for_url(re.compile(r"scope=demo(%2F|/)preview-1"), timeout=TIMEOUT)
        act_until(page, page.locator("[data-testid=stMain] button").filter(has_text=re.compile(r"^250$")).first.click,
                  page.get_by_text(re.compile(r"^\d+ / 250$")), timeout_ms=TIMEOUT // 2)
        wait_for_app(page)  # the metric is drawn before the list below it: the run must be over
        struck = page.locator("[data-testid=stMain] del")
        struck.nth(10).wait_for(timeout=TIMEOUT)
        assert struck.count() > 10  # most of the fifty are left out at 250
    with Memory(Settings(home=home, timezone="UTC"), embedder=HashingEmbedder()) as m:
        assert len(m.facts.list(user_id="demo", agent_name="preview-1")) >= 45
        assert len(m.facts.list(user_id="cp", agent_name="t")) == 9  # the scope in view was left as it was


def test_a_query_brings_dated_passages_and_stands_beside_no_query(app, chromium):  # noqa: F811
    url, _home = app
    with browser_page(chromium, viewport={"width": 1440, "height": 1000}) as page:
        page.goto(f"{url}/context_preview?scope=cpq/t")
        page.get_by_text(re.compile(r"Scope cpq/t")).wait_for(timeout=TIMEOUT)
        page.locator("[data-testid=stMain] button").filter(has_text=re.compile(r"^500$")).first.click()
        page.get_by_text(re.compile(r"^\d+ / 500$")).first.wait_for(timeout=TIMEOUT)
        box = page.get_by_label("Query (optional): what the agent is about to answer", exact=True).and_(page.locator("input"))
        box.fill("When did Caroline go to the LGBTQ support group?")
        box.press("Enter")
        page.get_by_role("heading", name="Passages the query brings in").wait_for(timeout=TIMEOUT)
        page.get_by_role("heading", name="No query beside this query").wait_for(timeout=TIMEOUT)
        page.wait_for_load_state("networkidle")
        code = page.locator("[data-testid=stMain] [data-testid=stCode]").first.inner_text()
        assert "Relevant passages:\n[8 May 2023]\n- Caroline: I went to a LGBTQ support group yesterday (7 May 2023)." in code
        used = int(page.get_by_text(re.compile(r"^\d+ / 500$")).first.inner_text().split(" / ")[0])
        assert used_in_chart(page) == used
        assert page.get_by_text("No query: tokens used").count() == 1
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "query-passages-1440.png"), full_page=True)
        page.get_by_role("heading", name="Passages the query brings in").scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / "query-passages-below-1440.png"))
