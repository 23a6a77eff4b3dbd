"""The Dream page's review of proposed dreams (Settings.dream_review), through AppTest."""

from __future__ import annotations

import pytest

from memory_core.dashboard.helpers import _memory
from tests.app.test_app import app_env, page  # noqa: F401  (the fixture)


@pytest.fixture
def review_env(app_env, monkeypatch):
    monkeypatch.setenv("MEMORY_CORE_DREAM_REVIEW", "true")
    _memory.clear()
    yield app_env


def test_run_then_approve_on_the_page(review_env):
    memory = _memory()
    assert memory.settings.dream_review
    memory.daily.append("- User likes surfing at Carcavelos")
    at = page("dream")
    at.button(key="dream_run").click().run()
    assert not at.exception and memory.read_core() is None
    [proposal] = memory.dream_proposals()
    assert any("surfing" in c.value for c in at.code)
    at.button(key=f"approve_{proposal.id}").click().run()
    assert not at.exception
    assert "surfing" in memory.read_core()
    assert any("Approved: MEMORY.md has the proposed text now" in s.value for s in at.success)


def test_reject_on_the_page(review_env):
    memory = _memory()
    memory.daily.append("- User likes surfing at Carcavelos")
    proposal = memory.deep_dream(1).proposal_id
    at = page("dream")
    at.button(key=f"reject_{proposal}").click().run()
    assert memory.read_core() is None and memory.dream_proposals() == []


def test_a_dream_that_changes_nothing_is_not_offered_for_approval(review_env):
    memory = _memory()
    memory.daily.append("- User likes surfing at Carcavelos")
    memory.approve_dream(memory.deep_dream(1).proposal_id)
    result = memory.deep_dream(1, force=True)  # the same logs, the same MEMORY.md
    assert result.status == "skipped_unchanged" and memory.dream_proposals() == []
    at = page("dream")
    assert not any(b.key.startswith("approve_") for b in at.button if b.key)
    assert any("Nothing to do" in c.value for c in at.caption)  # the last run, in words
    assert not any("skipped_unchanged" in c.value for c in at.caption)


def test_a_proposal_is_shown_against_memory_md_as_it_is_now(review_env):
    memory = _memory()
    memory.daily.append("- User likes surfing at Carcavelos")
    proposal = memory.deep_dream(1).proposal_id
    memory.write_core("- User likes tea\n")  # MEMORY.md changed after the dream read it
    at = page("dream")
    assert any("has changed since this dream read it" in w.value for w in at.warning)
    assert not any(b.key == f"approve_{proposal}" for b in at.button if b.key)
    diff = next(c.value for c in at.code if "proposed" in c.value)
    assert "-- User likes tea" in diff or "-- User likes tea" in diff.replace("- -", "--")
