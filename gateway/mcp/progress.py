"""Progress of a long tool call (MCP `notifications/progress`), for a client that sent a progress token.

The endpoint binds the call's reporter for the time the tool runs; anything on the call's path (run_script's
inner calls, for one) reports through `report` without knowing the transport. While the tool runs, a heartbeat
reports every `interval` seconds, so a client whose request timeout resets on progress keeps waiting for a
slow upstream.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar

import anyio

__all__ = ["Reporter", "report", "reporting"]

logger = logging.getLogger(__name__)

Reporter = Callable[[float, float | None, str | None], Awaitable[None]]
"""Sends one progress notification: progress so far, the total when known, and a message."""


class _Progress:
    """One call's progress: a count that only grows, shared by its heartbeat and its reports."""

    def __init__(self, send: Reporter) -> None:
        self.send = send
        self.count = 0.0

    async def step(self, total: float | None, message: str | None) -> None:
        self.count += 1
        try:
            await self.send(self.count, total, message)
        except Exception:
            # A client gone away must not fail the call it asked progress of.
            logger.debug("a progress notification could not be sent", exc_info=True)


_CURRENT: ContextVar[_Progress | None] = ContextVar("gateway_progress", default=None)


async def report(message: str, *, total: float | None = None) -> None:
    """One step of the current call's progress (nothing when the client asked for none)."""
    progress = _CURRENT.get()
    if progress is not None:
        await progress.step(total, message)


@asynccontextmanager
async def reporting(send: Reporter, *, interval: float, what: str) -> AsyncIterator[None]:
    """Report the progress of the call run inside: its own `report` steps, and a heartbeat every `interval`."""
    progress = _Progress(send)
    token = _CURRENT.set(progress)

    async def heartbeat() -> None:
        waited = 0.0
        while True:
            await anyio.sleep(interval)
            waited += interval
            await progress.step(None, f"{what}: still working after {waited:g} s")

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(heartbeat)
            try:
                yield
            finally:
                group.cancel_scope.cancel()
    finally:
        _CURRENT.reset(token)
