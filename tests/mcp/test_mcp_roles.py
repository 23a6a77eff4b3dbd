"""Tools by role and protocol polish, through the real server in a subprocess and the SDK's own client:
a viewer's `tools/list` holds no writing tool, a missing resource is -32002 (on the handshake protocol
versions that define it), descriptions and argument errors read cleanly, and HTTP discovery paths are 404."""

from __future__ import annotations

import httpx
import anyio
import pytest
from mcp import MCPError

from tests.mcp.test_mcp import (  # noqa: F401  (http_server is a fixture)
    TOOLS, error_text, http_client, http_server, stdio_client, server_env, structured)

WRITING = {"remember", "forget", "update_memory", "correct_memory", "record_conversation", "append_daily_log",
           "start_plan", "check_plan_step", "finish_plan"}
READING = TOOLS - WRITING


async def _tools(client) -> dict:
    return {t.name: t for t in (await client.list_tools()).tools}


def test_http_tools_list_follows_the_token_role(http_server):
    async def scenario() -> None:
        async with http_client(http_server["url"], http_server["secrets"]["viewer"]) as client:
            tools = await _tools(client)
            assert set(tools) == READING and all(t.annotations.read_only_hint for t in tools.values())
            # a hidden tool called by name is still refused by the role, not by "unknown tool"
            text = error_text(await client.call_tool("remember", {"content": "User likes tea", "category": "preference"}))
            assert "not allowed: the viewer role may not" in text
        async with http_client(http_server["url"], http_server["secrets"]["ana"], mode="legacy") as client:
            assert set(await _tools(client)) == TOOLS

    anyio.run(scenario)


@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_stdio_tools_list_follows_the_role(tmp_path):
    env = server_env(tmp_path / "home")

    async def scenario(role: str) -> set:
        async with stdio_client(env, "--user", "ana", "--agent", "roles", "--role", role) as client:
            return set(await _tools(client))

    assert anyio.run(scenario, "viewer") == READING
    assert anyio.run(scenario, "editor") == TOOLS


def test_descriptions_errors_and_missing_resources_read_cleanly(http_server):
    async def scenario() -> None:
        async with http_client(http_server["url"], http_server["secrets"]["ana"], mode="legacy") as client:
            for tool in (await _tools(client)).values():
                assert tool.description and not tool.description.startswith((" ", "\n")), tool.name
                assert "\n    " not in tool.description, (tool.name, tool.description)
            assert "\nor a confidence below" in (await _tools(client))["remember"].description

            text = error_text(await client.call_tool("remember", {"content": 5, "category": "preference"}))
            assert "Input should be a valid string" in text and "1 validation error for remember\n" in text
            assert "http" not in text and "pydantic.dev" not in text

            for uri in ("memory://daily/1999-01-01", "memory://no-such-thing"):
                with pytest.raises(MCPError) as caught:
                    await client.read_resource(uri)
                assert caught.value.code == -32002, (uri, caught.value.code)
            with pytest.raises(MCPError) as bad_date:  # a malformed date is not "not found"
                await client.read_resource("memory://daily/someday")
            assert bad_date.value.code != -32002

    anyio.run(scenario)


@pytest.mark.parametrize("path", ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp",
                                  "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"])
def test_http_discovery_paths_are_404_without_oauth_and_401_carries_bearer(http_server, path):
    base = http_server["url"].removesuffix("/mcp")
    response = httpx.get(base + path)
    assert response.status_code == 404 and "www-authenticate" not in response.headers
    unauthorised = httpx.post(http_server["url"], json={})
    assert unauthorised.status_code == 401
    assert unauthorised.headers["www-authenticate"].startswith("Bearer ")
    assert "resource_metadata" not in unauthorised.headers["www-authenticate"]  # no OAuth on this server
