"""The Facts page's history in words (memory_core.dashboard.fact_history), on real facts of a real store."""

from __future__ import annotations

import pytest

from memory_core.dashboard.fact_history import change_words, replaced_by, replacements, status_text

OLD = {"content": "User lives in Berlin", "category": "context", "confidence": 0.8}


@pytest.mark.parametrize("new, words", [
    ({**OLD, "confidence": 0.6}, "confidence: 0.8 → 0.6"),
    ({**OLD, "content": "User lives in Hamburg"}, 'content: "User lives in Berlin" → "User lives in Hamburg"'),
    ({**OLD, "category": "knowledge", "confidence": 0.9}, 'category: "context" → "knowledge"; confidence: 0.8 → 0.9'),
    ({**OLD, "content": "Nutzer wohnt in Köln"}, 'content: "User lives in Berlin" → "Nutzer wohnt in Köln"'),
    (dict(OLD), ""),  # nothing that a person edits changed
    ({**OLD, "source": "import"}, ""),  # a field the grid does not edit is not a change in words
    (None, ""),  # an entry that added or deleted a fact has one side only
])
def test_what_an_audit_entry_changed_in_words(new, words):
    assert change_words(OLD, new) == words
    assert change_words(None, new) == ""


def test_status_and_replacements_of_real_facts(memory):
    berlin = memory.facts.add("User lives in Berlin", "context", 0.9)
    hamburg = memory.facts.supersede(berlin.id, "User lives in Hamburg")
    munich = memory.facts.supersede(hamburg.id, "User lives in Munich")
    tea = memory.facts.add("User drinks tea", "preference", 0.7)
    memory.facts.invalidate(tea.id, reason="no longer true")
    coffee = memory.facts.add("User drinks coffee", "preference", 0.7)
    memory.facts.invalidate(coffee.id)
    everything = {f.id: f for f in memory.facts.list(include_invalid=True)}
    assert [status_text(everything[i]) for i in (berlin.id, munich.id, tea.id, coffee.id)] == [
        "superseded", "valid", "forgotten (no longer true)", "forgotten"]
    assert status_text(everything[tea.id], as_of=True) == "valid"  # as of a day, what is listed was believed then
    chains = replacements(everything)
    assert [(c["old"], c["→ new"], c["new is"]) for c in chains] == [
        ("User lives in Hamburg", "User lives in Munich", "valid"),
        ("User lives in Berlin", "User lives in Hamburg", "superseded too")]  # newest first
    assert replaced_by(everything.values(), everything) == {berlin.id: "User lives in Hamburg",
                                                            hamburg.id: "User lives in Munich"}
