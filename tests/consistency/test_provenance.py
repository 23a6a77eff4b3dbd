"""Stored provenance: which fact (and which daily log) each summary sentence and MEMORY.md bullet memory_core wrote
came from, read first when a fact is retired and by the doctor, so that this is exact where the distinctive words
guess wrong. SQLite and PostgreSQL, offline and with a scripted LLM; the words stay the rule for text without it."""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timezone

import pytest
from sqlalchemy import create_engine, inspect, text
from sqlmodel import SQLModel

from memory_core import ScriptedChatModel
from memory_core.consistency.doctor import check
from memory_core.facts.api import Fact
from memory_core.scope import Scope
from memory_core.store.db import Database
from memory_core.store.migrations import migrate
from memory_core.store.provenance_store import ProvenanceStore
from memory_core.text.truth import Provenance, Retired, judge, scrub_markdown, scrub_prose, sentence_key, ties

from tests.conftest import PG_URL, make_memory

SCOPE = Scope("default", "default")
BERLIN = [{"role": "user", "content": "I live in Berlin."}, {"role": "assistant", "content": "Noted."}]
MOVED = "User moved to Potsdam near Berlin"  # says every distinctive word of "User lives in Berlin" again


def provenance(m) -> dict[str, dict[str, Provenance]]:
    return ProvenanceStore(m.db, m.clock).of(SCOPE)


def key(sentence: str) -> str:
    return sentence_key(sentence)


# -- the pure rules ----------------------------------------------------------------------------------

def test_provenance_is_read_first_and_the_words_are_the_fallback():
    old = Retired("fact_a", "User lives in Berlin", MOVED, "fact_p")
    sentence = "User lives in Berlin."
    # The words cannot see it: the replacement says "Berlin" too, so nothing distinctive is left.
    assert judge(sentence, [old], [MOVED]) == (None, None)
    # ("User moved from Berlin to Paris" would not hide it: "from Berlin" says it is no longer so.)
    assert judge(sentence, [Retired("fact_a", old.content, "User moved from Berlin to Paris")], [])[1] == "words"
    assert judge(sentence, [old], [MOVED], {key(sentence): Provenance(frozenset({"fact_a"}))}) == (old, "provenance")
    # Written from a fact that is still true: it states nothing retired, whatever words it shares.
    tea = Retired("fact_t", "User drinks green tea")
    assert judge("User drinks green tea.", [tea], [])[1] == "words"
    assert judge("User drinks green tea.", [tea], [], {key("User drinks green tea"): Provenance(frozenset({"fact_g"}))}) \
        == (None, None)
    # A bullet a dream also read in a daily log may say more than its facts: the words still look at it.
    logged = {key("User drinks green tea"): Provenance(frozenset({"fact_g"}), frozenset({"log:2026-01-01"}))}
    assert judge("User drinks green tea", [tea], [], logged) == (tea, "words")
    # Provenance whose facts are all gone (none valid, none retired now) tells nothing: the words decide.
    assert judge("User drinks green tea.", [tea], [], {key("User drinks green tea"): Provenance(frozenset({"fact_g"}))},
                 valid_ids={"fact_other"})[1] == "words"
    # A valid fact that says the same keeps the sentence, as with the words.
    assert judge(sentence, [old], [MOVED, "User lives in Berlin"], {key(sentence): Provenance(frozenset({"fact_a"}))}) \
        == (None, None)


def test_scrubs_replace_exactly_what_provenance_names():
    old = Retired("fact_a", "User lives in Berlin", MOVED, "fact_p")
    known = {key("User lives in Berlin"): Provenance(frozenset({"fact_a"}))}
    assert scrub_prose("User lives in Berlin. User likes tea.", [old], [MOVED]) == \
        ("User lives in Berlin. User likes tea.", [])
    assert scrub_prose("User lives in Berlin. User likes tea.", [old], [MOVED], sources=known) == \
        (f"{MOVED}. User likes tea.", ["User lives in Berlin."])
    md, gone = scrub_markdown("## Context\n- User lives in Berlin\n- User likes tea\n", [old], [MOVED], sources=known)
    assert md == f"## Context\n- {MOVED}\n- User likes tea\n" and gone == ["User lives in Berlin"]


