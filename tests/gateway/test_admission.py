"""The admission gate: at most `max_running` MCP requests worked on at once, the rest in arrival order, each
counting for at most its lease; through the gate alone over a small ASGI app, and through a gateway."""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Callable
from typing import Any

import anyio
import httpx2
import pytest
from starlette.types import Message, Receive, Scope, Send

from demo import ADMIN_KEY, create_app
from gateway import ConfigError, Gateway
from gateway.limits import Limits
from gateway.mcp.admission import Admission, AdmissionGate

pytestmark = pytest.mark.anyio


class Held:
    """An ASGI app whose request `/<name>` starts, then waits until the test lets it finish."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.release: dict[str, anyio.Event] = {}
        self.begun: dict[str, anyio.Event] = {}
        self.finishing: dict[str, anyio.Event] = {}

    def events(self, name: str) -> None:
        self.release[name], self.begun[name], self.finishing[name] = anyio.Event(), anyio.Event(), anyio.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        name = scope["path"].strip("/")
        self.started.append(name)
        self.begun[name].set()
        await self.release[name].wait()
        self.finishing[name].set()  # nothing awaits between this and the gate taking its place back
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})


def _scope(name: str) -> Scope:
    return {"type": "http", "method": "POST", "path": f"/{name}", "headers": [], "query_string": b""}


async def _request(gate: AdmissionGate, name: str) -> None:
    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        return None

    await gate(_scope(name), receive, send)


def _gate(held: Held, names: str, **admission: Any) -> AdmissionGate:
    for name in names:
        held.events(name)
    return AdmissionGate(held, Admission(**admission))


def _arrived(gate: AdmissionGate, count: int) -> bool:
    return gate.running + gate.waiting == count


async def _settle(until: Callable[[], bool]) -> None:
    """Let the loop run until `until()` holds (requests reaching the gate, or leaving it)."""
    with anyio.fail_after(5):
        while not until():
            await anyio.sleep(0)


async def test_requests_past_max_running_wait_and_start_in_the_order_they_arrived() -> None:
    held = Held()
    gate = _gate(held, "abcd", max_running=2, lease=60)
    async with anyio.create_task_group() as group:
        for arrived, name in enumerate("abcd", start=1):
            group.start_soon(_request, gate, name)
            await _settle(functools.partial(_arrived, gate, arrived))
        assert (held.started, gate.running, gate.waiting) == (["a", "b"], 2, 2)
        held.release["b"].set()
        await held.begun["c"].wait()
        assert (held.started, gate.waiting) == (["a", "b", "c"], 1)
        held.release["a"].set()
        await held.begun["d"].wait()
        for name in "cd":
            held.release[name].set()
    assert held.started == ["a", "b", "c", "d"]
    assert (gate.running, gate.waiting) == (0, 0)


async def test_a_request_past_its_lease_stops_holding_its_place() -> None:
    held = Held()
    gate = _gate(held, "ab", max_running=1, lease=0.05)
    async with anyio.create_task_group() as group:
        group.start_soon(_request, gate, "a")
        await held.begun["a"].wait()
        group.start_soon(_request, gate, "b")
        with anyio.fail_after(5):
            await held.begun["b"].wait()  # a still runs: its lease ran out, so b took the place
        assert not held.finishing["a"].is_set()
        held.release["a"].set()
        held.release["b"].set()
    assert (gate.running, gate.waiting) == (0, 0)  # a's end did not give its place back a second time


async def test_a_waiting_request_that_is_cancelled_gives_up_its_turn() -> None:
    held = Held()
    gate = _gate(held, "abc", max_running=1, lease=60)
    async with anyio.create_task_group() as group:
        group.start_soon(_request, gate, "a")
        await held.begun["a"].wait()
        with anyio.CancelScope() as waiting_b:
            async with anyio.create_task_group() as inner:
                inner.start_soon(_request, gate, "b")
                await _settle(lambda: gate.waiting == 1)
                waiting_b.cancel()
        group.start_soon(_request, gate, "c")
        await _settle(lambda: gate.waiting == 1)
        held.release["a"].set()
        await held.begun["c"].wait()
        held.release["c"].set()
    assert held.started == ["a", "c"]
    assert (gate.running, gate.waiting) == (0, 0)


async def test_a_request_handed_a_place_then_cancelled_passes_it_to_the_next() -> None:
    # asyncio's own cancel, which can land after the place is handed over and before the request resumes
    # (anyio's cancel scopes wait for the request's next checkpoint instead).
    held = Held()
    gate = _gate(held, "abc", max_running=1, lease=60)
    a = asyncio.create_task(_request(gate, "a"))
    await held.begun["a"].wait()
    b = asyncio.create_task(_request(gate, "b"))
    await _settle(lambda: gate.waiting == 1)
    c = asyncio.create_task(_request(gate, "c"))
    await _settle(lambda: gate.waiting == 2)
    held.release["a"].set()
    await held.finishing["a"].wait()  # a hands its place to b before b can run: cancel b now
    b.cancel()
    with anyio.fail_after(5):
        await held.begun["c"].wait()
    held.release["c"].set()
    await asyncio.wait_for(asyncio.gather(a, c), 5)
    assert b.cancelled()
    assert held.started == ["a", "c"]
    assert (gate.running, gate.waiting) == (0, 0)


def test_admission_limits_are_checked_and_say_how_to_turn_the_gate_off() -> None:
    with pytest.raises(ConfigError, match=r"max_running must be a whole number of requests, 1 or more, got 0; pass"):
        Admission(max_running=0)
    with pytest.raises(ConfigError, match=r"lease must be a positive number of seconds, got -1"):
        Admission(lease=-1)
    with pytest.raises(ConfigError, match=r"Limits.max_running \(--max-running\) must be a whole number, 0 or more"):
        Limits(max_running=-1)


def _call(request_id: int, seconds: float) -> dict[str, Any]:
    arguments = {"name": "debug.slow", "args": {"seconds": seconds}}
    params = {"name": "call_function", "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


async def test_a_gateway_works_on_max_running_requests_at_once() -> None:
    gateway = Gateway(app=create_app(debug_routes=True), limits=Limits(max_running=1, admission_lease=60))
    endpoint = gateway.asgi()
    assert isinstance(endpoint, AdmissionGate)
    headers = {
        "authorization": f"Bearer {ADMIN_KEY}",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
    }
    finished: list[int] = []

    async def call(http: httpx2.AsyncClient, request_id: int, seconds: float) -> None:
        response = await http.post("http://localhost/mcp", json=_call(request_id, seconds), headers=headers)
        assert json.loads(response.text)["result"]["isError"] is False
        finished.append(request_id)

    async with gateway.lifespan(), httpx2.AsyncClient(transport=httpx2.ASGITransport(endpoint)) as http:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                group.start_soon(call, http, 1, 0.2)
                await _settle(lambda: endpoint.running == 1)
                group.start_soon(call, http, 2, 0)
                await _settle(lambda: endpoint.waiting == 1)
    assert finished == [1, 2]  # the quick call waited its turn behind the slow one


async def test_without_admission_every_request_is_worked_on_at_once() -> None:
    gateway = Gateway(app=create_app(), limits=Limits(max_running=0))
    assert not isinstance(gateway.asgi(), AdmissionGate)
    assert isinstance(Gateway(app=create_app()).asgi(), AdmissionGate)
