"""Soak the balanced deployment: 64 MCP clients through HAProxy for 60 s over three `serve --oauth` instances
sharing one Redis (deploy/haproxy.cfg, run on 127.0.0.1 as tests/deploy do), counting errors and sampling each
instance's resident memory. Exits 1 on any error or when an instance's memory grows past --max-growth.

    .venv/bin/python bench/soak.py                         # 64 clients, 60 s
    .venv/bin/python bench/soak.py --clients 16 --seconds 20 --sample 2

The clients share 8 logins made through the whole OAuth flow (registration is limited per address), then loop over
`call_function` (users.get_current_user, products.list_products) with the official `mcp` client; memory is
compared between the end of the warm-up (the first fifth) and the end.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import anyio
import httpx2

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from tests.deploy.cluster import Cluster, login, running_cluster  # noqa: E402

CALLS = [("users.get_current_user", {}), ("products.list_products", {})]


async def soak(options: argparse.Namespace, cluster: Cluster) -> int:
    latencies: list[float] = []
    errors: list[str] = []
    samples: list[tuple[float, list[int]]] = []
    async with httpx2.AsyncClient(timeout=30) as web:
        # Registration is limited to 60 an hour per address: the clients share --logins logins.
        tokens = [
            (await login(cluster.base, web, name="soak")).access for _ in range(min(options.logins, options.clients))
        ]
    start = time.monotonic()
    deadline = start + options.seconds

    async def client(number: int) -> None:
        turn = number
        while time.monotonic() < deadline:
            try:
                await session(number, turn)
            except Exception as error:  # a broken connection: counted, then the client connects again
                errors.append(f"{type(error).__name__}: {error}")
            turn += 1

    async def session(number: int, turn: int) -> None:
        async with (
            httpx2.AsyncClient(headers={"authorization": f"Bearer {tokens[number % len(tokens)]}"}, timeout=30) as http,
            Client(streamable_http_client(cluster.mcp_url, http_client=http)) as mcp,
        ):
            while time.monotonic() < deadline:
                name, args = CALLS[turn % len(CALLS)]
                turn += 1
                began = time.perf_counter()
                result = await mcp.call_tool("call_function", {"name": name, "args": args})
                latencies.append(time.perf_counter() - began)
                if result.is_error:
                    errors.append(str(result.content)[:200])

    stop = threading.Event()

    def sampler() -> None:
        # In a thread of its own, so the samples keep time however busy the clients' event loop is.
        while True:
            samples.append((time.monotonic() - start, [p.rss_kib() for p in cluster.instances]))
            if stop.wait(options.sample):
                return

    before = cluster.served()
    sampling = threading.Thread(target=sampler, name="rss-sampler", daemon=True)
    sampling.start()
    async with anyio.create_task_group() as tg:
        for number in range(options.clients):
            tg.start_soon(client, number)
    stop.set()
    sampling.join()
    elapsed = time.monotonic() - start
    served = {name: count - before.get(name, 0) for name, count in cluster.served().items()}
    return report(options, latencies, errors, samples, served, elapsed, cluster)


def report(
    options: argparse.Namespace,
    latencies: list[float],
    errors: list[str],
    samples: list[tuple[float, list[int]]],
    served: dict[str, int],
    elapsed: float,
    cluster: Cluster,
) -> int:
    ordered = sorted(latencies)

    def pct(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000 if ordered else float("nan")

    load = os.getloadavg()
    print(f"\n{options.clients} clients, {elapsed:.0f} s, {len(cluster.instances)} instances behind HAProxy, one Redis")
    print(f"machine: {os.cpu_count()} CPUs, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}")
    print("| calls | errors | calls/s | p50 ms | p95 ms | p99 ms | max ms |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {len(latencies)} | {len(errors)} | {len(latencies) / elapsed:.0f} | {pct(0.5):.1f} | {pct(0.95):.1f} "
        f"| {pct(0.99):.1f} | {(ordered[-1] * 1000 if ordered else float('nan')):.1f} |"
    )
    warm = next((s for s in samples if s[0] >= options.seconds / 5), samples[0])
    last = samples[-1]
    print("\n| instance | HTTP responses | RSS start MiB | after warm-up MiB | end MiB | growth after warm-up |")
    print("|---|---:|---:|---:|---:|---:|")
    worst = 0.0
    for index, process in enumerate(cluster.instances):
        growth = (last[1][index] - warm[1][index]) / warm[1][index]
        worst = max(worst, growth)
        print(
            f"| {process.name} | {served.get(process.name, 0)} | {samples[0][1][index] / 1024:.1f} "
            f"| {warm[1][index] / 1024:.1f} | {last[1][index] / 1024:.1f} | {growth:+.1%} |"
        )
    print("\nRSS over time (MiB):", end=" ")
    print("; ".join(f"{t:.0f}s " + "/".join(f"{kib / 1024:.0f}" for kib in rss) for t, rss in samples))
    if errors:
        print(f"\nfirst errors: {errors[:5]}")
    if worst > options.max_growth:
        print(f"memory grew {worst:.1%} after warm-up, past --max-growth {options.max_growth:.0%}")
    return 1 if errors or worst > options.max_growth else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--logins", type=int, default=8, help="OAuth logins the clients share (8)")
    parser.add_argument("--sample", type=float, default=5.0, help="seconds between memory samples")
    parser.add_argument("--max-growth", type=float, default=0.10, help="largest RSS growth after warm-up (0.10)")
    parser.add_argument("--logs", type=Path, default=None, help="keep the processes' logs here")
    options = parser.parse_args()
    logs = options.logs or Path(tempfile.mkdtemp(prefix="soak-"))
    with running_cluster(logs) as cluster:
        code = anyio.run(soak, options, cluster)
    print(f"logs: {logs}")
    return code


if __name__ == "__main__":
    sys.exit(main())