def test_ties_only_sentences_that_are_a_facts_text():
    found = ties("User lives in Berlin. Ana is based near the Spree.\n- user likes  TEA",
                 {"fact_a": "User lives in Berlin", "fact_t": "User likes tea", "fact_x": "User likes coffee"})
    assert found == {key("User lives in Berlin"): Provenance(frozenset({"fact_a"})),
                     key("User likes tea"): Provenance(frozenset({"fact_t"}))}


# -- summaries -------------------------------------------------------------------------------------

def test_a_summary_sentence_written_from_a_fact_follows_it_where_the_words_cannot(tmp_path, database_url):
    with make_memory(tmp_path, database_url) as m:
        berlin = m.update(BERLIN, thread_id="t1").added[0]
        assert m.memory_data()["user"]["personalContext"]["summary"] == "User lives in Berlin."
        assert provenance(m) == {"summary:personalContext": {key("User lives in Berlin"):
                                                             Provenance(frozenset({berlin.id}))}}
        new = m.facts.supersede(berlin.id, MOVED)
        assert m.memory_data()["user"]["personalContext"]["summary"] == f"{MOVED}."
        assert "User lives in Berlin" not in m.format_for_injection()
        # The replacement is the new fact's text: written from it, and known to be.
        assert provenance(m) == {"summary:personalContext": {key(MOVED): Provenance(frozenset({new.id}))}}
        m.facts.update(new.id, content="User lives in Paris")  # an edit: the same fact says something new
        assert m.memory_data()["user"]["personalContext"]["summary"] == "User lives in Paris."
        assert provenance(m)["summary:personalContext"] == {key("User lives in Paris"): Provenance(frozenset({new.id}))}


def test_text_written_by_hand_gets_no_provenance_and_keeps_the_word_rule(tmp_path, database_url):
    with make_memory(tmp_path, database_url) as m:
        berlin = m.update(BERLIN, thread_id="t1").added[0]
        tea = m.facts.add("User drinks green tea", "preference", 0.9)
        m.set_summaries({"personalContext": "User lives in Berlin. User drinks green tea every day."})
        # The sentence kept as it was keeps its provenance; the new one, written by hand, has none.
        assert provenance(m)["summary:personalContext"] == {key("User lives in Berlin"):
                                                            Provenance(frozenset({berlin.id}))}
        m.facts.invalidate(tea.id)  # found by its words
        assert m.memory_data()["user"]["personalContext"]["summary"] == "User lives in Berlin."
        m.set_summaries({"personalContext": "Ana lives in Berlin."})
        assert provenance(m) == {}  # the sentence it came with is gone, and so is its row


def test_an_llm_summary_is_tied_only_where_a_sentence_is_a_facts_text(tmp_path, database_url):
    llm = ScriptedChatModel()
    with make_memory(tmp_path, database_url, llm=llm) as m:
        llm.enqueue([json.dumps({"facts": [{"content": "User lives in Berlin", "category": "context",
                                            "confidence": 0.9}],
                                 "user": {"personalContext": {"summary": "User lives in Berlin. Ana is based near "
                                                                         "the Spree.", "shouldUpdate": True}}})])
        berlin = m.update(BERLIN, thread_id="t1").added[0]
        assert provenance(m) == {"summary:personalContext": {key("User lives in Berlin"):
                                                             Provenance(frozenset({berlin.id}))}}
        llm.enqueue(["User lives in Paris now."])  # the guarded rewrite of the one sentence provenance names
        m.facts.supersede(berlin.id, MOVED)
        assert llm.history[-1]["messages"][-1]["content"].endswith("Sentence: User lives in Berlin.")
        assert llm.calls == 2  # the paraphrase has no provenance, and its words state nothing retired
        assert m.memory_data()["user"]["personalContext"]["summary"] == \
            "User lives in Paris now. Ana is based near the Spree."
        assert provenance(m) == {}  # an LLM's rewrite is no fact's text


