"""The MCP server, as agents meet it: the real server in a subprocess (`python -m memory_core mcp`), driven by
the SDK's own client over stdio and over streamable HTTP, and by plain HTTP and plain JSON-RPC where the
SDK client would hide what is on the wire. What the server stores is checked with `Memory` in this process,
on the same SQLite file or PostgreSQL schema."""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import time
from contextlib import asynccontextmanager, contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Iterator

import anyio
import httpx
import httpx2
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from memory_core import Memory, Settings
from memory_core.cli.main import main as cli_main
from memory_core.mcp import mcp_client_config, mcp_stdio_config
from memory_core.mcp.http import bearer_secret

ROOT = Path(__file__).resolve().parents[2]
PORTO = [{"role": "user", "content": "I live in Porto."}, {"role": "assistant", "content": "Nice city!"}]
TOOLS = {"remember", "search_memory", "forget", "update_memory", "list_facts", "get_memory_context",
         "record_conversation", "read_core_memory", "correct_memory", "fact_history", "append_daily_log",
         "read_daily_log", "list_daily_logs", "start_plan", "get_active_plan", "check_plan_step", "finish_plan"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}


def server_env(home: Path, database_url: str | None = None, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_CORE_", "OPENAI_"))}
    env.update(MEMORY_CORE_HOME=str(home), MEMORY_CORE_TIMEZONE="UTC", MEMORY_CORE_DEBOUNCE_SECONDS="0.3",
               MEMORY_CORE_RATE_LIMIT_SECONDS="0", MEMORY_CORE_DREAM_SCHEDULE_ENABLED="false")
    if database_url:
        env["MEMORY_CORE_DATABASE_URL"] = database_url
    env.update({f"MEMORY_CORE_{k.upper()}": v for k, v in settings.items()})
    return env


@contextmanager
def local_memory(env: dict[str, str]) -> Iterator[Memory]:
    """This process's view of the server's memory: the same settings, and nothing processed here (closing it
    flushes nothing: what the queue holds is the server's to process)."""
    memory = Memory(Settings.from_env(env))
    try:
        yield memory
    finally:
        memory.close(flush=False)


def wait_for(check, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def structured(result) -> dict:
    assert not result.is_error, result.content[0].text
    return result.structured_content


def error_text(result) -> str:
    assert result.is_error, f"expected a tool error, got {result.structured_content}"
    return result.content[0].text


def stdio_client(env: dict[str, str], *args: str) -> Client:
    return Client(StdioServerParameters(command=sys.executable, args=["-m", "memory_core", "mcp", *args],
                                        env=env, cwd=str(ROOT)))


@asynccontextmanager
async def http_client(url: str, secret: str, mode: str = "auto"):
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {secret}"},
                                  timeout=httpx2.Timeout(30, read=120)) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            yield client


@contextmanager
def http_server_process(env: dict[str, str], log_path: Path, port: int, *args: str) -> Iterator[subprocess.Popen]:
    """`memory-core mcp --transport http` on `port` in a subprocess (stderr to `log_path`), yielded once /mcp answers
    401; stopped with SIGTERM after, which it must survive cleanly (exit status 0)."""
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "memory_core", "mcp", "--transport", "http", "--port", str(port),
                                 *args], env=env, cwd=ROOT, stderr=log)

    def up() -> bool:
        try:
            return httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=2).status_code == 401
        except httpx.TransportError:
            assert proc.poll() is None, log_path.read_text()
            return False

    assert wait_for(up, timeout=60), "the HTTP server did not come up"
    try:
        yield proc
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            assert proc.wait(timeout=30) == 0
        finally:
            if proc.poll() is None:
                proc.kill()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- stdio ---------------------------------------------------------------------------------------------


