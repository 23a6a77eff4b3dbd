"""Erase that is exact, final and finished: the plan touches only passages that state the fact; a kill or a full
disk at any step is finished on the next open; nothing taken in before the erase (an in-flight update, another
process's live session, an old bundle) brings it back; no text is left in PostgreSQL's dead row versions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import zipfile

import pytest
from sqlalchemy import create_engine, text

from memory_core import ScriptedChatModel
from memory_core.consistency.erase import FAULT_ENV, STEPS, STOP_ENV
from memory_core.integrations.langgraph import MemoryCoreStore
from memory_core.scope import DEFAULT_SCOPE
from memory_core.store.erase_store import ALSO_RECLAIMED, TEXT_COLUMNS
from tests.conftest import make_memory
from tests.consistency.test_erase import _db_texts
from tests.consistency.test_propagation import GLOBEX

STATEMENT = "data engineer"
OVER_ERASURE = ["Tea time with the team is at 4pm.", "I dislike green tea.", "Bought a tea kettle.",
                "I erased the whiteboard after the meeting."]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _child(*args: str, env: dict | None = None, stdin=None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tests.consistency.erase_child", *args], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": ROOT, **(env or {})}, stdin=stdin,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _fill(m) -> str:
    """A memory where the fact is stated in every place erase reaches; returns its id."""
    fact = m.update(GLOBEX, thread_id="t1").added[0]
    m.daily.append("User: I work at Globex as a data engineer. Globex is hiring. " + " ".join(OVER_ERASURE))
    m.write_core("# Memory\n\n- User works at Globex as a data engineer\n- Tea time with the team is at 4pm\n")
    m.write_core("# Memory\n\n- User works at Globex as a data engineer\n- Tea time with the team is at 4pm\n- Hikes\n")
    m.queue.add([{"role": "user", "content": "I work at Globex as a data engineer."}], thread_id="t9")
    m.injection_report(query="I work at Globex as a data engineer", record=True)
    MemoryCoreStore(m).put(("default", "default", "notes"), "I work at Globex as a data engineer",
                           {"note": "I work at Globex as a data engineer."})
    m.search("Globex data engineer")  # indexed and embedded
    return fact.id


def _residue(home, url) -> list[str]:
    files = [str(p) for p in home.rglob("*") if p.is_file() and STATEMENT.encode() in p.read_bytes().lower()]
    return files + [t for t in _db_texts(url) if STATEMENT in t.lower()]


def test_the_plan_lists_exactly_what_states_the_fact_and_erase_touches_nothing_else(tmp_path, database_url):
    with make_memory(tmp_path, database_url) as m:
        tea = m.facts.add("User likes tea", "preference", 0.9)
        parrot = m.facts.add("User has a parrot named Zorbulon", "context", 0.9)
        twin = m.facts.add("User's parrot is named Zorbulon", "context", 0.9)
        m.daily.append("I like tea. " + " ".join(OVER_ERASURE))
        m.write_core("# Memory\n\n- User likes tea\n- Tea time with the team is at 4pm\n- User dislikes green tea\n")
        plan = m.facts.erase_plan(tea.id, user_id="default", agent_name="default")
        assert {p.text for p in plan.passages} == {"User likes tea", "I like tea."}
        places = {p.where.split(":")[0] for p in plan.passages}
        assert places >= {"facts", "core_versions"} and places & {"file", "documents"}
        assert m.facts.get(tea.id).valid  # a plan changes nothing
        m.facts.erase(tea.id)
        m.facts.erase(tea.id)  # twice: the second finds no statement, and touches nothing
        log = m.daily.read(m.daily.today())
        assert all(t in log for t in OVER_ERASURE) and "I like tea" not in log
        core = m.read_core()
        assert "- Tea time with the team is at 4pm" in core and "- User dislikes green tea" in core
        assert all("Tea time" in v.content for v in m.core_versions())  # no version lost its other bullets
        assert m.scoped().facts.erase_plan(parrot.id).related == [twin.id]
        m.scoped().facts.erase(parrot.id, also=[twin.id])
        assert "Zorbulon" not in m.format_for_injection()
        with pytest.raises(KeyError):
            m.facts.erase_plan(parrot.id, user_id="bob", agent_name="default")


@pytest.mark.slow  # two seconds or more: left out of the quick run
@pytest.mark.parametrize("step", STEPS[1:])
def test_a_kill_at_any_step_is_finished_on_the_next_open(tmp_path, database_url, step):
    home = tmp_path / "home"
    with make_memory(tmp_path, database_url) as m:
        fact_id = _fill(m)
        url = m.settings.database_url
        m.close(flush=False)
    killed = _child("erase", str(home), url, fact_id, env={STOP_ENV: step})
    _out, err = killed.communicate(timeout=120)
    assert killed.returncode == 137 and f"erase stopped at {step}" in err, err[-2000:]
    reopened = _child("reopen", str(home), url)
    out, err = reopened.communicate(timeout=120)
    assert reopened.returncode == 0, err[-2000:]
    assert out.strip() == "0"  # the first search after the open serves nothing of it
    assert _residue(home, url) == []
    with make_memory(tmp_path, database_url) as m:
        assert m.facts.get(fact_id).content == "[erased]" and "Globex is hiring." in m.daily.read(m.daily.today())
        assert [e.action for e in m.facts.history(fact_id)].count("erased") == 1


def test_a_full_disk_leaves_the_erase_journaled_and_a_retry_or_the_next_open_finishes_it(tmp_path, database_url,
                                                                                         monkeypatch):
    home = tmp_path / "home"
    with make_memory(tmp_path, database_url) as m:
        fact_id = _fill(m)
        url = m.settings.database_url
        monkeypatch.setenv(FAULT_ENV, "files")  # ENOSPC as the first file is rewritten
        with pytest.raises(OSError) as raised:
            m.facts.erase(fact_id)
        assert "No space left" in str(raised.value)
        monkeypatch.delenv(FAULT_ENV)
        m.facts.erase(fact_id)  # the retry finishes it: the fact reads [erased], the journal knows the passages
        assert _residue(home, url) == []
        fact2 = m.facts.add("User works at Initech as a data engineer", "context", 0.9)
        m.daily.append("I work at Initech as a data engineer.")
        monkeypatch.setenv(FAULT_ENV, "files")
        with pytest.raises(OSError):
            m.facts.erase(fact2.id)
        monkeypatch.delenv(FAULT_ENV)
        m.close(flush=False)
    with make_memory(tmp_path, database_url) as m:
        assert [h.text for h in m.search("data engineer") if STATEMENT in h.text.lower()] == []
        assert m.facts.get(fact2.id).content == "[erased]"
    assert _residue(home, url) == []


def held_reply():
    """An extraction reply of the Globex fact that waits at the LLM: (gate to let it go, event set once asked,
    the scripted step, the reply itself)."""
    gate, asked = threading.Event(), threading.Event()
    reply = json.dumps({"facts": [{"content": "User works at Globex as a data engineer", "category": "context",
                                   "confidence": 0.9}]})

    def slow(_messages):
        asked.set()
        assert gate.wait(60)
        return reply

    return gate, asked, slow, reply


def test_an_update_in_flight_cannot_bring_it_back_but_a_new_statement_is_kept(tmp_path, database_url):
    gate, asked, slow, reply = held_reply()
    llm = ScriptedChatModel([slow, reply])
    with make_memory(tmp_path, database_url, llm=llm) as m:
        fact = m.facts.add("User works at Globex as a data engineer", "context", 0.9)
        results = []
        worker = threading.Thread(target=lambda: results.append(m.update(GLOBEX, thread_id="t1")))
        worker.start()
        assert asked.wait(60)
        m.facts.erase(fact.id)
        gate.set()
        worker.join(60)
        assert ("User works at Globex as a data engineer", "erased") in results[0].skipped
        assert m.facts.list() == [] and STATEMENT not in m.format_for_injection()
        # nor does its episode: the turn that states it was kept as `[erased]`
        turns = m.scoped().episodes_of_day(results[0].episode_id[:10])  # an episode id starts with its day
        assert turns and not any("Globex" in t.text for t in turns)
        assert not any("Globex" in h.text for h in m.search("Globex data engineer", k=10))
        again = m.update(GLOBEX, thread_id="t2")  # said after the erase: new memory
        assert [f.content for f in again.added] == ["User works at Globex as a data engineer"]


def test_a_queued_update_claimed_before_the_erase_cannot_bring_it_back(tmp_path, database_url):
    gate, asked, slow, _reply = held_reply()
    with make_memory(tmp_path, database_url, llm=ScriptedChatModel([slow])) as m:
        fact = m.facts.add("User works at Globex as a data engineer", "context", 0.9)
        m.queue.add([{"role": "user", "content": "My job: I build pipelines."}], thread_id="t9")
        flushing = threading.Thread(target=m.queue.flush)
        flushing.start()
        assert asked.wait(60)  # claimed, waiting on the LLM
        m.facts.erase(fact.id)
        gate.set()
        flushing.join(60)
        assert m.facts.list() == [] and STATEMENT not in m.format_for_injection()


@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_a_live_session_of_another_process_cannot_bring_it_back(tmp_path, database_url):
    home = tmp_path / "home"
    with make_memory(tmp_path, database_url) as m:
        fact = m.facts.add("User works at Globex as a data engineer", "context", 0.9)
        url = m.settings.database_url
        other = _child("session", str(home), url, "I work at Globex as a data engineer.", stdin=subprocess.PIPE)
        assert other.stdout.readline().strip() == "ready", other.stderr.read()[-2000:]
        m.facts.erase(fact.id)
        out, err = other.communicate("end\n", timeout=120)
        assert other.returncode == 0 and "ended" in out, err[-2000:]
        days = m.daily.days()
        assert days and all(STATEMENT not in (m.daily.read(d) or "") for d in days)
        m.close(flush=False)
    assert _residue(home, url) == []


def test_a_bundle_exported_before_the_erase_cannot_bring_it_back(tmp_path, database_url):
    with make_memory(tmp_path, database_url) as m:
        fact_id = _fill(m)
        old = tmp_path / "before.zip"
        m.export_bundle(old)
        m.facts.erase(fact_id)
        result = m.import_bundle(old, mode="replace")
        assert result["erased_refused"] >= 2
        assert m.facts.get(fact_id).content == "[erased]"
        assert STATEMENT not in (m.read_core() or "") + m.daily.read(m.daily.today())
        assert all(STATEMENT not in v.content for v in m.core_versions())


def test_postgresql_keeps_no_dead_row_version_of_the_text(tmp_path, pg_url):
    with make_memory(tmp_path, pg_url) as m:
        fact_id = _fill(m)
        m.facts.erase(fact_id)
        engine = create_engine(pg_url)
        with engine.connect() as conn:
            conn.exec_driver_sql("CHECKPOINT")
            found = []
            for table in list(TEXT_COLUMNS) + list(ALSO_RECLAIMED):
                for rel in conn.execute(text("SELECT oid FROM pg_class WHERE oid = CAST(:t AS regclass) UNION ALL "
                                             "SELECT reltoastrelid FROM pg_class WHERE oid = CAST(:t AS regclass) "
                                             "AND reltoastrelid <> 0"), {"t": table}).scalars():
                    path = conn.execute(text("SELECT pg_relation_filepath(:r)"), {"r": rel}).scalar()
                    blob = conn.execute(text("SELECT pg_read_binary_file(:p)"), {"p": path}).scalar()
                    if STATEMENT.encode() in bytes(blob).lower():
                        found.append(table)
        engine.dispose()
        assert _residue(tmp_path / "home", pg_url) == []  # not in a live row
        assert found == []  # nor in a dead one


def test_an_open_dream_proposal_loses_the_passages_too(tmp_path, database_url):
    from datetime import datetime, timezone

    from memory_core import ManualClock

    clock = ManualClock(datetime(2026, 11, 22, 9, tzinfo=timezone.utc))
    with make_memory(tmp_path, database_url, clock=clock, dream_review=True) as m:
        fact = m.facts.add("User works at Globex as a data engineer", "context", 0.9)
        m.daily.append("User: I work at Globex as a data engineer. I love hiking in the Alps.")
        assert m.deep_dream(1).status == "proposed"
        assert STATEMENT in m.dream_proposals()[0].text.lower()
        m.facts.erase(fact.id)
        [proposal] = m.dream_proposals()
        assert STATEMENT not in (proposal.text + json.dumps(proposal.diff)).lower() and "hiking" in proposal.text
        assert _residue(tmp_path / "home", m.settings.database_url) == []


def test_an_importer_cannot_bring_it_back(tmp_path, database_url):
    said = {"version": "1.0", "lastUpdated": "2026-01-02T09:00:00Z",
            "user": {"workContext": {"summary": "I work at Globex as a data engineer. Team of five.",
                                     "updatedAt": "2026-01-02T09:00:00Z"}},
            "facts": [{"id": "fact_0000aaaa", "content": "User works at Globex as a data engineer",
                       "category": "context", "confidence": 0.9, "createdAt": "2026-01-01T09:00:00Z"},
                      {"id": "fact_0000bbbb", "content": "User likes tea", "category": "preference",
                       "confidence": 0.9, "createdAt": "2026-01-01T09:00:00Z"}]}
    path = tmp_path / "memory.json"
    path.write_text(json.dumps(said))
    with make_memory(tmp_path, database_url) as m:
        fact = m.facts.add("User works at Globex as a data engineer", "context", 0.9)
        m.facts.erase(fact.id)
        report = m.import_file(path, format="deerflow")
        assert [f.content for f in m.facts.list()] == ["User likes tea"]
        assert any("erased" in note for note in report.notes)
        assert STATEMENT not in json.dumps(m.memory_data()).lower()


def test_a_file_write_failing_for_a_full_disk_is_finished_by_the_retry(tmp_path, database_url):
    """The same as the fault hook, at the document store's own write (what a full disk makes fail)."""
    home = tmp_path / "home"
    with make_memory(tmp_path, database_url, document_store="files") as m:
        fact_id = _fill(m)
        write = m.documents.write

        def full(*args, **kwargs):
            raise OSError(28, "No space left on device")

        m.documents.write = full
        with pytest.raises(OSError):
            m.facts.erase(fact_id)
        m.documents.write = write  # space again
        m.facts.erase(fact_id)
        assert _residue(home, m.settings.database_url) == []