def test_an_updates_facts_to_remove_drop_the_sentence_written_from_them(tmp_path, database_url):
    llm = ScriptedChatModel()
    with make_memory(tmp_path, database_url, llm=llm) as m:
        berlin = m.facts.add("User lives in Berlin", "context", 0.9)
        paris = m.facts.add(MOVED, "context", 0.9)
        llm.enqueue([json.dumps({"facts": [], "factsToRemove": [berlin.id],
                                 "user": {"personalContext": {"summary": f"User lives in Berlin. {MOVED}.",
                                                              "shouldUpdate": True}}}),
                     "NONE"])
        m.update([{"role": "user", "content": "I left Berlin for Paris."}], thread_id="t1")
        # The reply's own summary still said the removed fact word for word: tied to it, and dropped.
        assert m.memory_data()["user"]["personalContext"]["summary"] == f"{MOVED}."
        assert provenance(m)["summary:personalContext"] == {key(MOVED): Provenance(frozenset({paris.id}))}


# -- MEMORY.md -------------------------------------------------------------------------------------

def test_a_dreams_bullets_remember_their_facts_and_logs(tmp_path, database_url, clock):
    with make_memory(tmp_path, database_url, clock=clock) as m:
        m.daily.append("User: I live in Berlin.\nUser: I love hiking in the Alps.")
        berlin = m.update(BERLIN, thread_id="t1").added[0]
        assert m.deep_dream(1).status == "updated"
        day = f"log:{clock.now().date().isoformat()}"
        assert provenance(m)["core"] == {
            key("User lives in Berlin"): Provenance(frozenset({berlin.id}), frozenset({day})),
            key("User loves hiking in the Alps"): Provenance(logs=frozenset({day}))}
        new = m.facts.supersede(berlin.id, MOVED)
        core = m.read_core()
        assert f"- {MOVED}" in core and "lives in Berlin" not in core and "hiking" in core
        assert m.core_versions()[0].reason.startswith("one truth")
        assert provenance(m)["core"][key(MOVED)] == Provenance(frozenset({new.id}))
        assert m.deep_dream(1, force=True).status == "updated"  # the log still says Berlin: it stays out
        assert "lives in Berlin" not in m.read_core() and MOVED in m.read_core()


def test_a_bullet_written_by_hand_is_judged_by_its_words(tmp_path, database_url, clock):
    with make_memory(tmp_path, database_url, clock=clock) as m:
        berlin = m.update(BERLIN, thread_id="t1").added[0]
        m.write_core("- User lives in Berlin\n- User likes tea\n")
        assert "core" not in provenance(m)
        m.facts.invalidate(berlin.id)
        assert m.read_core() == "- User likes tea\n"


# -- the doctor ------------------------------------------------------------------------------------

def _end_behind_memorys_back(url: str, fact_id: str, by: str | None) -> None:
    """Invalidate a fact the way another program (or a version before one truth) would: in SQL, nothing follows."""
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(text("UPDATE facts SET invalid_at = :t, superseded_by = :b, content_key = :k WHERE id = :i"),
                         {"t": datetime.now(timezone.utc), "b": by, "k": f"invalid:{fact_id}", "i": fact_id})
    finally:
        engine.dispose()


def test_doctor_reports_by_provenance_what_the_words_miss(tmp_path, database_url):
    with make_memory(tmp_path, database_url) as m:
        berlin = m.update(BERLIN, thread_id="t1").added[0]
        acme = m.facts.add("User works at Acme", "context", 0.9)
        m.set_summaries({"workContext": "User works at Acme."})  # by hand: no provenance
        m.write_core("- User lives in Berlin\n")  # by hand as well
        paris = m.facts.add(MOVED, "context", 0.9)
        _end_behind_memorys_back(m.settings.database_url, berlin.id, paris.id)
        _end_behind_memorys_back(m.settings.database_url, acme.id, None)
        found = {(f.place, f.text): f.to_dict() for f in m.doctor() if f.kind == "stale"}
        assert found[("summary:personalContext", "User lives in Berlin.")]["foundBy"] == "provenance"
        assert found[("summary:personalContext", "User lives in Berlin.")]["factIds"] == [berlin.id]
        assert found[("summary:workContext", "User works at Acme.")]["foundBy"] == "words"
        assert ("MEMORY.md", "User lives in Berlin") not in found  # no provenance, and no word left to tell


