"""SessionCap counts a session once: from the moment its answer names it, not also as being opened while the SDK
finishes the request after answering (a client that opened sessions one after another, each answered, got a 429
for the last one its cap allows once the token check stopped taking a thread hop: issue 35)."""

from __future__ import annotations

import anyio

from memory_core.mcp.sessions import SessionCap


def test_a_session_answered_but_still_finishing_is_counted_once():
    finishing = anyio.Event()
    ids = iter(["s1", "s2", "s3"])

    async def sdk(scope, receive, send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"mcp-session-id", next(ids).encode())]})
        await send({"type": "http.response.body", "body": b""})
        if scope["path"] == "/finishing":
            await finishing.wait()  # the answer is out; the request is not over yet

    cap = SessionCap(sdk, per_owner=2, idle_seconds=60, owner=lambda: "tok")
    answered: list[tuple[str, int]] = []

    async def post(path: str) -> None:
        async def send(message) -> None:
            if message["type"] == "http.response.start":
                answered.append((path, message["status"]))

        async def receive():
            return {"type": "http.request", "body": b"", "more_body": False}

        await cap({"type": "http", "method": "POST", "path": path, "headers": []}, receive, send)

    async def scenario() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(post, "/finishing")
            while not answered:
                await anyio.sleep(0)
            await post("/next")  # the second of two allowed
            await post("/third")  # one too many
            finishing.set()

    anyio.run(scenario)
    assert answered == [("/finishing", 200), ("/next", 200), ("/third", 429)]
    assert cap.open_sessions("tok") == 2
