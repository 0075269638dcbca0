"""Per-call latency and throughput of `call_function` and a promoted tool over MCP HTTP, beside the direct REST
call and FastMCP, measured with a raw-socket client.

    .venv/bin/python bench/call_latency.py                      # 2000 calls per side, then 3 x 3 s of load
    .venv/bin/python bench/call_latency.py --calls 500 --duration 2 --concurrency 16 --json /tmp/calls.json
    .venv/bin/python bench/call_latency.py --no-fastmcp --profile /tmp/gateway.prof   # cProfile our server

Two uvicorn servers run on 127.0.0.1, each one process pinned to `--server-cpu` (no access log); this client
runs pinned to `--client-cpu`, so the two never share a core. Ours is served as `mcp-gateway serve` serves
(`gateway.serving`: httptools and uvloop when installed, the read deadline, `gc.freeze()` after start-up;
`--stack h11` for plain h11 and asyncio), FastMCP with uvicorn's defaults (what its own runner uses):

- ours, in the project's .venv: the demo shop (`demo.create_app()`) with `Gateway(app=app)` mounted
  at /mcp, orders.get_order promoted to a tool. It serves the direct REST call (`GET /orders/3`), the MCP
  call (`tools/call call_function {"name": "orders.get_order", ...}`) and the promoted tool
  (`tools/call orders-get_order`), so all three hit the same process, app and store.
- FastMCP, in bench/.venv-bench (made by bench/setup.sh): the same demo app beside two `FastMCP.from_fastapi(app)`
  servers, one stateless with JSON answers (its fastest setting, the one closest to ours) and one in its
  default setting (a session, answers as SSE); both call the `get_order` tool it generates.

The client writes prepared request bytes on kept-alive sockets (bench/_rawhttp.py): an httpx client costs about
2 ms a request itself and hides most of what is measured. Our stateless server needs no session: each POST
carries `MCP-Protocol-Version`. Each FastMCP default-server connection initializes once and reuses its session
id. Credentials travel per request: `Authorization: Bearer` to us (passed through to the app), `X-API-Key` to
FastMCP (it forwards that header but never `Authorization`). Every answer is checked (HTTP 200, a result that is
not an error, the order's fields) before it counts.

Latency: the sides take turns, one sequential call each per round, so machine noise hits all alike; median and
p95 per side. Throughput: `--concurrency` connections for `--duration` seconds per side, sides taking turns for
`--rounds` rounds; the median round is shown.
"""

from __future__ import annotations

import argparse
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
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from _competitor import REPO, ensure_fastmcp
from _rawhttp import Client, drive, pin, request_bytes

PROTOCOL_VERSION = "2025-11-25"
ORDER_ID = 3
PROMOTED = "orders.get_order"
#: Issue #15: median call_function (and promoted tool) latency at most 1.5x the direct REST call; throughput at
#: least 3x FastMCP's best and at least half the REST endpoint's own.
LATENCY_TARGET = 1.5
FASTMCP_THROUGHPUT_TARGET = 3.0
REST_THROUGHPUT_TARGET = 0.5


STACKS = {
    "shipped": "as `mcp-gateway serve` serves (httptools, uvloop, gc.freeze() after start-up)",
    "h11": "on plain h11 and asyncio, without gc.freeze()",
}
STACK_OPTION = {
    "choices": tuple(STACKS),
    "default": "shipped",
    "help": "how our server is served: " + "; ".join(f"{name}: {what}" for name, what in STACKS.items()),
}

# The servers: run with --server KIND, print "PORT <n>" once serving, stop when stdin closes (or on SIGTERM).


ServerKind = Literal["ours", "fastmcp"]


# The servers: run with --server KIND, print "PORT <n>" once serving, stop when stdin closes (or on SIGTERM).


def _ours_app() -> Any:
    """The demo with a trivial endpoint beside it (`GET /ping`, `health.ping`), the gateway mounted; works with this
    checkout and with one from before the demo moved to its own package (`--compare`)."""
    try:
        from demo import create_app
    except ImportError:
        from gateway.demo import create_app  # type: ignore[no-redef, import-not-found]
    from gateway import Gateway

    app = create_app()

    @app.get("/ping", tags=["health"], operation_id="ping")
    async def ping() -> dict[str, bool]:
        return {"pong": True}

    Gateway(app=app, whoami="users.get_current_user", tools=[PROMOTED]).mount(app, "/mcp")
    return app


