"""Admission: how many MCP requests one process works on at once; the others wait their turn, first come first served.

An event loop that works on every request in flight at once serves none of them well under load: each pass of
the loop runs one step of every request, so a request that waits several times (a tool call into the app and
its thread pool waits four times) waits several whole passes, each as long as everything else in flight. Past
a few dozen concurrent requests, tool calls then take many times longer than searches, and the slowest
hundredth of calls sets the tail latency. Working on at most `max_running` requests at once, the rest queued
in arrival order, keeps each pass short and every kind of request's latency close to the others'.

A request holds its place for at most `lease` seconds: a call waiting on a slow endpoint, a progress stream
or a subscription then stops counting, so no request holds the others up for longer than that. Only
asyncio event loops are gated (uvicorn's); under another loop requests pass straight through.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass

from starlette.types import ASGIApp, Receive, Scope, Send

from gateway.errors import ConfigError

__all__ = ["Admission", "AdmissionGate"]


@dataclass(frozen=True, kw_only=True)
class Admission:
    """At most `max_running` MCP requests worked on at once per process; each counts for at most `lease` seconds."""

    max_running: int = 16
    lease: float = 0.1

    def __post_init__(self) -> None:
        if isinstance(self.max_running, bool) or not isinstance(self.max_running, int) or self.max_running < 1:
            raise ConfigError(
                f"admission max_running must be a whole number of requests, 1 or more, got {self.max_running!r}; "
                "pass admission=None to work on every request at once"
            )
        if isinstance(self.lease, bool) or not isinstance(self.lease, int | float) or not self.lease > 0:
            raise ConfigError(f"admission lease must be a positive number of seconds, got {self.lease!r}")


class _Slots:
    """The places of one event loop: a count of free ones and the requests waiting, oldest first."""

    def __init__(self, loop: asyncio.AbstractEventLoop, free: int) -> None:
        self.loop = loop
        self.free = free
        self.waiting: deque[asyncio.Future[None]] = deque()

    async def take(self) -> None:
        """Return once a place is this request's: at once when one is free and nobody waits, else in turn."""
        if self.free and not self.waiting:
            self.free -= 1
            return
        waiter: asyncio.Future[None] = self.loop.create_future()
        self.waiting.append(waiter)
        try:
            await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                self.give_back()  # handed a place, then cancelled before using it: pass it on
            else:
                try:
                    self.waiting.remove(waiter)
                except ValueError:
                    pass
            raise

    def give_back(self) -> None:
        """Hand a place to the oldest waiting request, or free it."""
        while self.waiting:
            waiter = self.waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self.free += 1


class _Place:
    """One admitted request's place, given back once: when the request ends or its lease runs out."""

    __slots__ = ("held", "slots")

    def __init__(self, slots: _Slots) -> None:
        self.slots = slots
        self.held = True

    def give_back(self) -> None:
        if self.held:
            self.held = False
            self.slots.give_back()


class AdmissionGate:
    """ASGI middleware that admits HTTP requests to `app` as `admission` says; other scopes pass through."""

    def __init__(self, app: ASGIApp, admission: Admission) -> None:
        self.app = app
        self.admission = admission
        self._slots: _Slots | None = None

    @property
    def waiting(self) -> int:
        """Requests waiting for a place now."""
        return len(self._slots.waiting) if self._slots is not None else 0

    @property
    def running(self) -> int:
        """Requests holding a place now."""
        return self.admission.max_running - self._slots.free if self._slots is not None else 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not asyncio (trio through anyio): nothing to gate with
            await self.app(scope, receive, send)
            return
        slots = self._slots
        if slots is None or slots.loop is not loop:
            # Futures belong to the loop that made them; a gateway served by a new loop starts afresh.
            slots = self._slots = _Slots(loop, self.admission.max_running)
        await slots.take()
        place = _Place(slots)
        expiry = loop.call_later(self.admission.lease, place.give_back)
        try:
            await self.app(scope, receive, send)
        finally:
            expiry.cancel()
            place.give_back()