@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_stdio_serves_every_tool_to_one_scope(tmp_path):
    env = server_env(tmp_path / "home")
    with local_memory(env) as memory:
        memory.write_core("# Memory\n- User writes Rust at work\n", user_id="ana", agent_name="stdio")
        foreign = memory.facts.add("User is called Bob", "context", 0.9, user_id="bob", agent_name="stdio")

    async def session() -> dict:
        seen: dict = {}
        async with stdio_client(env, "--user", "ana", "--agent", "stdio") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            seen["tools"] = set(tools)
            assert tools["remember"].input_schema["properties"]["category"]["enum"][0] == "preference"
            assert tools["remember"].output_schema is not None

            tea = structured(await client.call_tool("remember", {"content": "User prefers green tea", "category": "preference"}))
            assert tea["stored"] and tea["fact"]["content"] == "User prefers green tea" and tea["fact"]["confidence"] == 0.8
            dup = structured(await client.call_tool("remember", {"content": "user prefers  GREEN tea", "category": "preference"}))
            assert dup == {**dup, "stored": False, "skipped": "duplicate"} and dup["fact"]["id"] == tea["fact"]["id"]
            low = structured(await client.call_tool("remember", {"content": "User may like cats", "category": "preference", "confidence": 0.1}))
            assert low["skipped"] == "low_confidence" and "threshold" in low["reason"]
            job = structured(await client.call_tool("remember", {"content": "User works at Acme", "category": "context", "confidence": 0.9}))
            fact_id = job["fact"]["id"]

            listed = structured(await client.call_tool("list_facts", {}))
            assert [f["content"] for f in listed["facts"]] == ["User works at Acme", "User prefers green tea"]
            assert listed["count"] == 2 and not listed["more"]
            first = structured(await client.call_tool("list_facts", {"limit": 1}))  # the most confident, and a hint
            assert [f["content"] for f in first["facts"]] == ["User works at Acme"] and first["more"]
            assert tools["list_facts"].input_schema["properties"]["limit"]["maximum"] == 5_000
            assert "limit" in error_text(await client.call_tool("list_facts", {"limit": 0}))
            assert structured(await client.call_tool("list_facts", {"category": "preference"}))["count"] == 1
            hits = structured(await client.call_tool("search_memory", {"query": "green tea", "k": 5}))["hits"]
            assert hits and hits[0]["ref"] == tea["fact"]["id"]

            moved = structured(await client.call_tool("update_memory", {"fact_id": fact_id, "confidence": 0.95}))
            assert moved["changed"] == ["confidence"] and moved["fact"]["id"] == fact_id and moved["superseded"] is None
            replaced = structured(await client.call_tool("update_memory", {"fact_id": fact_id, "content": "User works at Globex"}))
            assert replaced["superseded"] == fact_id and replaced["fact"]["content"] == "User works at Globex"
            assert replaced["fact"]["confidence"] == 0.95
            again = error_text(await client.call_tool("update_memory", {"fact_id": fact_id, "confidence": 0.5}))
            assert "no longer valid" in again
            corrected = structured(await client.call_tool("correct_memory", {"fact_id": replaced["fact"]["id"],
                                                                              "content": "User works at Initech"}))
            assert corrected["superseded"] == replaced["fact"]["id"]
            history = structured(await client.call_tool("fact_history", {"fact_id": fact_id}))["entries"]
            assert [e["action"] for e in history][:2] == ["superseded", "updated"]
            assert {e["actor"] for e in history} == {"mcp:stdio"}
            gone = structured(await client.call_tool("forget", {"fact_id": tea["fact"]["id"], "reason": "switched to coffee"}))
            assert gone["fact"]["invalidAt"] and not gone["already_invalid"]
            everything = structured(await client.call_tool("list_facts", {"include_invalid": True}))
            assert everything["count"] == 4 and structured(await client.call_tool("list_facts", {}))["count"] == 1

            context = structured(await client.call_tool("get_memory_context", {"max_tokens": 300, "model": "gpt-4o"}))
            assert "User works at Initech" in context["text"] and 0 < context["tokens"] <= 300
            assert "User writes Rust at work" in structured(await client.call_tool("read_core_memory", {}))["text"]
            queued = structured(await client.call_tool("record_conversation", {"messages": PORTO, "thread_id": "t1"}))
            assert queued["queued"] and queued["messages"] == 2

            path = structured(await client.call_tool("append_daily_log", {"text": "Shipped the parser.", "title": "Work"}))["path"]
            day = path.removeprefix("memory/").removesuffix(".md")
            log = structured(await client.call_tool("read_daily_log", {"date": day}))
            assert log["exists"] and "## Work (" in log["text"] and "Shipped the parser." in log["text"]
            assert structured(await client.call_tool("read_daily_log", {}))["date"] == day
            assert structured(await client.call_tool("list_daily_logs", {}))["days"] == [day]

            plan = structured(await client.call_tool("start_plan", {"name": "Release", "steps": ["tag", "publish"]}))
            assert plan["status"] == "active" and plan["session_ids"] == ["mcp:stdio"]
            assert structured(await client.call_tool("get_active_plan", {}))["plan"]["id"] == plan["id"]
            checked = structured(await client.call_tool("check_plan_step", {"plan_id": plan["id"], "step_index": 1}))
            assert [s["done"] for s in checked["steps"]] == [False, True]
            assert structured(await client.call_tool("finish_plan", {"plan_id": plan["id"]}))["status"] == "finished"
            assert structured(await client.call_tool("get_active_plan", {}))["plan"] is None

            # The one scope: another scope's fact id is as unknown as a made-up one.
            for tool in ("forget", "fact_history", "update_memory"):
                args = {"fact_id": foreign.id, **({"confidence": 0.5} if tool == "update_memory" else {})}
                assert "unknown id" in error_text(await client.call_tool(tool, args))

            core = await client.read_resource("memory://core")
            assert "User writes Rust at work" in core.contents[0].text
            daily = await client.read_resource(f"memory://daily/{day}")
            assert "Shipped the parser." in daily.contents[0].text
            assert json.loads((await client.read_resource("memory://daily")).contents[0].text)["days"] == [day]
            seen["day"] = day
        return seen

    seen = anyio.run(session)
    assert TOOLS <= seen["tools"]

    with local_memory(env) as memory:
        facts = {f.content: f for f in memory.facts.list(user_id="ana", agent_name="stdio")}
        assert "User works at Initech" in facts and facts["User works at Initech"].source == "mcp"
        entries = memory.facts.history(user_id="ana", agent_name="stdio")
        assert entries and {e.actor for e in entries} == {"mcp:stdio"}
        # the recorded conversation was flushed when the client went away, if the debounce had not run it yet
        assert "User lives in Porto" in {f.content for f in memory.facts.list(user_id="ana", agent_name="stdio")}
        assert memory.facts.list(user_id="bob", agent_name="stdio") == [foreign]
        assert memory.plans.active(user_id="ana", agent_name="stdio") is None