def _fastmcp_app() -> Any:
    import logging
    from contextlib import AsyncExitStack, asynccontextmanager

    from fastmcp import FastMCP
    from starlette.applications import Starlette
    from starlette.routing import Mount

    from demo import create_app

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


def serve(kind: ServerKind, profile: Path | None, cpu: int | None, stack: str = "shipped") -> None:
    """Serve `kind` on a free port of 127.0.0.1 until stdin closes; with `profile`, cProfile the whole run into it."""
    import uvicorn

    pin(cpu)
    app = _ours_app() if kind == "ours" else _fastmcp_app()
    # IPPROTO_TCP spelled out: asyncio sets TCP_NODELAY only on sockets whose proto says TCP, and without it
    # Nagle's algorithm meets the client's delayed ACK and every answer on a kept-alive connection waits ~40 ms.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    options: dict[str, Any] = {"lifespan": "on", "log_level": "warning", "access_log": False, "timeout_keep_alive": 60}
    base: type[uvicorn.Server] = uvicorn.Server
    if kind == "ours":
        from gateway.serving import GatewayServer, ServeLimits
        from gateway.serving import config as serving_config

        plain = stack == "h11"
        config = serving_config(
            app, host="127.0.0.1", port=0, limits=ServeLimits(), http="h11" if plain else "auto", **options
        )
        if plain:
            config.loop = "asyncio"
        else:
            base = GatewayServer
    else:
        config = uvicorn.Config(app, **options)

    class Server(base):  # type: ignore[valid-type, misc]
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


@dataclass(frozen=True, kw_only=True)
class Side:
    """One way of getting order 3: a name for the table, where it is served, and the request bytes to send.

    `request(connection)` is the request for connection number `connection` (sessions differ per connection);
    `prepare(count)` runs before `count` connections start, untimed (e.g. to open a session per connection).
    """

    name: str
    port: int
    request: Callable[[int], bytes]
    prepare: Callable[[int], None] = lambda count: None
    #: What a good answer holds.
    expect: bytes = b'"customer_id'

    def check(self, status: int, body: bytes) -> str | None:
        """What is wrong with an answer (None when it is good)."""
        return check(status, body, self.expect)


@dataclass(kw_only=True)
class Result:
    """What was measured for one side."""

    name: str
    latencies_ms: list[float] = field(default_factory=list)
    throughput: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)

    def p25_ms(self) -> float:
        return statistics.quantiles(self.latencies_ms, n=4, method="inclusive")[0]

    def server_cpu_ms(self) -> float:
        return statistics.median(self.cpu_ms) if self.cpu_ms else 0.0

    def median_ms(self) -> float:
        return statistics.median(self.latencies_ms)

    def p95_ms(self) -> float:
        return statistics.quantiles(self.latencies_ms, n=20, method="inclusive")[-1]

    def calls_per_s(self) -> float:
        return statistics.median(self.throughput)


class BenchError(Exception):
    """A server did not start or answered something other than a good result."""


@contextmanager
def running(
    python: Path | str,
    kind: ServerKind,
    profile: Path | None,
    cpu: int | None,
    stack: str = "shipped",
    root: Path = REPO,
) -> Iterator[int]:
    """Start a server process serving the checkout at `root`; yields its port and stops it on exit (`SERVER_PIDS`
    maps the port to its pid)."""
    command = [str(python), str(Path(__file__).resolve()), "--server", kind, "--stack", stack]
    if profile is not None:
        command += ["--profile", str(profile)]
    if cpu is not None:
        command += ["--server-cpu", str(cpu)]
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=root, env=env)
    assert process.stdout is not None and process.stdin is not None
    try:
        line = process.stdout.readline()
        if not line.startswith(b"PORT "):
            raise BenchError(f"the {kind} server did not start (exit {process.poll()}); see its output above")
        port = int(line.split()[1])
        SERVER_PIDS[port] = process.pid
        yield port
    finally:
        # Closing its stdin stops the server gracefully (a profile gets written); SIGTERM only if that fails.
        process.stdin.close()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGTERM)
            process.wait()


