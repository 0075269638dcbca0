"""A raw-socket HTTP/1.1 client that costs little per request, so the server's cost is what gets measured.

httpx costs about 2 ms a request on its own, more than the whole call being measured. This client writes
prepared request bytes on kept-alive sockets and parses just enough of the answer (status, Content-Length or
chunked framing) to know where it ends. `Client` is one blocking connection, for sequential latency; `drive`
runs many connections from one thread with a selector, for throughput and tail latency under load.
"""

from __future__ import annotations

import os
import selectors
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

__all__ = ["Client", "Load", "drive", "parse_response", "pin", "request_bytes"]


def pin(cpu: int | None) -> None:
    """Run this process on `cpu` only (None: leave it be), so client and server do not take each other's core."""
    if cpu is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {cpu})


def request_bytes(method: str, host: str, path: str, headers: dict[str, str], body: bytes = b"") -> bytes:
    """One HTTP/1.1 request, ready to write."""
    lines = [f"{method} {path} HTTP/1.1", f"host: {host}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    if body or method == "POST":
        lines.append(f"content-length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def parse_response(buffer: bytes | bytearray) -> tuple[int, int, dict[str, str], bytes] | None:
    """(bytes consumed, status, headers, body) of the first complete response in `buffer`, or None if incomplete."""
    end = buffer.find(b"\r\n\r\n")
    if end < 0:
        return None
    head = bytes(buffer[:end]).decode("latin-1").split("\r\n")
    status = int(head[0].split(" ", 2)[1])
    headers = {}
    for line in head[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    start = end + 4
    if headers.get("transfer-encoding", "").lower() == "chunked":
        parts = []
        at = start
        while True:
            line_end = buffer.find(b"\r\n", at)
            if line_end < 0:
                return None
            size = int(bytes(buffer[at:line_end]).split(b";")[0], 16)
            chunk_start = line_end + 2
            if len(buffer) < chunk_start + size + 2:
                return None
            if size == 0:
                return chunk_start + 2, status, headers, b"".join(parts)
            parts.append(bytes(buffer[chunk_start : chunk_start + size]))
            at = chunk_start + size + 2
    length = int(headers.get("content-length", "0"))
    if len(buffer) < start + length:
        return None
    return start + length, status, headers, bytes(buffer[start : start + length])


class Client:
    """One kept-alive blocking connection."""

    def __init__(self, host: str, port: int) -> None:
        self.sock = socket.create_connection((host, port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = bytearray()

    def send(self, raw: bytes) -> tuple[int, dict[str, str], bytes]:
        """Write one request and read its whole answer: (status, headers, body)."""
        self.sock.sendall(raw)
        while True:
            parsed = parse_response(self.buffer)
            if parsed is not None:
                consumed, status, headers, body = parsed
                del self.buffer[:consumed]
                return status, headers, body
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("the server closed the connection")
            self.buffer += data

    def close(self) -> None:
        self.sock.close()


@dataclass(kw_only=True)
class Load:
    """What `drive` measured: completed requests, seconds, each request's latency and the failures."""

    done: int = 0
    seconds: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def per_second(self) -> float:
        return self.done / self.seconds if self.seconds else 0.0


def drive(
    host: str,
    port: int,
    requests: Sequence[Callable[[int, int], bytes]],
    check: Callable[[int, int, bytes], str | None],
    *,
    duration: float,
) -> Load:
    """Keep one request in flight on each of `len(requests)` connections for `duration` seconds.

    `requests[n](n, i)` is connection n's i-th request; `check(n, status, body)` names what is wrong with an
    answer, or None when it is good.
    """
    selector = selectors.DefaultSelector()
    load = Load()
    state = []
    for number in range(len(requests)):
        sock = socket.create_connection((host, port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)
        state.append({"sock": sock, "buffer": bytearray(), "sent": 0.0, "count": 0})
        selector.register(sock, selectors.EVENT_READ, number)
    started = time.perf_counter()
    deadline = started + duration
    for number, entry in enumerate(state):
        entry["sent"] = time.perf_counter()
        entry["sock"].sendall(requests[number](number, 0))  # type: ignore[union-attr]
    open_connections = len(state)
    while open_connections:
        for key, _ in selector.select(timeout=30):
            number = key.data
            entry = state[number]
            sock: socket.socket = entry["sock"]  # type: ignore[assignment]
            data = sock.recv(262144)
            if not data:
                load.errors.append(f"connection {number} closed by the server")
                selector.unregister(sock)
                open_connections -= 1
                continue
            buffer: bytearray = entry["buffer"]  # type: ignore[assignment]
            buffer += data
            parsed = parse_response(buffer)
            if parsed is None:
                continue
            now = time.perf_counter()
            consumed, status, _, body = parsed
            del buffer[:consumed]
            load.latencies_ms.append((now - entry["sent"]) * 1000)  # type: ignore[operator]
            problem = check(number, status, body)
            if problem is not None:
                load.errors.append(problem)
            load.done += 1
            entry["count"] += 1  # type: ignore[operator]
            if now < deadline:
                entry["sent"] = now
                sock.sendall(requests[number](number, entry["count"]))  # type: ignore[arg-type]
            else:
                selector.unregister(sock)
                open_connections -= 1
    load.seconds = time.perf_counter() - started
    for entry in state:
        entry["sock"].close()  # type: ignore[union-attr]
    selector.close()
    return load
