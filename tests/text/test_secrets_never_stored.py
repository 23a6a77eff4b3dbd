"""Secrets never become memory: credentials planted on every path (an update, the queue, a daily append, the
context tier, MEMORY.md, summaries, plans, an import, an MCP call) are masked as [secret] before anything is
stored; a scan of every file under the home and every text column of the database finds none of them. SQLite and
PostgreSQL."""

from __future__ import annotations

import asyncio
import json

from memory_core import Memory, Settings
from tests.conftest import make_memory
from tests.mcp.test_mcp import local_memory, server_env, stdio_client, structured
from tests.consistency.test_erase import _db_texts

KEYS = {"openai": "sk-proj-Zq8Xv3LmN0pQ4rS7tU1wY5aB9cD2eF6gH0jK3m",
        "aws": "AKIAQ4EXAMPLE7ZK2RTW",
        "github": "ghp_R8d2Kf9LmQ3xZ7vB1nW5cT0yH4jS6pA2eU9i",
        "password": "Correct-Horse-Battery-99",
        "card": "4242 4242 4242 4242"}


def planted(where: str) -> str:
    return (f"For {where}: my API key is {KEYS['openai']}, the AWS one is {KEYS['aws']}, the token "
            f"{KEYS['github']}, my password is {KEYS['password']} and my card is {KEYS['card']}. I live in Porto.")


def leftovers(home, url) -> list[str]:
    found = []
    for path in home.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            found += [f"{path.name}: {name}" for name, key in KEYS.items() if key.encode() in data]
    for text in _db_texts(url):
        found += [f"db: {name}" for name, key in KEYS.items() if key in text]
    return found


def test_no_path_stores_a_credential(tmp_path, database_url):
    home = tmp_path / "home"
    with make_memory(tmp_path, database_url) as m:
        m.update([{"role": "user", "content": planted("the update")}], thread_id="t1")
        m.queue.add([{"role": "user", "content": planted("the queue")}], thread_id="t2")
        m.daily.append(planted("the daily log"))
        m.write_core(f"# Memory\n- {planted('MEMORY.md')}\n")
        m.set_summaries({"workContext": planted("a summary")})
        m.facts.add(planted("a fact"), "context", 0.9)
        m.plans.start(planted("a plan"), [planted("a step")], session_id="s1")
        session = m.context("s1")
        session.add("user", planted("the context"))
        session.end()
        m.contexts.wait()
        export = tmp_path / "deerflow.json"
        export.write_text(json.dumps({"facts": [{"id": "f1", "content": planted("an import"), "category": "context",
                                                 "confidence": 0.9, "createdAt": "2026-01-01T00:00:00Z"}]}))
        m.import_file(export, format="deerflow")
        assert all(KEYS["openai"] not in f.content for f in m.facts.list())
        assert any("[secret]" in f.content and "Porto" in f.content for f in m.facts.list())
        assert "[secret]" in m.read_core() and "Porto" in m.read_core()
        assert KEYS["password"] not in json.dumps(m.memory_data())
        m.queue.flush()
        url = m.settings.database_url
        m.close()
    assert leftovers(home, url) == []


def test_an_mcp_call_stores_no_credential(tmp_path):
    env = server_env(tmp_path / "home")

    async def session() -> None:
        async with stdio_client(env, "--user", "ana", "--agent", "mcp") as client:
            stored = structured(await client.call_tool("remember", {"content": planted("remember"),
                                                                    "category": "context"}))
            assert "[secret]" in stored["fact"]["content"]
            await client.call_tool("record_conversation", {"messages": [{"role": "user", "content":
                                                                          planted("a conversation")}],
                                                            "thread_id": "t1"})

    asyncio.run(session())
    with local_memory(env) as memory:
        url = memory.settings.database_url
    assert leftovers(tmp_path / "home", url) == []
