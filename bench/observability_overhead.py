"""What observing tool calls costs: call_function on the demo shop in-process, per call, by what is on.

Run with `.venv/bin/python bench/observability_overhead.py`; prints microseconds per call and the ratio to the
first row (nothing listening: no INFO logging, no metrics, no OpenTelemetry SDK).
"""

from __future__ import annotations

import logging
import time
from typing import Any

import anyio

from demo import ADMIN_KEY, create_app
from gateway.gateway import Gateway
from gateway.observability import LOGGER_NAME

CALLS = 2000
HEADERS = {"authorization": f"Bearer {ADMIN_KEY}"}
ARGS = {"name": "orders.get_order", "args": {"order_id": 3}}


async def per_call(gateway: Gateway) -> float:
    async with gateway.lifespan():
        for _ in range(200):
            await gateway.call_tool(HEADERS, "call_function", ARGS)
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            for _ in range(CALLS):
                await gateway.call_tool(HEADERS, "call_function", ARGS)
            best = min(best, (time.perf_counter() - started) / CALLS)
    return best * 1e6


def main() -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    calls = logging.getLogger(LOGGER_NAME)
    calls.propagate = False
    calls.addHandler(logging.NullHandler())
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))
    rows: list[tuple[str, int, dict[str, Any]]] = [
        ("nothing listening", logging.WARNING, {}),
        ("call log (INFO)", logging.INFO, {}),
        ("call log + metrics", logging.INFO, {"metrics_path": "/metrics"}),
        ("call log + metrics + spans", logging.INFO, {"metrics_path": "/metrics", "tracer_provider": provider}),
    ]
    base = 0.0
    print(f"{'observing':<30} {'us/call':>8} {'ratio':>6}")
    for label, level, options in rows:
        calls.setLevel(level)
        micros = anyio.run(per_call, Gateway(app=create_app(), **options))
        base = base or micros
        print(f"{label:<30} {micros:8.1f} {micros / base:6.2f}")


if __name__ == "__main__":
    main()
