"""run_script on the demo shop through the official `mcp` client: chained calls, catchable errors, read-only
reach, who may run scripts and how many at once, and the gateway serving other callers during hostile scripts."""

from __future__ import annotations

import functools
import json
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from fastapi import FastAPI
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from catalog.builder import load_catalog
from catalog.composite import Invoker, composite
from catalog.model import Catalog
from demo import ADMIN_KEY, MEMBER_KEY, create_app
from gateway.errors import ConfigError
from gateway.gateway import Gateway
from gateway.limits import Limits
from gateway.options import Additions, Observability
from gateway.tools.scripts import ScriptConfig, render
from sandbox import ScriptFailure, ScriptLimits, ScriptResult
from tests.gateway.conftest import serve_http

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
#: Hostile scripts get a short timeout to keep the suite fast; scripts of real calls get more room.
TIMEOUT = 0.75
LIMITS = ScriptLimits(timeout=3.0, max_concurrent=2, slot_wait=0.1)
SHORT = ScriptLimits(timeout=TIMEOUT, max_concurrent=2, slot_wait=0.1)
FIXED = ["whoami", "search_functions", "describe_function", "explain_term", "call_function"]


class BoomArgs(BaseModel):
    pass


@composite("reports", summary="A report whose code has a bug", read_only=True)
async def broken_report(call: Invoker, args: BoomArgs) -> dict[str, Any]:
    raise RuntimeError("the report's code has a bug")


class Reported:
    """Collects what the gateway's on_error hook receives."""

    def __init__(self) -> None:
        self.errors: list[tuple[str, Exception]] = []

    async def __call__(self, tool: str, error: Exception) -> None:
        self.errors.append((tool, error))


@functools.cache
def demo_catalog() -> Catalog:
    """The demo shop's catalog, built once: each test's gateway gets a fresh app (and store) but shares it."""
    return load_catalog(create_app(debug_routes=True))


def make_gateway(script: ScriptConfig | None = None, **options: Any) -> tuple[FastAPI, Gateway]:
    app = create_app(debug_routes=True)
    config = script if script is not None else ScriptConfig(limits=LIMITS)
    defaults: dict[str, Any] = {
        "app": app,
        "whoami": "users.get_current_user",
        "limits": Limits(timeout=2.0),
        "scripts": config,
    }
    if "additions" not in options:
        defaults["spec"] = demo_catalog()
    gateway = Gateway(**{**defaults, **options})
    gateway.mount(app, "/mcp")
    return app, gateway


@asynccontextmanager
async def running(gateway: Gateway) -> AsyncIterator[None]:
    """The gateway's lifespan: the demo store, and the sandbox's warm workers."""
    async with gateway.lifespan():
        yield


@asynccontextmanager
async def connect(app: FastAPI, *, key: str | None = ADMIN_KEY) -> AsyncIterator[Client]:
    headers = {"authorization": f"Bearer {key}"} if key else {}
    async with (
        httpx2.AsyncClient(transport=httpx2.ASGITransport(app), headers=headers) as http,
        Client(streamable_http_client("http://localhost/mcp", http_client=http)) as client,
    ):
        yield client


async def run_script(client: Client, code: str) -> types.CallToolResult:
    return await client.call_tool("run_script", {"code": code})


def text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def shop() -> AsyncIterator[tuple[FastAPI, Gateway]]:
    """The demo shop with read-only scripts, shared by the tests that do not change its configuration."""
    app, gateway = make_gateway()
    async with running(gateway):
        yield app, gateway


async def test_run_script_comes_right_after_the_fixed_tools_and_says_it_only_reads(
    shop: tuple[FastAPI, Gateway],
) -> None:
    app, _ = shop
    async with connect(app) as client:
        tools = (await client.list_tools()).tools
    assert [tool.name for tool in tools][:6] == [*FIXED, "run_script"]
    assert tools[5].annotations == types.ToolAnnotations(
        title="Run a script", read_only_hint=True, destructive_hint=False, idempotent_hint=False, open_world_hint=True
    )
    assert "only read-only functions" in (tools[5].description or "")


