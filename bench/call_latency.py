"""Per-call latency and throughput of `call_function` over MCP HTTP, beside the direct REST call and FastMCP.

    .venv/bin/python bench/call_latency.py                        # 1000 calls per side, then 3 x 3 s of load
    .venv/bin/python bench/call_latency.py --calls 300 --duration 2 --concurrency 16 --json /tmp/calls.json
    .venv/bin/python bench/call_latency.py --no-fastmcp --profile /tmp/gateway.prof   # cProfile our server

Two uvicorn servers run on 127.0.0.1, each in its own process with the same settings (asyncio loop, h11,
no access log), both serving the bundled demo shop (`gateway.demo.create_app()`):

- ours, in the project's .venv: the demo app with `Gateway(app=app)` mounted at /mcp. It serves the direct REST
  call (`GET /orders/3`) and the MCP call (`tools/call call_function {"name": "orders.get_order", ...}`), so both
  hit the same process, app and store.
- FastMCP, in bench/.venv-bench (made by bench/setup.sh): the same demo app beside two `FastMCP.from_fastapi(app)`
  servers, one stateless with JSON answers (its fastest setting, the one closest to ours) and one in its
  default setting (a session, answers as SSE); both call the `get_order` tool it generates.

The client is this process: one keep-alive httpx2 client, raw JSON-RPC POSTs (no MCP client library, so its
overhead does not dominate). Our stateless server needs no session: each POST carries `MCP-Protocol-Version`.
The default FastMCP server is initialized once and its session id reused. Credentials travel per request:
`Authorization: Bearer` to us (passed through to the app), `X-API-Key` to FastMCP (it forwards that header but
never `Authorization`). Every answer is checked (HTTP 200, a result that is not an error) before it counts.

Latency: the sides take turns, one sequential call each per round, so machine noise hits all alike; median and
p95 per side. Throughput: `--concurrency` callers for `--duration` seconds per side, sides taking turns for
`--rounds` rounds; the median round is shown. Client and servers share the machine's cores.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from _competitor import REPO, ensure_fastmcp

PROTOCOL_VERSION = "2025-11-25"
ORDER_ID = 3
#: Issue #3: median call_function latency at most 1.5x the direct REST call; throughput at least FastMCP's.
LATENCY_TARGET = 1.5

ServerKind = Literal["ours", "fastmcp"]


# The servers: run with --server KIND, print "PORT <n>" once serving, stop when stdin closes (or on SIGTERM).


def _ours_app() -> Any:
    from gateway.app import Gateway
    from gateway.demo import create_app

    app = create_app()
    Gateway(app=app, whoami="users.get_current_user").mount(app, "/mcp")
    return app


def _fastmcp_app() -> Any:
    import logging
    from contextlib import AsyncExitStack, asynccontextmanager

    from fastmcp import FastMCP
    from starlette.applications import Starlette
    from starlette.routing import Mount

    from gateway.demo import create_app

    logging.getLogger("fastmcp").setLevel(logging.WARNING)
    app = create_app()
    # Two servers over the same app: stateless JSON (like ours) and FastMCP's default (session, SSE answers).
    stateless = FastMCP.from_fastapi(app, name="demo-shop").http_app(
        path="/mcp", json_response=True, stateless_http=True
    )
    default = FastMCP.from_fastapi(app, name="demo-shop").http_app(path="/mcp")

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            await stack.enter_async_context(app.router.lifespan_context(app))
            await stack.enter_async_context(stateless.lifespan(stateless))
            await stack.enter_async_context(default.lifespan(default))
            yield

    return Starlette(
        routes=[Mount("/fastmcp-json", stateless), Mount("/fastmcp", default), Mount("/", app)], lifespan=lifespan
    )


def serve(kind: ServerKind, profile: Path | None) -> None:
    """Serve `kind` on a free port of 127.0.0.1 until stdin closes; with `profile`, cProfile the whole run into it."""
    import uvicorn

    app = _ours_app() if kind == "ours" else _fastmcp_app()
    # IPPROTO_TCP spelled out: asyncio sets TCP_NODELAY only on sockets whose proto says TCP, and without it
    # Nagle's algorithm meets the client's delayed ACK and every answer on a kept-alive connection waits ~40 ms.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(
        app, loop="asyncio", http="h11", lifespan="on", log_level="warning", access_log=False, timeout_keep_alive=60
    )

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            print(f"PORT {sock.getsockname()[1]}", flush=True)

    server = Server(config)

    def watch_parent() -> None:
        # The driver holds our stdin open; when it dies without stopping us, stdin closes and we stop too.
        sys.stdin.buffer.read()
        server.should_exit = True

    threading.Thread(target=watch_parent, daemon=True).start()
    profiler = cProfile.Profile() if profile else None
    if profiler is not None:
        profiler.enable()
    try:
        server.run(sockets=[sock])
    finally:
        if profiler is not None and profile is not None:
            profiler.disable()
            profiler.dump_stats(str(profile))


# The client side.


async def _nothing(callers: int) -> None:
    return None


@dataclass(frozen=True, kw_only=True)
class Side:
    """One way of getting order 3: a name for the table and an async function doing one checked call.

    `call(caller)` runs as concurrent caller number `caller` (0 when sequential); `prepare(callers)` runs
    before callers 0 to callers - 1 start, untimed (e.g. to open a session per caller).
    """

    name: str
    call: Callable[[int], Awaitable[None]]
    prepare: Callable[[int], Awaitable[None]] = _nothing


@dataclass(kw_only=True)
class Result:
    """What was measured for one side."""

    name: str
    latencies_ms: list[float] = field(default_factory=list)
    throughput: list[float] = field(default_factory=list)

    def median_ms(self) -> float:
        return statistics.median(self.latencies_ms)

    def p95_ms(self) -> float:
        return statistics.quantiles(self.latencies_ms, n=20, method="inclusive")[-1]

    def calls_per_s(self) -> float:
        return statistics.median(self.throughput)


class BenchError(Exception):
    """A server did not start or answered something other than a good result."""


@contextlib.asynccontextmanager
async def running(python: Path | str, kind: ServerKind, profile: Path | None) -> AsyncIterator[str]:
    """Start a server process; yields its base URL and stops it on exit."""
    command = [str(python), str(Path(__file__).resolve()), "--server", kind]
    if profile is not None:
        command += ["--profile", str(profile)]
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1"}
    process = await asyncio.create_subprocess_exec(
        *command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=REPO, env=env
    )
    assert process.stdout is not None
    try:
        line = await asyncio.wait_for(process.stdout.readline(), timeout=60)
        if not line.startswith(b"PORT "):
            raise BenchError(f"the {kind} server did not start (exit {process.returncode}); see its output above")
        yield f"http://127.0.0.1:{int(line.split()[1])}"
    finally:
        # Closing its stdin stops the server gracefully (a profile gets written); SIGTERM only if that fails.
        assert process.stdin is not None
        process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), timeout=30)
        except TimeoutError:
            process.send_signal(signal.SIGTERM)
            await process.wait()


def _tool_call(request_id: int, name: str, arguments: dict[str, Any]) -> bytes:
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    return json.dumps(message).encode()


def _check_mcp(status: int, body: bytes, what: str) -> None:
    # An SSE answer carries the same JSON-RPC message after "data: "; a substring check serves both.
    if status != 200 or b'"result"' not in body or b'"isError":true' in body or b'"customer_id' not in body:
        raise BenchError(f"{what} answered HTTP {status}: {body[:300]!r}")


async def sides(http: Any, ours: str, fastmcp: str | None) -> list[Side]:
    """The calls to compare, after one good answer from each (a fast failure beats a table of errors)."""
    from gateway.demo import ADMIN_KEY

    mcp_headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": PROTOCOL_VERSION,
    }
    rest_headers = {"authorization": f"Bearer {ADMIN_KEY}"}
    ours_headers = {**mcp_headers, "authorization": f"Bearer {ADMIN_KEY}"}
    ours_body = _tool_call(1, "call_function", {"name": "orders.get_order", "args": {"order_id": ORDER_ID}})

    async def rest(caller: int) -> None:
        response = await http.get(f"{ours}/orders/{ORDER_ID}", headers=rest_headers)
        if response.status_code != 200 or b'"customer_id' not in response.content:
            raise BenchError(f"GET /orders/{ORDER_ID} answered HTTP {response.status_code}: {response.content[:300]!r}")

    async def call_function(caller: int) -> None:
        response = await http.post(f"{ours}/mcp", content=ours_body, headers=ours_headers)
        _check_mcp(response.status_code, response.content, "ours call_function")

    result = [Side(name="REST GET /orders/3 (direct)", call=rest), Side(name="ours call_function", call=call_function)]
    if fastmcp is None:
        for side in result:
            await side.call(0)
        return result

    fm_headers = {**mcp_headers, "x-api-key": ADMIN_KEY}
    fm_body = _tool_call(1, "get_order", {"order_id": ORDER_ID})

    async def fastmcp_json(caller: int) -> None:
        response = await http.post(f"{fastmcp}/fastmcp-json/mcp", content=fm_body, headers=fm_headers)
        _check_mcp(response.status_code, response.content, "FastMCP stateless JSON")

    # FastMCP's default server needs a session: each caller initializes once, then sends its session id with
    # every call. (Concurrent calls within one session stall under load with FastMCP 4.2.3, so one per caller:
    # the shape of real traffic anyway, one session per agent.)
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "call_latency", "version": "1"},
        },
    }
    url = f"{fastmcp}/fastmcp/mcp"
    sessions: list[dict[str, str]] = []

    async def open_sessions(callers: int) -> None:
        while len(sessions) < callers:
            opened = await http.post(url, json=initialize, headers=fm_headers)
            session_id = opened.headers.get("mcp-session-id")
            if opened.status_code != 200 or not session_id:
                raise BenchError(f"FastMCP initialize answered HTTP {opened.status_code}: {opened.content[:300]!r}")
            session_headers = {**fm_headers, "mcp-session-id": session_id}
            initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            await http.post(url, json=initialized, headers=session_headers)
            sessions.append(session_headers)

    async def fastmcp_session(caller: int) -> None:
        response = await http.post(url, content=fm_body, headers=sessions[caller])
        _check_mcp(response.status_code, response.content, "FastMCP default (session, SSE)")

    result += [
        Side(name="FastMCP stateless JSON", call=fastmcp_json),
        Side(name="FastMCP default (session, SSE)", call=fastmcp_session, prepare=open_sessions),
    ]
    for side in result:
        await side.prepare(1)
        await side.call(0)
    return result


async def measure_latency(sides: Sequence[Side], results: dict[str, Result], calls: int, warmup: int) -> None:
    """`calls` sequential calls per side, sides taking turns; the first `warmup` rounds are not kept."""
    for round_number in range(warmup + calls):
        for side in sides:
            started = time.perf_counter()
            await side.call(0)
            elapsed = (time.perf_counter() - started) * 1000
            if round_number >= warmup:
                results[side.name].latencies_ms.append(elapsed)


async def measure_throughput(side: Side, concurrency: int, duration: float) -> float:
    """Calls per second completed by `concurrency` callers looping for `duration` seconds."""
    await side.prepare(concurrency)
    done = 0
    deadline = time.perf_counter() + duration

    async def caller(number: int) -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            await side.call(number)
            done += 1

    started = time.perf_counter()
    try:
        await asyncio.wait_for(asyncio.gather(*(caller(n) for n in range(concurrency))), timeout=duration + 30)
    except TimeoutError:
        raise BenchError(f"{side.name}: calls stalled under load ({done} done)") from None
    return done / (time.perf_counter() - started)


# Reporting.


def render_table(rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table; the first row is the header, numbers are right-aligned."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]

    def line(cells: Sequence[str]) -> str:
        padded = [c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))]
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join("-" * (w + 2) if i == 0 else "-" * (w + 1) + ":" for i, w in enumerate(widths)) + "|"
    return "\n".join([line(rows[0]), rule, *(line(row) for row in rows[1:])])


def report(results: Sequence[Result], *, calls: int, concurrency: int, duration: float, rounds: int) -> str:
    """The table, then one line per target of issue #3."""
    rest, ours = results[0], results[1]
    competitors = results[2:]
    best_fastmcp = max((r.calls_per_s() for r in competitors), default=None)
    header = ["side", "median ms", "p95 ms", "median / REST", "calls/s", "calls/s / best FastMCP"]
    rows = [header]
    rows.extend(
        [
            result.name,
            f"{result.median_ms():.3f}",
            f"{result.p95_ms():.3f}",
            f"{result.median_ms() / rest.median_ms():.2f}x",
            f"{result.calls_per_s():.0f}",
            f"{result.calls_per_s() / best_fastmcp:.2f}x" if best_fastmcp else "-",
        ]
        for result in results
    )
    ratio = ours.median_ms() / rest.median_ms()
    lines = [
        f"Latency: {calls} sequential calls per side (median, p95). Throughput: {concurrency} concurrent callers, "
        f"{duration:g} s per side, median of {rounds} rounds. CPUs: {os.cpu_count()}, Python {sys.version.split()[0]}.",
        "",
        render_table(rows),
        "",
        f"target: median call_function <= {LATENCY_TARGET}x the direct REST call: {ratio:.2f}x "
        f"({'met' if ratio <= LATENCY_TARGET else 'NOT MET'})",
    ]
    if best_fastmcp is not None:
        met = ours.calls_per_s() >= best_fastmcp
        lines.append(
            f"target: call_function throughput >= FastMCP's best: {ours.calls_per_s():.0f} vs "
            f"{best_fastmcp:.0f} calls/s ({'met' if met else 'NOT MET'})"
        )
    return "\n".join(lines)


