"""An LLM server that echoes the API key in its error body (OpenAI does: "Incorrect API key provided: sk-...")
never puts a piece of the key (8 characters or more) into the `update()` exception, the dream result, failed
queue rows, `status()`, the logs or any text column of the database."""

from __future__ import annotations

import logging

import pytest
from sqlalchemy import text

from memory_core import LLMError, Memory, Settings
from memory_core.search.embedders import HashingEmbedder
from memory_core.text.redact import scrub

KEYS = {
    "project key": "sk-proj-Zq8vN2xR5tL9wK3mJ7pH1cF6bD4gY0sAe5Tk",
    "classic key": "sk-Zq8vN2xR5tL9wK3mJ7pH1cF6bD4gY0sAqqT3BlbkFJ",
    "groq key": "gsk_Wm4pQ9zL2xV7nB3kR8tY1cJ6hD0fS5gA",
    "gateway key without a prefix": "Zq8vN2xR5tL9wK3mJ7pH1cF6",
}
# How servers echo a key they refuse: whole; OpenAI's first 8 and last 4 around stars; a longer head; a key
# cut by the server's own length limit; the key without its "sk-" (a gateway quoting the part after a dash).
ECHOES = {
    "whole": lambda k: k,
    "openai stars": lambda k: k[:8] + "*" * 20 + k[-4:],
    "long head": lambda k: k[:18] + "..." + k[-4:],
    "cut": lambda k: k[:-3],
    "without prefix": lambda k: k[3:],
    "middle": lambda k: "..." + k[5:-5] + "...",
}


def pieces(secret: str, size: int = 8) -> list[str]:
    return [secret[i:i + size] for i in range(len(secret) - size + 1)]


def leaks(key: str, *texts: str) -> list[str]:
    joined = "\n".join(texts)
    return [p for p in pieces(key) if p in joined]


@pytest.mark.parametrize("echo", ECHOES)
@pytest.mark.parametrize("key", KEYS.values(), ids=list(KEYS))
def test_scrub_leaves_no_piece_of_a_known_key(key, echo):
    said = f"Incorrect API key provided: {ECHOES[echo](key)}. You can find your API key at https://x.example/keys."
    out = scrub(said, key)
    assert not leaks(key, out)
    assert "Incorrect API key provided:" in out and "You can find your API key" in out  # the rest is kept


def test_scrub_keeps_text_that_merely_shares_short_runs_with_the_key():
    key = KEYS["project key"]
    said = "model gpt-4o-mini at http://localhost:8080/v1 failed: HTTP 401"
    assert scrub(said, key) == said


@pytest.mark.parametrize("echo", ["openai stars", "long head", "without prefix"])
def test_an_echoed_key_stays_out_of_every_place_memory_keeps_text(tmp_path, httpserver, caplog, echo):
    key = KEYS["project key"]
    said = f"Incorrect API key provided: {ECHOES[echo](key)}. You can find your API key at https://x.example/keys."
    httpserver.expect_request("/v1/chat/completions").respond_with_json(
        {"error": {"message": said, "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}},
        status=401)
    settings = Settings(home=tmp_path / "h", llm_api_key=key, llm_base_url=httpserver.url_for("/v1"),
                        llm_max_retries=0, update_max_attempts=1, rate_limit_seconds=0, timezone="UTC")
    seen: list[str] = []
    with caplog.at_level(logging.DEBUG), Memory(settings, embedder=HashingEmbedder()) as m:
        with pytest.raises(LLMError) as info:
            m.update([{"role": "user", "content": "I love tea"}], thread_id="t")
        seen += [str(info.value), repr(info.value)]
        assert "authentication failed" in str(info.value)  # still says what went wrong
        m.queue.add([{"role": "user", "content": "I love green tea"}], thread_id="t2")
        m.queue.flush()
        failed = m.queue.failed()
        assert failed
        seen += [f.last_error or "" for f in failed]
        seen.append(repr(m.status()))
        m.daily.append("- User likes tea")
        dream = m.deep_dream(1)
        assert dream.status == "rejected"
        seen.append(repr(dream))
        with m.db.read() as s:
            tables = [r[0] for r in s.execute(text("SELECT name FROM sqlite_master WHERE type = 'table'"))]
            for table in tables:
                seen.append(" ".join(map(str, s.execute(text(f'SELECT * FROM "{table}"')).all())))
    seen += [f"{r.getMessage()} {r.exc_text or ''}" for r in caplog.records if r.name != "werkzeug"]
    assert not leaks(key, *seen)
