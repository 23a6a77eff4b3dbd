"""What an outside probe found (issue 11): refused input, whole-or-nothing updates, id clashes, Unicode twins,
secrets that must not leak. SQLite and PostgreSQL wherever a database is involved."""

from __future__ import annotations

import json
import logging
import unicodedata

import pytest
from sqlalchemy import text

from memory_core import LLMError, Memory, ScriptedChatModel, Settings
from memory_core.errors import InvalidIdError
from memory_core.llm.openai_chat import OpenAIChatModel
from memory_core.search.embedders import HashingEmbedder
from memory_core.store import fact_store
from memory_core.store.migrations import MIGRATIONS, migrate
from tests.conftest import make_memory

BAD_TEXTS = {"nul": "User likes \x00 tea", "surrogate": "User likes \ud800 tea"}


@pytest.mark.parametrize("kind", sorted(BAD_TEXTS))
def test_nul_and_lone_surrogates_refused_up_front_everywhere(memory, kind):
    bad = BAD_TEXTS[kind]
    good = memory.facts.add("User likes tea", "preference", 0.9)
    calls = [
        lambda: memory.facts.add(bad, "preference", 0.9),
        lambda: memory.facts.update(good.id, content=bad),
        lambda: memory.update([{"role": "user", "content": bad}], thread_id="t"),
        lambda: memory.queue.add([{"role": "user", "content": bad}], thread_id="t"),
        lambda: memory.set_summaries({"workContext": bad}),
        lambda: memory.plans.start(bad, ["a"], session_id="s"),
        lambda: memory.plans.start("p", [bad], session_id="s"),
        lambda: memory.update([{"role": "user", "content": "I love tea"}], thread_id=bad),
        lambda: memory.scoped(user_id="ana", agent_name="bot").facts.add(bad, "goal", 0.9),
        lambda: memory.context("s").add("user", bad),
    ]
    for call in calls:
        with pytest.raises(ValueError):
            call()
    assert [f.content for f in memory.facts.list()] == ["User likes tea"]
    assert memory.queue.pending() == 0 and memory.plans.active() is None
    assert memory.memory_data()["user"]["workContext"]["summary"] == ""


def test_huge_inputs_refused_and_nothing_written(tmp_path, database_url):
    with make_memory(tmp_path, database_url, max_document_chars=1000, max_conversation_chars=5000) as m:
        with pytest.raises(ValueError, match="max_document_chars"):
            m.set_summaries({"workContext": "x" * 1001})
        with pytest.raises(ValueError, match="max_document_chars"):
            m.plans.start("p", ["x" * 600, "y" * 600], session_id="s")
        with pytest.raises(ValueError, match="max_conversation_chars"):
            m.update([{"role": "user", "content": "I love tea. " * 500}], thread_id="t")
        with pytest.raises(ValueError, match="max_conversation_chars"):
            m.queue.add([{"role": "user", "content": "x" * 5001}], thread_id="t")
        assert m.facts.list() == [] and m.queue.pending() == 0 and m.plans.active() is None


def test_update_is_applied_whole_or_not_at_all(tmp_path, database_url, monkeypatch):
    llm = ScriptedChatModel()
    with make_memory(tmp_path, database_url, llm=llm) as m:
        old = m.facts.add("User lives in Lisbon", "context", 0.9)
        llm.enqueue([json.dumps({
            "facts": [{"content": "User likes tea", "category": "preference", "confidence": 0.9},
                      {"content": "User likes jazz", "category": "preference", "confidence": 0.9},
                      {"content": "User lives in Porto", "category": "context", "confidence": 0.9}],
            "factsToRemove": [old.id],
            "user": {"workContext": {"summary": "Nurse at Acme", "shouldUpdate": True}}})])
        real_add = fact_store.FactTransaction.add
        calls = []

        def failing_add(self, *args, **kwargs):
            calls.append(args[0])
            if len(calls) == 2:
                raise RuntimeError("the database went away in the middle")
            return real_add(self, *args, **kwargs)

        monkeypatch.setattr(fact_store.FactTransaction, "add", failing_add)
        with pytest.raises(RuntimeError):
            m.update([{"role": "user", "content": "I moved to Porto; tea and jazz"}], thread_id="t")
        monkeypatch.undo()
        assert [f.content for f in m.facts.list()] == ["User lives in Lisbon"]  # nothing of it applied
        assert m.facts.get(old.id).valid and [e.action for e in m.facts.history(old.id)] == ["added"]
        assert m.memory_data()["user"]["workContext"]["summary"] == ""
        assert m.facts.count() == 1


def test_an_id_clash_draws_a_new_id_and_loses_nothing(memory, monkeypatch):
    first = memory.facts.add("User likes tea", "preference", 0.9)
    ids = iter([first.id, first.id, "fact_0000beef"])
    monkeypatch.setattr(fact_store, "new_fact_id", lambda: next(ids))
    second = memory.facts.add("User likes coffee", "preference", 0.9)
    assert second is not None and second.id == "fact_0000beef"
    other = iter([first.id, "fact_0000cafe"])  # a clash with a fact of another scope, too
    monkeypatch.setattr(fact_store, "new_fact_id", lambda: next(other))
    assert memory.facts.add("User likes tea", "preference", 0.9, user_id="bob").id == "fact_0000cafe"
    assert {f.content for f in memory.facts.list()} == {"User likes tea", "User likes coffee"}
    assert memory.facts.count() == 2


