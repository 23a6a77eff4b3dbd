"""Packages import one way: no two packages of memory_core import each other (imports under TYPE_CHECKING aside).

Read from the source, as `python ../shared/tools/layers.py` reads modules: a package circle (store importing a
rule of consistency that imports the store) is a layer no longer saying what it may import.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "memory_core"


def _runtime_imports(tree: ast.AST) -> list[str]:
    """The memory_core modules a file imports when it runs (not those under `if TYPE_CHECKING:`)."""
    typing_only = {id(node) for branch in ast.walk(tree)
                   if isinstance(branch, ast.If) and "TYPE_CHECKING" in ast.unparse(branch.test)
                   for node in ast.walk(branch)}
    found = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("memory_core."):
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name.startswith("memory_core.")]
    return found


def package_edges(root: Path = PACKAGE) -> dict[tuple[str, str], set[str]]:
    """(importing package, imported package) -> the files that make the arrow; a top-level module is its own package."""
    edges: dict[tuple[str, str], set[str]] = {}
    for path in root.rglob("*.py"):
        own = path.relative_to(root).parts[0].removesuffix(".py")
        for module in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
            other = module.split(".")[1]
            if other != own:
                edges.setdefault((own, other), set()).add(str(path.relative_to(root)))
    return edges


def circles(edges: dict[tuple[str, str], set[str]]) -> list[str]:
    """Each pair of packages that import each other, with the files on both sides."""
    return [f"{a} <-> {b}: {sorted(files)} / {sorted(edges[(b, a)])}"
            for (a, b), files in sorted(edges.items()) if a < b and (b, a) in edges]


def test_no_two_packages_import_each_other():
    assert circles(package_edges()) == []


def test_a_package_circle_is_found(tmp_path):
    for name, text in {"store/a.py": "from memory_core.rules.b import x\n",
                       "rules/b.py": "from memory_core.store.a import y\n",
                       "views/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                     "    from memory_core.store.a import y\n",
                       "store/d.py": "from memory_core.views.c import z\n"}.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    found = circles(package_edges(tmp_path))
    assert found == ["rules <-> store: ['rules/b.py'] / ['store/a.py']"]  # views -> store is typing only
