"""`import memory_core` and the CLI's parser load no database layer (issue 35): it comes with the first use."""

from __future__ import annotations

import subprocess
import sys

import pytest


def run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_import_memory_core_does_not_import_sqlalchemy():
    assert run("import sys, memory_core; print('sqlalchemy' in sys.modules, 'sqlmodel' in sys.modules)") == "False False"


def test_the_public_names_load_on_first_use():
    out = run("import sys, memory_core; from memory_core import Memory, Settings, build_injection; "
              "print(Memory.__name__, 'sqlalchemy' in sys.modules, sorted(memory_core.__all__) == sorted("
              "n for n in memory_core.__all__ if getattr(memory_core, n, None) is not None))")
    assert out == "Memory True True"
    with pytest.raises(AttributeError):
        import memory_core

        memory_core.NotAThing  # noqa: B018


def test_the_command_line_help_needs_no_database():
    out = run("import sys; sys.argv = ['memory-core', '--help']\nfrom memory_core.cli.main import main\n"
              "try:\n    main()\nexcept SystemExit:\n    pass\nprint('sqlalchemy' in sys.modules)")
    assert out.splitlines()[-1] == "False"