TWINS = [
    ("User likes café", unicodedata.normalize("NFD", "User likes café")),
    ("User likes tea", "User likes\u200b tea"),
    ("User likes tea", "\ufeffUser likes tea"),
    ("User likes teapots", "User likes tea\u00adpots"),
    ("User likes tea", "Ｕｓｅｒ ｌｉｋｅｓ ｔｅａ"),
    ("User likes tea", "User\u00a0likes\u2003tea"),
    ("User likes TEA", "user likes tea"),
    ("Straße", "STRASSE"),
]


@pytest.mark.parametrize("stored,twin", TWINS)
def test_unicode_twins_are_duplicates(memory, stored, twin):
    assert memory.facts.add(stored, "preference", 0.9) is not None
    assert memory.facts.add(twin, "preference", 0.9) is None
    assert len(memory.facts.list()) == 1


def test_the_dedup_key_migration_merges_stored_twins(tmp_path, database_url, monkeypatch):
    """A database from before validity and Unicode keys: the migration keeps the older twin, supersedes
    the newer by it, and leaves other scopes alone."""
    m = make_memory(tmp_path, database_url)
    monkeypatch.setattr("memory_core.store.migrations.MIGRATIONS", MIGRATIONS[:6])
    m.db.ensure_ready()
    monkeypatch.undo()
    with m.db.engine.begin() as conn:
        for column in ("valid_from", "invalid_at", "superseded_by", "invalid_reason"):
            conn.exec_driver_sql(f"ALTER TABLE facts DROP COLUMN {column}")  # the schema as it was
        conn.exec_driver_sql("ALTER TABLE fact_audit DROP COLUMN actor")
        rows = [("fact_00000001", "default", "User likes café", "2026-01-01 10:00:00"),
                ("fact_00000002", "default", unicodedata.normalize("NFD", "User likes café"), "2026-01-02 10:00:00"),
                ("fact_00000003", "default", "User likes\u200b tea", "2026-01-03 10:00:00"),
                ("fact_00000004", "bob", "User likes café", "2026-01-04 10:00:00")]
        for i, (fid, user, content, at) in enumerate(rows):
            old_key = f"old-key-{i}"  # distinct, as the old casefold-only keys of these twins were
            conn.execute(text("INSERT INTO facts (id, user_id, agent_name, content, content_key, category, confidence, "
                              "created_at, updated_at) VALUES (:i, :u, 'default', :c, :k, 'preference', 0.9, "
                              f"{'CAST(:t AS TIMESTAMP)' if m.db.dialect == 'postgresql' else ':t'}, "
                              f"{'CAST(:t AS TIMESTAMP)' if m.db.dialect == 'postgresql' else ':t'})"),
                         {"i": fid, "u": user, "c": content, "k": old_key, "t": at})
    assert migrate(m.db) == [f.__name__ for f in MIGRATIONS[6:]]
    assert [f.id for f in m.facts.list()] == ["fact_00000001", "fact_00000003"]
    twin = m.facts.get("fact_00000002")
    assert twin.superseded_by == "fact_00000001" and twin.valid_from == twin.created_at
    assert m.facts.history("fact_00000002")[0].action == "merged"
    assert [f.id for f in m.facts.list(user_id="bob")] == ["fact_00000004"]
    assert m.facts.count() == 2 and m.facts.count(user_id="bob") == 1
    assert m.facts.add("User likes tea", "preference", 0.9) is None  # keys are the new ones now
    m.close()


@pytest.mark.parametrize("bad", [123, None, 4.5, b"fact_00000001", ["fact_00000001"]])
def test_a_non_string_id_is_a_clear_error(memory, bad):
    for call in (memory.facts.get, memory.facts.delete, memory.facts.history, memory.facts.invalidate,
                 lambda i: memory.facts.update(i, confidence=0.5), lambda i: memory.facts.supersede(i, "x"),
                 memory.plans.get, memory.plans.finish, lambda i: memory.plans.check(i, 0),
                 memory.scoped(user_id="ana", agent_name="bot").facts.get):
        if bad is None and call == memory.facts.history:
            continue  # history(None) is the whole scope's
        with pytest.raises(InvalidIdError) as info:
            call(bad)
        assert isinstance(info.value, KeyError) and isinstance(info.value, ValueError)
        assert "string" in str(info.value)