async def test_a_script_chains_real_calls_and_aggregates_them(shop: tuple[FastAPI, Gateway]) -> None:
    app, gateway = shop
    code = """
    const customers = (await api.customers.list_customers({limit: 50})).items;
    const pages = await callAll(customers.map(c => ({name: "customers.list_customer_orders",
                                                      args: {customer_id: c.id, limit: 100}})));
    const spend = customers.map((c, i) => ({
      name: c.name,
      orders: pages[i].items.length,
      cents: pages[i].items.reduce((sum, order) => sum + order.total_cents, 0),
    }));
    console.log("customers:", customers.length);
    spend.sort((a, b) => b.cents - a.cents).slice(0, 3);
    """
    async with connect(app) as client:
        result = await run_script(client, code)
    assert not result.is_error, text(result)
    answer, _, logs = text(result).partition("\n\n--- console (1 lines) ---\n")
    headers = {"authorization": f"Bearer {ADMIN_KEY}"}
    customers = (await gateway.call(headers, "customers.list_customers", {"limit": 50}))["items"]
    expected = []
    for customer in customers:
        page = await gateway.call(
            headers, "customers.list_customer_orders", {"customer_id": customer["id"], "limit": 100}
        )
        cents = sum(order["total_cents"] for order in page["items"])
        expected.append({"name": customer["name"], "orders": len(page["items"]), "cents": cents})
    expected.sort(key=lambda row: -row["cents"])
    assert json.loads(answer) == expected[:3]
    assert logs == f"customers: {len(customers)}"


async def test_a_script_finds_then_fetches_details(shop: tuple[FastAPI, Gateway]) -> None:
    app, _ = shop
    code = """
    const paid = await call("orders.list_orders", {status: "paid", limit: 100});
    const first = paid.items[0];
    const order = await api.orders.get_order({order_id: first.id});
    const products = await callAll(order.items.map(line => ({name: "products.get_product",
                                                             args: {product_id: line.product_id}})));
    return {order: order.id, status: order.status, products: products.map(p => p.name)};
    """
    async with connect(app) as client:
        result = await run_script(client, code)
    answer = json.loads(text(result))
    assert answer["status"] == "paid" and answer["products"]


async def test_errors_thrown_by_calls_are_catchable_and_carry_status_and_body(shop: tuple[FastAPI, Gateway]) -> None:
    app, _ = shop
    code = """
    try {
      await api.orders.get_order({order_id: 9999});
    } catch (error) {
      return {status: error.status, detail: error.body.detail, message: error.message};
    }
    """
    async with connect(app) as client:
        result = await run_script(client, code)
    answer = json.loads(text(result))
    assert answer["status"] == 404
    assert answer["detail"].startswith("order 9999 not found")
    assert answer["message"] == "orders.get_order failed: HTTP 404 Not Found"


async def test_an_uncaught_call_error_fails_the_script_with_status_body_and_logs(
    shop: tuple[FastAPI, Gateway],
) -> None:
    app, _ = shop
    async with connect(app, key=MEMBER_KEY) as client:
        result = await run_script(client, "console.log('looking');\nawait api.users.list_users()")
    assert result.is_error
    body, _, logs = text(result).partition("\n\n--- console (1 lines) ---\n")
    assert body.startswith("The script threw Error (line 2): users.list_users failed: HTTP 403 Forbidden.")
    assert "status: 403" in body and "needs the admin role" in body
    assert logs == "looking"


async def test_argument_errors_are_catchable_with_the_signature_hint(shop: tuple[FastAPI, Gateway]) -> None:
    app, _ = shop
    async with connect(app) as client:
        result = await run_script(client, "try { await api.orders.get_order({}) } catch (e) { return e.message }")
    assert "missing required argument 'order_id'" in text(result)


async def test_a_script_calls_arguments_meet_the_same_depth_limit_as_a_tool_calls(
    shop: tuple[FastAPI, Gateway],
) -> None:
    app, _ = shop
    code = (
        "let deep = 1; for (let i = 0; i < 70; i++) deep = [deep];\n"
        "try { await api.orders.get_order({order_id: deep}) } catch (e) { return e.message }"
    )
    async with connect(app) as client:
        result = await run_script(client, code)
    assert "more than 64 levels deep, the limit Limits.max_argument_depth (--max-argument-depth)" in text(result)


