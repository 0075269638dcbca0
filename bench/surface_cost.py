"""What a surface per caller costs: search_functions and describe_function with a scope map, against the same
gateway without one, on a corpus document, through `Gateway.call_tool`-equivalent endpoint calls.

    .venv/bin/python bench/surface_cost.py [stripe-spec3.yaml] [--rounds 200]

Prints the first search's cost for the whole catalog and for a scoped view (each builds its own search index,
then keeps it), then one table: the median time per call without a surface and with a scope-mapped surface,
and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from pathlib import Path
from typing import Any

from catalog.builder import load_catalog
from gateway.gateway import Gateway
from gateway.policy import Access, Credentials
from gateway.requests import RequestInfo

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = Path(os.environ.get("MCP_GATEWAY_CORPUS", REPO.parent / "shared" / "corpus" / "specs"))


async def _median(gateway: Gateway, request: RequestInfo, tool: str, args: dict[str, Any], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        await gateway.endpoint.call_tool(tool, args, gateway.policy.of(request))
        times.append(time.perf_counter() - started)
    return statistics.median(times)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("document", nargs="?", default="stripe-spec3.yaml")
    parser.add_argument("--rounds", type=int, default=200)
    options = parser.parse_args()
    catalog = load_catalog(str(DEFAULT_CORPUS / options.document))
    modules = [module.name for module in catalog.modules]
    half = modules[: max(1, len(modules) // 2)]
    scopes = {"half": [f"{name}.*" for name in half]}
    plain = Gateway(spec=catalog, upstream="https://api.example.com")
    scoped = Gateway(spec=catalog, upstream="https://api.example.com", access=Access(scopes=scopes))
    request = RequestInfo(transport="http", headers={}, principal=Credentials({"authorization": "x"}, ["half"]))
    name = catalog.functions()[0].name
    calls = [
        ("search_functions", {"query": "list all the customers"}),
        ("search_functions", {}),
        ("describe_function", {"names": [name]}),
    ]
    started = time.perf_counter()
    await plain.endpoint.call_tool("search_functions", {"query": "warm up"}, plain.policy.of(request))
    plain_first = time.perf_counter() - started
    started = time.perf_counter()
    await scoped.endpoint.call_tool("search_functions", {"query": "warm up"}, scoped.policy.of(request))
    first = time.perf_counter() - started
    print(
        f"{options.document}: {len(catalog.functions())} functions; "
        f"the scope sees {len(half)} of {len(modules)} modules"
    )
    print(
        f"first search (index built): {plain_first * 1000:.0f} ms for the whole catalog, {first * 1000:.0f} ms for "
        f"the scoped view (its own restricted catalog and index), {first / plain_first:.2f}x"
    )
    print(f"{'call':<40} {'no surface':>12} {'scoped':>12} {'ratio':>7}")
    for tool, args in calls:
        base = await _median(plain, request, tool, args, options.rounds)
        cut = await _median(scoped, request, tool, args, options.rounds)
        label = f"{tool}({', '.join(args)})"
        print(f"{label:<40} {base * 1e6:>9.0f} us {cut * 1e6:>9.0f} us {cut / base:>6.2f}x")


if __name__ == "__main__":
    asyncio.run(main())
