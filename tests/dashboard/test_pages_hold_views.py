"""The entrypoint, the pages and the dashboard's modules hold a scoped view or the admin handle, never the Memory.

Read from the source: naming the app's Memory (`_memory`, the old `get_memory`), the `Memory` class or its module,
or reading an attribute that only the facade has (a part that neither a view nor the admin handle offers, the
worker, `scoped`, `parts`) would bring the service locator back. Only `dashboard/helpers.py` holds the Memory."""

from __future__ import annotations

import ast
from pathlib import Path

from memory_core.memory import Memory, _Part

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN_NAMES = {"Memory", "_memory", "get_memory"}
FORBIDDEN_MODULES = {"memory_core.memory", "memory_core.composition", "memory_core.views.parts"}
FACADE_ONLY = {name for name, value in vars(Memory).items() if isinstance(value, _Part)} | {
    "worker", "dream_schedule", "parts", "_parts", "scoped"}


def client_modules() -> list[Path]:
    dashboard = [p for p in sorted((ROOT / "memory_core" / "dashboard").glob("*.py")) if p.name != "helpers.py"]
    return [ROOT / "streamlit_app.py", *sorted((ROOT / "pages").glob("*.py")), *dashboard]


def facade_reads(path: Path, allowed: set[str]) -> list[str]:
    """Where a module names the Memory, its module, or an attribute only the facade has (`allowed`: what a view or
    the admin handle offers under the same name)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        where = f"{path.name}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            found.append(f"{where} {node.id}")
        elif isinstance(node, ast.Attribute) and (node.attr in FORBIDDEN_NAMES
                                                  or node.attr in FACADE_ONLY - allowed):
            found.append(f"{where} .{node.attr}")
        elif isinstance(node, ast.ImportFrom):
            names = {alias.name for alias in node.names}
            if node.module in FORBIDDEN_MODULES or names & FORBIDDEN_NAMES:
                found.append(f"{where} from {node.module} import {', '.join(sorted(names))}")
        elif isinstance(node, ast.Import):
            found += [f"{where} import {a.name}" for a in node.names if a.name in FORBIDDEN_MODULES]
    return found


def offered(sqlite_memory) -> set[str]:
    """The names a view and the admin handle offer (a page may read `view.facts`, `admin.access`)."""
    return set(dir(sqlite_memory.scoped())) | set(dir(sqlite_memory.admin))


def test_the_facade_only_names_are_the_parts_views_do_not_offer(sqlite_memory):
    only = FACADE_ONLY - offered(sqlite_memory)
    assert {"worker", "scoped", "parts", "dreamer", "contexts", "ledger", "extractor"} <= only
    assert not only & {"facts", "queue", "daily", "plans", "access", "settings"}  # a view's or the admin's


def test_the_pages_and_the_entrypoint_hold_a_view_or_the_admin_handle(sqlite_memory):
    modules = client_modules()
    assert len(modules) >= 20 and ROOT / "pages" / "dream.py" in modules
    allowed = offered(sqlite_memory)
    assert [hit for path in modules for hit in facade_reads(path, allowed)] == []


def test_the_check_finds_the_memory_and_its_parts(tmp_path, sqlite_memory):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from memory_core.dashboard.helpers import _memory, admin_handle, view\n"
        "from memory_core.memory import Memory\n"
        "shared = get_memory()\n"
        "shared.worker.next_dream()\n"
        "view().facts.count() + admin_handle().access.grants() + shared.dreamer.approve('x')\n")
    assert facade_reads(sample, offered(sqlite_memory)) == [
        "sample.py:1 from memory_core.dashboard.helpers import _memory, admin_handle, view",
        "sample.py:2 from memory_core.memory import Memory",
        "sample.py:3 get_memory", "sample.py:4 .worker", "sample.py:5 .dreamer"]
