"""The HTTP server's token check answers a token verified in the last seconds on the event loop, without a
thread or SQL (issue 35), and still refuses a token revoked in this process at its very next request. The
middleware in process over httpx's ASGI transport, in front of an app that names the token it was given."""

from __future__ import annotations

from datetime import timedelta

import anyio
import httpx
import pytest

from memory_core import ManualClock
from memory_core.mcp.http import BearerAuth, _request_token
from tests.conftest import make_memory


async def names_the_token(scope, receive, send) -> None:
    body = _request_token.get().name.encode()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


@pytest.fixture
def served(tmp_path):
    clock = ManualClock()
    memory = make_memory(tmp_path, clock=clock)
    verified: list[str] = []

    def verify(secret: str):
        verified.append(secret)
        return memory.access.verify_token(secret)

    app = BearerAuth(names_the_token, verify, cached=memory.access.cached_token)
    yield app, memory, clock, verified
    memory.close()


def statuses(app, secret: str, n: int) -> list[tuple[int, str]]:
    async def run() -> list[tuple[int, str]]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as http:
            answers = [await http.get("/mcp", headers={"Authorization": f"Bearer {secret}"}) for _ in range(n)]
        return [(a.status_code, a.text) for a in answers]

    return anyio.run(run)


def test_a_recent_token_is_answered_without_verify_and_a_revoked_one_at_once(served):
    app, memory, clock, verified = served
    token, secret = memory.access.create_token("bot", user_id="ana")
    assert statuses(app, secret, 4) == [(200, "bot")] * 4
    assert verified == [secret]  # the first request read it; the next three were answered from the cache
    memory.access.revoke_token(token.id)
    assert statuses(app, secret, 2) == [(401, "")] * 2
    assert verified == [secret] * 3


def test_a_token_due_its_last_use_or_expired_goes_to_verify(served):
    app, memory, clock, verified = served
    _token, secret = memory.access.create_token("bot", user_id="ana", expires_at=clock.now() + timedelta(minutes=5))
    assert statuses(app, secret, 2) == [(200, "bot")] * 2
    clock.advance(61)  # its last use is a minute old: verify writes it again
    assert statuses(app, secret, 2) == [(200, "bot")] * 2
    assert len(verified) == 2
    clock.advance(300)  # expired, though still in the cache
    assert statuses(app, secret, 1) == [(401, "")]
    assert statuses(app, "mc_made-up", 1) == [(401, "")]

