"""Ask an ASGI app for one resource in-process, speaking raw ASGI 3 (no web framework, no HTTP client)."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any
from urllib.parse import unquote

import anyio

from catalog._parse import FETCH_TIMEOUT, MAX_BYTES
from catalog.errors import DocumentError

__all__ = ["asgi_get"]

_Message = MutableMapping[str, Any]


async def asgi_get(app: Any, path: str) -> tuple[int, bytes]:
    """Send `GET path` to an ASGI app in-process; the status and the body (capped at MAX_BYTES)."""
    raw_path, _, query = path.partition("?")
    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": unquote(raw_path),
        "raw_path": raw_path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [(b"host", b"localhost"), (b"accept", b"application/json, application/yaml;q=0.9, */*;q=0.5")],
        "client": ("127.0.0.1", 0),
        "server": ("localhost", 80),
        "state": {},
    }
    status = 0
    chunks: list[bytes] = []
    size = 0
    requested = False
    finished = anyio.Event()

    async def receive() -> _Message:
        nonlocal requested
        if not requested:
            requested = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await finished.wait()
        return {"type": "http.disconnect"}

    async def send(message: _Message) -> None:
        nonlocal status, size
        if message["type"] == "http.response.start":
            status = int(message["status"])
        elif message["type"] == "http.response.body":
            body = bytes(message.get("body", b""))
            size += len(body)
            if size <= MAX_BYTES:
                chunks.append(body)
            if not message.get("more_body", False):
                finished.set()

    try:
        with anyio.fail_after(FETCH_TIMEOUT):
            await app(scope, receive, send)
    except TimeoutError:
        raise DocumentError(
            f"GET {path} on the app did not finish within {FETCH_TIMEOUT:.0f} s", location="<app>"
        ) from None
    if size > MAX_BYTES:
        raise DocumentError(f"GET {path} on the app answered more than {MAX_BYTES} bytes", location="<app>")
    return status, b"".join(chunks)