@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_stdio_on_postgresql_conversation_becomes_facts_after_debounce(tmp_path, pg_url):
    env = server_env(tmp_path / "home", pg_url)

    async def session() -> None:
        async with stdio_client(env, "--user", "ana", "--agent", "pg") as client:
            structured(await client.call_tool("remember", {"content": "User drinks espresso", "category": "preference"}))
            structured(await client.call_tool("record_conversation", {"messages": PORTO, "thread_id": "porto"}))
            with local_memory(env) as memory:
                # while the server runs: the debounce (0.3 s) passes and its worker extracts the fact
                found = wait_for(lambda: [f for f in memory.facts.list(user_id="ana", agent_name="pg")
                                          if f.content == "User lives in Porto"])
                assert found, "the queued conversation was not processed by the server's worker"
                assert found[0].thread_id == "porto"
            hits = structured(await client.call_tool("search_memory", {"query": "where does the user live"}))["hits"]
            assert any("Porto" in h["text"] for h in hits)

    anyio.run(session)
    with local_memory(env) as memory:
        facts = {f.content for f in memory.facts.list(user_id="ana", agent_name="pg")}
        assert facts == {"User drinks espresso", "User lives in Porto"}
        assert {e.actor for e in memory.facts.history(user_id="ana", agent_name="pg")} >= {"mcp:stdio"}


class RawStdio:
    """Plain JSON-RPC lines to a server process, for what the SDK client hides (its pid, its end)."""

    def __init__(self, env: dict[str, str], *args: str, stderr=None) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "memory_core", "mcp", *args], env=env, cwd=ROOT,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)
        self.next_id = 1

    def send(self, message: dict) -> None:
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            ready, _, _ = select.select([self.proc.stdout], [], [], 30)
            assert ready, f"no reply to {method} within 30 s"
            reply = json.loads(self.proc.stdout.readline())
            if reply.get("id") == self.next_id:
                return reply

    def initialize(self) -> None:
        self.send(INITIALIZE)
        assert "result" in json.loads(self.proc.stdout.readline())
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, tool: str, arguments: dict) -> dict:
        return self.request("tools/call", {"name": tool, "arguments": arguments})["result"]


