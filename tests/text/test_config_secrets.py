"""The configuration's secrets never leak: the API key (echoed back by a server, in queue rows, the worker's
status, the settings, the logs; or given as a query parameter of the base URL) and the database password in
every form it can be written (masked where it is shown, scrubbed from the logs)."""

from __future__ import annotations

import json
import logging

import pytest
from sqlalchemy import text

from memory_core import LLMError, Memory, Settings
from memory_core.llm.openai_chat import OpenAIChatModel
from memory_core.text.redact import RedactingFilter, scrub
from memory_core.search.embedders import HashingEmbedder


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


# -- the database password ------------------------------------------------------------------------

DB_PASSWORD = "q-p@ss/w0rd-7731"
ENCODED = "q-p%40ss%2Fw0rd-7731"


@pytest.mark.parametrize("url", [f"postgresql://mc@db.example:5432/mem?password={ENCODED}&sslmode=require",
                                 f"postgres://mc:{ENCODED}@db.example/mem",
                                 f"postgresql://mc@db.example/mem?sslmode=require&PASSWORD={ENCODED}"])
def test_every_form_of_the_database_password_is_masked_and_scrubbed(url, tmp_path):
    settings = Settings(home=tmp_path, database_url=url)
    shown = settings.safe_database_url()
    assert DB_PASSWORD not in shown and ENCODED not in shown and "***" in shown
    assert "mc" in shown and "db.example" in shown  # still says where
    assert DB_PASSWORD in settings.secrets() and ENCODED in settings.secrets()
    assert "mc" not in settings.secrets()  # the user name is not a secret: logs keep saying who
    memory = Memory(settings, embedder=HashingEmbedder())
    assert DB_PASSWORD not in memory.storage_description() and ENCODED not in memory.storage_description()
    # What the logs are scrubbed of: the password as written in the URL, decoded, or quoted in a driver error.
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "connect to %s failed: password %s rejected (%s)",
                               (url, DB_PASSWORD, ENCODED), None)
    RedactingFilter(settings.secrets()).filter(record)
    assert DB_PASSWORD not in record.getMessage() and ENCODED not in record.getMessage()
    assert DB_PASSWORD not in scrub(f"dsn {url} with {DB_PASSWORD}", *settings.secrets())


def test_the_sidebar_storage_line_masks_a_query_password(tmp_path):
    settings = Settings(home=tmp_path, database_url=f"sqlite:///{tmp_path}/m.db?password={ENCODED}")
    assert ENCODED not in settings.safe_database_url() and "password=***" in settings.safe_database_url()


@pytest.fixture
def memory(tmp_path):
    with Memory(Settings(home=tmp_path / "home", timezone="UTC"), embedder=HashingEmbedder()) as m:
        yield m
