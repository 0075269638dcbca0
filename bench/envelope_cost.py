"""What one `tools/call call_function` costs in-process at each protocol version, beside the REST call itself.

    .venv/bin/python bench/envelope_cost.py [--calls 400] [--rounds 3]

One process, no sockets: the demo shop with `Gateway.wrap(app)`, each request handed to the ASGI app as one
`http.request`. Rows: the direct REST call (`GET /orders/3`); `POST /mcp` at 2025-11-25 (a handshake version,
answered by the gateway's lean tools/call path); at 2026-07-28 (the per-request envelope: `_meta` with the
protocol version, client info and capabilities, `Mcp-Method`/`Mcp-Name` headers, answered through the SDK's
single-exchange entry). Median per call of the median round, and each row's ratio to the REST call. Each answer
is checked (HTTP 200, the order's id in the body) before it counts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Scope

from demo import create_app
from gateway.gateway import Gateway

KEY = b"Bearer demo-key-alice"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _call_body(version: str) -> bytes:
    params: dict[str, object] = {
        "name": "call_function",
        "arguments": {"name": "orders.get_order", "args": {"order_id": 3}},
    }
    if version == "2026-07-28":
        params["_meta"] = MODERN_META
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).encode()


def _scope(method: str, path: str, headers: list[tuple[bytes, bytes]]) -> Scope:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1:8000"), (b"authorization", KEY), *headers],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }


def _requests() -> dict[str, tuple[Scope, bytes]]:
    mcp = [(b"content-type", b"application/json"), (b"accept", b"application/json, text/event-stream")]
    return {
        "REST GET /orders/3": (_scope("GET", "/orders/3", []), b""),
        "tools/call 2025-11-25": (
            _scope("POST", "/mcp", [*mcp, (b"mcp-protocol-version", b"2025-11-25")]),
            _call_body("2025-11-25"),
        ),
        "tools/call 2026-07-28": (
            _scope(
                "POST",
                "/mcp",
                [
                    *mcp,
                    (b"mcp-protocol-version", b"2026-07-28"),
                    (b"mcp-method", b"tools/call"),
                    (b"mcp-name", b"call_function"),
                ],
            ),
            _call_body("2026-07-28"),
        ),
    }


async def _exchange(app: ASGIApp, scope: Scope, body: bytes) -> tuple[int, bytes]:
    sent: list[Message] = []
    delivered = False

    async def receive() -> Message:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    await app(dict(scope), receive, send)
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


async def _median_call(
    app: ASGIApp, scope: Scope, body: bytes, calls: int, check: Callable[[int, bytes], None]
) -> float:
    times: list[float] = []
    for _ in range(calls):
        started = time.perf_counter()
        status, answer = await _exchange(app, scope, body)
        times.append(time.perf_counter() - started)
        check(status, answer)
    return statistics.median(times)


def _check(status: int, answer: bytes) -> None:
    if status != 200 or b'"customer_id":10' not in answer.replace(b'\\"', b'"'):
        raise SystemExit(f"unexpected answer {status}: {answer[:300]!r}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=400, help="calls per row and round (default 400)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, rows taking turns (default 3)")
    args = parser.parse_args()
    app = create_app()
    gateway = Gateway(app=app)
    wrapped = gateway.wrap(app, "/mcp")
    requests = _requests()
    medians: dict[str, list[float]] = {name: [] for name in requests}
    async with gateway.lifespan():
        for scope, body in requests.values():  # warm-up: first-use costs (validators, the SDK's server) out of the way
            await _median_call(wrapped, scope, body, 20, _check)
        for _ in range(args.rounds):
            for name, (scope, body) in requests.items():
                medians[name].append(await _median_call(wrapped, scope, body, args.calls, _check))
    rest = statistics.median(medians["REST GET /orders/3"])
    print(f"{'row':<24} {'median us':>10} {'x REST':>8}")
    for name, rounds in medians.items():
        value = statistics.median(rounds)
        print(f"{name:<24} {value * 1e6:>10.0f} {value / rest:>7.2f}x")


if __name__ == "__main__":
    asyncio.run(main())
