"""Memory text is shown as text, in a real browser.

Every place a page shows memory is filled with hostile text: Markdown and HTML images and links that point
at a "tracking pixel" server on 127.0.0.1, data: and javascript: links, bare URLs, e-mail addresses,
Streamlit directives and LaTeX. Each page must fetch nothing from that server, hold no <img> or <a> made
from memory text, and still show that text literally (so a page cannot pass by showing nothing). An
uncaught error shows visitors Streamlit's generic message; the details go to the server's log only.

Same approach as test_browser.py: `streamlit run` on a free port, Debian's /usr/bin/chromium via Playwright.
"""

from __future__ import annotations

import re
import socketserver
import threading
import time
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest

from memory_core import Memory, ScriptedChatModel, Settings, build_injection
from memory_core.scope import make_scope
from memory_core.search.embedders import HashingEmbedder
from tests.oidc_support import app_env, chromium, free_port, open_all, start_streamlit, wait_for_app  # noqa: F401  (chromium: a fixture)
from tests.browser.test_browser import browser, page  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
HEADINGS = {"": "Overview", "ingest": "Ingest", "facts": "Facts", "daily": "Daily logs", "dream": "Deep Dream",
            "context_preview": "Context Preview", "search": "Search"}
DATA_URL = "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg=="
WORD = "tracker"  # the search query: in one kept fact, the reference fact, the daily log and MEMORY.md
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000000000500010d0a2db40000000049454e44ae426082")
# The one reference out of the app that no memory text made: Plotly's logo link in a chart's toolbar.
ALLOWED_EXTERNAL = ("https://plotly.com/",)


def visible(text: str) -> str:
    """Text as a person reads it: without the zero-width spaces that `escape_markdown` puts inside "://",
    "www.", "@" and ":name:" so that Streamlit's Markdown makes no link or icon of them."""
    return text.replace("\u200b", "")


