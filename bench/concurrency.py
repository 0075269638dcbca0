"""Tail latency under 64 concurrent clients on one server process: a mixed MCP load beside the REST endpoint.

    .venv/bin/python bench/concurrency.py                         # 64 connections, 3 rounds of 5 s per side
    .venv/bin/python bench/concurrency.py --clients 32 --duration 3 --rounds 1 --no-fastmcp

The servers are call_latency.py's (the demo shop with the gateway mounted at /mcp, one uvicorn process pinned to
`--server-cpu`, served as `mcp-gateway serve` serves unless `--stack h11`; FastMCP over the same app in
bench/.venv-bench), the client the raw-socket driver of bench/_rawhttp.py pinned to `--client-cpu`. Each of
`--clients` connections keeps one call in flight for `--duration` seconds. Sides, in turns per round:

- REST: `GET /orders/3` on every connection (the app's own capacity, the baseline);
- ours, mixed: connection n cycles through call_function orders.get_order, search_functions "refund an order"
  and describe_function orders.get_order, starting at n mod 3;
- FastMCP stateless JSON: its generated get_order tool (it has no search or describe).

Every answer is checked (HTTP 200, not an error result); p50, p95, p99 and max latency and calls/s per side, the
median round shown. Issue #15's target: ours mixed p99 at most 100 ms with no errors.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable, Sequence
from contextlib import ExitStack

from _competitor import ensure_fastmcp
from _rawhttp import Load, drive, pin, request_bytes
from call_latency import (
    HOST,
    ORDER_ID,
    PROTOCOL_VERSION,
    STACK_OPTION,
    STACKS,
    BenchError,
    _default_cpus,
    render_table,
    running,
)

P99_TARGET_MS = 100.0


def _tool_call(request_id: int, name: str, arguments: dict[str, object]) -> bytes:
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    return json.dumps(message).encode()


def _check(status: int, body: bytes) -> str | None:
    if status != 200 or b'"isError":true' in body or b'"error"' in body[:40]:
        return f"HTTP {status}: {body[:200]!r}"
    return None


def _sides(ours: int, fastmcp: int | None) -> list[tuple[str, int, Callable[[int, int], bytes]]]:
    from demo import ADMIN_KEY

    mcp_headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": PROTOCOL_VERSION,
        "authorization": f"Bearer {ADMIN_KEY}",
    }
    host = f"{HOST}:{ours}"
    rest = request_bytes("GET", host, f"/orders/{ORDER_ID}", {"authorization": f"Bearer {ADMIN_KEY}"})
    mixed = [
        request_bytes("POST", host, "/mcp", mcp_headers, body)
        for body in (
            _tool_call(1, "call_function", {"name": "orders.get_order", "args": {"order_id": ORDER_ID}}),
            _tool_call(2, "search_functions", {"query": "refund an order"}),
            _tool_call(3, "describe_function", {"names": ["orders.get_order"]}),
        )
    ]
    sides: list[tuple[str, int, Callable[[int, int], bytes]]] = [
        ("REST GET /orders/3 (direct)", ours, lambda n, i: rest),
        ("ours mixed (call, search, describe)", ours, lambda n, i: mixed[(n + i) % 3]),
    ]
    if fastmcp is not None:
        fm_headers = {**mcp_headers, "x-api-key": ADMIN_KEY}
        del fm_headers["authorization"]
        fm = request_bytes(
            "POST",
            f"{HOST}:{fastmcp}",
            "/fastmcp-json/mcp",
            fm_headers,
            _tool_call(1, "get_order", {"order_id": ORDER_ID}),
        )
        sides.append(("FastMCP stateless JSON get_order", fastmcp, lambda n, i: fm))
    return sides


def _quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the load and print the table."""
    client_cpu, server_cpu = _default_cpus()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--clients", type=int, default=64, help="concurrent connections")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds of load per side and round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (the median round by p99 is shown)")
    parser.add_argument("--client-cpu", type=int, default=client_cpu)
    parser.add_argument("--server-cpu", type=int, default=server_cpu)
    parser.add_argument("--no-fastmcp", action="store_true", help="leave FastMCP out")
    parser.add_argument("--stack", **STACK_OPTION)  # type: ignore[arg-type]
    args = parser.parse_args(argv)
    pin(args.client_cpu)
    fastmcp_python = None if args.no_fastmcp else ensure_fastmcp()
    loads: dict[str, list[Load]] = {}
    try:
        with ExitStack() as stack:
            ours = stack.enter_context(running(sys.executable, "ours", None, args.server_cpu, args.stack))
            fastmcp = (
                stack.enter_context(running(fastmcp_python, "fastmcp", None, args.server_cpu))
                if fastmcp_python is not None
                else None
            )
            sides = _sides(ours, fastmcp)
            for _name, port, request in sides:  # warm up each side, untimed
                drive(HOST, port, [request] * 4, lambda n, s, b: _check(s, b), duration=0.5)
            for round_number in range(args.rounds):
                print(f"round {round_number + 1} of {args.rounds} ...", file=sys.stderr, flush=True)
                for name, port, request in sides:
                    load = drive(
                        HOST, port, [request] * args.clients, lambda n, s, b: _check(s, b), duration=args.duration
                    )
                    loads.setdefault(name, []).append(load)
    except BenchError as error:
        print(f"concurrency: {error}", file=sys.stderr)
        return 1
    rows = [["side", "calls/s", "p50 ms", "p95 ms", "p99 ms", "max ms", "errors"]]
    chosen: dict[str, Load] = {}
    for name, rounds in loads.items():
        load = sorted(rounds, key=lambda r: _quantile(r.latencies_ms, 0.99))[len(rounds) // 2]
        chosen[name] = load
        lat = load.latencies_ms
        rows.append(
            [
                name,
                f"{load.per_second:.0f}",
                f"{statistics.median(lat):.1f}",
                f"{_quantile(lat, 0.95):.1f}",
                f"{_quantile(lat, 0.99):.1f}",
                f"{max(lat):.1f}",
                f"{sum(len(r.errors) for r in rounds)}",
            ]
        )
    print(
        f"{args.clients} connections, {args.duration:g} s per side, median of {args.rounds} rounds by p99; "
        f"raw-socket client on CPU {args.client_cpu}, one uvicorn process on CPU {args.server_cpu}; ours served "
        f"{STACKS[args.stack]}.\n"
    )
    print(render_table(rows))
    mixed = chosen["ours mixed (call, search, describe)"]
    rest = chosen["REST GET /orders/3 (direct)"]
    p99 = _quantile(mixed.latencies_ms, 0.99)
    errors = sum(len(r.errors) for r in loads["ours mixed (call, search, describe)"])
    met = "met" if p99 <= P99_TARGET_MS and errors == 0 else "NOT MET"
    print(
        f"\ntarget: ours mixed p99 <= {P99_TARGET_MS:g} ms with 0 errors: {p99:.1f} ms, {errors} errors ({met}); "
        f"p99 / REST p99: {p99 / _quantile(rest.latencies_ms, 0.99):.2f}x, "
        f"calls/s / REST: {mixed.per_second / rest.per_second:.2f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
