"""The SDK's `MCPServer`, polished where memory_core's clients meet it.

- `tools/list` offers a connection only the tools its role may call: a viewer sees the read-only tools
  (the view would refuse the others anyway; a tool called by name is still answered, with that refusal).
- A resource that does not exist answers the spec's "resource not found" (-32002) on the protocol versions
  that define it (the handshake era, up to 2025-11-25); the newer ones retired that code for -32602.
- Tool descriptions are the docstrings without their indentation, and argument errors are pydantic's
  messages without its documentation links (a model reads them; a URL is noise to it).
- A tool written as a plain function runs on a worker thread, as the SDK runs it, but at most `tool_threads` at
  once (`Settings.mcp_tool_threads`), where the SDK runs up to 40: a call of memory_core's is Python and SQLite
  work, for which threads contend for the interpreter's lock (each SQLite statement lets it go and waits to get
  it back); four threads did fewer calls a second than one (see `tool_threads`).
"""

from __future__ import annotations

import functools
import inspect
import re
from typing import Any, Callable

import anyio
import anyio.to_thread

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INVALID_PARAMS
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError

RESOURCE_NOT_FOUND = -32002  # MCP 2024-11-05 .. 2025-11-25, "Resources: error handling"
_MODEL_NAME = re.compile(r"(validation errors? for )(\w+)Arguments\b")  # the SDK's model of a tool's arguments
_DOCS_LINK = re.compile(r"\n?[ \t]*For further information visit https?://errors\.pydantic\.dev/\S*")


def clean_validation_message(text: str) -> str:
    """`text` without pydantic's "For further information visit https://errors.pydantic.dev/..." lines."""
    return _MODEL_NAME.sub(r"\1\2", _DOCS_LINK.sub("", text))


class RoleAwareServer(MCPServer):
    """An `MCPServer` whose `tools/list` depends on the caller's role, read through `can_write()` (False:
    the read-only tools only; an exception: no tools, the call that follows will say why)."""

    def __init__(self, *args: Any, can_write: Callable[[], bool], tool_threads: int = 1, **kwargs: Any) -> None:
        self._can_write = can_write
        self._tool_threads = tool_threads
        self._limiter: anyio.CapacityLimiter | None = None
        super().__init__(*args, **kwargs)

    def add_tool(self, fn: Callable[..., Any], *args: Any, description: str | None = None, **kwargs: Any) -> None:
        if description is None and fn.__doc__:
            description = inspect.cleandoc(fn.__doc__)
        if not inspect.iscoroutinefunction(fn):
            fn = self._on_tool_threads(fn)
        super().add_tool(fn, *args, description=description, **kwargs)

    def _on_tool_threads(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """`fn` as a coroutine function that runs it on a worker thread, `tool_threads` calls at most at once (the
        signature, and so the tool's schema, is `fn`'s)."""

        @functools.wraps(fn)
        async def on_thread(*args: Any, **kwargs: Any) -> Any:
            if self._limiter is None:
                self._limiter = anyio.CapacityLimiter(self._tool_threads)
            return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs), limiter=self._limiter)

        return on_thread

    async def list_tools(self) -> list[Any]:
        tools = await super().list_tools()
        try:
            writer = self._can_write()
        except Exception:  # no view for this caller: offer nothing rather than everything
            return []
        if writer:
            return tools
        return [t for t in tools if t.annotations is not None and t.annotations.read_only_hint]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            raise type(exc)(clean_validation_message(str(exc))) from exc.__cause__

    async def _handle_read_resource(self, ctx: Any, params: Any) -> Any:
        try:
            return await super()._handle_read_resource(ctx, params)
        except MCPError as exc:
            if exc.code != INVALID_PARAMS or ctx.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
                raise
            raise MCPError(code=RESOURCE_NOT_FOUND, message=exc.message, data=exc.data) from exc
