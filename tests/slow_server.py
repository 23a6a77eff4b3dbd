"""A real local HTTP server that answers too slowly on purpose: headers or body one byte at a time, or a
body that is not UTF-8. Raw sockets, so that nothing in between buffers or speeds it up."""

from __future__ import annotations

import socket
import threading
import time


class SlowServer:
    """Serves every request the same way, on 127.0.0.1. `mode`: "headers" (the status line and headers
    trickle), "body" (headers at once, the body trickles) or "raw" (`body` sent at once, as it is)."""

    def __init__(self, mode: str, *, every: float = 0.5, body: bytes = b"", for_seconds: float = 120.0) -> None:
        self.mode, self.every, self.body, self.for_seconds = mode, every, body, for_seconds
        self.requests = 0
        self.disconnected = threading.Event()  # the client went away while we were still sending
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(8)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"

    def __enter__(self) -> "SlowServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._sock.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            data = b""
            try:
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, rest = data.partition(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                while len(rest) < length:
                    rest += conn.recv(65536)
            except OSError:
                return
            self.requests += 1
            body = self.body or b'{"choices": [{"message": {"role": "assistant", "content": "late"}}]}'
            headers = (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                       "Connection: close\r\n\r\n").encode()
            if self.mode == "raw":
                conn.sendall(headers + body)
                return
            slow = headers if self.mode == "headers" else body
            if self.mode == "body":
                conn.sendall(headers)
            end = time.monotonic() + self.for_seconds
            try:
                for i in range(len(slow)):
                    if self._stop.is_set() or time.monotonic() > end:
                        return
                    conn.sendall(slow[i:i + 1])
                    time.sleep(self.every)
            except OSError:
                self.disconnected.set()
