"""Operators see what agents do: a log line per tool call, Prometheus metrics, OpenTelemetry spans and the trace
context passed on to the API; never a credential or an argument value."""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import pytest
from fastapi import FastAPI, Request
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from demo import ADMIN_KEY, create_app
from gateway.errors import ConfigError
from gateway.gateway import Gateway
from gateway.observability import LOGGER_NAME
from gateway.options import Observability
from gateway.tools.scripts import ScriptConfig
from sandbox import ScriptLimits
from tests.gateway.conftest import serve_http

#: A W3C traceparent an agent's client might send: version, trace id, parent span id, flags.
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
INCOMING = f"00-{TRACE_ID}-00f067aa0ba902b7-01"
SECRET_ARG = "needle-7c1f"

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def demo_gateway(**options: Any) -> tuple[FastAPI, Gateway]:
    app = create_app()
    gateway = Gateway(app=app, whoami="users.get_current_user", **options)
    gateway.mount(app, "/mcp")
    return app, gateway


@asynccontextmanager
async def connect(app: Any, headers: dict[str, str] | None = None) -> AsyncIterator[Client]:
    sent = {"authorization": f"Bearer {ADMIN_KEY}", **(headers or {})}
    async with (
        httpx2.AsyncClient(transport=httpx2.ASGITransport(app), headers=sent) as http,
        Client(streamable_http_client("http://localhost/mcp", http_client=http)) as client,
    ):
        yield client


async def scrape(app: Any, path: str = "/metrics") -> httpx2.Response:
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app), base_url="http://localhost") as http:
        return await http.get(path)