async def run(args: argparse.Namespace) -> int:
    import httpx2

    fastmcp_python = None if args.no_fastmcp else ensure_fastmcp()
    async with contextlib.AsyncExitStack() as stack:
        ours = await stack.enter_async_context(running(sys.executable, "ours", args.profile))
        fastmcp = (
            await stack.enter_async_context(running(fastmcp_python, "fastmcp", None))
            if fastmcp_python is not None
            else None
        )
        limits = httpx2.Limits(max_connections=args.concurrency * 4, max_keepalive_connections=args.concurrency * 4)
        http = await stack.enter_async_context(httpx2.AsyncClient(timeout=30, limits=limits))
        chosen = await sides(http, ours, fastmcp)
        results = {side.name: Result(name=side.name) for side in chosen}
        print(f"latency: {args.calls} calls per side ...", file=sys.stderr, flush=True)
        await measure_latency(chosen, results, args.calls, args.warmup)
        for round_number in range(args.rounds):
            print(f"throughput: round {round_number + 1} of {args.rounds} ...", file=sys.stderr, flush=True)
            for side in chosen:
                results[side.name].throughput.append(await measure_throughput(side, args.concurrency, args.duration))
    ordered = [results[side.name] for side in chosen]
    print(report(ordered, calls=args.calls, concurrency=args.concurrency, duration=args.duration, rounds=args.rounds))
    if args.profile:
        print(f"\nprofile of our server written to {args.profile} (python -m pstats {args.profile})")
    if args.json:
        data = {
            "meta": {
                "calls": args.calls,
                "concurrency": args.concurrency,
                "duration_s": args.duration,
                "rounds": args.rounds,
                "cpus": os.cpu_count(),
                "python": sys.version.split()[0],
            },
            "sides": [
                {
                    "name": r.name,
                    "median_ms": r.median_ms(),
                    "p95_ms": r.p95_ms(),
                    "calls_per_s": r.calls_per_s(),
                    "throughput_rounds": r.throughput,
                }
                for r in ordered
            ],
        }
        args.json.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the table (or, with --server, be one of the servers)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=1000, help="sequential calls per side for latency")
    parser.add_argument("--warmup", type=int, default=100, help="calls per side before measuring (not kept)")
    parser.add_argument("--concurrency", type=int, default=8, help="concurrent callers for throughput")
    parser.add_argument("--duration", type=float, default=3.0, help="seconds of load per side and round")
    parser.add_argument("--rounds", type=int, default=3, help="throughput rounds (the median is shown)")
    parser.add_argument("--no-fastmcp", action="store_true", help="measure our server only")
    parser.add_argument("--profile", type=Path, metavar="FILE", help="cProfile our server into FILE (pstats)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the figures here")
    parser.add_argument("--server", choices=("ours", "fastmcp"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.server:
        serve(args.server, args.profile)
        return 0
    for name in ("calls", "concurrency", "rounds"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1, not {getattr(args, name)!r}")
    if args.duration <= 0 or args.warmup < 0:
        parser.error("--duration must be positive and --warmup not negative")
    if args.profile:
        args.profile = args.profile.resolve()
    try:
        return asyncio.run(run(args))
    except BenchError as error:
        print(f"call_latency: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
