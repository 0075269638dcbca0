"""run_script overhead and what chaining buys, on the demo shop served by real uvicorn in its own process.

    .venv/bin/python bench/script_bench.py                 # 30 runs per case
    .venv/bin/python bench/script_bench.py --repeat 100 --json /tmp/script.json

Cases, each timed as the official `mcp` client sees it over streamable HTTP on 127.0.0.1:

- the empty script: `Sandbox.run` in-process (the warm pool's start-up), and run_script over MCP against the
  cheapest tool call (whoami), which is the ratio reported;
- 20 chained reads (orders.get_order): one script awaiting them in turn, against 20 call_function tool calls;
- callAll of the same 20 calls against the sequential script; and both again on an endpoint that takes 20 ms
  (debug.slow), where the host runs callAll's calls concurrently.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CALLS = 20
SLOW_SECONDS = 0.02

#: The server: the demo shop with its debug routes and run_script, on the port given as argv[1].
SERVER = """
import sys, uvicorn
from gateway import Gateway, ScriptConfig
from demo import create_app
from sandbox import ScriptLimits
gateway = Gateway(app=create_app(debug_routes=True), whoami="users.get_current_user",
                  scripts=ScriptConfig(limits=ScriptLimits(timeout=10.0, max_calls=200)))
uvicorn.run(gateway.standalone(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


def percentile(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile (`fraction` in 0..1) of `values`."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(fraction * len(ordered) + 0.5)))
    return ordered[rank - 1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def sequential_script(name: str, args: str) -> str:
    return f"const out = []; for (let i = 0; i < {CALLS}; i++) out.push(await call({name!r}, {args})); out.length"


def call_all_script(name: str, args: str) -> str:
    return (
        f"const calls = Array.from({{length: {CALLS}}}, (_, i) => ({{name: {name!r}, args: {args}}}));\n"
        "(await callAll(calls)).filter(r => !(r instanceof Error)).length"
    )


async def measure(repeat: int, run: Callable[[], Awaitable[Any]]) -> list[float]:
    """Milliseconds of `repeat` runs after two warm-up runs."""
    for _ in range(2):
        await run()
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        await run()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


async def bench(base: str, repeat: int) -> dict[str, list[float]]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from demo import ADMIN_KEY
    from sandbox import Sandbox

    samples: dict[str, list[float]] = {}

    async def nothing(name: str, args: dict[str, Any]) -> Any:
        return None

    async with Sandbox(["a.b"]) as sandbox:
        samples["empty script, Sandbox.run in-process"] = await measure(repeat, lambda: sandbox.run("null", nothing))

    headers = {"authorization": f"Bearer {ADMIN_KEY}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client,
    ):

        async def tool(name: str, args: dict[str, Any]) -> None:
            result = await client.call_tool(name, args)
            if result.is_error:
                raise SystemExit(f"{name} failed: {result.content}")

        async def script(code: str) -> None:
            await tool("run_script", {"code": code})

        async def separate_calls() -> None:
            for i in range(CALLS):
                await tool("call_function", {"name": "orders.get_order", "args": {"order_id": i % 15 + 1}})

        async def separate_slow_calls() -> None:
            for _ in range(CALLS):
                await tool("call_function", {"name": "debug.slow", "args": {"seconds": SLOW_SECONDS}})

        order = "orders.get_order"
        order_args = "{order_id: i % 15 + 1}"
        slow_args = f"{{seconds: {SLOW_SECONDS}}}"
        cases: dict[str, Callable[[], Awaitable[Any]]] = {
            "whoami tool call over MCP": lambda: tool("whoami", {}),
            "empty script, run_script over MCP": lambda: script("null"),
            "20 reads: 20 call_function tool calls": separate_calls,
            "20 reads: one script, sequential": lambda: script(sequential_script(order, order_args)),
            "20 reads: one script, callAll": lambda: script(call_all_script(order, order_args)),
            "20 x 20 ms: 20 call_function tool calls": separate_slow_calls,
            "20 x 20 ms: one script, sequential": lambda: script(sequential_script("debug.slow", slow_args)),
            "20 x 20 ms: one script, callAll": lambda: script(call_all_script("debug.slow", slow_args)),
        }
        for label, run in cases.items():
            samples[label] = await measure(repeat, run)
    return samples


RATIOS = (
    ("run_script overhead: empty script / whoami", "empty script, run_script over MCP", "whoami tool call over MCP"),
    (
        "20 reads: 20 tool calls / one script",
        "20 reads: 20 call_function tool calls",
        "20 reads: one script, sequential",
    ),
    ("20 reads: sequential script / callAll", "20 reads: one script, sequential", "20 reads: one script, callAll"),
    (
        "20 x 20 ms: 20 tool calls / one script",
        "20 x 20 ms: 20 call_function tool calls",
        "20 x 20 ms: one script, sequential",
    ),
    (
        "20 x 20 ms: sequential script / callAll",
        "20 x 20 ms: one script, sequential",
        "20 x 20 ms: one script, callAll",
    ),
)


def main(argv: Sequence[str] | None = None) -> int:
    """Start the server, measure, print the table and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=30, help="timed runs per case")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write every sample here")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, not {args.repeat!r}")

    import anyio
    import httpx2

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(port)], env=env)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx2.get(base + "/", timeout=1).status_code == 200:
                    break
            except httpx2.HTTPError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit("the demo server did not start")
            time.sleep(0.1)
        samples = anyio.run(bench, base, args.repeat)
    finally:
        server.terminate()
        server.wait(timeout=10)

    width = max(len(label) for label in samples)
    print(f"{'case':<{width}}  {'median ms':>10}  {'p95 ms':>8}")
    for label, runs in samples.items():
        print(f"{label:<{width}}  {statistics.median(runs):>10.2f}  {percentile(runs, 0.95):>8.2f}")
    print()
    width = max(len(label) for label, _, _ in RATIOS)
    print(f"{'ratio (medians)':<{width}}  {'x':>6}")
    for label, numerator, denominator in RATIOS:
        ratio = statistics.median(samples[numerator]) / statistics.median(samples[denominator])
        print(f"{label:<{width}}  {ratio:>6.2f}")
    if args.json:
        args.json.write_text(json.dumps(samples, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
