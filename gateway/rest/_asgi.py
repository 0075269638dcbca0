"""One HTTP exchange with an ASGI app in-process (ASGI 3.0 HTTP spec): the body in, the whole answer out.

Shared by the in-process transport and by document loading (an app's own `/openapi.json`), so that both speak
ASGI the same way: one `http.request` message, `http.disconnect` once the answer is complete, and a failure of
the app reported together with whatever answer it had sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio

__all__ = ["AsgiAnswer", "asgi_exchange"]


@dataclass(kw_only=True)
class AsgiAnswer:
    """What the app sent: the status (None when it sent nothing), raw headers and body, and what it raised.

    `complete` is True when the app sent its last body message. `error` is the exception that left the app,
    if any: Starlette's ServerErrorMiddleware, for one, answers 500 and then re-raises for the server to log.
    `truncated` is True when the body went past `max_bytes` and the rest was dropped.
    """

    status: int | None = None
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    body: bytes = b""
    complete: bool = False
    truncated: bool = False
    error: Exception | None = None


async def asgi_exchange(
    app: Any, scope: Mapping[str, Any], body: bytes = b"", *, head: bool = False, max_bytes: int | None = None
) -> AsgiAnswer:
    """Send one HTTP request to `app` and collect its answer; an exception the app raises is caught into it.

    The body is dropped for HEAD (`head`); past `max_bytes` the rest of the body is dropped and `truncated`
    set. Cancellation is never caught: a deadline around the call ends it.
    """
    answer = AsgiAnswer()
    parts: list[bytes] = []
    size = 0
    body_sent = False
    complete = anyio.Event()

    async def receive() -> dict[str, Any]:
        nonlocal body_sent
        if not body_sent:
            body_sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        # ASGI: after the body, receive() blocks until the client goes away, i.e. once the answer is complete.
        await complete.wait()
        return {"type": "http.disconnect"}

    async def send(message: Mapping[str, Any]) -> None:
        nonlocal size
        kind = message["type"]
        if kind == "http.response.start":
            answer.status = int(message["status"])
            answer.headers.extend(message.get("headers", ()))
        elif kind == "http.response.body":
            chunk = bytes(message.get("body", b""))
            if chunk and not head:
                size += len(chunk)
                if max_bytes is None or size <= max_bytes:
                    parts.append(chunk)
                else:
                    answer.truncated = True
            if not message.get("more_body", False):
                answer.complete = True
                complete.set()

    try:
        await app(dict(scope), receive, send)
    except Exception as error:  # the app's own failure, reported to the caller with what it sent
        answer.error = error
    finally:
        complete.set()
    answer.body = b"".join(parts)
    return answer
