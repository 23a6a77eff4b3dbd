"""The Dream page's review of proposed dreams (Settings.dream_review), through AppTest."""

from __future__ import annotations

import pytest

from memory_core.dashboard.helpers import get_memory
from tests.app.test_app import app_env, page  # noqa: F401  (the fixture)


@pytest.fixture
def review_env(app_env, monkeypatch):
    monkeypatch.setenv("MEMORY_CORE_DREAM_REVIEW", "true")
    get_memory.clear()
    yield app_env


def test_run_then_approve_on_the_page(review_env):
    memory = get_memory()
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
    assert any(f"Approved {proposal.id}" in s.value for s in at.success)


def test_reject_on_the_page(review_env):
    memory = get_memory()
    memory.daily.append("- User likes surfing at Carcavelos")
    proposal = memory.deep_dream(1).proposal_id
    at = page("dream")
    at.button(key=f"reject_{proposal}").click().run()
    assert memory.read_core() is None and memory.dream_proposals() == []
