"""Consolidation a person can review (Settings.dream_review): a dream proposes, a person approves or rejects;
a proposal made stale by a later change is refused. SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from memory_core import ManualClock
from tests.conftest import make_memory

WHEN = datetime(2026, 11, 22, 9, tzinfo=timezone.utc)


def review_memory(tmp_path, database_url=None, **kw):
    return make_memory(tmp_path, database_url, clock=ManualClock(WHEN), dream_review=True, **kw)


def test_a_dream_proposes_and_an_approval_writes_it(tmp_path, database_url):
    with review_memory(tmp_path, database_url) as m:
        m.write_core("## Context\n- User lives in Porto\n")
        m.daily.append("User: I love hiking in the Alps.")
        result = m.deep_dream(1)
        assert result.status == "proposed" and result.proposal_id
        assert m.read_core() == "## Context\n- User lives in Porto\n"  # untouched until approved
        [proposal] = m.dream_proposals()
        assert proposal.id == result.proposal_id and "hiking" in proposal.text
        assert "+- User loves hiking in the Alps" in proposal.diff or "hiking" in proposal.diff
        assert m.deep_dream(1).status == "skipped_unchanged"  # the same logs are not proposed twice
        with m.acting_as("dashboard:ana@acme.com"):
            approved = m.approve_dream(proposal.id)
        assert approved.status == "updated" and m.read_core() == proposal.text
        newest = m.core_versions()[0]
        assert newest.reason == "deep dream (approved)" and newest.actor == "dashboard:ana@acme.com"
        assert m.read_document(approved.diary_path)
        assert m.dream_proposals() == []
        with pytest.raises(KeyError, match="approved"):  # not open any more: unknown (API.md)
            m.approve_dream(proposal.id)
        with pytest.raises(KeyError, match="approved"):
            m.reject_dream(proposal.id)


def test_a_stale_proposal_is_refused_and_a_rejected_one_is_gone(tmp_path, database_url):
    with review_memory(tmp_path, database_url) as m:
        m.daily.append("User: I love hiking in the Alps.")
        proposal = m.deep_dream(1).proposal_id
        m.write_core("- User prefers tea\n")  # a later change
        with pytest.raises(ValueError, match="changed since"):
            m.approve_dream(proposal)
        assert m.read_core() == "- User prefers tea\n"
        m.reject_dream(proposal)
        assert m.dream_proposals() == []
        with pytest.raises(KeyError, match="rejected"):  # a rejected proposal is unknown, not a ValueError
            m.approve_dream(proposal)
        with pytest.raises(KeyError, match="rejected"):
            m.scoped().approve_dream(proposal)
        with pytest.raises(KeyError):
            m.reject_dream(proposal)
        assert m.read_core() == "- User prefers tea\n"
        with pytest.raises(KeyError):
            m.approve_dream("dream_00000000")
        with pytest.raises(KeyError):
            m.reject_dream("dream_00000000")


def test_a_fact_retired_after_the_proposal_stays_out(tmp_path):
    with review_memory(tmp_path) as m:
        m.daily.append("User: I work at Globex as a data engineer. I love hiking in the Alps.")
        fact = m.facts.add("User works at Globex as a data engineer", "context", 0.9)
        proposal = m.deep_dream(1).proposal_id
        assert "Globex" in m.dream_proposals()[0].text
        m.facts.invalidate(fact.id)
        result = m.approve_dream(proposal)
        assert "Globex" not in m.read_core() and result.left_out


def test_views_review_only_their_scope_and_viewers_cannot(tmp_path):
    with review_memory(tmp_path) as m:
        m.daily.append("User: I love hiking in the Alps.", user_id="ana")
        proposal = m.deep_dream(1, user_id="ana").proposal_id
        with pytest.raises(KeyError):
            m.scoped(user_id="bob", agent_name="default").approve_dream(proposal)
        with pytest.raises(PermissionError):
            m.scoped(user_id="ana", agent_name="default", role="viewer").approve_dream(proposal)
        view = m.scoped(user_id="ana", agent_name="default", role="editor")
        assert [p.id for p in view.dream_proposals()] == [proposal]
        view.approve_dream(proposal)
        assert "hiking" in m.read_core(user_id="ana")


def test_the_nightly_schedule_proposes_instead_of_writing(tmp_path):
    clock = ManualClock(WHEN.replace(hour=3, minute=5))
    with make_memory(tmp_path, clock=clock, dream_review=True) as m:
        m.daily.append("User: I love hiking in the Alps.", when=WHEN.replace(hour=2))
        assert "proposed" in m.worker.dream_due()
        assert m.read_core() is None and len(m.dream_proposals()) == 1
