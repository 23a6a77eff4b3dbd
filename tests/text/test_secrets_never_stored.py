"""Secrets never become memory: credentials planted on every path (an update, the queue, a daily append, the
context tier, MEMORY.md, summaries, plans, an import, a bundle, an MCP call, a LangGraph item's value, `source` and
`reason` arguments) are masked as [secret] before anything is stored; a scan of every file under the home and
every text column of the database finds none of them, and neither do the documents or the LangGraph item read back.
One test per way in, SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import zipfile

import pytest

from memory_core import Memory, Settings
from memory_core.llm.scripted import ScriptedChatModel
from tests.conftest import make_memory
from tests.mcp.test_mcp import local_memory, server_env, stdio_client, structured
from tests.consistency.test_erase import _db_texts

KEYS = {"openai": "sk-proj-Zq8Xv3LmN0pQ4rS7tU1wY5aB9cD2eF6gH0jK3m",
        "aws": "AKIAQ4EXAMPLE7ZK2RTW",
        "github": "ghp_R8d2Kf9LmQ3xZ7vB1nW5cT0yH4jS6pA2eU9i",
        "password": "Correct-Horse-Battery-99",
        "card": "4242 4242 4242 4242",
        "seed": "ocean tiger maple hollow gravity lemon crisp velvet orbit saddle quiet ember"}


def planted(where: str) -> str:
    return (f"For {where}: my API key is {KEYS['openai']}, the AWS one is {KEYS['aws']}, the token "
            f"{KEYS['github']}, my password is {KEYS['password']} and my card is {KEYS['card']}; my wallet's recovery "
            f"phrase is {KEYS['seed']}. I live in Porto.")


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
            changed = structured(await client.call_tool("correct_memory", {
                "fact_id": stored["fact"]["id"], "content": planted("a correction"), "reason": planted("a reason")}))
            await client.call_tool("forget", {"fact_id": changed["fact"]["id"], "reason": planted("forgetting")})
            await client.call_tool("record_conversation", {"messages": [{"role": "user", "content":
                                                                          planted("a conversation")}],
                                                            "thread_id": "t1"})

    asyncio.run(session())
    with local_memory(env) as memory:
        url = memory.settings.database_url
    assert leftovers(tmp_path / "home", url) == []


# Credentials of the forms the table covers, one set per way in (so a leftover names its way).
def credentials(way: str) -> dict[str, str]:
    n = sum(map(ord, way)) % 9000 + 1000
    return {"env": f"Zq8{n}xV3LmN0pQ4rS7tU1wY5aB", "password": f"Vela!Azul#{n}", "aws": f"AKIAQ4EXAMPLE7Z{n}",
            "jwt": f"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI{n}In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THs{n}",
            "pt": f"Gato.Preto.{n}"}


def sentence(keys: dict[str, str]) -> str:
    return (f"DB_PASSWORD={keys['password']} and API_KEY={keys['env']}; aws {keys['aws']}; session {keys['jwt']}; "
            f"a minha senha é {keys['pt']}. I live in Porto.")


def _bundle(m, tmp_path, text):
    from tests.portability.test_bundle_checks import craft

    m.facts.add("User likes tea", "preference", 0.9, user_id="ana", agent_name="bot", source="dashboard")
    m.export_bundle(tmp_path / "good.zip")

    def smuggle(rows):
        rows["facts"][0]["content"] = text
        rows["facts"][0]["source"] = text[:200]
    m.import_bundle(craft(tmp_path / "good.zip", tmp_path / "crafted.zip", smuggle), mode="replace")


def _langgraph(m, text):
    from memory_core.integrations.langgraph import MemoryCoreStore

    store = MemoryCoreStore(m)
    store.put(("ana", "bot", "notes"), "n1", {"content": text, "note": text, "more": {"list": [text], text[:60]: 1}})
    store.put(("ana", "bot", "notes"), "n2", {"kind": "scratch", "text": text})
    for key in ("n1", "n2"):
        value = json.dumps(store.get(("ana", "bot", "notes"), key).value, ensure_ascii=False)
        assert "[secret]" in value and "Porto" in value
        yield value


def _fact(m):
    return m.facts.add("User likes green tea", "preference", 0.9)


WAYS = {
    "facts.add": lambda m, t, tmp: m.facts.add(t, "context", 0.9),
    "facts.add source=": lambda m, t, tmp: m.facts.add("User likes tea", "preference", 0.9, source=t[:250]),
    "facts.supersede": lambda m, t, tmp: m.facts.supersede(_fact(m).id, t, reason=t[:900]),
    "facts.revise": lambda m, t, tmp: m.facts.revise(_fact(m).id, content=t, reason=t[:900]),
    "facts.invalidate reason=": lambda m, t, tmp: m.facts.invalidate(_fact(m).id, reason=t[:900]),
    "update": lambda m, t, tmp: m.update([{"role": "user", "content": t}], thread_id="t1"),
    "queue": lambda m, t, tmp: (m.queue.add([{"role": "user", "content": t}], thread_id="t2"), m.queue.flush()),
    "queue (waiting)": lambda m, t, tmp: (m.queue.add([{"role": "user", "content": t}], thread_id="t3"),
                                          _db_texts(m.settings.database_url)),  # before the worker takes it
    "daily.append": lambda m, t, tmp: m.daily.append(t, title=t[:60]),
    "write_core": lambda m, t, tmp: m.write_core(f"# Memory\n- {t}\n", reason=t),
    "set_summaries": lambda m, t, tmp: m.set_summaries({"workContext": t}),
    "plans.start": lambda m, t, tmp: m.plans.start(t, [t], session_id="s1"),
    "context": lambda m, t, tmp: (m.context("s1").add("user", t), m.contexts.wait()),
    "import_file": lambda m, t, tmp: (
        (tmp / "export.json").write_text(json.dumps({"facts": [{"id": "f1", "content": t, "category": "context",
                                                                "confidence": 0.9, "createdAt": "2026-01-01T00:00:00Z"}]})),
        m.import_file(tmp / "export.json", format="deerflow")),
    "import_bundle": lambda m, t, tmp: _bundle(m, tmp, t),
    "langgraph item value": lambda m, t, tmp: list(_langgraph(m, t)),
    "dream proposal (model reply)": lambda m, t, tmp: _dream(m, t),
}


def _dream(m, text):
    m.daily.append(f"User: {text}")
    result = m.deep_dream(1)
    assert result.status == "proposed", result.reason
    [proposal] = m.dream_proposals()
    assert "[secret]" in proposal.text and "Porto" in proposal.text
    return result, proposal


@pytest.mark.parametrize("way", WAYS)
def test_each_way_in_masks_credentials(tmp_path, database_url, way):
    keys = credentials(way)
    text = sentence(keys)
    # The model answers with the credentials too: what it extracts is masked like what it was given.
    llm = ScriptedChatModel(default=json.dumps({
        "facts": [{"content": text, "category": "context", "confidence": 0.9}],
        "user": {"workContext": {"summary": text, "shouldUpdate": True}}}))
    options = {"llm": llm} if way in ("update", "queue") else {}
    if way.startswith("dream"):
        options = {"llm": ScriptedChatModel(default=f"[MEMORY]\n## Context\n- User: {text}\n[DREAM]\nKept {text}"),
                   "dream_review": True}
    with make_memory(tmp_path, database_url, **options) as m:
        returned = WAYS[way](m, text, tmp_path)
        url = m.settings.database_url
        documents = json.dumps(m.memory_data(), ensure_ascii=False)
        documents += json.dumps(m.memory_data(user_id="ana", agent_name="bot"), ensure_ascii=False)
        seen = json.dumps([f.to_dict() for scope in ({}, {"user_id": "ana", "agent_name": "bot"})
                           for f in m.facts.list(include_invalid=True, **scope)], ensure_ascii=False)
    found = [f"{name} ({where})" for where, blob in (("documents", documents), ("facts", seen),
                                                      ("returned", json.dumps(returned, default=str, ensure_ascii=False)))
             for name, key in keys.items() if key in blob]
    home = tmp_path / "home"
    for path in home.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            if path.suffix == ".zip":
                continue  # the crafted bundle itself, outside memory
            found += [f"{name} ({path.name})" for name, key in keys.items() if key.encode() in data]
    found += [f"{name} (database)" for text_ in _db_texts(url) for name, key in keys.items() if key in text_]
    assert found == []
