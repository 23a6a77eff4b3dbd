"""What an MCP client asks before it has a token: the `/.well-known/` paths.

A client that meets a 401 looks for OAuth metadata there (RFC 9728, RFC 8414). A path the server does not
serve is a plain 404, never a 401, so that a client without a token learns "no OAuth here" rather than
"unauthorized" about the discovery document itself. With OAuth on, the served ones come from
`memory_core.mcp.oauth`, ahead of the bearer check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

PREFIX = "/.well-known/"


def challenge(resource_metadata: str | None = None) -> bytes:
    """The `WWW-Authenticate` value of a 401: Bearer, naming the RFC 9728 metadata when OAuth is on."""
    value = 'Bearer realm="memory-core"'
    if resource_metadata:
        value += f', resource_metadata="{resource_metadata}"'
    return value.encode("latin-1")


class WellKnown:
    """ASGI middleware: `/.well-known/...` goes to `served` (an app that answers those paths) or is a 404;
    everything else to `app`."""

    def __init__(self, app: "ASGIApp", served: "ASGIApp | None" = None, paths: tuple[str, ...] = ()) -> None:
        self.app = app
        self.served = served
        self.paths = paths

    async def __call__(self, scope: "Scope", receive: "Receive", send: "Send") -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if not path.startswith(PREFIX):
            await self.app(scope, receive, send)
        elif self.served is not None and any(path == p or path.startswith(p + "/") for p in self.paths):
            await self.served(scope, receive, send)
        else:
            await send({"type": "http.response.start", "status": 404,
                        "headers": [(b"content-length", b"0"), (b"cache-control", b"no-store")]})
            await send({"type": "http.response.body", "body": b""})
