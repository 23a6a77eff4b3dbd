"""Bidirectional control characters (which can make text read other than it is) are removed from what memory
stores: facts, daily logs, MEMORY.md, summaries and plans."""

from __future__ import annotations

import pytest

from memory_core import Memory, Settings
from memory_core.search.embedders import HashingEmbedder


BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"


@pytest.fixture
def memory(tmp_path):
    with Memory(Settings(home=tmp_path / "home", timezone="UTC"), embedder=HashingEmbedder()) as m:
        yield m


def test_bidi_controls_are_removed_from_facts_at_write(memory):
    fact = memory.facts.add("User sent \u202egnp.exe", "context", 0.9)
    assert fact.content == "User sent gnp.exe"
    assert [f.content for f in memory.facts.list()] == ["User sent gnp.exe"]
    updated = memory.facts.update(fact.id, content="User " + BIDI + "renamed it")
    assert updated.content == "User renamed it"
    assert not any(c in BIDI for f in memory.facts.list(include_invalid=True) for c in f.content)


def test_bidi_controls_are_removed_from_documents_summaries_and_plans(memory):
    memory.daily.append("Looked at \u202egnp.exe today", title="Files \u2066x\u2069")
    day = memory.daily.days()[0]
    text = memory.read_document(f"memory/{day}.md")
    assert "gnp.exe" in text and not any(c in text for c in BIDI)
    memory.write_core("# Memory\n- keep \u202egnp.exe\u202c away\n")
    assert memory.read_core() == "# Memory\n- keep gnp.exe away\n"
    assert not any(c in BIDI for v in memory.core_versions() for c in v.content)
    memory.set_summaries({"topOfMind": "\u202eeno pot"})
    assert memory.memory_data()["user"]["topOfMind"]["summary"] == "eno pot"
    plan = memory.plans.start("Ship \u202e1.0", ["step \u2067one\u2069"], session_id="s")
    assert plan.name == "Ship 1.0" and [s.text for s in plan.steps] == ["step one"]