@pytest.mark.parametrize("ending", ["SIGTERM", "SIGINT", "stdin closed"])
def test_stdio_flushes_pending_updates_on_shutdown(tmp_path, ending):
    env = server_env(tmp_path / "home", debounce_seconds="3600")
    server = RawStdio(env, "--user", "ana", "--agent", "flush")
    try:
        server.initialize()
        result = server.call("record_conversation", {"messages": PORTO, "thread_id": "late"})
        assert result["structuredContent"]["queued"] is True
        assert not server.call("get_memory_context", {"query": "where does ana live?"})["isError"]  # recorded behind
        with local_memory(env) as memory:
            assert memory.queue.pending(user_id="ana", agent_name="flush") == 1
        if ending == "stdin closed":
            server.proc.stdin.close()
        else:
            server.proc.send_signal(getattr(signal, ending))
        assert server.proc.wait(timeout=30) == 0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
    with local_memory(env) as memory:
        assert [f.content for f in memory.facts.list(user_id="ana", agent_name="flush")] == ["User lives in Porto"]
        assert memory.queue.pending(user_id="ana", agent_name="flush") == 0
        assert [i.query for i in memory.injections(user_id="ana", agent_name="flush")] == ["where does ana live?"]


def test_stdio_survives_what_a_client_should_never_send(tmp_path):
    env = server_env(tmp_path / "home")
    server = RawStdio(env, "--user", "ana", "--agent", "raw")
    try:
        server.initialize()
        server.proc.stdin.write(b"this is not JSON\n[1, 2\n")
        unknown = server.request("no/such", {})
        assert unknown["error"]["message"] == "Method not found"
        assert server.call("remember", {"content": "User is fine", "category": "context"})["structuredContent"]["stored"]
    finally:
        server.proc.stdin.close()
        assert server.proc.wait(timeout=30) == 0
    with local_memory(env) as memory:
        assert [f.content for f in memory.facts.list(user_id="ana", agent_name="raw")] == ["User is fine"]


@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_stdio_viewer_role_and_bad_scope(tmp_path):
    env = server_env(tmp_path / "home")
    server = RawStdio(env, "--user", "ana", "--agent", "ro", "--role", "viewer")
    try:
        server.initialize()
        refused = server.call("remember", {"content": "User likes tea", "category": "preference"})
        assert refused["isError"] and "not allowed: the viewer role may not add facts" in refused["content"][0]["text"]
        assert server.call("list_facts", {})["structuredContent"]["count"] == 0
    finally:
        server.proc.stdin.close()
        assert server.proc.wait(timeout=30) == 0
    bad = subprocess.run([sys.executable, "-m", "memory_core", "mcp", "--user", "../etc"], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "user_id must be 1-64 characters" in bad.stderr


# -- HTTP ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def http_server(tmp_path_factory):
    """One server for the HTTP tests, with tokens for two scopes, a viewer, a revoked and an expired one."""
    home = tmp_path_factory.mktemp("mcp-http")
    env = server_env(home / "home")
    memory = Memory(Settings.from_env(env))
    past = datetime.now(timezone.utc) - timedelta(minutes=1)
    tokens = {
        "ana": memory.access.create_token("ana-bot", user_id="ana", agent_name="coder"),
        "viewer": memory.access.create_token("ana-reader", user_id="ana", agent_name="coder", role="viewer"),
        "bob": memory.access.create_token("bob-bot", user_id="bob", agent_name="coder"),
        "revoked": memory.access.create_token("gone", user_id="ana", agent_name="coder"),
        "expired": memory.access.create_token("old", user_id="ana", agent_name="coder", expires_at=past),
    }
    memory.access.revoke_token(tokens["revoked"][0].id)
    secrets = {name: secret for name, (_token, secret) in tokens.items()}
    port = free_port()
    log_path = home / "server.log"
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        with http_server_process(env, log_path, port, "--log-level", "DEBUG") as proc:
            yield {"url": url, "secrets": secrets, "tokens": tokens, "memory": memory, "env": env, "log": log_path,
                   "proc": proc}
    finally:
        memory.close(flush=False)
    text = log_path.read_text()
    for secret in secrets.values():  # at DEBUG, after every request of the module
        assert secret not in text and secret[3:] not in text


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer mc_not-a-token"}, {"Authorization": "Basic YTpi"},
                                     {"Authorization": "Bearer"}, "revoked", "expired", "other scheme"])
def test_http_without_a_live_token_is_401_and_nothing_else(http_server, headers):
    if headers in ("revoked", "expired"):
        headers = {"Authorization": f"Bearer {http_server['secrets'][headers]}"}
    elif headers == "other scheme":
        headers = {"Authorization": f"Token {http_server['secrets']['ana']}"}
    body = json.dumps(INITIALIZE)
    for method, kwargs in (("GET", {}), ("POST", {"content": body}), ("DELETE", {})):
        response = httpx.request(method, http_server["url"], headers={**headers, "Content-Type": "application/json",
                                                                      "Accept": "application/json, text/event-stream"},
                                 **kwargs)
        assert response.status_code == 401 and response.content == b""
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert set(response.headers) <= {"www-authenticate", "content-length", "date"}
    assert httpx.get(http_server["url"].replace("/mcp", "/other"), headers=headers).status_code == 401


