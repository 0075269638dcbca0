"""Progress notifications for a client that sends a progress token, through the official `mcp` client over HTTP:
one per call a script makes, and a heartbeat while a slow upstream keeps the call waiting."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from fastapi import FastAPI
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from demo import ADMIN_KEY, create_app
from gateway.gateway import Gateway
from gateway.limits import Limits
from gateway.options import Output
from gateway.tools.scripts import ScriptConfig
from sandbox import ScriptLimits
from tests.gateway.conftest import serve_http

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def connect(app: FastAPI) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app), headers={"authorization": f"Bearer {ADMIN_KEY}"}
        ) as http,
        Client(streamable_http_client("http://localhost/mcp", http_client=http), mode="legacy") as client,
    ):
        yield client


class Progress:
    """What the client's progress callback received."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, float | None, str | None]] = []
        self.first = anyio.Event()

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.seen.append((progress, total, message))
        self.first.set()


async def test_a_script_reports_one_progress_step_per_call() -> None:
    app = create_app()
    limits = ScriptLimits(timeout=5.0, max_concurrent=2, slot_wait=0.1)
    gateway = Gateway(app=app, whoami="users.get_current_user", scripts=ScriptConfig(limits=limits))
    gateway.mount(app, "/mcp")
    code = "await api.orders.list_orders({}); await api.customers.list_customers({}); 'done'"
    progress = Progress()
    async with gateway.lifespan(), connect(app) as client:
        result = await client.call_tool("run_script", {"code": code}, progress_callback=progress)
    assert not result.is_error
    assert progress.seen == [
        (1.0, None, "run_script called orders.list_orders"),
        (2.0, None, "run_script called customers.list_customers"),
    ]


@pytest.mark.parametrize(
    ("mode", "version"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")], ids=["handshake", "2026-07-28"]
)
async def test_a_slow_upstream_gets_heartbeats_while_the_client_waits(mode: str, version: str) -> None:
    app = FastAPI()
    progress = Progress()

    @app.get("/wait", operation_id="wait")
    async def wait() -> dict[str, bool]:
        # Answers only once the client has seen a heartbeat: the call is slow exactly until then.
        with anyio.fail_after(10):
            await progress.first.wait()
        return {"ok": True}

    gateway = Gateway(app=app, limits=Limits(timeout=20), output=Output(progress_interval=0.01))
    gateway.mount(app, "/mcp")
    name = gateway.catalog.functions()[0].name
    # Real uvicorn: the notifications must reach the client while the call still waits, as an SSE stream does.
    async with (
        gateway.lifespan(),
        serve_http(app, lifespan="off") as base,
        httpx2.AsyncClient() as http,
        Client(streamable_http_client(f"{base}/mcp", http_client=http), mode=mode) as client,
    ):
        # From 2026-07-28 on, heartbeats ride the call's own SSE answer (the per-request envelope).
        assert client.protocol_version == version
        result = await client.call_tool("call_function", {"name": name, "args": {}}, progress_callback=progress)
    assert not result.is_error
    assert progress.seen and progress.seen[0][2] == "call_function: still working after 0.01 s"
    assert [step for step, _, _ in progress.seen] == sorted({step for step, _, _ in progress.seen})


async def test_without_a_progress_token_no_notification_is_sent() -> None:
    app = create_app()
    gateway = Gateway(app=app, whoami="users.get_current_user", output=Output(progress_interval=0.01))
    gateway.mount(app, "/mcp")
    async with gateway.lifespan(), httpx2.AsyncClient(transport=httpx2.ASGITransport(app)) as http:
        response = await http.post(
            "http://localhost/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}},
            headers={
                "authorization": f"Bearer {ADMIN_KEY}",
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": "2025-11-25",
            },
        )
    assert response.headers["content-type"] == "application/json"


async def test_script_progress_reaches_a_client_over_stdio() -> None:
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "gateway.cli", "stdio", "--scripts"],
        env={"MCP_GATEWAY_TOKEN": ADMIN_KEY},
        cwd=REPO,
    )
    progress = Progress()
    async with Client(server, mode="legacy") as client:
        code = "await api.orders.list_orders({}); 'done'"
        result = await client.call_tool("run_script", {"code": code}, progress_callback=progress)
    assert not result.is_error
    assert progress.seen == [(1.0, None, "run_script called orders.list_orders")]
