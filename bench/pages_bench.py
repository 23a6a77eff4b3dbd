"""Issue 5: time to first render of each page in the browser, 10,000 facts against 100; Context Preview's
server time for a budget change."""

from __future__ import annotations

import os
import random
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import datetime, timezone
from pathlib import Path

from memory_core import Memory, Settings
from memory_core.facts.api import content_key
from memory_core.store.models import FactRow
from bench.common import row
from bench.facts_and_injection import WORDS

ROOT = Path(__file__).resolve().parents[1]
PAGES = {"": "Overview", "ingest": "Ingest", "facts": "Facts", "daily": "Daily logs", "dream": "Deep Dream",
         "context_preview": "Context Preview", "search": "Search", "import_export": "Import / Export", "usage": "Usage"}


def workspace(n: int) -> Path:
    home = Path(tempfile.mkdtemp(prefix=f"mc-pages-{n}-"))
    memory = Memory(Settings(home=home, timezone="UTC", max_facts=10**6))
    rnd = random.Random(n)
    now = datetime.now(timezone.utc)
    with memory.db.write() as s:
        for i in range(n):
            content = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(5, 12))) + f" {secrets.token_hex(3)}"
            s.add(FactRow(id=f"fact_{i:08x}", user_id="default", agent_name="default", content=content,
                          content_key=content_key(content), category=rnd.choice(["goal", "knowledge", "preference"]),
                          confidence=round(rnd.random(), 3), created_at=now, updated_at=now))
    memory.daily.append("- a daily block for the benchmark")
    memory.close()
    return home


def serve(home: Path, port: int) -> subprocess.Popen:
    env = {**os.environ, "MEMORY_CORE_HOME": str(home), "MEMORY_CORE_TIMEZONE": "UTC"}
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(ROOT / "streamlit_app.py"), "--server.port",
                             str(port), "--server.headless", "true"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            if urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1).read() == b"ok":
                return proc
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("streamlit did not start")


def render_times(port: int, browser) -> dict[str, float]:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"http://127.0.0.1:{port}/")  # warm the process: caches, models, the worker
    page.get_by_role("heading", name="Overview").first.wait_for(timeout=120_000)
    times: dict[str, list[float]] = {p: [] for p in PAGES}
    for _ in range(3):
        for path, title in PAGES.items():
            start = time.perf_counter()
            page.goto(f"http://127.0.0.1:{port}/{path}")
            page.get_by_role("heading", name=title).first.wait_for(timeout=120_000)
            page.wait_for_function("() => !document.querySelector('[data-testid=stStatusWidget]')", timeout=120_000)
            times[path].append(time.perf_counter() - start)
    page.close()
    return {p: statistics.median(v) for p, v in times.items()}


def budget_change_server_time(home: Path) -> float:
    from streamlit.testing.v1 import AppTest

    os.environ["MEMORY_CORE_HOME"] = str(home)
    from memory_core.dashboard import helpers as dashboard

    dashboard._memory.clear()
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=120).run()
    at.switch_page("pages/context_preview.py").run()
    samples = []
    for value in (1500, 1000, 500, 250, 100):
        start = time.perf_counter()
        at.slider(key="cp_budget").set_value(value).run()
        samples.append(time.perf_counter() - start)
    dashboard._memory().close()
    dashboard._memory.clear()
    return statistics.median(samples)


def main() -> None:
    from playwright.sync_api import sync_playwright

    homes = {100: workspace(100), 10_000: workspace(10_000)}
    results = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=os.environ.get("MEMORY_CORE_CHROMIUM", "/usr/bin/chromium"),
                                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        for n, home in homes.items():
            port = 8700 + len(results)
            proc = serve(home, port)
            try:
                results[n] = render_times(port, browser)
            finally:
                proc.terminate()
                proc.wait(30)
        browser.close()
    print("time to first render in chromium (median of 3 visits), 10,000 facts against 100")
    row("page", "100 facts ms", "10,000 facts ms", "ratio")
    for path in PAGES:
        row(PAGES[path], f"{results[100][path] * 1000:.0f}", f"{results[10_000][path] * 1000:.0f}",
            f"{results[10_000][path] / results[100][path]:.2f}x")
    for n, home in homes.items():
        row(f"Context Preview: server time of a budget change, {n:,} facts",
            f"{budget_change_server_time(home) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