def test_http_sdk_client_with_a_dead_token_cannot_connect(http_server):
    async def connect(secret: str) -> None:
        async with http_client(http_server["url"], secret, mode="legacy") as client:
            await client.list_tools()

    for name in ("revoked", "expired"):
        with pytest.raises(Exception) as caught:
            anyio.run(connect, http_server["secrets"][name])
        assert caught.group_contains(MCPError, match="error response", depth=2)


def test_http_token_decides_scope_and_actor(http_server):
    memory, url = http_server["memory"], http_server["url"]
    ana, bob = http_server["secrets"]["ana"], http_server["secrets"]["bob"]
    memory.write_core("# Memory\n- User is Ana\n", user_id="ana", agent_name="coder")

    async def scenario() -> dict:
        async with http_client(url, ana) as client:
            fact = structured(await client.call_tool("remember", {"content": "User likes jazz", "category": "preference"}))["fact"]
            day = structured(await client.call_tool("append_daily_log", {"text": "Ana's secret project"}))["path"][7:17]
            plan = structured(await client.call_tool("start_plan", {"name": "Ana's plan", "steps": ["one"]}))
            assert "User is Ana" in structured(await client.call_tool("read_core_memory", {}))["text"]
            assert "jazz" in structured(await client.call_tool("get_memory_context", {}))["text"]
        async with http_client(url, bob, mode="legacy") as client:
            assert structured(await client.call_tool("list_facts", {"include_invalid": True}))["count"] == 0
            assert structured(await client.call_tool("search_memory", {"query": "jazz secret project Ana"}))["hits"] == []
            assert structured(await client.call_tool("read_core_memory", {})) == {"exists": False, "text": ""}
            assert "jazz" not in structured(await client.call_tool("get_memory_context", {}))["text"]
            assert structured(await client.call_tool("list_daily_logs", {}))["days"] == []
            assert structured(await client.call_tool("read_daily_log", {"date": day}))["exists"] is False
            assert structured(await client.call_tool("get_active_plan", {}))["plan"] is None
            for tool, args in (("forget", {"fact_id": fact["id"]}), ("fact_history", {"fact_id": fact["id"]}),
                               ("correct_memory", {"fact_id": fact["id"], "content": "User hates jazz"}),
                               ("update_memory", {"fact_id": fact["id"], "confidence": 0.1}),
                               ("check_plan_step", {"plan_id": plan["id"], "step_index": 0}),
                               ("finish_plan", {"plan_id": plan["id"]})):
                assert "unknown id" in error_text(await client.call_tool(tool, args)), tool
            assert (await client.read_resource("memory://core")).contents[0].text == ""
            with pytest.raises(Exception, match="no daily log"):
                await client.read_resource(f"memory://daily/{day}")
            mine = structured(await client.call_tool("remember", {"content": "User likes techno", "category": "preference"}))
        return {"fact": fact, "plan": plan, "bob_fact": mine["fact"]}

    seen = anyio.run(scenario)
    ana_facts = memory.facts.list(user_id="ana", agent_name="coder")
    assert [f.content for f in ana_facts] == ["User likes jazz"] and ana_facts[0].valid
    assert [f.content for f in memory.facts.list(user_id="bob", agent_name="coder")] == ["User likes techno"]
    assert memory.plans.get(seen["plan"]["id"]).status == "active"
    actors = {e.fact_id: e.actor for e in memory.facts.history(user_id="ana", agent_name="coder")}
    assert actors[seen["fact"]["id"]] == "mcp:ana-bot"
    assert memory.facts.history(seen["bob_fact"]["id"])[0].actor == "mcp:bob-bot"


