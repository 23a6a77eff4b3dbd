"""`python -m bench`: its help lists the sections and their options and runs none of them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bench", *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_lists_every_section_and_runs_none(flag):
    from bench.__main__ import SECTIONS

    done = bench(flag)
    assert done.returncode == 0, done.stderr
    listed = [line.split()[0] for line in done.stdout.split("sections:")[1].splitlines() if line.strip()]
    assert listed == list(SECTIONS)
    assert "--seconds S" in done.stdout and "--items N" in done.stdout
    assert "ms" not in done.stdout.split("sections:")[0]  # no benchmark ran


def test_help_after_a_section_name_still_only_prints_help():
    done = bench("mcp", "--help")
    assert done.returncode == 0 and "sections:" in done.stdout


def test_an_unknown_section_is_refused_with_the_list():
    done = bench("nonsense")
    assert done.returncode == 2
    assert "unknown section(s) nonsense" in done.stderr and "stale_memory" in done.stderr


def test_every_section_names_a_module_with_a_main():
    import importlib

    from bench.__main__ import SECTIONS

    for module, _what, _options in SECTIONS.values():
        assert callable(importlib.import_module(f"bench.{module}").main)