class PixelServer:
    """Records every connection it gets, HTTP or not (an https:// autolink would open with a TLS hello)."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        hits = self.hits

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                self.request.settimeout(2)
                try:
                    data = self.request.recv(4096)
                except OSError:
                    data = b""
                hits.append(data.split(b"\r\n", 1)[0].decode("latin-1") or "(a connection, no data)")
                if data[:4] in (b"GET ", b"HEAD", b"POST"):
                    self.request.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nConnection: close\r\n"
                                         b"Content-Length: %d\r\n\r\n" % len(PNG) + PNG)

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def hostile(port: int, tag: str) -> list[str]:
    """One hostile construct per item; the pixel server's URLs carry `tag`, so a hit says where it came from.
    Images first: a caption shows only the first 200 characters of a queue error."""
    at = f"127.0.0.1:{port}/{tag}"
    return [f"![x](http://{at}/md.png)", f"<img src=http://{at}/i.png>", f'<a href="http://{at}/a">a</a>',
            f"[click]({DATA_URL})", "[js](javascript:alert(1))", f"https://{at}/auto", "www.example.com",
            "mail@example.com", ":red[x]", ":material/home:", "$x^2$"]


def reference_image(port: int, tag: str) -> list[str]:
    """A reference-style image: the definition must stand on a line of its own."""
    return [f"![ref][{tag}]", f"[{tag}]: http://127.0.0.1:{port}/{tag}/ref.png"]


def short(port: int, tag: str) -> list[str]:
    """The dangerous part of `hostile`, for fields of at most 256 characters (source, actor, thread id)."""
    at = f"127.0.0.1:{port}/{tag}"
    return [f"![x](http://{at}/md.png)", f"<img src=http://{at}/i.png>", f"[c]({DATA_URL[:22]})", ":red[x]",
            ":material/home:", "www.example.com", "mail@example.com"]


def fill(home: Path, port: int) -> dict:
    """Hostile text in every place a page shows memory; returns what each place must show literally."""
    settings = Settings(home=home, timezone="UTC", update_max_attempts=1)
    shown: dict[str, list[str]] = {}
    with Memory(settings, embedder=HashingEmbedder()) as m:
        def released(fact):
            # Markup that makes a client fetch a URL is held for review when stored (memory is data); a person
            # released these, so that every page shows them: what is checked here is that they show as text.
            return m.facts.release(fact.id) if fact is not None and fact.held else fact

        shown["source"] = short(port, "source")
        shown["fact-kept"] = [WORD] + hostile(port, "fact-kept")
        kept = released(m.facts.add(" ".join(shown["fact-kept"]), "knowledge", 0.99, source=" ".join(shown["source"])))
        shown["fact-ref"] = [WORD, *reference_image(port, "fact-ref")]
        ref = released(m.facts.add(f"User {WORD} note\n\n" + "\n\n".join(reference_image(port, "fact-ref")),
                                   "context", 0.98))
        shown["fact-dropped"] = ["dropped"] + hostile(port, "fact-dropped")
        dropped = released(m.facts.add(" ".join(shown["fact-dropped"]) + " padding" * 100, "goal", 0.55))
        shown["fact-old"] = ["superseded"] + hostile(port, "fact-old")
        old = released(m.facts.add(" ".join(shown["fact-old"]), "preference", 0.9))
        shown["why"] = short(port, "why")
        shown["fact-actor"] = short(port, "fact-actor")
        shown["fact-new"] = ["replacement"] + hostile(port, "fact-new")
        with m.acting_as(" ".join(shown["fact-actor"])):
            # a correction into held text is refused: the replacement is written in place, then released
            new = m.facts.supersede(old.id, "replacement", reason=" ".join(shown["why"]))
            new = released(m.facts.update(new.id, content=" ".join(shown["fact-new"])))
        assert None not in (kept, ref, dropped, new), "a hostile fact was not stored"

        shown["summary"] = hostile(port, "summary")
        m.set_summaries({"workContext": " ".join(shown["summary"])})

        shown["daily"] = [WORD, *hostile(port, "daily"), *reference_image(port, "daily")]
        shown["daily-title"] = short(port, "daily-title")
        m.daily.append(f"- User {WORD} log\n" + "\n".join(f"- {line}" for line in hostile(port, "daily"))
                       + "\n\n" + "\n\n".join(reference_image(port, "daily")), title=" ".join(shown["daily-title"]))

        shown["core-v1"] = hostile(port, "core-v1")
        m.write_core("# Memory\n\n" + "\n".join(f"- {line}" for line in shown["core-v1"]), reason="first")
        shown["core"] = [WORD, *hostile(port, "core"), *reference_image(port, "core")]
        shown["core-reason"] = short(port, "core-reason")
        shown["core-actor"] = short(port, "core-actor")
        with m.acting_as(" ".join(shown["core-actor"])):
            # One line holds every construct: a search hit on MEMORY.md is one line.
            m.write_core(f"# Memory\n\n- User {WORD} core " + " ".join(hostile(port, "core")) + "\n\n"
                         + "\n\n".join(reference_image(port, "core")), reason=" ".join(shown["core-reason"]))

        shown["diary"] = [*hostile(port, "diary"), *reference_image(port, "diary")]
        m.documents.write(make_scope("default", "default"), "memory/dreams/2020-01-01.md",
                          "# Dream diary\n\n" + "\n".join(shown["diary"][:-2]) + "\n\n" + "\n\n".join(shown["diary"][-2:]))

        data = m.memory_data()
    budget = next(b for b in range(100, 8000, 25)
                  if kept.id in (r := build_injection(data, b, model="gpt-4o")).kept_fact_ids
                  and ref.id in r.kept_fact_ids and dropped.id in r.dropped_fact_ids)

    # A failed update: its error, its thread id and who queued it are shown on the Ingest page and in the sidebar.
    shown["error"] = hostile(port, "error")
    shown["thread"] = short(port, "thread")
    shown["queue-actor"] = short(port, "queue-actor")
    failing = ScriptedChatModel(default=RuntimeError(" ".join(shown["error"])))
    with Memory(settings, llm=failing, embedder=HashingEmbedder()) as m:
        with m.acting_as(" ".join(shown["queue-actor"])):
            m.queue.add([{"role": "user", "content": "I like tea."}], thread_id=" ".join(shown["thread"]))
        m.queue.flush()
        assert [i.thread_id for i in m.queue.failed()] == [" ".join(shown["thread"])]
    return {"shown": shown, "budget": budget, "kept_id": kept.id}


@pytest.fixture(scope="module")
def pixel():
    server = PixelServer()
    yield server
    server.close()


def test_the_pixel_server_sees_what_the_browser_fetches(pixel, page):
    """The detector itself: an image in a page reaches the pixel server (so silence below means something)."""
    page.set_content(f'<img src="http://127.0.0.1:{pixel.port}/selfcheck.png">')
    page.wait_for_load_state("networkidle")
    assert any("/selfcheck.png" in hit for hit in pixel.hits)
    pixel.hits.clear()


@pytest.fixture(scope="module")
def app(tmp_path_factory, pixel):
    base = tmp_path_factory.mktemp("memory_as_text")
    home = base / "home"
    filled = fill(home, pixel.port)
    log_path = base / "server.log"
    with start_streamlit(ROOT / "streamlit_app.py", port=free_port(), cwd=ROOT, log_path=log_path,
                         env=app_env(home, max_injection_tokens=filled["budget"],
                                     dream_schedule_enabled=False)) as server:  # the versions stay those written
        yield {"url": server.url, "home": home, "log": log_path, **filled}


def open_page(page, url: str, path: str) -> None:
    page.goto(f"{url}/{path}")
    page.get_by_role("heading", name=HEADINGS[path]).first.wait_for(timeout=60_000)
    settle(page)


def settle(page) -> None:
    wait_for_app(page)


# Every attribute through which a page could fetch or link to something, and all the text a page shows: its
# visible text, input values, and each data grid's cells. A grid draws on a canvas; its accessibility table
# holds the cells in view, so each grid is brought on screen and scrolled across to read every column.
COLLECT = """async () => {
  const attrs = ['src', 'srcset', 'href', 'xlink:href', 'action', 'formaction', 'poster', 'data', 'background'];
  const found = [];
  for (const el of document.querySelectorAll('*')) {
    for (const a of attrs) {
      const v = el.getAttribute(a);
      if (v !== null) found.push({tag: el.tagName.toLowerCase(), attr: a, value: v, html: el.outerHTML.slice(0, 400),
                                  sidebar: !!el.closest('[data-testid=stSidebar]')});
    }
  }
  const pause = () => new Promise(r => requestAnimationFrame(() => setTimeout(r, 120)));
  const grids = [];
  for (const frame of document.querySelectorAll('[data-testid=stDataFrame]')) {
    const cells = new Set();
    const read = () => frame.querySelectorAll('[role=gridcell], [role=columnheader]').forEach(c => cells.add(c.textContent));
    const scroller = frame.querySelector('.dvn-scroller');
    frame.scrollIntoView({block: 'center'});  // a grid draws (and mirrors) its cells when it is on screen
    await pause();
    read();
    if (scroller) {
      for (let x = 0; x < scroller.scrollWidth; x += Math.max(100, scroller.clientWidth / 2)) {
        scroller.scrollLeft = x;
        await pause();
        read();
      }
      scroller.scrollLeft = 0;
    }
    grids.push([...cells].join('\\n'));
  }
  const inputs = [...document.querySelectorAll('input, textarea')].map(i => i.value);
  return {found, grids, text: [document.body.innerText, ...grids, ...inputs].join('\\n')};
}"""


class Check:
    """Collects every problem a page shows, so that one run reports them all."""

    def __init__(self, page, app: dict, pixel: PixelServer) -> None:
        self.page, self.app, self.pixel = page, app, pixel
        self.problems: list[str] = []
        self.hits_before = len(pixel.hits)

    def bad_reference(self, tag: str, attr: str, value: str) -> str | None:
        """Why this attribute value is something memory text made, or None."""
        url = urljoin(self.page.url, value.strip())
        parts = urlsplit(url)
        if parts.scheme in ("data", "javascript", "mailto", "vbscript", "blob", "file"):
            return f"a {parts.scheme}: URL"
        if parts.port == self.pixel.port:
            return "points at the pixel server"
        if "example.com" in parts.netloc:
            return "points at example.com"
        if tag == "img" and parts.netloc != urlsplit(self.app["url"]).netloc:
            return "an image from outside the app"
        if parts.netloc != urlsplit(self.app["url"]).netloc and not url.startswith(ALLOWED_EXTERNAL):
            return "a link out of the app"
        return None

    def page_state(self, where: str, literals: dict[str, list[str]], *, sidebar: bool = False) -> dict:
        """No reference made from memory text (in the page's main part, or in the sidebar, which every page
        shares and test_sidebar checks), and each place's text shown literally somewhere on the page. The page
        is read again until every text is there (a page still drawing), up to a deadline."""
        deadline = time.monotonic() + 60
        while True:
            settle(self.page)
            state = self.page.evaluate(COLLECT)
            shown = visible(state["text"])
            missing = {place: [p for p in parts if p not in shown] for place, parts in literals.items()}
            if not any(missing.values()) or time.monotonic() > deadline:
                break
        for item in state["found"]:
            if item["sidebar"] != sidebar:
                continue
            why = self.bad_reference(item["tag"], item["attr"], item["value"])
            if why:
                self.problems.append(f"{where}: <{item['tag']} {item['attr']}=...> {why}: {item['html']}")
        for place, lost in missing.items():
            if lost:
                self.problems.append(f"{where}: the {place} text is not shown literally; missing {lost}")
        return state

    def element_text(self, where: str, locator, parts: list[str]) -> None:
        """One element (a caption, a message) shows `parts` literally: Markdown rendered none of it."""
        locator.first.wait_for(timeout=30_000)
        text = visible(locator.first.inner_text())
        missing = [p for p in parts if p not in text]
        if missing:
            html = locator.first.evaluate("e => e.outerHTML")
            self.problems.append(f"{where}: rendered instead of shown literally {missing}: {html[:1500]}")

    def finish(self) -> None:
        wait_for_app(self.page)
        hits = self.pixel.hits[self.hits_before:]
        if hits:
            self.problems.append(f"the pixel server was asked for: {hits}")
        if self.page.locator("[data-testid=stException]").count():
            self.problems.append("the page shows an exception")
        assert not self.problems, "\n".join(self.problems)


def test_ingest_page_and_sidebar(app, page, pixel):
    shown = app["shown"]
    check = Check(page, app, pixel)
    open_page(page, app["url"], "ingest")  # the Overview is the landing page now (issue 23)
    page.get_by_role("heading", name="Failed updates").wait_for(timeout=30_000)
    check.page_state("Ingest page (failed updates)", {k: shown[k] for k in ("error", "thread", "queue-actor")})
    # A hostile thread id typed into the page comes back in the "Queued ..." message.
    thread = " ".join(short(pixel.port, "typed-thread"))
    page.get_by_label("Conversation").fill("User: I drink green tea every morning.")
    page.get_by_role("textbox", name="Thread id (optional)").fill(thread)
    page.get_by_text("Queue (debounced)").click()
    page.get_by_role("button", name="Ingest", exact=True).click()
    message = page.locator("[data-testid=stAlertContainer]").filter(has_text="Queued")
    check.element_text("Ingest page, Queued message", message, short(pixel.port, "typed-thread"))
    check.page_state("Ingest page (after queueing)", {})
    check.finish()


def test_sidebar(app, page, pixel):
    """Every page's sidebar: the scope's last queue error is shown there."""
    check = Check(page, app, pixel)
    open_page(page, app["url"], "facts")
    caption = page.locator("[data-testid=stSidebar] [data-testid=stCaptionContainer]").filter(has_text="Last error")
    check.element_text("sidebar, Last error caption", caption, app["shown"]["error"][:2])
    check.page_state("sidebar", {}, sidebar=True)
    check.finish()


def test_facts_page(app, page, pixel):
    shown = app["shown"]
    check = Check(page, app, pixel)
    open_page(page, app["url"], "facts")
    page.locator("[data-testid=stDataFrameResizable]").first.wait_for(timeout=30_000)
    check.page_state("Facts page, facts table", {k: shown[k] for k in ("fact-kept", "fact-ref", "fact-dropped",
                                                                          "fact-new", "source")})
    page.get_by_role("tab", name="Changes").click()
    check.page_state("Facts page, Changes tab", {k: shown[k] for k in ("fact-old", "fact-new", "why")})
    page.get_by_role("tab", name="History").click()
    check.page_state("Facts page, History tab", {"fact-actor": shown["fact-actor"]})
    check.finish()


def test_daily_page(app, page, pixel):
    shown = app["shown"]
    check = Check(page, app, pixel)
    open_page(page, app["url"], "daily")
    check.page_state("Daily page", {"daily": shown["daily"], "daily-title": shown["daily-title"]})
    page.get_by_label("Filter blocks containing").fill(WORD)
    page.get_by_label("Filter blocks containing").press("Enter")
    page.get_by_text("1 matching block(s)").wait_for(timeout=30_000)
    check.page_state("Daily page, filtered", {"daily": shown["daily"]})
    check.finish()


def test_dream_page(app, page, pixel):
    shown = app["shown"]
    check = Check(page, app, pixel)
    open_page(page, app["url"], "dream")
    page.get_by_role("heading", name="Dream diaries").wait_for(timeout=30_000)
    check.page_state("Dream page", {k: shown[k] for k in ("core", "core-v1", "diary")})
    caption = page.locator("[data-testid=stCaptionContainer]").filter(has_text=re.compile(r"^v\d+: "))
    check.element_text("Dream page, version caption", caption, shown["core-reason"] + shown["core-actor"])
    check.finish()


def test_context_preview_page(app, page, pixel):
    shown = app["shown"]
    check = Check(page, app, pixel)
    open_page(page, app["url"], "context_preview")
    page.get_by_text("Dropped by the budget").wait_for(timeout=30_000)
    code = page.locator("[data-testid=stCode]").first
    # The injected text is what an agent is given: memory as data, its markup written so that it cannot act
    # (memory_core.text.instructions.as_data) and a summary sentence that carries such markup left out; the page
    # shows that text literally.
    from memory_core.text.instructions import as_data

    check.element_text("Context Preview, injected text", code, [as_data(p) for p in shown["fact-kept"]])
    state = check.page_state("Context Preview (kept and dropped tables)",
                             {k: shown[k] for k in ("fact-kept", "fact-ref", "fact-dropped")})
    kept, dropped = state["grids"][:2]
    assert shown["fact-kept"][1] in kept and shown["fact-ref"][1] in kept and shown["fact-dropped"][1] in dropped
    check.finish()


def test_search_page(app, page, pixel):
    shown = app["shown"]
    check = Check(page, app, pixel)
    open_page(page, app["url"], "search")
    page.get_by_label("Query").fill(WORD)
    page.get_by_label("Query").press("Enter")
    expanders = page.locator("[data-testid=stExpander]")
    expanders.first.wait_for(timeout=30_000)
    settle(page)
    open_all(page, expanders)
    core_line = [p for p in shown["core"] if not p.startswith(("![ref]", "[core]"))]
    check.page_state("Search page, hits expanded", {**{k: shown[k] for k in ("fact-kept", "fact-ref", "daily")},
                                                    "core": core_line})
    labels = page.locator("[data-testid=stPageLink]").filter(has_text="Open this fact")
    open_all(page, expanders)  # a rerun while the page was read may have drawn them closed again
    check.element_text("Search page, fact hit's page link", labels, shown["source"])
    check.finish()


def test_an_uncaught_error_shows_a_generic_message(app, page):
    """MEMORY.md turned into a folder for a moment: reading it raises on the Dream page."""
    core = app["home"] / "MEMORY.md"
    aside = app["home"] / "MEMORY.md.aside"
    before = app["log"].read_text(errors="replace")
    core.rename(aside)
    core.mkdir()
    try:
        page.goto(f"{app['url']}/dream")
        page.get_by_text("This app has encountered an error").wait_for(timeout=60_000)
        settle(page)
        text = page.evaluate("document.body.innerText")
        html = page.content()
        shown = page.locator("[data-testid=stException]").first.evaluate("e => e.outerHTML")
    finally:
        core.rmdir()
        aside.rename(core)
    for leak in ("Traceback", "IsADirectoryError", "Is a directory", "Errno", 'File "', str(ROOT)):
        assert leak not in text and leak not in html, f"the page shows {leak!r}"
    # The operator's sidebar names the storage folder by design; the error itself names no path.
    assert "This app has encountered an error" in shown
    for leak in (str(app["home"]), "MEMORY.md", ".py", "/tmp", "/work"):
        assert leak not in shown, f"the error message shows {leak!r}: {shown}"
    assert page.locator("[data-testid=stException]").count() == 1
    deadline = time.monotonic() + 10
    while True:  # the log line may trail the page by a moment
        logged = app["log"].read_text(errors="replace")[len(before):]
        if "IsADirectoryError" in logged or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert "Traceback" in logged and "IsADirectoryError" in logged and "pages/dream.py" in logged, logged[-3000:]
