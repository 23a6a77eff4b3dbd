"""At most `mcp_sessions_per_token` open MCP sessions per token (with OAuth, per signed-in person too), so that
one token or person cannot take every session the server has room for (the SDK's own limit counts all
together, and then refuses everyone).

ASGI middleware behind `BearerAuth`: it follows each session from the response that opened it (its
`mcp-session-id` header) to its end, as the SDK's session manager ends it: a DELETE, a 404 for its id, or
`mcp_session_idle_seconds` with no request of it in flight (the SDK's idle timeout, given the same value).
A request that would open one more session for a token at its cap gets 429, and nothing is opened.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger(__name__)

SESSION_HEADER = b"mcp-session-id"


@dataclass
class _Session:
    owner: str
    in_flight: int = 0
    last_end: float = 0.0


class SessionCap:
    def __init__(self, app: "ASGIApp", per_owner: int, idle_seconds: float, owner: Callable[[], str | None],
                 now: Callable[[], float] = time.monotonic) -> None:
        self.app = app
        self.per_owner = per_owner
        self.idle_seconds = idle_seconds
        self._owner = owner  # the token of the request in hand (None: not this middleware's to count)
        self._now = now
        self.sessions: dict[str, _Session] = {}
        self._opening: dict[str, int] = {}  # owner -> requests opening a session right now

    def open_sessions(self, owner: str) -> int:
        """The owner's sessions still open (forgetting those that have gone idle)."""
        now = self._now()
        for sid in [s for s, v in self.sessions.items() if not v.in_flight and now - v.last_end >= self.idle_seconds]:
            del self.sessions[sid]
        return sum(1 for v in self.sessions.values() if v.owner == owner)

    async def __call__(self, scope: "Scope", receive: "Receive", send: "Send") -> None:
        owner = self._owner() if scope["type"] == "http" else None
        if owner is None:
            await self.app(scope, receive, send)
            return
        sid = next((v.decode("latin-1") for k, v in scope.get("headers", []) if k.lower() == SESSION_HEADER), None)
        if sid is None:
            await self._open(owner, scope, receive, send)
            return
        session = self.sessions.get(sid)
        if session is None or session.owner != owner:  # the SDK answers for ids it does not know (404)
            await self.app(scope, receive, send)
            return
        status: list[int] = []

        async def watch(message: "Message") -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        session.in_flight += 1
        try:
            await self.app(scope, receive, watch)
        finally:
            session.in_flight -= 1
            session.last_end = self._now()
            ended = status and (status[0] == 404 or (scope.get("method") == "DELETE" and status[0] < 300))
            if ended:
                self.sessions.pop(sid, None)

    async def _open(self, owner: str, scope: "Scope", receive: "Receive", send: "Send") -> None:
        # Counted and reserved with no await in between: requests of one token opening sessions at the same
        # moment cannot all slip under the cap.
        if self.open_sessions(owner) + self._opening.get(owner, 0) >= self.per_owner:
            log.warning("refused a new MCP session for token %s: %d sessions open (mcp_sessions_per_token)",
                        owner, self.per_owner)
            await _too_many(send, self.per_owner)
            return
        self._opening[owner] = self._opening.get(owner, 0) + 1
        opened: list[str] = []
        reserved = True

        def unreserve() -> None:
            nonlocal reserved
            if reserved:
                reserved = False
                self._opening[owner] -= 1
                if not self._opening[owner]:
                    del self._opening[owner]

        async def watch(message: "Message") -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                sid = next((v.decode("latin-1") for k, v in message.get("headers", []) if k.lower() == SESSION_HEADER),
                           None)
                if sid:
                    self.sessions[sid] = _Session(owner, in_flight=1)
                    opened.append(sid)
                    # counted among the sessions from now on: the app may still be finishing after its answer
                    # went out, and a next request (answered at once) must not count this one twice
                    unreserve()
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            unreserve()
            for sid in opened:
                if sid in self.sessions:
                    self.sessions[sid].in_flight -= 1
                    self.sessions[sid].last_end = self._now()


async def _too_many(send: "Send", cap: int) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {
        "code": -32000, "message": f"Too many open sessions for this token (at most {cap}): end one (DELETE) or "
                                   "wait until an idle one expires"}}).encode()
    await send({"type": "http.response.start", "status": 429,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
