"""memory_core's MCP server: the memory served to agents over the Model Context Protocol.

`python -m memory_core mcp` (or `memory-core mcp`) runs it: over stdio for one scope, or over streamable
HTTP where each request's API token decides the scope and the role. The tools and resources are in
`memory_core.mcp.server` (served by `mcp.protocol`'s role-aware server), the token check and the HTTP app in
`memory_core.mcp.http`, OAuth sign-in in `mcp.oauth`, `mcp.oauth_http` and `mcp.oidc`. This module only holds
the client configurations the dashboard hands out, so that importing it loads neither the SDK nor a server.
"""

from __future__ import annotations

import re
import sys
from typing import Any, Mapping
from urllib.parse import urlsplit

from memory_core.scope import make_scope

SERVER_NAME = "memory-core"
_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
_SECRET = re.compile(r"[\x21-\x7e]{1,256}")  # printable ASCII without spaces: nothing that could split a header


def mcp_client_config(secret: str, url: str, *, name: str = SERVER_NAME) -> dict[str, Any]:
    """A ready `{"mcpServers": {...}}` for an MCP client that speaks streamable HTTP (Claude Code's
    `.mcp.json`, Cursor's `mcp.json`), sending the token as a bearer header. `url` is the server's endpoint,
    e.g. `http://127.0.0.1:8000/mcp`. The result holds the secret: hand it to its owner only."""
    if not isinstance(secret, str) or not _SECRET.fullmatch(secret):
        raise ValueError("secret must be a token secret (printable characters, no spaces)")
    parts = urlsplit(url) if isinstance(url, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc or parts.username or parts.password:
        raise ValueError("url must be an http(s) URL of the server's endpoint, without credentials, e.g. "
                         "http://127.0.0.1:8000/mcp")
    return {"mcpServers": {_server_name(name): {"type": "http", "url": url,
                                                "headers": {"Authorization": f"Bearer {secret}"}}}}


def mcp_stdio_config(*, user_id: str = "default", agent_name: str = "default", role: str = "editor",
                     command: str | None = None, env: Mapping[str, str] | None = None,
                     name: str = SERVER_NAME) -> dict[str, Any]:
    """A ready `{"mcpServers": {...}}` for an MCP client that starts the server itself over stdio (Claude
    Desktop, Claude Code, Cursor). `command` defaults to this Python interpreter (`-m memory_core`), which
    does not depend on the client's PATH; `env` (e.g. MEMORY_CORE_HOME, MEMORY_CORE_DATABASE_URL) is passed
    to the server as given."""
    scope = make_scope(user_id, agent_name)
    if role not in ("viewer", "editor"):
        raise ValueError(f"role must be viewer or editor over stdio; got {role!r:.40}")
    if command is None:
        command, args = sys.executable, ["-m", "memory_core", "mcp"]
    else:
        args = ["mcp"]
    args += ["--user", scope.user_id, "--agent", scope.agent_name]
    if role != "editor":
        args += ["--role", role]
    entry: dict[str, Any] = {"command": command, "args": args}
    if env:
        entry["env"] = {str(k): str(v) for k, v in env.items()}
    return {"mcpServers": {_server_name(name): entry}}


def _server_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError("name must be 1-64 characters of letters, digits, '_', '-', '.'")
    return name


__all__ = ["mcp_client_config", "mcp_stdio_config", "SERVER_NAME"]
