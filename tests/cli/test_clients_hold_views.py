"""The command line and the importers hold a view of one scope or the admin handle, never the facade's parts;
the MCP server never even imports the facade.

Read from the source: any `<name>.<part>` where <name> is a Memory in these modules and <part> is one of the
facade's part descriptors (`memory.facts`, `memory.queue`, ...) would be the service locator coming back."""

from __future__ import annotations

import ast
from pathlib import Path

from memory_core.memory import Memory, _Part

ROOT = Path(__file__).resolve().parents[2] / "memory_core"
PARTS = {name for name, value in vars(Memory).items() if isinstance(value, _Part)}


def part_reads(path: Path) -> list[str]:
    """`memory.<part>` reads in a module (`memory` is what every client calls its Memory)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (isinstance(node, ast.Attribute) and node.attr in PARTS and isinstance(node.value, ast.Name)
                and node.value.id == "memory"):
            found.append(f"{path.parent.name}/{path.name}:{node.lineno} memory.{node.attr}")
    return found


def test_the_part_names_are_the_ones_api_md_keeps():
    assert {"facts", "queue", "daily", "plans", "access", "index", "documents", "clock", "db"} <= PARTS


def test_the_cli_and_the_importers_read_no_part_of_memory():
    modules = sorted((ROOT / "cli").glob("*.py")) + sorted((ROOT / "portability").glob("*.py"))
    assert len(modules) >= 10
    assert [hit for path in modules for hit in part_reads(path)] == []


def test_the_check_finds_a_part_read(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("def f(memory, view):\n    return memory.facts.count() + memory.scoped().facts.count()"
                      " + view.facts.count() + memory.admin.scopes()\n")
    assert part_reads(sample) == [f"{tmp_path.name}/sample.py:2 memory.facts"]


def facade_imports(path: Path) -> list[str]:
    """Imports of the facade module (`memory_core.memory`) in a module, typing-only ones included."""
    return [f"{path.name}:{node.lineno}" for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.ImportFrom) and node.module == "memory_core.memory"]


def test_the_mcp_server_takes_views_and_the_admin_handle_not_the_memory():
    modules = sorted((ROOT / "mcp").glob("*.py"))
    assert len(modules) >= 8
    assert [hit for path in modules for hit in facade_imports(path)] == []  # (its tools call their view `memory`)


def test_the_check_finds_a_facade_import(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from memory_core.memory import Memory\n")
    assert facade_imports(sample) == ["sample.py:3"]