async def test_writes_are_refused_when_scripts_are_read_only(shop: tuple[FastAPI, Gateway]) -> None:
    app, gateway = shop
    headers = {"authorization": f"Bearer {ADMIN_KEY}"}
    before = len((await gateway.call(headers, "orders.list_orders", {"limit": 100}))["items"])
    code = """
    const attempts = [
      () => api.orders.create_order({customer_id: 1, items: [{product_id: 1, quantity: 1}]}),
      () => call("customers.delete_customer", {customer_id: 2}),
    ];
    const messages = [];
    for (const attempt of attempts) { try { await attempt() } catch (e) { messages.push(e.message) } }
    messages;
    """
    async with connect(app) as client:
        result = await run_script(client, code)
    messages = json.loads(text(result))
    assert [message.split(" ", 1)[0] for message in messages] == ["orders.create_order", "customers.delete_customer"]
    assert all("may only call read-only functions" in message for message in messages)
    assert len((await gateway.call(headers, "orders.list_orders", {"limit": 100}))["items"]) == before
    await gateway.call(headers, "customers.get_customer", {"customer_id": 2})


async def test_names_outside_the_catalog_throw(shop: tuple[FastAPI, Gateway]) -> None:
    app, _ = shop
    code = "try { await call(String('orders.get_ordr'), {order_id: 1}) } catch (e) { return e.message }"
    async with connect(app) as client:
        result = await run_script(client, code)
    assert text(result).startswith("Unknown function 'orders.get_ordr'. Did you mean orders.get_order")


async def test_a_literal_name_outside_the_catalog_is_refused_before_anything_runs(
    shop: tuple[FastAPI, Gateway],
) -> None:
    app, _ = shop
    code = "await api.orders.list_orders({})\nreturn await call('orders.get_ordr', {order_id: 1})"
    async with connect(app) as client:
        result = await run_script(client, code)
    assert result.is_error
    assert text(result).startswith(
        "The script was not run: line 2: call(\"orders.get_ordr\"): there is no function 'orders.get_ordr'; "
        'did you mean "orders.get_order"'
    )


async def test_binary_answers_are_refused_with_a_hint(shop: tuple[FastAPI, Gateway]) -> None:
    app, _ = shop
    code = "try { await api.products.get_product_image({product_id: 1}) } catch (e) { return e.message }"
    async with connect(app) as client:
        result = await run_script(client, code)
    assert "which a script cannot use; call it with call_function instead" in text(result)


async def test_an_answer_over_its_cap_is_a_catchable_error(shop: tuple[FastAPI, Gateway]) -> None:
    app, _ = shop
    code = "try { await api.debug.big({size: 40000}) } catch (e) { return e.message }"
    async with connect(app) as client:
        result = await run_script(client, code)
    assert "over the 1048576-byte limit for one answer in a script" in text(result)


async def test_a_caller_the_api_rejects_is_refused_before_taking_a_slot() -> None:
    app, gateway = make_gateway(ScriptConfig(limits=ScriptLimits(timeout=2.0, max_concurrent=1, slot_wait=0)))
    async with running(gateway), connect(app) as admin, anyio.create_task_group() as tg:
        tg.start_soon(run_script, admin, "await api.debug.slow({seconds: 0.5}); 1")
        await _until(lambda: bool(gateway.scripts and gateway.scripts.sandbox.busy_pids))
        for key in ("wrong-key", None):
            async with connect(app, key=key) as stranger:
                refused = await run_script(stranger, "1")
            assert refused.is_error
            assert text(refused).startswith("run_script needs credentials the API accepts")


async def test_the_allow_hook_limits_scripts_to_some_callers() -> None:
    async def admins_only(me: Any) -> bool:
        return isinstance(me, dict) and me.get("role") == "admin"

    app, gateway = make_gateway(ScriptConfig(limits=LIMITS, allow=admins_only))
    async with running(gateway):
        async with connect(app, key=MEMBER_KEY) as member:
            # A caller the hook refuses is not offered run_script at all: to it the tool does not exist.
            with pytest.raises(MCPError, match="Unknown tool 'run_script'"):
                await run_script(member, "1")
        async with connect(app, key=ADMIN_KEY) as admin:
            allowed = await run_script(admin, "1")
    assert not allowed.is_error and text(allowed) == "1"