def test_long_thread_ids_refused_the_same_on_both_databases(memory):
    convo = [{"role": "user", "content": "I love tea"}]
    for call in (lambda: memory.update(convo, thread_id="t" * 300), lambda: memory.queue.add(convo, thread_id="t" * 300),
                 lambda: memory.update(convo, thread_id=""), lambda: memory.update(convo, thread_id=42)):
        with pytest.raises(ValueError, match="thread_id"):
            call()
    assert memory.facts.list() == [] and memory.queue.pending() == 0
    assert memory.update(convo, thread_id="t" * 256).added


# -- secrets ----------------------------------------------------------------------------------------

LONG_KEY = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" * 12  # 392 characters, as project keys are long
URL_PASSWORD = "hunter2-url-password"
URL_KEY = "query-api-key-123456"


def pieces(secret: str, size: int = 12) -> list[str]:
    return [secret[i:i + size] for i in range(0, len(secret) - size, size)]


def leaked(textish: str) -> list[str]:
    found = [p for p in pieces(LONG_KEY) if p in textish]
    return found + [s for s in (URL_PASSWORD, URL_KEY) if s in textish]


def echoing_server(httpserver, status=500):
    """An endpoint that echoes the key it was sent, in full and over and over (the probe's server)."""
    def echo(request):
        from werkzeug import Response

        got = request.headers.get("Authorization", "")
        return Response(json.dumps({"error": {"message": ("Bad key " + got + " ") * 20}}), status,
                        content_type="application/json")

    httpserver.expect_request("/v1/chat/completions").respond_with_handler(echo)
    base = httpserver.url_for("/v1").replace("http://", f"http://agent:{URL_PASSWORD}@") + f"?api-key={URL_KEY}"
    return base


@pytest.mark.parametrize("status", [401, 500, 400])
def test_an_echoed_key_never_survives_in_errors(httpserver, status):
    base = echoing_server(httpserver, status)
    model = OpenAIChatModel("m", api_key=LONG_KEY, base_url=base, max_retries=1, backoff_seconds=0.01)
    assert not leaked(repr(model))
    with pytest.raises(LLMError) as info:
        model.complete([{"role": "user", "content": "x"}], json_schema={"type": "object"} if status == 400 else None)
    error = info.value
    assert not leaked(str(error)) and not leaked(repr(error))
    assert error.__cause__ is None and error.__context__ is None  # no raw exception chain holding the key
    assert "***@localhost" in str(error)  # where it failed is still said, without the credentials


def test_secrets_stay_out_of_queue_rows_worker_status_settings_and_logs(tmp_path, httpserver, caplog):
    base = echoing_server(httpserver, 500)
    settings = Settings(home=tmp_path / "h", llm_api_key=LONG_KEY, llm_base_url=base, llm_max_retries=0,
                        update_max_attempts=1, rate_limit_seconds=0, timezone="UTC")
    assert not leaked(repr(settings)) and not leaked(str(settings.safe_llm_base_url()))
    with caplog.at_level(logging.DEBUG), Memory(settings, embedder=HashingEmbedder()) as m:
        m.queue.add([{"role": "user", "content": "I love tea"}], thread_id="t")
        m.queue.flush()
        failed = m.queue.failed()
        assert failed and failed[0].last_error and not leaked(failed[0].last_error)
        status = m.status()
        assert status.failed == 1 and not leaked(status.last_error or "")
        m.daily.append("- User likes tea")
        dream = m.deep_dream(1)
        assert dream.status == "rejected" and not leaked(dream.reason)
        assert not leaked(m.dreamer.state(m.scoped().scope).last_reason or "")
        with m.db.read() as s:
            for table in ("pending_updates", "dream_state", "dream_runs"):
                assert not leaked(" ".join(map(str, s.execute(text(f"SELECT * FROM {table}")).all())))
    ours = "\n".join(f"{r.getMessage()} {r.exc_text or ''}" for r in caplog.records if r.name != "werkzeug")
    assert not leaked(ours)  # (werkzeug's lines are the test server's own access log, not this process's)


def test_a_query_key_in_the_base_url_reaches_the_server_as_a_query_parameter(httpserver):
    httpserver.expect_request("/v1/chat/completions", query_string={"api-key": URL_KEY}).respond_with_json(
        {"id": "c", "object": "chat.completion", "created": 0, "model": "m", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]})
    model = OpenAIChatModel("m", api_key="k", base_url=httpserver.url_for("/v1") + f"?api-key={URL_KEY}")
    assert model.complete([{"role": "user", "content": "x"}]).text == "hi"


def test_a_dream_longer_than_the_document_limit_is_rejected_not_raised(tmp_path, database_url):
    words = " ".join(f"word{i}" for i in range(120))
    llm = ScriptedChatModel([f"[MEMORY]\n- User notes {words}\n- User also notes {words}\n[DREAM]\ncopied"])
    with make_memory(tmp_path, database_url, llm=llm, max_document_chars=1200) as m:
        m.daily.append(f"- User notes {words}")
        m.daily.append(f"- User also notes {words}")
        m.write_core("- User likes tea\n")
        result = m.deep_dream(1, force=True)
        assert result.status == "rejected" and "max_document_chars" in result.reason
        assert m.read_core() == "- User likes tea\n"
