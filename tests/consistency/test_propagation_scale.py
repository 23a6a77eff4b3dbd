"""One truth at scale (issue 35): above VALID_ALL valid facts a retirement reads the facts keyword search finds for
what was retired (and the sentences stating it), not every valid fact, and the summaries and MEMORY.md end exactly
as when every valid fact is read. Offline (in the transaction) and with an LLM (after the commit)."""

from __future__ import annotations

import pytest

from memory_core import ScriptedChatModel
from memory_core.consistency import propagation

from tests.conftest import make_memory

FILLER = 80  # facts that share no word with the cases below

# (case, facts, summary, MEMORY.md, what is retired: (index of the fact, its replacement or None)), and what the
# summary and MEMORY.md become.
CASES = [
    ("superseded", ["User lives in Berlin", "User likes hiking"], "User lives in Berlin. User likes hiking.",
     "- User lives in Berlin\n- User likes hiking\n", (0, "User lives in Lisbon"),
     "User lives in Lisbon. User likes hiking.", "- User lives in Lisbon\n- User likes hiking\n"),
    ("still said by a valid fact", ["User lives in Berlin", "User lives in Berlin with Ana"],
     "User lives in Berlin.", "- User lives in Berlin\n", (0, None),
     "User lives in Berlin.", "- User lives in Berlin\n"),
    ("forgotten", ["User plays chess on Sundays", "User drinks green tea"],
     "User plays chess on Sundays. User drinks green tea.", "- User plays chess on Sundays\n- User drinks green tea\n",
     (0, None), "User drinks green tea.", "- User drinks green tea\n"),
]


def run(tmp_path, database_url, case, valid_all: int, user: str):
    """The case in the scope of `user` (runs may share a PostgreSQL schema): (summary, MEMORY.md, facts read)."""
    _name, facts, summary, core, (index, replacement), _s, _c = case
    with make_memory(tmp_path, database_url, max_facts=1000) as m:
        v = m.scoped(user_id=user)
        for i in range(FILLER):
            v.facts.add(f"Note {i} about zeta{i * 7 % 97} on day {i % 28}", "knowledge", 0.6)
        ids = [v.facts.add(text, "context", 0.9).id for text in facts]
        v.set_summaries({"personalContext": summary})
        v.write_core(core)
        store = m.parts.store
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(propagation, "VALID_ALL", valid_all)
            before = store.rows_read
            if replacement is None:
                v.facts.invalidate(ids[index])
            else:
                v.facts.supersede(ids[index], replacement)
            read = store.rows_read - before
        return v.memory_data()["user"]["personalContext"]["summary"], v.read_core(), read


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_a_large_scope_reads_what_the_retirement_touches_and_ends_as_a_whole_read(tmp_path, database_url, case):
    whole = run(tmp_path / "whole", database_url, case, 10**6, "whole")
    bounded = run(tmp_path / "bounded", database_url, case, 10, "bounded")
    assert whole[:2] == bounded[:2] == case[-2:]
    assert whole[2] >= FILLER and bounded[2] <= len(case[1]) + 2


def test_with_an_llm_the_rewrite_after_the_commit_reads_a_bounded_set_too(tmp_path):
    llm = ScriptedChatModel()
    llm.enqueue(["User likes hiking."])  # the rewrite of the summary's one sentence; MEMORY.md's fails (no reply)
    case = CASES[0]
    with make_memory(tmp_path, llm=llm, max_facts=1000) as m:
        for i in range(FILLER):
            m.facts.add(f"Note {i} about zeta{i * 7 % 97} on day {i % 28}", "knowledge", 0.6)
        berlin = m.facts.add("User lives in Berlin", "context", 0.9)
        m.facts.add("User likes hiking", "context", 0.9)
        m.set_summaries({"personalContext": "User lives in Berlin and likes hiking."})
        m.write_core("- User lives in Berlin\n- User likes hiking\n")
        store = m.parts.store
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(propagation, "VALID_ALL", 10)
            before = store.rows_read
            m.facts.supersede(berlin.id, "User lives in Lisbon")
            assert store.rows_read - before <= 4
        assert m.memory_data()["user"]["personalContext"]["summary"] == "User likes hiking."
        assert m.read_core() == case[-1]
