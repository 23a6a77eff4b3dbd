"""The MCP server over streamable HTTP, where every request carries a token and the token is the scope.

`BearerAuth` checks `Authorization: Bearer <secret>` on every request, before the SDK sees it: a missing,
unknown, revoked or expired token gets a bare 401, so a token revoked mid-session stops working at its next
request. The token of the request travels with it (a context variable the SDK carries to the tool call) and
`request_view` turns it into that token's view: its scope, its role, its actor ("mcp:<token name>"). The
SDK's session manager binds each session to the credential that opened it (`scope["user"]`), so another
token's request for that session is answered as if the session did not exist.
"""

from __future__ import annotations

import logging
import signal
import time
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Callable

import anyio
import anyio.to_thread
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.authentication import AuthCredentials

from memory_core.policy.access import ApiToken, Principal
from memory_core.scope import make_scope
from memory_core.mcp.discovery import WellKnown, challenge
from memory_core.mcp.server import build_server
from memory_core.mcp.sessions import SessionCap

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

    from memory_core.settings import Settings
    from memory_core.views.admin import Admin
    from memory_core.views.scoped import ScopedMemory

log = logging.getLogger(__name__)

PATH = "/mcp"
MAX_SECRET_CHARS = 256
_request_token: ContextVar[ApiToken | None] = ContextVar("memory_core_mcp_token", default=None)


def request_view(admin: "Admin") -> Callable[[], "ScopedMemory"]:
    """The view of the token that signed the current request (PermissionError where there is none)."""

    def view() -> "ScopedMemory":
        token = _request_token.get()
        if token is None:  # never reached behind BearerAuth; fail closed all the same
            raise PermissionError("this request carries no valid token")
        return admin.view_as(Principal("token", token=token), make_scope(token.user_id, token.agent_name))

    return view


def bearer_secret(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The secret of the one `Authorization: Bearer ...` header, or None (none, several, another scheme)."""
    values = [v for k, v in headers if k.lower() == b"authorization"]
    if len(values) != 1:
        return None
    scheme, _, secret = values[0].decode("latin-1").strip().partition(" ")
    secret = secret.strip()
    if scheme.lower() != "bearer" or not secret or len(secret) > MAX_SECRET_CHARS:
        return None
    return secret


class BearerAuth:
    """ASGI middleware: a live API token on every HTTP request, or 401 and nothing else."""

    def __init__(self, app: "ASGIApp", verify: Callable[[str], ApiToken | None], *,
                 cached: Callable[[str], ApiToken | None] = lambda _secret: None,
                 challenge: bytes = challenge()) -> None:
        """`verify(secret)` may read the database; `cached(secret)` answers from memory alone, or None to ask
        `verify`."""
        self.app = app
        self.verify = verify
        self.cached = cached
        self.challenge = challenge

    async def __call__(self, scope: "Scope", receive: "Receive", send: "Send") -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":
            await send({"type": "websocket.close", "code": 1008})
            return
        secret = bearer_secret(scope.get("headers", []))
        try:
            # A token verified in the last few seconds is answered here; a database read (and, once a minute, the
            # token's last use written) runs off the event loop.
            token = (self.cached(secret) or await anyio.to_thread.run_sync(self.verify, secret)) if secret else None
        except Exception:
            log.exception("checking a token failed")
            await _bare(send, 503)
            return
        if token is None:
            client = scope.get("client") or ("?", 0)
            log.info("401 for %s %s from %s: %s", scope.get("method"), scope.get("path"), client[0],
                     "no token" if secret is None else "unknown, revoked or expired token")
            await _bare(send, 401, [(b"www-authenticate", self.challenge)])
            return
        # The SDK's session manager compares this identity with the one that opened a session.
        user = AuthenticatedUser(AccessToken(token=token.id, client_id=token.id, scopes=[token.role],
                                             subject=token.scope.key))
        scope = {**scope, "user": user, "auth": AuthCredentials([token.role])}
        bound, authed = _request_token.set(token), auth_context_var.set(user)
        try:
            await self.app(scope, receive, send)
        finally:
            auth_context_var.reset(authed)
            _request_token.reset(bound)


async def _bare(send: "Send", status: int, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-length", b"0"), *(headers or [])]})
    await send({"type": "http.response.body", "body": b""})


def max_body_bytes(settings: "Settings") -> int:
    """Room for the largest conversation the memory accepts (4 UTF-8 bytes a character at worst), so that
    an oversized argument reaches the tool and comes back as a tool error rather than a bare 413."""
    return max(16 * 1024 * 1024, 4 * settings.max_conversation_chars + 1024 * 1024)


def token_owner() -> str | None:
    """The API token of the request in hand (its id), or None: what SessionCap counts sessions by."""
    token = _request_token.get()
    return None if token is None else token.id


def http_app(admin: "Admin", *, host: str = "127.0.0.1") -> "ASGIApp":
    """The ASGI app: the MCP server at /mcp behind `BearerAuth` (with the SDK's DNS-rebinding protection
    when `host` is a loopback address), at most mcp_sessions_per_token sessions per token, each ended after
    mcp_session_idle_seconds without a request; `/.well-known/` paths are 404, not 401."""
    settings = admin.settings
    server = build_server(request_view(admin), settings)
    app = server.streamable_http_app(streamable_http_path=PATH, host=host, max_request_body_size=max_body_bytes(settings),
                                     session_idle_timeout=settings.mcp_session_idle_seconds)
    capped = SessionCap(app, settings.mcp_sessions_per_token, settings.mcp_session_idle_seconds, owner=token_owner)
    return WellKnown(BearerAuth(capped, admin.access.verify_token, cached=admin.access.cached_token))


def serve_http(admin: "Admin", *, host: str = "127.0.0.1", port: int = 8000,
               app: "ASGIApp | None" = None) -> float | None:
    """Serve over streamable HTTP until SIGTERM or SIGINT; return when the stop was asked (time.monotonic()).
    The caller owns the Memory the admin handle is of: it starts the worker before and closes the Memory (flushing
    pending updates, within what is left of shutdown_timeout_seconds) after. What the process holds when it starts
    serving is left to reference counting (`runtime.heap.settle_heap`)."""
    import uvicorn

    from memory_core.mcp.limits import timed_protocol
    from memory_core.runtime.heap import settle_heap

    class Server(uvicorn.Server):
        stop_asked: float | None = None

        def handle_exit(self, sig: int, frame: Any) -> None:
            self.stop_asked = self.stop_asked or time.monotonic()
            super().handle_exit(sig, frame)

    # Requests in flight get 2 s to end: the rest of the shutdown budget is the queue's. Clients that are slow
    # to send a request's head or body are cut off (limits.py); an idle keep-alive connection after 5 s.
    settings = admin.settings
    config = uvicorn.Config(app or http_app(admin, host=host), host=host, port=port, log_config=None, lifespan="on",
                            server_header=False, timeout_graceful_shutdown=2, timeout_keep_alive=5,
                            http=timed_protocol(settings.mcp_header_timeout_seconds, settings.mcp_body_timeout_seconds))
    server = Server(config)
    # uvicorn stops gracefully on SIGTERM/SIGINT, then raises the signal again for the handler it found: let
    # that one only ask uvicorn to stop (a no-op by then), so that the caller goes on to flush the memory and
    # exits normally.
    def stop(signum: int, frame: Any) -> None:
        server.should_exit = True

    handlers = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    settle_heap()
    try:
        anyio.run(server.serve)
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    return server.stop_asked
