"""Run a wrapped ASGI app's lifespan when the gateway owns the app (CLI, standalone server, tests)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from gateway.errors import GatewayError

__all__ = ["LifespanError", "app_lifespan"]


class LifespanError(GatewayError):
    """The wrapped app failed to start up or shut down."""


@asynccontextmanager
async def app_lifespan(app: Any) -> AsyncIterator[dict[str, Any]]:
    """Start `app`'s lifespan, yield its lifespan state, and shut it down on exit (ASGI lifespan spec 2.0).

    An app that does not speak the lifespan protocol (it raises or returns before answering) runs without one.
    """
    state: dict[str, Any] = {}
    to_app_send, to_app_receive = anyio.create_memory_object_stream[dict[str, Any]](4)
    from_app_send, from_app_receive = anyio.create_memory_object_stream[dict[str, Any]](4)
    started = anyio.Event()

    async def run() -> None:
        scope = {"type": "lifespan", "asgi": {"version": "3.0", "spec_version": "2.0"}, "state": state}
        async with to_app_receive, from_app_send:
            try:
                await app(scope, to_app_receive.receive, from_app_send.send)
            except Exception:
                # ASGI lifespan spec: an app that raises before startup completes does not support lifespan.
                if started.is_set():
                    raise

    async with anyio.create_task_group() as group, to_app_send, from_app_receive:
        group.start_soon(run)
        await to_app_send.send({"type": "lifespan.startup"})
        message = await _next(from_app_receive)
        if message is not None and message["type"] == "lifespan.startup.failed":
            raise LifespanError(f"the wrapped app failed to start: {message.get('message', '')}")
        if message is None:
            yield state
            return
        started.set()
        try:
            yield state
        finally:
            await to_app_send.send({"type": "lifespan.shutdown"})
            message = await _next(from_app_receive)
            if message is not None and message["type"] == "lifespan.shutdown.failed":
                raise LifespanError(f"the wrapped app failed to shut down: {message.get('message', '')}")


async def _next(stream: MemoryObjectReceiveStream[dict[str, Any]]) -> dict[str, Any] | None:
    try:
        return await stream.receive()
    except anyio.EndOfStream:
        return None
