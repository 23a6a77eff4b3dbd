"""Bounds on MCP's dynamic client registration (RFC 7591): a body of at most `MAX_BODY_BYTES` naming at most
`MAX_REDIRECT_URIS` redirect URIs (400 with the RFC's error otherwise), and at most
`Settings.mcp_registrations_per_minute` registrations per client address (a token bucket; 429 with
Retry-After beyond). With clients never used expiring (oauth.UNUSED_CLIENT_TTL), nobody can fill the client
table and lock everyone else out.

The address is the connection's peer: behind a reverse proxy every client shares the proxy's, which makes the
limit the server's as a whole (forwarded headers are not trusted: anyone can write them).
"""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from memory_core.clock import Clock

MAX_BODY_BYTES = 64 * 1024
MAX_REDIRECT_URIS = 10
MAX_URI_CHARS = 2_048
MAX_ADDRESSES = 10_000  # buckets kept; the least recently seen address is forgotten first
PATH = "/register"


class Buckets:
    """A token bucket per key: `per_minute` tokens at most, refilled evenly over the minute (the clock is
    injected, so that tests advance it rather than wait)."""

    def __init__(self, per_minute: int, clock: "Clock", max_keys: int = MAX_ADDRESSES) -> None:
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self.clock = clock
        self.max_keys = max_keys
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # key -> (tokens, at)
        self._lock = threading.Lock()

    def take(self, key: str) -> float:
        """0 when a token was taken for `key`, else the seconds until one is there."""
        now = self.clock.now().timestamp()
        with self._lock:
            tokens, at = self._buckets.pop(key, (self.capacity, now))
            tokens = min(self.capacity, tokens + max(0.0, now - at) * self.rate)
            wait = 0.0 if tokens >= 1 else (1 - tokens) / self.rate
            self._buckets[key] = (tokens - 1 if tokens >= 1 else tokens, now)
            while len(self._buckets) > self.max_keys:
                self._buckets.popitem(last=False)
        return wait


def metadata_problem(body: bytes) -> tuple[str, str] | None:
    """(RFC 7591 error, description) when a registration body is over the bounds, else None (the SDK's
    handler checks the rest)."""
    if len(body) > MAX_BODY_BYTES:
        return "invalid_client_metadata", f"the registration is over {MAX_BODY_BYTES:,} bytes"
    try:
        metadata = json.loads(body)
    except (ValueError, RecursionError):
        return None  # the SDK's handler says what is wrong with it
    uris = metadata.get("redirect_uris") if isinstance(metadata, dict) else None
    if isinstance(uris, list):
        if len(uris) > MAX_REDIRECT_URIS:
            return "invalid_redirect_uri", (f"{len(uris):,} redirect_uris; a client may register at most "
                                            f"{MAX_REDIRECT_URIS}")
        if any(isinstance(u, str) and len(u) > MAX_URI_CHARS for u in uris):
            return "invalid_redirect_uri", f"a redirect URI is over {MAX_URI_CHARS:,} characters"
    return None


class RegistrationGuard:
    """ASGI middleware in front of the authorization server: POST /register within the bounds, or refused
    before the SDK's handler reads anything."""

    def __init__(self, app: "ASGIApp", per_minute: int, clock: "Clock") -> None:
        self.app = app
        self.buckets = Buckets(per_minute, clock)

    async def __call__(self, scope: "Scope", receive: "Receive", send: "Send") -> None:
        if scope["type"] != "http" or scope.get("path") != PATH or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        address = str((scope.get("client") or ("unknown",))[0])
        wait = self.buckets.take(address)
        if wait > 0:
            await _answer(send, 429, "slow_down", "too many client registrations from this address; try again "
                          "later", [(b"retry-after", str(math.ceil(wait)).encode())])
            return
        declared = dict(scope.get("headers") or []).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
            await _answer(send, 400, "invalid_client_metadata", f"the registration is over {MAX_BODY_BYTES:,} bytes")
            return
        body = b""
        while True:  # read at most one byte past the bound, whatever the headers said
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if len(body) > MAX_BODY_BYTES or not message.get("more_body"):
                break
        problem = metadata_problem(body)
        if problem is not None:
            await _answer(send, 400, *problem)
            return
        sent = False

        async def replay() -> "Message":
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


async def _answer(send: "Send", status: int, error: str, description: str,
                  headers: list[tuple[bytes, bytes]] = ()) -> None:
    body = json.dumps({"error": error, "error_description": description}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"cache-control", b"no-store"), *headers]})
    await send({"type": "http.response.body", "body": body})
