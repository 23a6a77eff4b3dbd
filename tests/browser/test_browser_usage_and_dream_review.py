"""The Usage page and dream review in the real app in chromium: the Usage page (the ledger, the budget, the injections
recorded) and reviewing a dream (Settings.dream_review: Approve on the Dream page writes MEMORY.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memory_core import Memory, Settings
from memory_core.scope import make_scope
from memory_core.search.embedders import HashingEmbedder
from memory_core.policy.usage import metering
from tests.oidc_support import app_env, chromium, free_port, start_streamlit, wait_for_app  # noqa: F401  (the chromium fixture)

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    home = tmp_path_factory.mktemp("usage_and_review") / "home"
    with start_streamlit(ROOT / "streamlit_app.py", port=free_port(), cwd=ROOT,
                         env=app_env(home, dream_review="true"),
                         log_path=home.parent / "streamlit.log") as server:
        yield server.url, home


@pytest.fixture
def page(chromium):
    context = chromium.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    yield page
    context.close()


def store(home):
    return Memory(Settings(home=home, timezone="UTC", dream_review=True,
                           llm_prices={"gpt-4o-mini": [0.15, 0.6]}), embedder=HashingEmbedder())


def test_the_usage_page_shows_the_ledger_and_the_injections(app, page):
    url, home = app
    with store(home) as m:
        with metering(make_scope("default", "default"), "extract"):
            m.ledger.record("gpt-4o-mini", 1200, 300)
        m.facts.add("User prefers green tea", "preference", 0.9)
        with m.acting_as("mcp:ci-bot"):
            m.format_for_injection(query="what does the user drink", record=True)
    page.goto(f"{url}/usage")
    page.get_by_role("heading", name="Usage").first.wait_for(timeout=60_000)
    page.get_by_text("1,500").first.wait_for(timeout=30_000)  # the tokens
    assert page.get_by_text(re.compile(r"\$0\.000")).count() >= 1  # the cost, from llm_prices
    assert page.locator("[data-testid=stException]").count() == 0
    page.locator(".js-plotly-plot").first.wait_for(timeout=30_000)
    wait_for_app(page)
    page.screenshot(path=str(Path(home).parent / "usage.png"), full_page=True)


def test_a_dream_waits_for_review_and_approve_writes_it(app, page):
    url, home = app
    with store(home) as m:
        m.daily.append("User: I love sailing in Greece.")
        proposal = m.deep_dream(1).proposal_id
        assert proposal and m.read_core() is None
    page.goto(f"{url}/dream")
    page.get_by_role("heading", name="Deep Dream").first.wait_for(timeout=60_000)
    page.get_by_text("Waiting for review", exact=True).wait_for(timeout=60_000)
    page.get_by_role("button", name="Approve").click()
    page.get_by_text(re.compile("Approved: MEMORY.md has the proposed text now")).wait_for(timeout=60_000)
    with store(home) as m:
        assert "sailing" in m.read_core() and m.dream_proposals() == []
