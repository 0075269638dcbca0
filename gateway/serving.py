"""Serving the gateway on its own with uvicorn, guarded against slow and heavy clients.

uvicorn waits for a request's headers and body as long as the client cares to trickle them (its keep-alive
timeout starts only after a response), so 200 connections sending a byte now and then stay open for ever.
The guarded protocols (uvicorn's httptools one when httptools is installed, else its h11 one) give every
request a deadline to arrive whole (`read_timeout`, from its first byte or from the end of the previous
response), `max_connections` caps the connections one process holds, and `max_connections_per_client` those of
one address (an IPv6 /64), so one client cannot take every slot. `GatewayServer` freezes what start-up made, so
the garbage collector's full passes stop stalling requests.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import socket
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Literal

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from gateway.extras import installed, require
from gateway.flags import cli, seconds, whole
from gateway.requests import TrustedProxies
from oauth.addresses import rate_key

__all__ = [
    "NO_PROXIES",
    "TOO_MANY_FROM_CLIENT",
    "GatewayServer",
    "GuardedH11Protocol",
    "HttpImplementation",
    "ServeLimits",
    "config",
    "guarded_protocol",
    "serve",
]

logger = logging.getLogger("gateway.serving")


@dataclass(frozen=True, kw_only=True)
class ServeLimits:
    """How long a request may take to arrive and how many connections one process serves at once, of all
    clients and of one (an address; an IPv6 /64 network; trusted proxies are not counted)."""

    read_timeout: float = field(
        default=30.0,
        metadata=cli(
            "close a connection whose request has not arrived whole within this time",
            parse=seconds,
            metavar="SECONDS",
            where="serve",
        ),
    )
    max_connections: int = field(
        default=512,
        metadata=cli("answer 503 past this many open connections", parse=whole(1), metavar="N", where="serve"),
    )
    max_connections_per_client: int = field(
        default=64,
        metadata=cli(
            "answer 503 and close a connection past this many open from one address (an IPv6 /64); "
            "connections from a --trusted-proxy are not counted",
            parse=whole(1),
            metavar="N",
            where="serve",
        ),
    )

    def __post_init__(self) -> None:
        from gateway.errors import ConfigError

        if not self.read_timeout > 0:
            raise ConfigError(f"read_timeout must be a positive number of seconds, got {self.read_timeout!r}")
        if self.max_connections < 1:
            raise ConfigError(f"max_connections must be 1 or more, got {self.max_connections!r}")
        if self.max_connections_per_client < 1:
            raise ConfigError(f"max_connections_per_client must be 1 or more, got {self.max_connections_per_client!r}")


#: No trusted proxy: every client's connections are counted.
NO_PROXIES: Final = TrustedProxies()

_TOO_MANY = b"Too many open connections from this address: close some of them, or retry later.\n"
#: What a connection past `max_connections_per_client` gets before it is closed.
TOO_MANY_FROM_CLIENT: bytes = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n"
    b"Content-Length: %d\r\n\r\n%s" % (len(_TOO_MANY), _TOO_MANY)
)


class _ReadDeadline(asyncio.Protocol):
    """Closes a connection whose request does not arrive whole within `read_timeout`: from the connection's
    start, then from the end of each response; and answers 503 to a connection, and closes it, past
    `max_connections_per_client` open from its client (`oauth.addresses.rate_key`: an address, an IPv6 /64),
    unless it comes from `trusted_proxies`. Mixed into uvicorn's HTTP protocols (h11 and httptools alike: both
    keep the request being answered in `cycle`). The counts are the class's: `guarded_protocol` makes a class for
    each server."""

    read_timeout: float = ServeLimits().read_timeout
    max_connections_per_client: int = ServeLimits().max_connections_per_client
    trusted_proxies: TrustedProxies = NO_PROXIES
    open_per_client: ClassVar[dict[str, int]] = {}
    _warned: ClassVar[set[str]] = set()
    _read_deadline: asyncio.TimerHandle | None = None
    _counted: str | None = None
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport
    cycle: Any
    client: Any

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        if self._admitted():
            self._arm()
        else:
            self.transport.write(TOO_MANY_FROM_CLIENT)
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        key = self._counted
        if key is not None:
            self._counted = None
            left = self.open_per_client[key] - 1
            if left:
                self.open_per_client[key] = left
            else:
                del self.open_per_client[key]
                self._warned.discard(key)
        super().connection_lost(exc)

    def _admitted(self) -> bool:
        """Counts this connection under its client, or False when its client has the most it may have open."""
        client = self.client
        if not client or client[0] in self.trusted_proxies:
            return True  # a Unix socket, or a proxy that carries many clients
        key = rate_key(client[0])
        held = self.open_per_client.get(key, 0)
        if held >= self.max_connections_per_client:
            if key not in self._warned:  # once until its connections are all closed, so refusals cannot flood
                self._warned.add(key)
                logger.warning(
                    "%s has %d connections open, the most one client may (--max-connections-per-client): "
                    "its next ones are answered 503 until some close",
                    key,
                    held,
                )
            return False
        self.open_per_client[key] = held + 1
        self._counted = key
        return True

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._answering():
            self._disarm()  # the request is in; the app's own deadline (the gateway's timeout) takes over

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]  # both uvicorn protocols define it
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


class GuardedH11Protocol(_ReadDeadline, H11Protocol):
    """uvicorn's h11 protocol (pure Python), closing a connection whose request does not arrive whole in time."""