def _tool_call(name: str, arguments: dict[str, Any]) -> bytes:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    return json.dumps(message).encode()


def check(status: int, body: bytes, expect: bytes = b'"customer_id') -> str | None:
    """What is wrong with an answer (None when it holds `expect`: by default, a good order 3). An SSE answer carries
    the same JSON-RPC message after "data: "; a substring check serves both."""
    if status != 200 or expect not in body or b'"isError":true' in body:
        return f"HTTP {status}: {body[:300]!r}"
    return None


HOST = "127.0.0.1"
SERVER_PIDS: dict[int, int] = {}


def server_cpu_seconds(port: int) -> float:
    """User and system CPU the server process on `port` has used so far (Linux /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{SERVER_PIDS[port]}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, KeyError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _ours_sides(port: int, label: str) -> list[Side]:
    """The direct REST calls and the MCP calls of one of our servers: order 3, and the trivial `GET /ping`."""
    mcp_headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": PROTOCOL_VERSION,
    }
    host = f"{HOST}:{port}"
    bearer = {"authorization": f"Bearer {ADMIN_KEY}"}
    call = _tool_call("call_function", {"name": PROMOTED, "args": {"order_id": ORDER_ID}})
    promoted = _tool_call(PROMOTED.replace(".", "-"), {"order_id": ORDER_ID})
    ping = _tool_call("call_function", {"name": "health.ping", "args": {}})
    raw = {
        "rest": request_bytes("GET", host, f"/orders/{ORDER_ID}", bearer),
        "call": request_bytes("POST", host, "/mcp", {**mcp_headers, **bearer}, call),
        "promoted": request_bytes("POST", host, "/mcp", {**mcp_headers, **bearer}, promoted),
        "ping": request_bytes("GET", host, "/ping", bearer),
        "ping_call": request_bytes("POST", host, "/mcp", {**mcp_headers, **bearer}, ping),
    }
    prefix = f"{label} " if label else ""
    return [
        Side(name=f"{prefix}REST GET /orders/3 (direct)", port=port, request=lambda n: raw["rest"]),
        Side(name=f"{prefix}ours call_function", port=port, request=lambda n: raw["call"]),
        Side(name=f"{prefix}ours promoted tool", port=port, request=lambda n: raw["promoted"]),
        Side(name=f"{prefix}REST GET /ping (trivial)", port=port, request=lambda n: raw["ping"], expect=b'"pong"'),
        Side(name=f"{prefix}ours call_function ping", port=port, request=lambda n: raw["ping_call"], expect=b"pong"),
    ]


ADMIN_KEY = "demo-key-alice"


def sides(ours: int, fastmcp: int | None, before: int | None = None) -> list[Side]:
    """The calls to compare, after one good answer from each (a fast failure beats a table of errors)."""
    mcp_headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": PROTOCOL_VERSION,
    }
    result = _ours_sides(ours, "")
    if before is not None:
        result += _ours_sides(before, "before:")
    if fastmcp is not None:
        fm_host = f"{HOST}:{fastmcp}"
        fm_headers = {**mcp_headers, "x-api-key": ADMIN_KEY}
        fm_body = _tool_call("get_order", {"order_id": ORDER_ID})
        fm_json = request_bytes("POST", fm_host, "/fastmcp-json/mcp", fm_headers, fm_body)
        # FastMCP's default server needs a session: each connection initializes once, then sends its session id
        # with every call (one session per agent, the shape of real traffic).
        sessions: list[bytes] = []
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

        def open_sessions(count: int) -> None:
            client = Client(HOST, fastmcp)
            try:
                while len(sessions) < count:
                    raw = request_bytes("POST", fm_host, "/fastmcp/mcp", fm_headers, json.dumps(initialize).encode())
                    status, headers, body = client.send(raw)
                    session_id = headers.get("mcp-session-id")
                    if status != 200 or not session_id:
                        raise BenchError(f"FastMCP initialize answered HTTP {status}: {body[:300]!r}")
                    session = {**fm_headers, "mcp-session-id": session_id}
                    initialized = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
                    client.send(request_bytes("POST", fm_host, "/fastmcp/mcp", session, initialized))
                    sessions.append(request_bytes("POST", fm_host, "/fastmcp/mcp", session, fm_body))
            finally:
                client.close()

        result += [
            Side(name="FastMCP stateless JSON", port=fastmcp, request=lambda n: fm_json),
            Side(
                name="FastMCP default (session, SSE)",
                port=fastmcp,
                request=lambda n: sessions[n],
                prepare=open_sessions,
            ),
        ]
    for side in result:
        side.prepare(1)
        client = Client(HOST, side.port)
        status, _, body = client.send(side.request(0))
        client.close()
        problem = side.check(status, body)
        if problem is not None:
            raise BenchError(f"{side.name}: {problem}")
    return result


def measure_latency(chosen: Sequence[Side], results: dict[str, Result], calls: int, warmup: int) -> None:
    """`calls` sequential calls per side, sides taking turns; the first `warmup` rounds are not kept."""
    clients = [Client(HOST, side.port) for side in chosen]
    requests = [side.request(0) for side in chosen]
    try:
        for round_number in range(warmup + calls):
            for side, client, raw in zip(chosen, clients, requests, strict=True):
                started = time.perf_counter()
                status, _, body = client.send(raw)
                elapsed = (time.perf_counter() - started) * 1000
                if status != 200:
                    raise BenchError(f"{side.name}: HTTP {status}: {body[:300]!r}")
                if round_number >= warmup:
                    results[side.name].latencies_ms.append(elapsed)
    finally:
        for client in clients:
            client.close()


def measure_cpu(chosen: Sequence[Side], results: dict[str, Result], calls: int, rounds: int) -> None:
    """Server CPU per call: blocks of `calls` sequential calls per side, sides taking turns for `rounds` rounds.

    CPU time, unlike wall time, hardly moves with the machine's other load, so this ratio is the steady one.
    """
    clients = [Client(HOST, side.port) for side in chosen]
    try:
        for _ in range(rounds):
            for side, client in zip(chosen, clients, strict=True):
                raw = side.request(0)
                before = server_cpu_seconds(side.port)
                for _ in range(calls):
                    client.send(raw)
                results[side.name].cpu_ms.append((server_cpu_seconds(side.port) - before) * 1000 / calls)
    finally:
        for client in clients:
            client.close()


def measure_throughput(side: Side, concurrency: int, duration: float) -> float:
    """Calls per second completed with `concurrency` connections each keeping one call in flight."""
    side.prepare(concurrency)
    load = drive(
        HOST,
        side.port,
        [lambda n, i: side.request(n)] * concurrency,
        lambda n, status, body: side.check(status, body),
        duration=duration,
    )
    if load.errors:
        raise BenchError(f"{side.name}: {len(load.errors)} bad answers under load, e.g. {load.errors[0]}")
    return load.per_second


# Reporting.


def render_table(rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table; the first row is the header, numbers are right-aligned."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]

    def line(cells: Sequence[str]) -> str:
        padded = [c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))]
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join("-" * (w + 2) if i == 0 else "-" * (w + 1) + ":" for i, w in enumerate(widths)) + "|"
    return "\n".join([line(rows[0]), rule, *(line(row) for row in rows[1:])])


def report(results: Sequence[Result], args: argparse.Namespace) -> str:
    """The table, then one line per target of issue #15."""
    rest, ours, promoted = results[0], results[1], results[2]
    competitors = [result for result in results if result.name.startswith("FastMCP")]
    best_fastmcp = max((r.calls_per_s() for r in competitors), default=None)
    header = [
        "side",
        "median ms",
        "p25 ms",
        "p95 ms",
        "median / REST",
        "p25 / REST",
        "server CPU ms/call",
        "CPU / REST",
        "calls/s",
        "calls/s / REST",
        "calls/s / best FastMCP",
    ]
    rows = [header]
    rows.extend(
        [
            result.name,
            f"{result.median_ms():.3f}",
            f"{result.p25_ms():.3f}",
            f"{result.p95_ms():.3f}",
            f"{result.median_ms() / rest.median_ms():.2f}x",
            f"{result.p25_ms() / rest.p25_ms():.2f}x",
            f"{result.server_cpu_ms():.3f}",
            f"{result.server_cpu_ms() / rest.server_cpu_ms():.2f}x" if rest.server_cpu_ms() else "-",
            f"{result.calls_per_s():.0f}",
            f"{result.calls_per_s() / rest.calls_per_s():.2f}x",
            f"{result.calls_per_s() / best_fastmcp:.2f}x" if best_fastmcp else "-",
        ]
        for result in results
    )
    lines = [
        f"Latency: {args.calls} sequential calls per side (median, p95). Throughput: {args.concurrency} connections, "
        f"{args.duration:g} s per side, median of {args.rounds} rounds. Raw-socket HTTP/1.1 client on CPU "
        f"{args.client_cpu}, each server one uvicorn process on CPU {args.server_cpu}; {os.cpu_count()} CPUs, "
        f"Python {sys.version.split()[0]}; ours served {STACKS[args.stack]}.",
        "",
        render_table(rows),
        "",
    ]
    for result in (ours, promoted):
        ratio = result.median_ms() / rest.median_ms()
        met = "met" if ratio <= LATENCY_TARGET else "NOT MET"
        lines.append(
            f"target: median {result.name} <= {LATENCY_TARGET}x the direct REST call: {ratio:.2f}x ({met}; "
            f"p25 {result.p25_ms() / rest.p25_ms():.2f}x, "
            f"server CPU {result.server_cpu_ms() / rest.server_cpu_ms():.2f}x)"
            if rest.server_cpu_ms()
            else f"target: median {result.name} <= {LATENCY_TARGET}x the direct REST call: {ratio:.2f}x ({met})"
        )
    share = ours.calls_per_s() / rest.calls_per_s()
    met = "met" if share >= REST_THROUGHPUT_TARGET else "NOT MET"
    lines.append(
        f"target: call_function throughput >= {REST_THROUGHPUT_TARGET}x the REST endpoint's: {share:.2f}x ({met})"
    )
    named = {result.name: result for result in results}
    for now, trivial in (
        ("ours call_function", "REST GET /orders/3 (direct)"),
        ("ours call_function ping", "REST GET /ping (trivial)"),
    ):
        earlier = named.get(f"before: {now}")
        if earlier is None:
            continue
        # What the gateway adds to its REST call, now and in the checkout compared with, each against its own
        # direct call in the same run.
        added_now = named[now].server_cpu_ms() - named[trivial].server_cpu_ms()
        added_before = earlier.server_cpu_ms() - named[f"before: {trivial}"].server_cpu_ms()
        lines.append(
            f"compared with {args.compare}: {now} median {named[now].median_ms():.3f} ms vs "
            f"{earlier.median_ms():.3f} ms ({named[now].median_ms() / earlier.median_ms():.2f}x); server CPU the "
            f"gateway adds to the REST call {added_now:.3f} ms vs {added_before:.3f} ms"
        )
    if best_fastmcp is not None:
        times = ours.calls_per_s() / best_fastmcp
        met = "met" if times >= FASTMCP_THROUGHPUT_TARGET else "NOT MET"
        lines.append(
            f"target: call_function throughput >= {FASTMCP_THROUGHPUT_TARGET:g}x FastMCP's best: {times:.2f}x "
            f"({ours.calls_per_s():.0f} vs {best_fastmcp:.0f} calls/s, {met})"
        )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    pin(args.client_cpu)
    fastmcp_python = None if args.no_fastmcp else ensure_fastmcp()
    with ExitStack() as stack:
        ours = stack.enter_context(running(sys.executable, "ours", args.profile, args.server_cpu, args.stack))
        before = None
        if args.compare:
            checkout = stack.enter_context(_worktree(args.compare))
            before = stack.enter_context(
                running(sys.executable, "ours", None, args.server_cpu, args.stack, root=checkout)
            )
        fastmcp = (
            stack.enter_context(running(fastmcp_python, "fastmcp", None, args.server_cpu))
            if fastmcp_python is not None
            else None
        )
        chosen = sides(ours, fastmcp, before)
        results = {side.name: Result(name=side.name) for side in chosen}
        print(f"latency: {args.calls} calls per side ...", file=sys.stderr, flush=True)
        measure_latency(chosen, results, args.calls, args.warmup)
        print("server CPU per call ...", file=sys.stderr, flush=True)
        measure_cpu(chosen, results, max(args.calls // 2, 100), args.rounds)
        for round_number in range(args.rounds):
            print(f"throughput: round {round_number + 1} of {args.rounds} ...", file=sys.stderr, flush=True)
            for side in chosen:
                results[side.name].throughput.append(measure_throughput(side, args.concurrency, args.duration))
    ordered = [results[side.name] for side in chosen]
    print(report(ordered, args))
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
                "client_cpu": args.client_cpu,
                "server_cpu": args.server_cpu,
                "python": sys.version.split()[0],
            },
            "sides": [
                {
                    "name": r.name,
                    "median_ms": r.median_ms(),
                    "p25_ms": r.p25_ms(),
                    "p95_ms": r.p95_ms(),
                    "server_cpu_ms": r.server_cpu_ms(),
                    "calls_per_s": r.calls_per_s(),
                    "throughput_rounds": r.throughput,
                }
                for r in ordered
            ],
        }
        args.json.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return 0