def test_http_viewer_reads_but_cannot_write(http_server):
    memory = http_server["memory"]
    existing = memory.facts.add("User reads sci-fi", "preference", 0.9, user_id="ana", agent_name="coder")
    before = len(memory.facts.history(user_id="ana", agent_name="coder"))

    async def scenario() -> None:
        async with http_client(http_server["url"], http_server["secrets"]["viewer"]) as client:
            assert existing.id in {f["id"] for f in structured(await client.call_tool("list_facts", {}))["facts"]}
            assert structured(await client.call_tool("search_memory", {"query": "sci-fi"}))["hits"]
            for tool, args in (("remember", {"content": "User likes tea", "category": "preference"}),
                               ("forget", {"fact_id": existing.id}),
                               ("update_memory", {"fact_id": existing.id, "confidence": 0.6}),
                               ("correct_memory", {"fact_id": existing.id, "content": "User reads fantasy"}),
                               ("record_conversation", {"messages": PORTO, "thread_id": "v"}),
                               ("append_daily_log", {"text": "note"}),
                               ("start_plan", {"name": "p", "steps": ["a"]})):
                text = error_text(await client.call_tool(tool, args))
                assert text.startswith(f"Error executing tool {tool}: not allowed: the viewer role may not"), text

    anyio.run(scenario)
    assert memory.facts.get(existing.id) == existing
    assert len(memory.facts.history(user_id="ana", agent_name="coder")) == before
    assert memory.queue.pending(user_id="ana", agent_name="coder") == 0


def test_http_bad_arguments_are_tool_errors_and_the_server_keeps_serving(http_server):
    memory = http_server["memory"]
    other = memory.facts.add("User is someone else", "context", 0.9, user_id="eve", agent_name="coder")
    cases = [
        ("remember", {"content": 5, "category": "preference"}, "Input should be a valid string"),
        ("remember", {"content": "x", "category": "opinion"}, "Input should be 'preference'"),
        ("remember", {"content": "x", "category": "goal", "confidence": 1.5}, "less than or equal to 1"),
        ("remember", {"content": "x", "category": "goal", "confidence": "high"}, "valid number"),
        ("remember", {"content": "   ", "category": "goal"}, "content must not be empty"),
        ("remember", {"content": "nul\x00here", "category": "goal"}, "NUL character"),
        ("remember", {"content": "x" * 10_000_000, "category": "goal"}, "at most 2000 characters"),
        ("remember", {"category": "goal"}, "content\n  Field required"),
        ("forget", {"fact_id": "fact_deadbeef"}, "unknown id 'fact_deadbeef'"),
        ("forget", {"fact_id": other.id}, f"unknown id '{other.id}'"),
        ("forget", {"fact_id": ["fact_deadbeef"]}, "valid string"),
        ("update_memory", {"fact_id": other.id, "content": "User is Ana"}, "unknown id"),
        ("search_memory", {"query": "x", "k": 0}, "greater than or equal to 1"),
        ("search_memory", {"query": "x", "k": "ten"}, "valid integer"),
        ("search_memory", {"query": ""}, "at least 1 character"),
        ("get_memory_context", {"max_tokens": -1}, "greater than or equal to 1"),
        ("record_conversation", {"messages": "hello", "thread_id": "t"}, "valid list"),
        ("record_conversation", {"messages": [{"role": "robot", "content": "hi"}], "thread_id": "t"}, "Input should be 'user'"),
        ("record_conversation", {"messages": [{"content": "hi"}], "thread_id": "t"}, "role\n  Field required"),
        ("record_conversation", {"messages": [{"role": "user", "content": 7}], "thread_id": "t"}, "valid string"),
        ("record_conversation", {"messages": [], "thread_id": "t"}, "at least 1 item"),
        ("record_conversation", {"messages": PORTO, "thread_id": "t" * 300}, "at most 256 characters"),
        ("record_conversation", {"messages": [{"role": "user", "content": "I live in Porto. " * 60_000}],
                                 "thread_id": "t"}, "(max_conversation_chars)"),
        ("read_daily_log", {"date": "yesterday"}, "should match pattern"),
        ("read_daily_log", {"date": "2026-02-30"}, "date must be YYYY-MM-DD"),
        ("append_daily_log", {"text": "x", "title": "t" * 300}, "at most 256 characters"),
        ("start_plan", {"name": "p", "steps": []}, "at least 1 item"),
        ("check_plan_step", {"plan_id": "plan_00000000", "step_index": 0}, "unknown id 'plan_00000000'"),
        ("no_such_tool", {}, "Unknown tool"),
    ]

    async def scenario() -> None:
        async with http_client(http_server["url"], http_server["secrets"]["ana"]) as client:
            for tool, args, expected in cases:
                text = error_text(await client.call_tool(tool, args))
                assert expected in text, (tool, args if len(str(args)) < 200 else "...", text[:300])
                assert len(text) < 2_000  # a 10 MB argument is not echoed back
            plan = structured(await client.call_tool("start_plan", {"name": "p", "steps": ["a", "b"]}))
            assert "step_index must be between 0 and 1" in error_text(
                await client.call_tool("check_plan_step", {"plan_id": plan["id"], "step_index": 5}))
            still = structured(await client.call_tool("remember", {"content": "User still gets answers", "category": "context"}))
            assert still["stored"]

    anyio.run(scenario)
    assert memory.facts.get(other.id).valid
    assert http_server["proc"].poll() is None