def call_lines(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    return [record.call for record in caplog.records if record.name == LOGGER_NAME and hasattr(record, "call")]


async def test_every_tool_call_is_one_line_with_tool_function_status_and_a_caller_hash(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app, gateway = demo_gateway()
    caplog.set_level(logging.INFO, logger=LOGGER_NAME)
    async with gateway.lifespan(), connect(app) as client:
        await client.call_tool("whoami", {})
        await client.call_tool("search_functions", {"query": SECRET_ARG})
        await client.call_tool("describe_function", {"names": ["orders.get_order"]})
        await client.call_tool("explain_term", {"name": "Order"})
        await client.call_tool("call_function", {"name": "orders.get_order", "args": {"order_id": 3}})
        await client.call_tool("call_function", {"name": "orders.get_order", "args": {"order_id": 987654}})
        await client.call_tool("call_function", {"name": SECRET_ARG, "args": {}})
    lines = call_lines(caplog)
    assert [(line["tool"], line["function"], line["status"], line["outcome"]) for line in lines] == [
        ("whoami", "users.get_current_user", "200", "ok"),
        ("search_functions", "-", "-", "ok"),
        ("describe_function", "-", "-", "ok"),
        ("explain_term", "-", "-", "ok"),
        ("call_function", "orders.get_order", "200", "ok"),
        ("call_function", "orders.get_order", "404", "error"),
        ("call_function", "-", "-", "error"),
    ]
    assert all(line["event"] == "tool" and line["duration_ms"] >= 0 for line in lines)
    callers = {line["caller"] for line in lines}
    assert len(callers) == 1
    assert len(next(iter(callers))) == 16
    text = caplog.text
    assert ADMIN_KEY not in text
    assert SECRET_ARG not in text
    assert "987654" not in text


async def test_the_caller_hash_is_keyed_so_the_same_key_gives_the_same_hash_and_another_key_another(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER_NAME)
    for key in ("one", "one", "two"):
        app, gateway = demo_gateway(observability=Observability(caller_key=key))
        async with gateway.lifespan(), connect(app) as client:
            await client.call_tool("whoami", {})
    first, again, other = (line["caller"] for line in call_lines(caplog))
    assert first == again != other


async def test_promoted_tools_log_their_function(caplog: pytest.LogCaptureFixture) -> None:
    app, gateway = demo_gateway(tools=["orders.get_order"])
    caplog.set_level(logging.INFO, logger=LOGGER_NAME)
    async with gateway.lifespan(), connect(app) as client:
        await client.call_tool("orders-get_order", {"order_id": 3})
    (line,) = call_lines(caplog)
    assert (line["tool"], line["function"], line["status"]) == ("orders-get_order", "orders.get_order", "200")


async def test_run_script_logs_one_line_per_call_it_makes_and_one_for_the_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app, gateway = demo_gateway(
        scripts=ScriptConfig(limits=ScriptLimits(timeout=3.0)), observability=Observability(metrics_path="/metrics")
    )
    caplog.set_level(logging.INFO, logger=LOGGER_NAME)
    code = f"const o = await api.orders.get_order({{order_id: 3}}); '{SECRET_ARG}' + o.id"
    async with gateway.lifespan(), connect(app) as client:
        result = await client.call_tool("run_script", {"code": code})
        assert not result.is_error
        page = await scrape(app)
    lines = call_lines(caplog)
    assert [(line["event"], line["function"], line["status"]) for line in lines] == [
        ("function", "users.get_current_user", "200"),  # every run checks the caller first
        ("function", "orders.get_order", "200"),
        ("tool", "-", "-"),
    ]
    assert (lines[-1]["script"], lines[-1]["calls"]) == ("ok", 2)
    assert SECRET_ARG not in caplog.text
    assert 'mcp_gateway_script_runs_total{outcome="ok"} 1.0' in page.text
    assert 'mcp_gateway_function_calls_total{function="orders.get_order",status="200",tool="run_script"} 1.0' in (
        page.text
    )


async def test_a_script_stopped_at_its_time_limit_counts_as_a_kill_by_timeout() -> None:
    app, gateway = demo_gateway(
        scripts=ScriptConfig(limits=ScriptLimits(timeout=0.3)), observability=Observability(metrics_path="/metrics")
    )
    async with gateway.lifespan(), connect(app) as client:
        result = await client.call_tool("run_script", {"code": "for (;;) {}"})
        assert result.is_error
        page = await scrape(app)
    assert 'mcp_gateway_script_kills_total{reason="timeout"} 1.0' in page.text
    assert 'mcp_gateway_script_runs_total{outcome="timeout"} 1.0' in page.text


async def test_the_metrics_path_serves_calls_errors_and_latency_by_tool_and_function() -> None:
    app, gateway = demo_gateway(observability=Observability(metrics_path="/metrics"))
    async with gateway.lifespan(), connect(app) as client:
        await client.call_tool("call_function", {"name": "orders.get_order", "args": {"order_id": 3}})
        await client.call_tool("call_function", {"name": "orders.get_order", "args": {"order_id": 987654}})
        await client.call_tool("call_function", {"name": SECRET_ARG, "args": {}})
        await client.call_tool("search_functions", {"query": SECRET_ARG})
        page = await scrape(app)
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/plain")
    metrics = page.text
    for line in [
        'mcp_gateway_tool_calls_total{function="orders.get_order",outcome="ok",tool="call_function"} 1.0',
        'mcp_gateway_tool_calls_total{function="orders.get_order",outcome="error",tool="call_function"} 1.0',
        # An unknown function name is the agent's input: it never becomes a label.
        'mcp_gateway_tool_calls_total{function="",outcome="error",tool="call_function"} 1.0',
        'mcp_gateway_tool_calls_total{function="",outcome="ok",tool="search_functions"} 1.0',
        'mcp_gateway_function_calls_total{function="orders.get_order",status="404",tool="call_function"} 1.0',
        'mcp_gateway_tool_call_duration_seconds_count{function="orders.get_order",tool="call_function"} 2.0',
    ]:
        assert line in metrics
    assert SECRET_ARG not in metrics
    assert "987654" not in metrics
    assert ADMIN_KEY not in metrics


async def test_without_metrics_path_nothing_is_served_there() -> None:
    app, gateway = demo_gateway()
    async with gateway.lifespan():
        page = await scrape(app)
    assert page.status_code == 404


def test_metrics_path_without_prometheus_client_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "prometheus_client", None)
    with pytest.raises(ConfigError, match=r"pip install 'openapi-mcp-gateway\[metrics\]'"):
        Gateway(app=create_app(), observability=Observability(metrics_path="/metrics"))


def test_metrics_path_is_a_url_path() -> None:
    with pytest.raises(ConfigError, match="metrics_path must be a URL path"):
        Gateway(app=create_app(), observability=Observability(metrics_path="metrics"))


# Tracing


def spans_of(exporter: InMemorySpanExporter) -> dict[str, ReadableSpan]:
    return {span.name: span for span in exporter.get_finished_spans()}


def traced() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def echo_app() -> tuple[FastAPI, list[str | None]]:
    """A small API that keeps the traceparent each request came with."""
    seen: list[str | None] = []
    app = FastAPI(title="Echo API")

    @app.get("/items/{item_id}", operation_id="get_item")
    async def get_item(item_id: int, request: Request) -> dict[str, int]:
        seen.append(request.headers.get("traceparent"))
        return {"id": item_id}

    return app, seen


async def test_a_tool_call_is_a_span_under_the_incoming_traceparent_and_the_app_gets_the_rest_span() -> None:
    provider, exporter = traced()
    app, seen = echo_app()
    gateway = Gateway(app=app, observability=Observability(tracer_provider=provider))
    gateway.mount(app, "/mcp")
    async with gateway.lifespan(), connect(app, {"traceparent": INCOMING}) as client:
        await client.call_tool("call_function", {"name": "items.get_item", "args": {"item_id": 987654321}})
    spans = spans_of(exporter)
    tool, rest = spans["tools/call call_function"], spans["GET /items/{item_id}"]
    assert tool.context is not None and rest.context is not None and rest.parent is not None
    assert format(tool.context.trace_id, "032x") == TRACE_ID
    assert tool.parent is not None and format(tool.parent.span_id, "016x") == "00f067aa0ba902b7"
    assert rest.parent.span_id == tool.context.span_id
    assert rest.context.trace_id == tool.context.trace_id
    assert rest.attributes is not None and rest.attributes["http.response.status_code"] == 200
    assert seen == [f"00-{TRACE_ID}-{rest.context.span_id:016x}-01"]
    for span in spans.values():
        assert ADMIN_KEY not in str(span.to_json())
        # A long value: the caller hash (16 hex digits) holds a two-digit number by chance now and then.
        assert "987654321" not in str(dict(span.attributes or {}).values())


async def test_the_upstream_request_carries_the_rest_span_as_its_traceparent() -> None:
    provider, exporter = traced()
    api, seen = echo_app()
    async with serve_http(api) as base:
        gateway = Gateway(spec=api.openapi(), upstream=base, observability=Observability(tracer_provider=provider))
        mcp = gateway.standalone()
        async with gateway.lifespan(), connect(mcp, {"traceparent": INCOMING}) as client:
            await client.call_tool("call_function", {"name": "items.get_item", "args": {"item_id": 7}})
    rest = spans_of(exporter)["GET /items/{item_id}"]
    assert rest.context is not None
    assert seen == [f"00-{TRACE_ID}-{rest.context.span_id:016x}-01"]


async def test_without_an_sdk_the_incoming_traceparent_is_passed_on_unchanged() -> None:
    app, seen = echo_app()
    gateway = Gateway(app=app)
    gateway.mount(app, "/mcp")
    async with gateway.lifespan(), connect(app, {"traceparent": INCOMING}) as client:
        await client.call_tool("call_function", {"name": "items.get_item", "args": {"item_id": 1}})
    assert seen == [INCOMING]
