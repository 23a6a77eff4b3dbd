"""`memory-core doctor`: the consistency check in a subprocess, on SQLite and PostgreSQL."""

from __future__ import annotations

import json

import pytest

from memory_core import Memory, Settings
from tests.cli.test_cli import cli_env, refused, run


@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_doctor_reports_stale_copies_and_conflicts_then_nothing_once_fixed(tmp_path, database_url):
    env = cli_env(tmp_path / "home", database_url)
    with Memory(Settings(home=tmp_path / "home", database_url=database_url, llm_api_key=None, llm_base_url=None),
                worker=False) as m:
        acme = m.facts.add("User works at Acme", "context", 0.9, user_id="ana", agent_name="coder")
        m.facts.invalidate(acme.id)
        m.set_summaries({"workContext": "User works at Acme."}, user_id="ana", agent_name="coder")  # by hand, after
        lisbon = m.facts.add("User lives in Lisbon", "context", 0.9, user_id="ana", agent_name="coder")
        m.facts.add("User lives in Porto", "context", 0.8, user_id="ana", agent_name="coder")
        m.facts.add("User likes tea", "preference", 0.8, user_id="bob", agent_name="coder")
    done = run(env, "doctor", "--json")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["findings"] == 2 and report["scopes"]["bob/coder"] == []
    kinds = {f["kind"]: f for f in report["scopes"]["ana/coder"]}
    assert kinds["stale"]["place"] == "summary:workContext" and kinds["stale"]["factIds"] == [acme.id]
    assert lisbon.id in kinds["conflict"]["factIds"]
    text = run(env, "doctor", "--user", "ana", "--agent", "coder")
    assert text.returncode == 1 and "2 finding(s) in 1 scope(s)" in text.stdout
    with Memory(Settings(home=tmp_path / "home", database_url=database_url, llm_api_key=None, llm_base_url=None),
                worker=False) as m:
        m.set_summaries({"workContext": "User writes Rust."}, user_id="ana", agent_name="coder")
        m.facts.invalidate(lisbon.id)
    clean = run(env, "doctor", "--user", "ana", "--agent", "coder")
    assert clean.returncode == 0 and "No contradictions in 1 scope(s)." in clean.stdout


def test_doctor_refuses_half_a_scope(tmp_path):
    assert "--user and --agent go together" in refused(cli_env(tmp_path / "home"), "doctor", "--user", "ana")