@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_http_session_is_bound_to_its_token_and_revocation_is_immediate(http_server):
    memory, url = http_server["memory"], http_server["url"]
    token, secret = memory.access.create_token("short-lived", user_id="ana", agent_name="coder")
    accept = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}

    # a session opened by one token is not there for another token's requests
    with httpx.Client(timeout=30) as http:
        opened = http.post(url, content=json.dumps(INITIALIZE), headers={**accept, "Authorization": f"Bearer {secret}"})
        assert opened.status_code == 200
        session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
        http.post(url, content=json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                  headers={**accept, **session, "Authorization": f"Bearer {secret}"})
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "remember", "arguments": {"content": "User was hijacked", "category": "context"}}}
        hijack = http.post(url, content=json.dumps(call), headers={**accept, **session,
                                                                   "Authorization": f"Bearer {http_server['secrets']['bob']}"})
        assert hijack.status_code == 404
        mine = http.post(url, content=json.dumps({**call, "params": {"name": "list_facts", "arguments": {}}}),
                         headers={**accept, **session, "Authorization": f"Bearer {secret}"})
        assert mine.status_code == 200 and '"structuredContent":{"facts":' in mine.text  # the session still works for its owner
    assert not [f for f in memory.facts.list(user_id="bob", agent_name="coder") if "hijacked" in f.content]
    assert not [f for f in memory.facts.list(user_id="ana", agent_name="coder") if "hijacked" in f.content]

    # a token revoked mid-session (here by another process: the server's token cache keeps it at most
    # token_cache_seconds, 5 s) stops working at its next request after that
    async def scenario() -> None:
        async with http_client(url, secret, mode="legacy") as client:
            structured(await client.call_tool("remember", {"content": "User said hello", "category": "context"}))
            memory.access.revoke_token(token.id)
            deadline = time.monotonic() + memory.settings.token_cache_seconds + 30
            with pytest.raises(MCPError, match="error response"):  # the SDK's words for the 401
                while time.monotonic() < deadline:  # reads until the server's cached token runs out
                    await client.call_tool("list_facts", {})
                    await anyio.sleep(0.2)

    anyio.run(scenario)
    contents = {f.content for f in memory.facts.list(user_id="ana", agent_name="coder")}
    assert "User said hello" in contents and "User said goodbye" not in contents
    assert httpx.post(url, content=json.dumps(INITIALIZE), headers={**accept, "Authorization": f"Bearer {secret}"}).status_code == 401


def test_http_recorded_conversation_becomes_facts(http_server):
    memory = http_server["memory"]

    async def scenario() -> None:
        async with http_client(http_server["url"], http_server["secrets"]["bob"]) as client:
            queued = structured(await client.call_tool("record_conversation", {"messages": PORTO, "thread_id": "bob-1"}))
            assert queued == {"queued": True, "thread_id": "bob-1", "messages": 2, "debounce_seconds": 0.3, "reason": None}

    anyio.run(scenario)
    found = wait_for(lambda: [f for f in memory.facts.list(user_id="bob", agent_name="coder") if f.content == "User lives in Porto"])
    assert found
    assert memory.facts.history(found[0].id)[0].actor == "mcp:bob-bot"
    assert not [f for f in memory.facts.list(user_id="ana", agent_name="coder") if "Porto" in f.content]


# -- configuration helpers and the command line -------------------------------------------------------


