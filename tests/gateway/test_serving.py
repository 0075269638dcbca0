"""`mcp-gateway serve`'s server against slow and heavy clients: real uvicorn on 127.0.0.1, raw sockets."""

from __future__ import annotations

import contextlib
import gc
import logging
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest
from anyio.abc import SocketStream
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from gateway import ConfigError, Gateway
from gateway.limits import Limits
from gateway.requests import TrustedProxies
from gateway.serving import NO_PROXIES, GatewayServer, HttpImplementation, ServeLimits, config
from oauth.addresses import rate_key
from tests.gateway.conftest import _Uvicorn

pytestmark = pytest.mark.anyio


async def hello(request: Request) -> PlainTextResponse:
    await request.body()
    return PlainTextResponse("hello")


APP = Starlette(routes=[Route("/", hello, methods=["GET", "POST"])])


@pytest.fixture(params=["httptools", "h11"])
def http(request: pytest.FixtureRequest) -> HttpImplementation:
    """Each guard test runs on both of uvicorn's HTTP parsers: httptools (the default) and h11."""
    return request.param  # type: ignore[no-any-return]


@asynccontextmanager
async def guarded(
    limits: ServeLimits, http: HttpImplementation, trusted_proxies: TrustedProxies = NO_PROXIES
) -> AsyncIterator[int]:
    options = {"log_level": "warning", "lifespan": "off"}
    served = config(APP, host="127.0.0.1", port=0, limits=limits, http=http, trusted_proxies=trusted_proxies, **options)
    server = _Uvicorn(served)
    async with anyio.create_task_group() as group:
        group.start_soon(server.serve)
        with anyio.fail_after(10):
            await server.startup_done.wait()
        try:
            yield server.servers[0].sockets[0].getsockname()[1]
        finally:
            server.should_exit = True


async def read_all(stream: SocketStream) -> bytes:
    """Everything the server sends until it closes the connection."""
    received = b""
    try:
        while True:
            received += await stream.receive()
    except (anyio.EndOfStream, anyio.BrokenResourceError):
        return received


GET = b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"
#: The same request, asking the server to close the connection after its answer.
GET_CLOSE = b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"


@pytest.mark.parametrize(
    "partial",
    [b"", b"POST / HTTP/1.1\r\nHost: local", b'POST / HTTP/1.1\r\nHost: l\r\nContent-Length: 100\r\n\r\n{"a": 1'],
    ids=["nothing", "half-the-headers", "half-the-body"],
)
async def test_a_request_that_does_not_arrive_whole_in_time_has_its_connection_closed(
    partial: bytes, http: HttpImplementation
) -> None:
    async with guarded(ServeLimits(read_timeout=0.5), http) as port:
        stream = await anyio.connect_tcp("127.0.0.1", port)
        async with stream:
            await stream.send(partial)
            started = time.monotonic()
            with anyio.fail_after(5):
                assert await read_all(stream) == b""
            assert time.monotonic() - started >= 0.4


async def test_trickling_connections_never_hold_up_a_whole_request(http: HttpImplementation) -> None:
    async with guarded(ServeLimits(read_timeout=0.5), http) as port:
        tricklers = [await anyio.connect_tcp("127.0.0.1", port) for _ in range(50)]
        for stream in tricklers:
            await stream.send(b"POST / HTTP/1.1\r\nHo")
        with anyio.fail_after(5):
            stream = await anyio.connect_tcp("127.0.0.1", port)
            async with stream:
                await stream.send(GET_CLOSE)
                answer = await read_all(stream)
            for trickler in tricklers:
                assert await read_all(trickler) == b""
                await trickler.aclose()
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"hello")


async def test_a_kept_alive_connection_gets_the_same_deadline_for_its_next_request(http: HttpImplementation) -> None:
    async with guarded(ServeLimits(read_timeout=0.5), http) as port:
        stream = await anyio.connect_tcp("127.0.0.1", port)
        async with stream:
            await stream.send(GET)
            with anyio.fail_after(5):
                first = await stream.receive()
                await stream.send(b"GET / HTTP/1.1\r\nHo")
                rest = await read_all(stream)
    assert first.startswith(b"HTTP/1.1 200") and rest == b""


async def test_past_the_connection_cap_requests_are_answered_503(http: HttpImplementation) -> None:
    async with guarded(ServeLimits(read_timeout=5, max_connections=3), http) as port:
        idle = [await anyio.connect_tcp("127.0.0.1", port) for _ in range(3)]
        with anyio.fail_after(5):
            stream = await anyio.connect_tcp("127.0.0.1", port)
            async with stream:
                await stream.send(GET_CLOSE)
                answer = await read_all(stream)
        for stream in idle:
            await stream.aclose()
    assert answer.startswith(b"HTTP/1.1 503")


TOO_MANY = b"Too many open connections from this address"


async def still_open(stream: SocketStream) -> bool:
    """True when the server has neither answered on `stream` nor closed it within a short wait."""
    with anyio.move_on_after(0.2):
        with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError):
            await stream.receive()
        return False  # an answer or a close
    return True