async def test_a_caller_racing_itself_is_refused_at_once(shop: tuple[FastAPI, Gateway]) -> None:
    app, gateway = shop
    async with connect(app) as first, connect(app) as second, anyio.create_task_group() as tg:
        tg.start_soon(run_script, first, "await api.debug.slow({seconds: 0.5}); 1")
        await _until(lambda: bool(gateway.scripts and gateway.scripts.sandbox.busy_pids))
        started = time.monotonic()
        refused = await run_script(second, "1")
        assert time.monotonic() - started < 0.3
    assert refused.is_error and text(refused).startswith("you already have 1 script running")


async def test_callers_in_process_are_told_apart_by_their_credentials() -> None:
    _, gateway = make_gateway()
    headers = {"x-api-key": ADMIN_KEY}
    async with running(gateway), anyio.create_task_group() as tg:
        tg.start_soon(gateway.call_tool, headers, "run_script", {"code": "await api.debug.slow({seconds: 0.5})"})
        await _until(lambda: bool(gateway.scripts and gateway.scripts.sandbox.busy_pids))
        refused = await gateway.call_tool(headers, "run_script", {"code": "1"})
        other = await gateway.call_tool({"x-api-key": MEMBER_KEY}, "run_script", {"code": "'bob'"})
    assert refused.is_error and refused.texts[0].startswith("you already have 1 script running")
    assert not other.is_error and other.texts == ("bob",)


async def test_two_callers_run_scripts_at_the_same_time(shop: tuple[FastAPI, Gateway]) -> None:
    app, _ = shop
    results: dict[str, types.CallToolResult] = {}

    async def run(key: str) -> None:
        async with connect(app, key=key) as client:
            results[key] = await run_script(client, "(await api.debug.slow({seconds: 0.4})).slept")

    started = time.monotonic()
    async with anyio.create_task_group() as tg:
        tg.start_soon(run, ADMIN_KEY)
        tg.start_soon(run, MEMBER_KEY)
    assert time.monotonic() - started < 0.75
    assert [text(results[key]) for key in (ADMIN_KEY, MEMBER_KEY)] == ["0.4", "0.4"]


async def test_a_script_that_finds_no_slot_is_told_to_retry_shortly() -> None:
    app, gateway = make_gateway(ScriptConfig(limits=ScriptLimits(timeout=4.0, max_concurrent=1, slot_wait=0.1)))
    async with (
        running(gateway),
        connect(app) as admin,
        connect(app, key=MEMBER_KEY) as member,
        anyio.create_task_group() as tg,
    ):
        # long enough that the second script still finds the slot taken on a loaded machine
        tg.start_soon(run_script, admin, "await api.debug.slow({seconds: 1.5}); 1")
        await _until(lambda: bool(gateway.scripts and gateway.scripts.sandbox.busy_pids))
        busy = await run_script(member, "1")
    assert busy.is_error and "retry shortly" in text(busy)


async def test_the_gateway_keeps_serving_other_callers_during_hostile_scripts() -> None:
    # The hostile scripts run 2 s, so that a call and a script of another caller, answered within 1.5 s on a
    # loaded two-core machine (~0.05 s idle), are answered while they run.
    hostile_timeout = 2.0
    app, gateway = make_gateway(ScriptConfig(limits=replace(SHORT, timeout=hostile_timeout)))
    hostile = {
        "loop": "for (;;) {}",
        "regex": "/(a+)+$/.test('a'.repeat(40) + 'b')",
        "memory": "let s = 'x'; for (;;) s += s",
    }
    async with running(gateway), serve_http(app, lifespan="off") as base:
        for name, code in hostile.items():
            outcome: list[tuple[types.CallToolResult, float]] = []
            async with anyio.create_task_group() as tg, _http_client(base, MEMBER_KEY) as member:
                tg.start_soon(_attack, base, code, outcome)
                with anyio.fail_after(1.5):
                    order = await member.call_tool(
                        "call_function", {"name": "orders.get_order", "args": {"order_id": 3}}
                    )
                    script = await run_script(member, "(await api.users.get_current_user()).name")
                assert json.loads(text(order))["id"] == 3
                assert not script.is_error, text(script)
            ((result, elapsed),) = outcome
            assert result.is_error, name
            assert text(result).startswith("The script failed: the script "), text(result)
            assert elapsed < hostile_timeout + 0.5, name


