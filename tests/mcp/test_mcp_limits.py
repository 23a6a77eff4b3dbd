"""What one client may hold of the MCP server over HTTP, tried on the real server in a subprocess with raw
sockets and plain HTTP: slow request heads and bodies are cut off (with or without a token), and one token
gets at most `mcp_sessions_per_token` sessions, idle ones expiring, while another token still gets its own."""

from __future__ import annotations

import json
import socket
import threading

import httpx
import pytest

from memory_core import Memory, Settings
from tests.mcp.test_mcp import INITIALIZE, free_port, http_server_process, server_env, wait_for

ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
HEADER_TIMEOUT, BODY_TIMEOUT, PER_TOKEN, IDLE = 1, 2, 3, 3


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    home = tmp_path_factory.mktemp("mcp-limits")
    env = server_env(home / "home", mcp_header_timeout_seconds=str(HEADER_TIMEOUT),
                     mcp_body_timeout_seconds=str(BODY_TIMEOUT), mcp_sessions_per_token=str(PER_TOKEN),
                     mcp_session_idle_seconds=str(IDLE))
    memory = Memory(Settings.from_env(env))
    secrets = {name: memory.access.create_token(name, user_id=name, agent_name="bot")[1]
               for name in ("greedy", "other", "idle", "slow")}
    port = free_port()
    log_path = home / "server.log"
    try:
        with http_server_process(env, log_path, port, "--log-level", "INFO"):
            yield {"url": f"http://127.0.0.1:{port}/mcp", "port": port, "secrets": secrets, "log": log_path}
    finally:
        memory.close(flush=False)


def closed_by_server(sock: socket.socket, within: float = 20.0) -> bytes | None:
    """What the server sent before closing the connection, or None if it was still open after `within` s."""
    sock.settimeout(within)
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except socket.timeout:
        return None
    except ConnectionResetError:
        pass
    return received


@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_slow_request_heads_and_bodies_are_cut_off(server):
    port, secret = server["port"], server["secrets"]["slow"]
    head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: application/json, text/event-stream\r\n"
            "Content-Type: application/json\r\nContent-Length: 1000\r\n")
    silent, partial, trickling, slow_body, slow_body_no_token = (socket.create_connection(("127.0.0.1", port))
                                                                 for _ in range(5))
    partial.sendall(head[:40].encode())  # a head that never ends
    slow_body.sendall(f"{head}Authorization: Bearer {secret}\r\n\r\n{{\"jsonrpc\":".encode())  # a body that never ends
    slow_body_no_token.sendall(f"{head}\r\n{{\"jsonrpc\":".encode())
    stop = threading.Event()

    def trickle() -> None:  # a byte now and then: never a whole head
        for byte in head.encode():
            if stop.wait(0.3):
                return
            try:
                trickling.send(bytes([byte]))
            except OSError:
                return

    feeder = threading.Thread(target=trickle, daemon=True)
    feeder.start()
    try:
        assert closed_by_server(silent) == b""
        assert closed_by_server(partial) == b""
        assert closed_by_server(trickling) == b""
        assert closed_by_server(slow_body) == b""  # the token is fine; the body never came
        answered = closed_by_server(slow_body_no_token)  # 401 at once, and the connection goes with its body
        assert answered is not None and answered.startswith(b"HTTP/1.1 401")
    finally:
        stop.set()
        for sock in (silent, partial, trickling, slow_body, slow_body_no_token):
            sock.close()
    # the server still serves everyone else
    with httpx.Client(timeout=30) as http:
        ok = http.post(server["url"], content=json.dumps(INITIALIZE), headers={**ACCEPT, "Authorization": f"Bearer {secret}"})
        assert ok.status_code == 200 and ok.headers["mcp-session-id"]
        http.delete(server["url"], headers={"Authorization": f"Bearer {secret}", "mcp-session-id": ok.headers["mcp-session-id"],
                                            "mcp-protocol-version": "2025-06-18"})


def open_session(http: httpx.Client, url: str, secret: str) -> httpx.Response:
    return http.post(url, content=json.dumps(INITIALIZE), headers={**ACCEPT, "Authorization": f"Bearer {secret}"})


def test_one_token_cannot_hold_every_session(server):
    url, secrets = server["url"], server["secrets"]
    with httpx.Client(timeout=30) as http:
        opened = [open_session(http, url, secrets["greedy"]) for _ in range(PER_TOKEN)]
        assert [r.status_code for r in opened] == [200] * PER_TOKEN
        refused = open_session(http, url, secrets["greedy"])
        assert refused.status_code == 429 and "Too many open sessions for this token" in refused.text
        assert "mcp-session-id" not in refused.headers
        other = open_session(http, url, secrets["other"])  # another token still gets a session
        assert other.status_code == 200 and other.headers["mcp-session-id"]
        # the sessions it has still work, and ending one makes room for another
        session = {"Authorization": f"Bearer {secrets['greedy']}", "mcp-session-id": opened[0].headers["mcp-session-id"],
                   "mcp-protocol-version": "2025-06-18"}
        ping = http.post(url, content=json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"}), headers={**ACCEPT, **session})
        assert ping.status_code == 200
        assert http.delete(url, headers=session).status_code == 200
        assert open_session(http, url, secrets["greedy"]).status_code == 200
        assert open_session(http, url, secrets["greedy"]).status_code == 429


@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_idle_sessions_expire_and_free_their_place(server):
    url, secret = server["url"], server["secrets"]["idle"]
    with httpx.Client(timeout=30) as http:
        first = [open_session(http, url, secret) for _ in range(PER_TOKEN)]
        assert [r.status_code for r in first] == [200] * PER_TOKEN
        assert open_session(http, url, secret).status_code == 429
        # once they have been idle for mcp_session_idle_seconds, the token may open sessions again
        fresh = wait_for(lambda: (r := open_session(http, url, secret)).status_code == 200 and r, timeout=30)
        assert fresh, "idle sessions never expired"
        gone = http.post(url, content=json.dumps({"jsonrpc": "2.0", "id": 8, "method": "ping"}),
                         headers={**ACCEPT, "Authorization": f"Bearer {secret}", "mcp-protocol-version": "2025-06-18",
                                  "mcp-session-id": first[0].headers["mcp-session-id"]})
        assert gone.status_code == 404  # the server ended it
