"""The real app in a real browser: `streamlit run` driven by Playwright in Debian's chromium.

Marked `browser` (slow); CI runs them. The browser is never downloaded: /usr/bin/chromium is used.
"""

from __future__ import annotations

import re
from datetime import date
import time
from pathlib import Path

import pytest

from memory_core import Memory, Settings
from memory_core.search.embedders import HashingEmbedder
from tests.oidc_support import app_env, chromium, free_port, start_streamlit, wait_for_app  # noqa: F401  (the chromium fixture)

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
PAGES = {"facts": "Facts", "": "Overview", "ingest": "Ingest", "daily": "Daily logs", "dream": "Deep Dream",
         "context_preview": "Context Preview", "search": "Search", "import_export": "Import / Export"}
DATA = Path(__file__).parents[1] / "data" / "imports"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    home = tmp_path_factory.mktemp("browser") / "home"
    with start_streamlit(ROOT / "streamlit_app.py", port=free_port(), cwd=ROOT, env=app_env(home),
                         log_path=home.parent / "streamlit.log") as server:
        yield server.url, home


@pytest.fixture(scope="module")
def browser(chromium):
    return chromium


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    yield page
    context.close()


def open_page(page, url, path):
    page.goto(f"{url}/{path}")
    page.get_by_role("heading", name=PAGES[path]).first.wait_for(timeout=60_000)
    page.wait_for_load_state("networkidle")
    assert page.locator("[data-testid=stException]").count() == 0


def store(home):
    return Memory(Settings(home=home, timezone="UTC"), embedder=HashingEmbedder())