def test_an_append_between_a_failed_erase_and_its_retry_does_not_serve_the_text(tmp_path, database_url):
    """A file rewrite that fails for a full disk leaves the fact [erased] and the log still holding the text
    until the retry: a daily append meanwhile (a context flush) re-indexes that log, and search must still not
    serve the text, nor any read of the documents; the next append, once there is space, finishes the erase
    before it writes."""
    home = tmp_path / "home"
    with make_memory(tmp_path, database_url, document_store="files") as m:
        fact_id = _fill(m)
        url = m.settings.database_url
        write = m.documents.write

        def full(*args, **kwargs):
            raise OSError(28, "No space left on device")

        m.documents.write = full  # whole-file rewrites fail; a one-write() append still goes through
        with pytest.raises(OSError):
            m.facts.erase(fact_id)
        assert m.facts.get(fact_id).content == "[erased]"
        log_path = f"memory/{m.daily.today().isoformat()}.md"
        assert STATEMENT in m.documents.read(DEFAULT_SCOPE, log_path).lower()  # the file still holds it

        m.daily.append("Globex moved to a new office.")  # the retry it runs first fails again: the text stays
        assert STATEMENT in m.documents.read(DEFAULT_SCOPE, log_path).lower()  # the disk is still full
        hits = m.search("Globex data engineer", k=20) + m.search("data engineer", mode="keyword", k=20)
        assert [h.text for h in hits if STATEMENT in h.text.lower()] == []
        assert any("new office" in h.text for h in hits)  # the append itself is indexed
        assert STATEMENT not in m.format_for_injection(query="Where does the user work as a data engineer?").lower()
        # Nor is it served by what reads the documents: the Daily and Dream pages, MCP, exports.
        served = [m.daily.read(m.daily.today()), m.read_core(), m.scoped().read_document(log_path)]
        assert all(STATEMENT not in text.lower() for text in served) and "new office" in served[0]
        assert "Globex is hiring." in served[0] and "Tea time with the team is at 4pm" in served[1]
        exported = m.scoped().export_documents(tmp_path / "out")
        assert exported and not [p for p in (tmp_path / "out").rglob("*.md") if STATEMENT in p.read_text().lower()]
        m.export_bundle(tmp_path / "b.zip")
        assert STATEMENT.encode() not in b"".join(zipfile.ZipFile(tmp_path / "b.zip").read(n).lower()
                                                  for n in zipfile.ZipFile(tmp_path / "b.zip").namelist())

        m.documents.write = write  # space again: the next append finishes the erase before it writes
        m.daily.append("Lunch with the team was good.")
        assert _residue(home, url) == []
        texts = [h.text for h in m.search("Globex office lunch", k=20)]
        assert any("new office" in t for t in texts) and any("Lunch" in t for t in texts)
        assert "Globex is hiring." in m.daily.read(m.daily.today())  # only the planned passages went
