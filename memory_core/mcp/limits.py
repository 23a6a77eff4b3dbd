"""Read timeouts for the HTTP server, where uvicorn has none: a connection whose request head is not whole
within `mcp_header_timeout_seconds` of its first byte (or of the connection), or whose request body is not
whole within `mcp_body_timeout_seconds` of its head, is closed. Without them, clients that send a byte now
and then (or nothing at all) hold the server's connections for ever, without any token: the bearer check
only runs once a request's head is complete, and a body that a 401 never read keeps its connection open too.

This is uvicorn's h11 protocol with one timer per connection; between requests uvicorn's own keep-alive
timeout applies. Imported only by `serve_http` (it imports uvicorn).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)


class TimedH11Protocol(H11Protocol):
    """`uvicorn.Config(http=timed_protocol(header_seconds, body_seconds))`."""

    header_timeout = 10.0
    body_timeout = 30.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._timer: asyncio.TimerHandle | None = None
        self._phase: str | None = None
        super().connection_made(transport)
        self._follow()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow()  # a pipelined request may have begun

    def connection_lost(self, exc: Exception | None) -> None:
        self._arm(None)
        super().connection_lost(exc)

    def _follow(self) -> None:
        """Time what the client owes now: a request head (IDLE), a body (SEND_BODY), or nothing."""
        state = self.conn.their_state
        if state is h11.IDLE:
            self._arm("headers")
        elif state is h11.SEND_BODY:
            self._arm("body")
        else:
            self._arm(None)

    def _arm(self, phase: str | None) -> None:
        if phase is not None and phase == self._phase:
            return  # the clock runs from the phase's start: a byte now and then does not reset it
        if self._timer is not None:
            self._timer.cancel()
        self._timer, self._phase = None, phase
        if phase is not None:
            seconds = self.header_timeout if phase == "headers" else self.body_timeout
            self._timer = self.loop.call_later(seconds, self._expired, phase)

    def _expired(self, phase: str) -> None:
        if self._phase != phase or self.transport.is_closing():
            return
        self._timer, self._phase = None, None
        client = self.client or ("?", 0)
        log.info("closing the connection of %s: its request %s took longer than %.0f s", client[0],
                 "head" if phase == "headers" else "body",
                 self.header_timeout if phase == "headers" else self.body_timeout)
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.disconnected = True  # the app, waiting for the rest of the body, gets http.disconnect
            self.cycle.message_event.set()
        self.transport.close()


def timed_protocol(header_seconds: float, body_seconds: float) -> type[TimedH11Protocol]:
    """The protocol class with these timeouts (uvicorn instantiates it per connection)."""
    attrs: dict[str, Any] = {"header_timeout": float(header_seconds), "body_timeout": float(body_seconds)}
    return type("TimedH11Protocol", (TimedH11Protocol,), attrs)
