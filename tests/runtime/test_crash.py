"""SIGKILL at random moments: appends stay whole (the first of a day too) and every MEMORY.md on disk is a
recorded version.

One helper process imports memory_core once and forks a worker per round, so that a round costs a fork
rather than an interpreter start; the worker appends (or writes MEMORY.md) in a loop until the helper
kills it after a random delay. This process then opens the files afresh and checks them.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
from datetime import date, datetime, timezone
from pathlib import Path

import pytest

from memory_core.clock import SystemClock
from memory_core.tiers.documents import LocalDocumentStore
from memory_core.scope import Scope
from memory_core.settings import Settings
from memory_core.store.db import Database
from memory_core.store.migrations import migrate
from memory_core.tiers.core import FOUND_ON_DISK, CoreTier
from memory_core.tiers.daily import DailyTier, daily_header

ROOT = Path(__file__).parents[2]
WHEN = datetime(2026, 1, 1, tzinfo=timezone.utc)
DAY = WHEN.date()
WORDS = 400_000  # one block is about 1.5 MB: its write takes long enough to be cut short
LINES = 400  # lines of one MEMORY.md version

HELPER = textwrap.dedent("""
    import json, os, resource, signal, sys, time, traceback
    from datetime import datetime, timezone
    from pathlib import Path
    from memory_core.clock import SystemClock
    from memory_core.tiers.documents import LocalDocumentStore
    from memory_core.scope import Scope
    from memory_core.settings import Settings
    from memory_core.store.db import Database
    from memory_core.store.migrations import migrate
    from memory_core.tiers.core import CoreTier
    from memory_core.tiers.daily import DailyTier

    WHEN = datetime(2026, 1, 1, tzinfo=timezone.utc)

    def work(job, ready):
        folder = Path(job["folder"])
        # durable=False: no fsync, so the writes themselves (where a kill tears a block) fill the window
        store = LocalDocumentStore(lambda _scope: folder, durable=job["durable"])
        if job["mode"] == "daily":
            tier = DailyTier(store, Settings(home=folder, timezone="UTC", max_document_chars=10**8), SystemClock())
            if job.get("fsize") is not None:
                # A write that would grow a file past `fsize` bytes kills the process (Python ignores the
                # signal; a crash would not): a crash at a chosen byte of a block.
                signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
                resource.setrlimit(resource.RLIMIT_FSIZE, (job["fsize"], job["fsize"]))
            os.write(ready, b"r")
            for i in range(1, 10**9):
                tier.append(("w%d " % i) * job["words"] + "END", title="Block", when=WHEN)
        if job.get("between"):
            # Kill between the file and its version row: the write reports the file written, then waits there
            # for the kill (a point chosen by what the process says, not by timing).
            plain = store.write

            def write_then_wait(scope, path, text):
                plain(scope, path, text)
                os.write(ready, b"w")
                time.sleep(3600)

            store.write = write_then_wait
        db = Database(job["url"], migrate=migrate)
        tier = CoreTier(store, db, SystemClock())
        scope = Scope(job["user"], "bot")
        tier.versions(scope)  # connected and migrated before the clock starts
        os.write(ready, b"r")
        for i in range(1, 10**9):
            tier.write(scope, ("- version %d\\n" % i) * job["lines"], "round %d" % i)

    from memory_core.text.credentials import mask_secrets
    mask_secrets("warm up: the secret rules load once, here, before any clock starts")
    print("ready", flush=True)
    for line in sys.stdin:
        job = json.loads(line)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            try:
                work(job, w)
            except BaseException:
                traceback.print_exc()
            os._exit(1)
        os.close(w)
        started = os.read(r, 1) == b"r"
        if job.get("between"):
            started = started and os.read(r, 1) == b"w"
        os.close(r)
        deadline, status = time.monotonic() + job["delay"], None
        while job.get("fsize") is not None and status is None and time.monotonic() < deadline:
            done, code = os.waitpid(pid, os.WNOHANG)  # the size limit kills it: wait for that
            status = code if done else time.sleep(0.002)
        if status is None:
            time.sleep(max(0.0, deadline - time.monotonic()))
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
        killed = started and os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGKILL, signal.SIGXFSZ)
        print("killed" if killed else "failed %d" % status, flush=True)
""")


class Helper:
    """The forking helper process: `kill_after(job)` runs one round."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", HELPER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert self.proc.stdout.readline().strip() == "ready"

    def kill_after(self, **job) -> None:
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline().strip() == "killed"

    def close(self) -> None:
        self.proc.stdin.close()
        assert self.proc.wait(timeout=30) == 0


@pytest.fixture
def helper():
    h = Helper()
    yield h
    h.close()


def daily_tier(folder: Path) -> DailyTier:
    store = LocalDocumentStore(lambda _scope: folder)
    return DailyTier(store, Settings(home=folder, timezone="UTC", max_document_chars=10**8), SystemClock())