async def test_past_the_cap_of_one_client_its_next_connection_is_answered_503_and_closed(
    http: HttpImplementation,
) -> None:
    async with guarded(ServeLimits(read_timeout=30, max_connections_per_client=3), http) as port:
        held = [await anyio.connect_tcp("127.0.0.1", port) for _ in range(3)]
        with anyio.fail_after(5):
            refused = await anyio.connect_tcp("127.0.0.1", port)
            async with refused:
                answer = await read_all(refused)
        assert answer.startswith(b"HTTP/1.1 503") and TOO_MANY in answer
        assert [await still_open(stream) for stream in held] == [True, True, True]
        await held.pop().aclose()
        await anyio.sleep(0.1)  # the server sees the close
        with anyio.fail_after(5):
            again = await anyio.connect_tcp("127.0.0.1", port)
            async with again:
                await again.send(GET_CLOSE)
                answer = await read_all(again)
        for stream in held:
            await stream.aclose()
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"hello")


async def test_a_client_at_its_cap_is_logged_once_however_many_connections_it_is_refused(
    http: HttpImplementation, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="gateway.serving")
    async with guarded(ServeLimits(read_timeout=30, max_connections_per_client=2), http) as port:
        held = [await anyio.connect_tcp("127.0.0.1", port) for _ in range(2)]
        with anyio.fail_after(5):
            for _ in range(5):
                refused = await anyio.connect_tcp("127.0.0.1", port)
                async with refused:
                    assert TOO_MANY in await read_all(refused)
        for stream in held:
            await stream.aclose()
    warnings = [record.getMessage() for record in caplog.records if record.name == "gateway.serving"]
    assert len(warnings) == 1 and warnings[0].startswith("127.0.0.1 has 2 connections open")


async def test_connections_from_a_trusted_proxy_are_not_held_to_the_cap_of_one_client(
    http: HttpImplementation,
) -> None:
    limits = ServeLimits(read_timeout=30, max_connections_per_client=3)
    async with guarded(limits, http, TrustedProxies.parse(["127.0.0.1"])) as port:
        held = [await anyio.connect_tcp("127.0.0.1", port) for _ in range(5)]
        assert [await still_open(stream) for stream in held] == [True] * 5
        with anyio.fail_after(5):
            stream = held[-1]
            await stream.send(GET_CLOSE)
            answer = await read_all(stream)
        for stream in held:
            await stream.aclose()
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"hello")


@pytest.mark.parametrize(
    ("address", "key"),
    [
        ("203.0.113.7", "203.0.113.7"),
        ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:ffff:1:2:3", "2001:db8:1:2::/64"),
        ("::ffff:203.0.113.7", "203.0.113.7"),
    ],
)
def test_connections_are_counted_by_ipv4_address_and_by_ipv6_network(address: str, key: str) -> None:
    assert rate_key(address) == key


def test_the_server_parses_requests_with_httptools_when_it_is_installed() -> None:
    from uvicorn.protocols.http.h11_impl import H11Protocol
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    default = config(APP, host="127.0.0.1", port=0, limits=ServeLimits()).http
    assert isinstance(default, type) and issubclass(default, HttpToolsProtocol)
    plain = config(APP, host="127.0.0.1", port=0, limits=ServeLimits(), http="h11").http
    assert isinstance(plain, type) and issubclass(plain, H11Protocol)


async def test_once_started_the_server_freezes_what_start_up_made_out_of_the_collectors_way() -> None:
    class Started(GatewayServer):
        done = anyio.Event()

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            self.done.set()

    before = gc.get_freeze_count()
    server = Started(config(APP, host="127.0.0.1", port=0, limits=ServeLimits(), lifespan="off"))
    async with anyio.create_task_group() as group:
        group.start_soon(server.serve)
        with anyio.fail_after(10):
            await server.done.wait()
        frozen = gc.get_freeze_count()
        server.should_exit = True
    gc.unfreeze()
    assert frozen > before


@pytest.mark.parametrize(
    ("option", "value"), [("read_timeout", 0), ("max_connections", 0), ("max_connections_per_client", 0)]
)
def test_limits_that_could_not_serve_are_refused(option: str, value: float) -> None:
    with pytest.raises(ConfigError, match=option):
        ServeLimits(**{option: value})  # type: ignore[arg-type]


async def test_one_heavy_request_is_refused_before_its_arguments_are_checked() -> None:
    from demo import create_app

    gateway = Gateway(app=create_app(), whoami="users.get_current_user", limits=Limits(max_argument_bytes=1_000_000))
    names = [f"orders.get_order_{index}" for index in range(60_000)]  # 1.5 MB of JSON
    result = await gateway.call_tool({}, "describe_function", {"names": names})
    keys = await gateway.call_tool({}, "call_function", {"name": "orders.get_order", "args": dict.fromkeys(names, 1)})
    for refused in (result, keys):
        assert refused.is_error
        said = refused.texts[0]
        assert "bytes of JSON, over the limit of 1,000,000 (Limits.max_argument_bytes (--max-argument-bytes))" in said
        assert "missing required argument" not in said and "unknown argument" not in said  # no schema saw them
