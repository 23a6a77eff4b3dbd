"""MCP OAuth's dynamic client registration cannot be used to lock everyone out (issue 32: 300 registrations at
6 a second, never deleted, filled the 10,000-client cap in half an hour): registrations are rate-limited per
client address, and clients never used expire after a day, pruned when another registers. The app in process
over httpx's ASGI transport, on a manual clock (no sleeps); SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import anyio
import httpx
import pytest

from memory_core import ManualClock
from memory_core.mcp import oauth
from memory_core.mcp.oauth_http import oauth_http_app
from memory_core.mcp.oidc import OidcConfig
from memory_core.mcp.registration import Buckets
from memory_core.store.oauth_store import OAuthStore
from tests.conftest import make_memory

ISSUER = "http://127.0.0.1:8000"
BACK = "http://127.0.0.1:9/callback"


@pytest.fixture
def served(tmp_path, database_url):
    clock = ManualClock()
    with make_memory(tmp_path, database_url, clock=clock) as memory:
        config = OidcConfig(client_id="upstream", client_secret="upstream-secret",
                            server_metadata_url="http://127.0.0.1:9/.well-known/openid-configuration")
        yield oauth_http_app(memory.admin, config, issuer=ISSUER), memory, clock


def client_at(app, address: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app, client=(address, 4711)), base_url=ISSUER)


async def register(http: httpx.AsyncClient) -> httpx.Response:
    return await http.post("/register", json={"redirect_uris": [BACK], "client_name": "probe"})


def test_registrations_are_rate_limited_per_address(served):
    app, memory, clock = served

    async def scenario() -> None:
        async with client_at(app, "10.0.0.1") as flood, client_at(app, "10.0.0.2") as neighbour:
            assert [(await register(flood)).status_code for _ in range(10)] == [201] * 10
            over = await register(flood)
            assert over.status_code == 429 and over.json()["error"] == "slow_down"
            assert over.headers["retry-after"] == "6"
            assert (await register(neighbour)).status_code == 201  # another address has its own bucket
            clock.advance(6)
            assert (await register(flood)).status_code == 201
            assert (await register(flood)).status_code == 429
            # the issue's flood: 300 tries at 6 a second get about one in 36 through
            accepted = 0
            for _ in range(300):
                clock.advance(1 / 6)
                accepted += (await register(flood)).status_code == 201
            assert accepted <= 9

    anyio.run(scenario)
    assert OAuthStore(memory.db, clock).clients() <= 10 + 1 + 1 + 9


def test_clients_never_used_expire_and_make_room(served, monkeypatch):
    app, memory, clock = served
    monkeypatch.setattr(oauth, "MAX_CLIENTS", 3)
    store = OAuthStore(memory.db, clock)

    async def authorize(http: httpx.AsyncClient, client_id: str) -> httpx.Response:
        return await http.get("/authorize", params={
            "response_type": "code", "client_id": client_id, "redirect_uri": BACK, "state": "s",
            "code_challenge": "x" * 43, "code_challenge_method": "S256"})

    async def scenario() -> None:
        async with client_at(app, "10.0.0.3") as http:
            ids = [(await register(http)).json()["client_id"] for _ in range(3)]
            store.mark_used(ids[0])  # it got tokens once
            full = await register(http)
            assert full.status_code == 400 and "too many registered clients" in full.json()["error_description"]
            clock.advance(timedelta(hours=23).total_seconds())
            assert (await authorize(http, ids[1])).status_code == 302  # known still (sent on to sign in)
            clock.advance(timedelta(hours=2).total_seconds())
            assert (await authorize(http, ids[1])).status_code == 400  # never used within a day: gone
            assert (await authorize(http, ids[0])).status_code == 302  # used: kept
            assert (await register(http)).status_code == 201  # the unused ones were pruned: room again

    anyio.run(scenario)
    assert store.clients() == 2


def test_the_bucket_refills_evenly_and_forgets_the_oldest_address():
    clock = ManualClock()
    buckets = Buckets(per_minute=2, clock=clock, max_keys=2)
    assert (buckets.take("a"), buckets.take("a")) == (0.0, 0.0)
    assert buckets.take("a") == pytest.approx(30.0)
    clock.advance(30)
    assert buckets.take("a") == 0.0
    buckets.take("b")
    buckets.take("c")  # "a" is forgotten: a full bucket again
    assert buckets.take("a") == 0.0