def test_doctor_ignores_provenance_of_facts_that_are_gone():
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    tea = Fact(id="fact_t", content="User drinks green tea", category="preference", confidence=0.9, created_at=now,
               updated_at=now, user_id="default", agent_name="default", invalid_at=now)
    sentence = "User drinks green tea."
    gone = {"summary:personalContext": {key(sentence): Provenance(frozenset({"fact_gone"}))}}
    findings = check({"personalContext": sentence}, None, [tea], gone)
    assert [(f.fact_ids, f.found_by) for f in findings] == [(("fact_t",), "words")]
    named = {"summary:personalContext": {key(sentence): Provenance(frozenset({"fact_t"}))}}
    assert [f.found_by for f in check({"personalContext": sentence}, None, [tea], named)] == ["provenance"]


# -- erase, purge and bundles ----------------------------------------------------------------------

def test_erase_and_purge_take_the_rows_along(tmp_path, database_url):
    with make_memory(tmp_path, database_url) as m:
        berlin = m.update(BERLIN, thread_id="t1").added[0]
        assert set(provenance(m)["summary:personalContext"].values()) == {Provenance(frozenset({berlin.id}))}
        m.facts.add("User lives in Berlin with two cats", "context", 0.9)  # says it too: the sentence stays
        counts = m.facts.erase(berlin.id, reason="asked")
        assert counts["provenance"] == 1 and provenance(m) == {}
        assert m.memory_data()["user"]["personalContext"]["summary"] == "[erased]"
        m.update([{"role": "user", "content": "I live in Lisbon."}], thread_id="t2")
        assert provenance(m) != {}
        removed = m.purge_scope(user_id="default", agent_name="default")
        assert removed.get("provenance", 0) >= 1 and provenance(m) == {}


def test_bundles_carry_no_provenance_and_the_words_take_over(tmp_path, database_url):
    with make_memory(tmp_path / "a", database_url) as m:
        job = m.update([{"role": "user", "content": "I work at Acme as a nurse."}], thread_id="t1").added[0]
        assert provenance(m)
        m.export_bundle(tmp_path / "b.zip")
        m.set_summaries({"workContext": "User works at Initech."})
        m.import_bundle(tmp_path / "b.zip", mode="replace")  # the summary comes back, its provenance does not
        assert provenance(m) == {}
        summary = m.memory_data()["user"]["workContext"]["summary"]
        assert summary
        m.facts.invalidate(job.id)  # judged by its words again
        assert m.memory_data()["user"]["workContext"]["summary"] != summary
    with make_memory(tmp_path / "c") as fresh:
        fresh.import_bundle(tmp_path / "b.zip")
        assert provenance(fresh) == {}


# -- the schema ------------------------------------------------------------------------------------

def _schema(url: str) -> dict:
    engine = create_engine(url)
    try:
        inspector = inspect(engine)
        return {"columns": [(c["name"], str(c["type"]), c["nullable"]) for c in inspector.get_columns("provenance")],
                "pk": inspector.get_pk_constraint("provenance")["constrained_columns"],
                "indexes": sorted((i["name"], tuple(i["column_names"]), bool(i["unique"]))
                                  for i in inspector.get_indexes("provenance"))}
    finally:
        engine.dispose()


def test_m019_makes_the_table_the_model_describes(tmp_path, database_url):
    Database(database_url, migrate=migrate).ensure_ready()
    if database_url.startswith("sqlite"):
        reference = f"sqlite:///{tmp_path / 'reference.db'}"
        schema = None
    else:
        schema = f"r_{uuid.uuid4().hex[:10]}"
        with create_engine(PG_URL).begin() as conn:
            conn.execute(text(f"CREATE SCHEMA {schema}"))
        reference = f"{PG_URL}?options=-csearch_path%3D{schema}"
    engine = create_engine(reference)
    try:
        SQLModel.metadata.create_all(engine, tables=[SQLModel.metadata.tables["provenance"]])
        assert _schema(database_url) == _schema(reference)
    finally:
        engine.dispose()
        if schema:
            with create_engine(PG_URL).begin() as conn:
                conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