def _httptools_protocol() -> type[_ReadDeadline] | None:
    """uvicorn's httptools protocol with the same deadline, when httptools is installed (the `speed` extra): its C
    parser reads a request in a fraction of h11's time."""
    if not installed("httptools"):  # the `speed` extra's: without it, h11 parses
        return None
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class GuardedHttpToolsProtocol(_ReadDeadline, HttpToolsProtocol):
        """uvicorn's httptools protocol, closing a connection whose request does not arrive whole in time."""

    return GuardedHttpToolsProtocol


HttpImplementation = Literal["auto", "httptools", "h11"]


def guarded_protocol(
    limits: ServeLimits, http: HttpImplementation = "auto", *, trusted_proxies: TrustedProxies = NO_PROXIES
) -> type[asyncio.Protocol]:
    """A new protocol class with `limits` and its own count of connections per client (uvicorn builds one
    instance per connection), not counting those from `trusted_proxies`: httptools' when `http` is "auto" and
    it is installed, or "httptools"; else h11's."""
    base: type[_ReadDeadline] = GuardedH11Protocol
    if http != "h11":
        fast = _httptools_protocol()
        if fast is not None:
            base = fast
        elif http == "httptools":
            require("speed", "http='httptools'", modules=("httptools",))
    return type(
        base.__name__,
        (base,),
        {
            "read_timeout": limits.read_timeout,
            "max_connections_per_client": limits.max_connections_per_client,
            "trusted_proxies": trusted_proxies,
            "open_per_client": {},
            "_warned": set(),
        },
    )


def config(
    app: Any,
    *,
    host: str,
    port: int,
    limits: ServeLimits,
    http: HttpImplementation = "auto",
    trusted_proxies: TrustedProxies = NO_PROXIES,
    **options: Any,
) -> uvicorn.Config:
    """The uvicorn config that serves `app` with `limits`: requests past `max_connections` get 503, and so do
    connections past `max_connections_per_client` from one client not in `trusted_proxies`; httptools parses
    requests when installed (`http`), and uvicorn's own "auto" picks uvloop's event loop likewise."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=guarded_protocol(limits, http, trusted_proxies=trusted_proxies),
        limit_concurrency=limits.max_connections,
        **options,
    )


class GatewayServer(uvicorn.Server):
    """uvicorn's server that, once the app has started (catalog built, lifespan run), moves every object alive
    then to the garbage collector's permanent generation (`gc.freeze()`): the app, the catalog and the
    libraries stay in memory for the process's life, and full collections no longer walk them on every pass,
    which otherwise stalls every request in flight for tens of milliseconds."""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            gc.collect()
            gc.freeze()


def serve(app: Any, *, host: str, port: int, limits: ServeLimits, **options: Any) -> None:
    """Run `app` until stopped (uvicorn.run's signal handling), with `limits`."""
    GatewayServer(config(app, host=host, port=port, limits=limits, **options)).run()