def test_client_configs():
    config = mcp_client_config("mc_abc-DEF_123", "http://127.0.0.1:8000/mcp")
    assert config == {"mcpServers": {"memory-core": {"type": "http", "url": "http://127.0.0.1:8000/mcp",
                                                     "headers": {"Authorization": "Bearer mc_abc-DEF_123"}}}}
    for secret, url in (("mc_a b", "http://h/mcp"), ("mc_a\nX-Evil: 1", "http://h/mcp"), ("", "http://h/mcp"),
                        ("mc_a", "ftp://h/mcp"), ("mc_a", "http://user:pw@h/mcp"), ("mc_a", "h/mcp"), (None, "http://h")):
        with pytest.raises(ValueError):
            mcp_client_config(secret, url)
    stdio = mcp_stdio_config(user_id="ana", agent_name="coder", env={"MEMORY_CORE_HOME": "/data"})
    entry = stdio["mcpServers"]["memory-core"]
    assert entry == {"command": sys.executable, "args": ["-m", "memory_core", "mcp", "--user", "ana", "--agent", "coder"],
                     "env": {"MEMORY_CORE_HOME": "/data"}}
    viewer = mcp_stdio_config(role="viewer", command="memory-core", name="team-memory")["mcpServers"]["team-memory"]
    assert viewer == {"command": "memory-core", "args": ["mcp", "--user", "default", "--agent", "default", "--role", "viewer"]}
    with pytest.raises(ValueError):
        mcp_stdio_config(user_id="../x")
    with pytest.raises(ValueError):
        mcp_stdio_config(role="admin")


@pytest.mark.parametrize("header, secret", [
    (b"Bearer mc_x", "mc_x"), (b"bearer   mc_x ", "mc_x"), (b"Basic mc_x", None), (b"Bearer", None),
    (b"Bearer " + b"a" * 300, None), (None, None)])
def test_bearer_secret(header, secret):
    headers = [(b"host", b"h")] + ([(b"authorization", header)] if header is not None else [])
    assert bearer_secret(headers) == secret
    assert bearer_secret([(b"authorization", b"Bearer mc_x"), (b"Authorization", b"Bearer mc_y")]) is None


def test_cli_refuses_bad_arguments(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MEMORY_CORE_HOME", str(tmp_path))
    for argv, message in ((["mcp", "--transport", "http", "--user", "ana"], "over HTTP each request's token"),
                          (["mcp", "--transport", "http", "--port", "70000"], "--port must be between"),
                          (["mcp", "--agent", "a b"], "agent_name must be"),
                          (["mcp", "--transport", "sse"], "invalid choice")):
        with pytest.raises(SystemExit) as exit_:
            cli_main(argv)
        assert exit_.value.code == 2 and message in capsys.readouterr().err
    monkeypatch.setenv("MEMORY_CORE_MAX_FACTS", "0")
    with pytest.raises(SystemExit):
        cli_main(["mcp"])
    assert "settings: max_facts must be at least 1" in capsys.readouterr().err


def test_console_script_is_installed():
    script = shutil.which("memory-core", path=str(Path(sys.executable).parent))
    assert script, "memory-core is not installed next to this interpreter (bin/test installs the checkout)"
    shown = subprocess.run([script, "mcp", "--help"], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0 and "--transport {stdio,http}" in shown.stdout


# -- the server says which memory it serves --------------------------------------------------------

DB_PASSWORD = "q-p@ss/w0rd-7731"
ENCODED = "q-p%40ss%2Fw0rd-7731"


def _mcp_start_message(env: dict[str, str], cwd) -> tuple[str, bytes]:
    """Start `memory-core mcp` (stdio), close its stdin at once (it exits), return its stderr and stdout."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "memory_core", "mcp"], input=b"", capture_output=True, cwd=cwd,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stderr.decode(), done.stdout


@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_mcp_says_on_stderr_which_home_and_database_it_uses(tmp_path, pg_url):
    import os
    from pathlib import Path

    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_CORE_", "OPENAI_"))}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    stderr, stdout = _mcp_start_message(env, tmp_path)
    assert stdout == b""  # stdout is the protocol's
    assert f"home {tmp_path / 'memory_data'}" in stderr and "MEMORY_CORE_HOME is not set" in stderr
    assert f"sqlite:///{tmp_path / 'memory_data'}" in stderr or "sqlite:///memory_data" in stderr

    # A password in the URL's query is masked (the local server trusts 127.0.0.1, so any password works).
    env.update(MEMORY_CORE_HOME=str(tmp_path / "home"), MEMORY_CORE_DATABASE_URL=f"{pg_url}&password={ENCODED}")
    stderr, stdout = _mcp_start_message(env, tmp_path)
    assert stdout == b"" and f"home {tmp_path / 'home'}, database postgresql+psycopg://" in stderr
    assert "password=***" in stderr and ENCODED not in stderr and DB_PASSWORD not in stderr
    assert "MEMORY_CORE_HOME is not set" not in stderr