def wait_until(predicate, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline
        time.sleep(0.2)


def test_every_page_renders_without_exception(app, page):
    url, _home = app
    for path in PAGES:  # the first is a deep link on a freshly started server
        open_page(page, url, path)
        sidebar = page.locator("[data-testid=stSidebar]")
        sidebar.get_by_text("Scope", exact=True).wait_for(timeout=30_000)  # the entrypoint ran: its sidebar is there
        assert sidebar.get_by_role("link", name="Context Preview").count() == 1
        assert sidebar.get_by_text("Offline mode").count() == 1


def test_ingest_transcript_and_see_the_facts(app, page):
    url, home = app
    open_page(page, url, "ingest")
    page.get_by_label("Conversation").fill("User: I love sailing in Greece. I work at Initech as a pilot.\n"
                                           "Assistant: Sounds fun!")
    page.get_by_role("button", name="Ingest", exact=True).click()
    page.get_by_text(re.compile(r"Added 2 facts")).wait_for(timeout=60_000)
    open_page(page, url, "facts")
    page.get_by_text(re.compile(r"\d+ of \d+ facts")).wait_for()
    with store(home) as m:
        assert {"User loves sailing in Greece", "User works at Initech as a pilot"} <= {f.content for f in m.facts.list()}


def facts_filtered_to(page, url, needle):
    """Open the Facts page filtered to one fact; select the first row's first cell (the grid is a canvas)."""
    open_page(page, url, "facts")
    page.get_by_label("Text contains").fill(needle)
    page.get_by_label("Text contains").press("Enter")
    page.get_by_text("1 of").wait_for()
    grid = page.locator("[data-testid=stDataFrameResizable]").first
    grid.wait_for(timeout=30_000)
    box = grid.bounding_box()
    page.mouse.click(box["x"] + 80, box["y"] + 36 + 17)  # a cell of the first row, under the header
    move_to(page, "Home", lambda column: column == 0)


def move_to(page, key, column_is):
    """Press `key` in the grid and wait until the grid's own accessibility table (it mirrors the canvas, for the
    columns in view) says that the selected cell is in the first row and in a column that `column_is`."""
    page.keyboard.press(key)
    grid = page.locator("[data-testid=stDataFrameResizable]").first
    selected = "g => [...g.querySelectorAll('td[aria-selected=true]')].map(t => t.id)"
    deadline = time.monotonic() + 10
    while not any(cell.endswith("-0") and column_is(int(cell.split("-")[2])) for cell in grid.evaluate(selected)):
        assert time.monotonic() < deadline, f"{key}: the selection is on {grid.evaluate(selected)}"
        page.wait_for_timeout(50)  # a poll of the page's state, not a grace period


def test_edit_confidence_in_the_editor(app, page):
    url, home = app
    with store(home) as m:
        fact = m.facts.add("User edits this fact in the browser", "knowledge", 0.99)
    facts_filtered_to(page, url, "edits this fact")
    for step in range(1, 4):  # Content, Status, Category, Confidence (content first, as issue 23 asks)
        move_to(page, "ArrowRight", lambda column, step=step: column == step)
    page.keyboard.press("Enter")  # open the cell editor, then replace its text
    page.locator(".gdg-input").first.wait_for(timeout=10_000)
    page.keyboard.press("Control+a")
    page.keyboard.type("0.42", delay=50)
    page.keyboard.press("Enter")
    page.get_by_role("button", name=re.compile(r"Save 1 change")).click()
    page.get_by_text(re.compile(r"“User edits this fact in the browser”:\u200b? confidence changed")).wait_for(timeout=30_000)

    def saved():
        with store(home) as m:
            return m.facts.get(fact.id).confidence == pytest.approx(0.42)

    wait_until(saved)


def test_delete_a_fact(app, page):
    url, home = app
    with store(home) as m:
        fact = m.facts.add("User deletes this one in the browser", "knowledge", 0.9)
    facts_filtered_to(page, url, "deletes this one")
    move_to(page, "End", lambda column: column > 0)  # Delete? is the last column (content first, as issue 23 asks)
    page.keyboard.press(" ")
    page.get_by_text(re.compile(r"Yes, delete for good")).click()
    page.get_by_role("button", name="Delete 1 fact(s)").click()
    page.get_by_text(re.compile(r"Deleted “User deletes this one")).wait_for(timeout=30_000)
    with store(home) as m:
        with pytest.raises(KeyError):
            m.facts.get(fact.id)


def test_run_a_dream(app, page):
    url, home = app
    with store(home) as m:
        m.daily.append("- User is learning to play the cello")
    open_page(page, url, "dream")
    page.get_by_role("button", name="Run Deep Dream").click()
    page.get_by_role("heading", name="MEMORY.md").wait_for()
    wait_until(lambda: "cello" in (store(home).read_core() or ""))
    page.get_by_text("learning to play the cello").first.wait_for(timeout=30_000)


def test_budget_slider_changes_the_token_counter(app, page):
    url, home = app
    with store(home) as m:
        for i in range(60):
            m.facts.add(f"User budget fact {i} with a few more words", "knowledge", 0.5 + i / 200)
    open_page(page, url, "context_preview")
    wait_for_app(page)  # the first run has finished drawing: the counter read now is the one at 2,000
    metric = page.locator("[data-testid=stMetricValue]").first
    assert metric.inner_text().endswith(" / 2000")
    slider = page.get_by_role("slider").first
    for _attempt in range(3):  # one key moves the slider to its least value; under load a rerun may drop it
        slider.focus()
        page.keyboard.press("Home")
        try:
            wait_until(lambda: not metric.inner_text().endswith(" / 2000"), timeout=15.0)
            break
        except AssertionError:
            wait_for_app(page)
    wait_until(lambda: not metric.inner_text().endswith(" / 2000"))
    used, budget = metric.inner_text().split(" / ")
    assert int(budget) < 2000 and int(used) <= int(budget)
    assert page.locator("[data-testid=stException]").count() == 0


def import_on_the_page(page, url, uploader: int, source: Path, detected: str) -> None:
    """Upload `source` through the Import / Export page's uploader (0: a file, 1: a folder), wait for the
    preview naming the `detected` format, then import it into the default scope."""
    open_page(page, url, "import_export")
    page.locator("[data-testid=stFileUploaderDropzoneInput]").nth(uploader).set_input_files(str(source))
    page.get_by_text(re.compile(f"Detected format: {re.escape(detected)}")).wait_for(timeout=60_000)
    page.wait_for_load_state("networkidle")
    page.get_by_role("button", name="Import", exact=True).click()
    page.get_by_text(re.compile(r"Imported into default/default")).wait_for(timeout=60_000)


def test_import_a_file_then_download_a_bundle(app, page, tmp_path):
    from memory_core.portability.bundle import is_bundle, read_bundle

    url, home = app
    import_on_the_page(page, url, 0, DATA / "deerflow" / "memory.json", "DeerFlow memory.json")
    with store(home) as m:
        imported = [f for f in m.facts.list() if f.source == "import:deerflow"]
    assert imported

    page.get_by_role("tab", name="Export").click()
    page.get_by_role("button", name="Prepare bundle").click()
    button = page.get_by_role("button", name=re.compile(r"Download memory_core-default-default-"))
    button.wait_for(timeout=60_000)
    with page.expect_download() as download:
        button.click()
    target = tmp_path / "bundle.zip"
    download.value.save_as(target)
    assert is_bundle(target)
    _manifest, rows, _documents = read_bundle(target)
    assert {f.id for f in imported} <= {row["id"] for scope_rows in rows.values() for row in scope_rows["facts"]}


def test_upload_a_workspace_folder_as_it_is(app, page):
    url, home = app
    import_on_the_page(page, url, 1, DATA / "markdown" / "openclaw", "Markdown workspace")
    with store(home) as m:
        assert "Priya" in (m.read_core() or "")
        assert "VLAN 30" in (m.daily.read(date(2026, 1, 15)) or "")
