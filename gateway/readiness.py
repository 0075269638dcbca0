"""`Readiness`: whether this instance can serve requests now, for a load balancer's health check.

Liveness (`GET /`: the process answers) and readiness differ: an instance whose state store does not answer is
alive but cannot check a token, so a balancer should send its traffic elsewhere until the store is back. Each
check is a state store's probe (`oauth.OAuthServer.ready`, the task store's); the answer names which stores are
unavailable, and the operator's log says what failed.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Final

import anyio
from starlette.types import Receive, Scope, Send

__all__ = ["Check", "Readiness"]

Check = Callable[[], Awaitable[str | None]]
"""A probe: None when what it checks answers now, else a sentence saying what is unavailable (no secrets, no
addresses: the answer is readable by whoever reaches the path)."""

#: How long one check may take before it counts as failed: shorter than a balancer's usual check timeout.
CHECK_SECONDS: Final = 3.0
#: When a balancer or client should ask again after a not-ready answer.
RETRY_AFTER: Final = 5


class Readiness:
    """The readiness checks of one gateway, and the ASGI app that answers them (GET or HEAD): 200
    `{"ready": true}`, or 503 `{"ready": false, "unavailable": [...]}` with Retry-After."""

    def __init__(self) -> None:
        self.checks: list[Check] = []

    def add(self, check: Check) -> None:
        """Check `check` too (e.g. `gateway.readiness.add(oauth_server.ready)`)."""
        self.checks.append(check)

    async def problems(self) -> list[str]:
        """What is unavailable now, every check run at once; empty when the instance is ready."""
        found: list[str | None] = [None] * len(self.checks)

        async def run(index: int, check: Check) -> None:
            with anyio.move_on_after(CHECK_SECONDS) as scope:
                found[index] = await check()
            if scope.cancelled_caught:
                found[index] = f"a readiness check did not answer within {CHECK_SECONDS:g} s"

        async with anyio.create_task_group() as group:
            for index, check in enumerate(self.checks):
                group.start_soon(run, index, check)
        return [problem for problem in found if problem is not None]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        if scope["method"] not in ("GET", "HEAD"):
            await _respond(send, 405, b"", [(b"allow", b"GET, HEAD")])
            return
        problems = await self.problems()
        body = json.dumps({"ready": not problems, **({"unavailable": problems} if problems else {})}).encode()
        headers = [(b"content-type", b"application/json"), (b"cache-control", b"no-store")]
        if problems:
            headers.append((b"retry-after", str(RETRY_AFTER).encode()))
        await _respond(send, 503 if problems else 200, b"" if scope["method"] == "HEAD" else body, headers)


async def _respond(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