@contextmanager
def _worktree(revision: str) -> Iterator[Path]:
    """A checkout of `revision` beside this one (a git worktree in a temporary folder), removed afterwards."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="call-latency-")) / "checkout"
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(folder), revision], cwd=REPO, check=True, capture_output=True
    )
    try:
        yield folder
    finally:
        subprocess.run(
            ["git", "worktree", "remove", "--force", str(folder)], cwd=REPO, check=False, capture_output=True
        )


def _default_cpus() -> tuple[int | None, int | None]:
    """The client's and the servers' CPU: the first two this process may use (none when it has only one)."""
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    return (cpus[0], cpus[1]) if len(cpus) >= 2 else (None, None)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the table (or, with --server, be one of the servers)."""
    client_cpu, server_cpu = _default_cpus()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=2000, help="sequential calls per side for latency")
    parser.add_argument(
        "--compare",
        metavar="REV",
        default=None,
        help="also serve the gateway of git revision REV (a worktree of it) and compare its call path with ours",
    )
    parser.add_argument("--warmup", type=int, default=200, help="calls per side before measuring (not kept)")
    parser.add_argument("--concurrency", type=int, default=8, help="connections for throughput")
    parser.add_argument("--duration", type=float, default=3.0, help="seconds of load per side and round")
    parser.add_argument("--rounds", type=int, default=3, help="throughput rounds (the median is shown)")
    parser.add_argument("--client-cpu", type=int, default=client_cpu, help="CPU this client runs on")
    parser.add_argument("--server-cpu", type=int, default=server_cpu, help="CPU the servers run on")
    parser.add_argument("--no-fastmcp", action="store_true", help="measure our server only")
    parser.add_argument("--profile", type=Path, metavar="FILE", help="cProfile our server into FILE (pstats)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the figures here")
    parser.add_argument("--server", choices=("ours", "fastmcp"), help=argparse.SUPPRESS)
    parser.add_argument("--stack", **STACK_OPTION)  # type: ignore[arg-type]
    args = parser.parse_args(argv)
    if args.server:
        serve(args.server, args.profile, args.server_cpu, args.stack)
        return 0
    for name in ("calls", "concurrency", "rounds"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1, not {getattr(args, name)!r}")
    if args.duration <= 0 or args.warmup < 0:
        parser.error("--duration must be positive and --warmup not negative")
    if args.profile:
        args.profile = args.profile.resolve()
    try:
        return run(args)
    except BenchError as error:
        print(f"call_latency: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
