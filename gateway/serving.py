"""Serving the gateway on its own with uvicorn, guarded against slow and heavy clients.

uvicorn waits for a request's headers and body as long as the client cares to trickle them (its keep-alive
timeout starts only after a response), so 200 connections sending a byte now and then stay open for ever.
`GuardedH11Protocol` gives every request a deadline to arrive whole (`read_timeout`, from its first byte or
from the end of the previous response), and `max_connections` caps the connections one process holds.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["GuardedH11Protocol", "ServeLimits", "serve"]

logger = logging.getLogger("gateway.serving")


@dataclass(frozen=True, kw_only=True)
class ServeLimits:
    """How long a request may take to arrive and how many connections one process serves at once."""

    read_timeout: float = 30.0
    max_connections: int = 512

    def __post_init__(self) -> None:
        from gateway.errors import ConfigError

        if not self.read_timeout > 0:
            raise ConfigError(f"read_timeout must be a positive number of seconds, got {self.read_timeout!r}")
        if self.max_connections < 1:
            raise ConfigError(f"max_connections must be 1 or more, got {self.max_connections!r}")


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request does not arrive whole in time."""

    read_timeout: float = ServeLimits().read_timeout

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._read_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        super().handle_events()
        if self._answering():
            self._disarm()  # the request is in; the app's own deadline (the gateway's timeout) takes over

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()  # the next request on this connection gets the same deadline

    def _answering(self) -> bool:
        """True while a request that arrived whole is being answered."""
        cycle = self.cycle
        return cycle is not None and not cycle.more_body and not cycle.response_complete

    def _arm(self) -> None:
        self._disarm()
        self._read_deadline = self.loop.call_later(self.read_timeout, self._timed_out)

    def _disarm(self) -> None:
        if self._read_deadline is not None:
            self._read_deadline.cancel()
            self._read_deadline = None

    def _timed_out(self) -> None:
        self._read_deadline = None
        if self.transport.is_closing():
            return
        if self._answering():
            return  # the request arrived and is being answered
        logger.info("closed a connection from %s: no whole request within %g s", self.client, self.read_timeout)
        self.transport.close()


def guarded_protocol(limits: ServeLimits) -> type[GuardedH11Protocol]:
    """The protocol class with `limits.read_timeout` (uvicorn builds one instance per connection)."""
    return type("GuardedH11Protocol", (GuardedH11Protocol,), {"read_timeout": limits.read_timeout})


def config(app: Any, *, host: str, port: int, limits: ServeLimits, **options: Any) -> uvicorn.Config:
    """The uvicorn config that serves `app` with `limits`: requests past `max_connections` get 503."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=guarded_protocol(limits),
        limit_concurrency=limits.max_connections,
        **options,
    )


def serve(app: Any, *, host: str, port: int, limits: ServeLimits, **options: Any) -> None:
    """Run `app` until stopped (uvicorn.run's signal handling), with `limits`."""
    uvicorn.Server(config(app, host=host, port=port, limits=limits, **options)).run()