async def test_a_crash_in_a_called_function_reaches_on_error_and_the_script_sees_a_generic_error() -> None:
    reported = Reported()
    app, gateway = make_gateway(
        additions=Additions(composites=[broken_report]), observability=Observability(on_error=reported)
    )
    async with running(gateway), connect(app) as client:
        result = await run_script(client, "try { await api.reports.broken_report() } catch (e) { return e.message }")
    assert text(result) == (
        "the call to reports.broken_report failed inside the server, which reported it; try again later"
    )
    assert [(tool, str(error)) for tool, error in reported.errors] == [("run_script", "the report's code has a bug")]


async def test_with_writes_allowed_scripts_can_change_data_and_the_tool_says_so() -> None:
    app, gateway = make_gateway(ScriptConfig(limits=LIMITS, allow_writes=True))
    code = """
    const order = await api.orders.create_order({customer_id: 1, items: [{product_id: 1, quantity: 2}]});
    const cancelled = await api.orders.cancel_order({order_id: order.id});
    [order.status, cancelled.status];
    """
    async with running(gateway), connect(app) as client:
        tool = next(tool for tool in (await client.list_tools()).tools if tool.name == "run_script")
        result = await run_script(client, code)
    assert tool.annotations is not None
    assert (tool.annotations.read_only_hint, tool.annotations.destructive_hint) == (False, True)
    assert json.loads(text(result)) == ["pending", "cancelled"]


async def test_the_scripts_flag_serves_run_script_over_stdio() -> None:
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "gateway.cli", "stdio", "--scripts"],
        env={"MCP_GATEWAY_TOKEN": MEMBER_KEY},
        cwd=REPO,
    )
    async with Client(server, mode="legacy") as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        result = await run_script(client, "const me = await api.users.get_current_user(); [me.name, me.role]")
    assert names[:6] == [*FIXED, "run_script"]
    assert json.loads(text(result)) == ["Bob Okafor", "member"]


def test_enabling_scripts_without_whoami_is_a_configuration_error() -> None:
    with pytest.raises(ConfigError, match="run_script needs whoami"):
        Gateway(app=create_app(), spec=demo_catalog(), scripts=ScriptConfig())


def test_without_a_script_config_there_is_no_run_script() -> None:
    gateway = Gateway(app=create_app(), spec=demo_catalog(), whoami="users.get_current_user")
    assert "run_script" not in [tool.name for tool in gateway.tools()]


def test_the_result_comes_first_and_the_output_cap_cuts_the_logs() -> None:
    result = ScriptResult(value={"total": 3}, text='{"total":3}', logs=tuple("x" * 100 for _ in range(40)))
    rendered = render(result, 1000)
    (content,) = rendered.texts
    assert content.startswith('{"total":3}\n\n--- console (40 lines) ---\n')
    assert content.endswith("… [output cut at the size limit]")
    assert len(content.encode()) <= 1000


def test_a_failure_is_rendered_for_the_agent_with_what_to_do() -> None:
    failure = ScriptFailure(kind="timeout", message="the script did not finish within 5 s")
    rendered = render(ScriptResult(failure=failure, dropped_logs=3), 2000)
    assert rendered.is_error
    assert rendered.texts == (
        "The script failed: the script did not finish within 5 s.\n\n--- console (0 lines, 3 more not kept) ---\n",
    )


async def _attack(base: str, code: str, outcome: list[tuple[types.CallToolResult, float]]) -> None:
    """Run a hostile script as the admin over HTTP; record its result and how long it took."""
    async with _http_client(base, ADMIN_KEY) as admin:
        started = time.monotonic()
        outcome.append((await run_script(admin, code), time.monotonic() - started))


@asynccontextmanager
async def _http_client(base: str, key: str) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(headers={"authorization": f"Bearer {key}"}, timeout=10) as http,
        Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client,
    ):
        yield client


async def _until(condition: Any, timeout: float = 2.0) -> None:
    """Wait until `condition()` holds (a script reaching its worker has no event to wait on)."""
    with anyio.fail_after(timeout):
        while not condition():
            await anyio.sleep(0.005)