def assert_whole_blocks(text: str, words: int, last: str | None = None) -> int:
    """The day's text is its header and whole `## Block` blocks (and `last` at the end); return their number."""
    header = daily_header(DAY)
    assert text.startswith(header) and text.count("# Daily Memory") == 1
    blocks = text[len(header):].split("## Block (00:00)\n")
    assert blocks[0] == ""
    blocks = blocks[1:]
    if last is not None:
        assert blocks[-1] == f"{last}\n\n"
        blocks = blocks[:-1]
    for block in blocks:
        assert block.endswith(" END\n\n"), f"a torn block: ...{block[-60:]!r}"
        found = block.split()
        assert len(found) == words + 1 and len(set(found[:-1])) == 1
    return len(blocks)


@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_sigkill_during_appends_never_shows_a_torn_block(tmp_path, helper):
    """Half the rounds are killed after a random delay (between a block and its sidecar, in the sidecar's
    rename, ...); in the other half a file size limit kills the worker at a random byte of its writes, as
    the window of a write itself is too short to hit by timing alone. Those rounds wait for the size limit to
    kill the worker however slow the machine is (the 300 s are a safety net), so that they tear a block
    every time."""
    rng = random.Random(11)
    block = len(f"## Block (00:00)\n{'w1 ' * WORDS}END\n\n")
    torn = first = 0
    for n in range(40):
        folder = tmp_path / f"r{n}"  # a fresh folder: the first append of a day is among those cut short
        fsize = rng.randrange(3 * block) if n % 2 else None
        helper.kill_after(mode="daily", folder=str(folder), durable=False, words=WORDS, fsize=fsize,
                          delay=rng.uniform(0, 0.06) if fsize is None else 300.0)
        target = folder / "memory" / f"{DAY.isoformat()}.md"
        tier = daily_tier(folder)
        text = tier.read(DAY) or ""  # None or "": killed before the first append began or was whole
        on_disk = target.stat().st_size if target.exists() else 0
        whole = assert_whole_blocks(text, WORDS) if text else 0
        visible = len(text.encode())
        torn += on_disk > visible
        first += on_disk > visible and whole == 0
        tier.append("after the crash", title="Block", when=WHEN)
        assert assert_whole_blocks(daily_tier(folder).read(DAY), WORDS, last="after the crash") == whole
    # the rounds did cut appends short, the first of a day among them
    assert torn >= 10 and first >= 3, (torn, first)


def test_an_append_cut_short_by_the_file_size_limit_leaves_nothing_visible(tmp_path):
    """Deterministic: RLIMIT_FSIZE kills the first append of a day halfway through its block."""
    folder = tmp_path / "home"
    code = textwrap.dedent(f"""
        import resource, signal
        from pathlib import Path
        from tests.runtime.test_crash import WHEN, daily_tier
        tier = daily_tier(Path({str(folder)!r}))
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # Python ignores it; let it kill, as a crash would
        resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))
        tier.append("x " * 200_000 + "END", title="Block", when=WHEN)
    """)
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == -signal.SIGXFSZ
    assert (folder / "memory" / f"{DAY.isoformat()}.md").stat().st_size == 100_000  # the torn block is there
    tier = daily_tier(folder)
    assert tier.read(DAY) == ""  # an empty log: the block cut short is not shown
    tier.append("after the crash", title="Block", when=WHEN)
    assert tier.read(DAY) == daily_header(DAY) + "## Block (00:00)\nafter the crash\n\n"


def assert_whole_version(text: str) -> None:
    lines = text.splitlines()
    assert len(lines) == LINES and len(set(lines)) == 1, text[:80]


@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_sigkill_during_memory_writes_leaves_a_recorded_memory(tmp_path, helper, database_url):
    Database(database_url, migrate=migrate).ensure_ready()  # migrated before any worker starts
    db = Database(database_url, migrate=migrate)
    rng = random.Random(7)
    found = 0
    for n in range(30):
        folder = tmp_path / f"r{n}"
        scope = Scope(f"r{n}", "bot")
        # every third round is killed where the process says it wrote the file and not yet its row; the others
        # at a random moment
        between = n % 3 == 0
        helper.kill_after(mode="core", folder=str(folder), durable=False, url=database_url, user=scope.user_id,
                          lines=LINES, delay=0.0 if between else rng.uniform(0, 0.05), between=between)
        store = LocalDocumentStore(lambda _scope: folder)
        on_disk = store.read(scope, "MEMORY.md")
        versions = CoreTier(store, db, SystemClock()).versions(scope)  # a fresh tier, as in a new process
        if on_disk is None:
            assert versions == []
            continue
        assert_whole_version(on_disk)
        assert versions[0].content == on_disk
        assert [v.version for v in versions] == list(range(len(versions), 0, -1))
        for v in versions:
            assert_whole_version(v.content)
        found += versions[0].reason == FOUND_ON_DISK
        assert versions[0].reason == FOUND_ON_DISK or not between  # the file the kill left is recorded
        assert CoreTier(store, db, SystemClock()).versions(scope) == versions  # recorded once, not again
        after = CoreTier(store, db, SystemClock()).write(scope, "- after the crash\n", "after")
        assert after.version == versions[0].version + 1 and store.read(scope, "MEMORY.md") == "- after the crash\n"
    db.dispose()
    assert found >= 10, found  # kills did fall between the file and its version row
