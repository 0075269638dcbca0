"""Typed scripts through the official `mcp` client: the TypeScript declarations of a caller's `api` (the resource
catalog://types, one module's, describe_function's format 'typescript'), and run_script refusing static calls of
functions and arguments that do not exist before anything runs, each from the caller's own view."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import mcp_types as types
import pytest
from fastapi import FastAPI
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from catalog.builder import load_catalog
from catalog.model import Catalog, Function
from catalog.typescript import declarations
from demo import ADMIN_KEY, MEMBER_KEY, create_app
from gateway.gateway import Gateway
from gateway.limits import Limits
from gateway.options import Output
from gateway.policy import Access, Caller
from gateway.requests import RequestInfo
from gateway.tools.scripts import ScriptConfig
from sandbox import ScriptLimits
from tests.corpus import corpus_catalog

pytestmark = pytest.mark.anyio

LIMITS = ScriptLimits(timeout=3.0, max_concurrent=2, slot_wait=0.1)
HIDDEN = "orders.get_order_invoice"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@functools.cache
def demo_catalog() -> Catalog:
    return load_catalog(create_app(debug_routes=True))


def admins_see_invoices(caller: Caller, function: Function) -> bool:
    """Only the admin's key sees orders.get_order_invoice."""
    return function.name != HIDDEN or caller.credentials.get("authorization") == f"Bearer {ADMIN_KEY}"


def make_gateway(**options: Any) -> tuple[FastAPI, Gateway]:
    app = create_app(debug_routes=True)
    defaults: dict[str, Any] = {
        "app": app,
        "whoami": "users.get_current_user",
        "spec": demo_catalog(),
        "limits": Limits(timeout=2.0),
        "scripts": ScriptConfig(limits=LIMITS),
    }
    gateway = Gateway(**{**defaults, **options})
    gateway.mount(app, "/mcp")
    return app, gateway


@asynccontextmanager
async def connect(app: FastAPI, key: str = ADMIN_KEY) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(transport=httpx2.ASGITransport(app), headers={"authorization": f"Bearer {key}"}) as http,
        Client(streamable_http_client("http://localhost/mcp", http_client=http)) as client,
    ):
        yield client


def text(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def read(client: Client, uri: str) -> str:
    contents = (await client.read_resource(uri)).contents[0]
    assert isinstance(contents, types.TextResourceContents)
    assert contents.mime_type == "text/x-typescript"
    return contents.text


@pytest.fixture(scope="module")
async def shop() -> AsyncIterator[tuple[FastAPI, Gateway]]:
    app, gateway = make_gateway(access=Access(visible=admins_see_invoices))
    async with gateway.lifespan():
        yield app, gateway


# The declarations


async def test_the_types_resource_declares_the_callers_whole_api(shop: tuple[FastAPI, Gateway]) -> None:
    app, _ = shop
    async with connect(app) as admin:
        listed = [resource.uri for resource in (await admin.list_resources()).resources]
        whole = await read(admin, "catalog://types")
    assert "catalog://types" in listed
    assert whole == declarations(demo_catalog()).text  # the demo fits: nothing left out, no note
    assert "    get_order_invoice(args: {\n" in whole


async def test_a_modules_types_are_that_modules_functions_and_the_types_they_use(
    shop: tuple[FastAPI, Gateway],
) -> None:
    app, _ = shop
    async with connect(app) as admin:
        orders = await read(admin, "catalog://types/orders")
        with pytest.raises(MCPError) as unknown:
            await read(admin, "catalog://types/order")
        completed = await admin.complete(
            types.ResourceTemplateReference(uri="catalog://types/{module}"), {"name": "module", "value": "or"}
        )
    catalog = demo_catalog()
    assert orders == declarations(catalog, catalog.module("orders").functions).text
    assert "declare const api: {\n  orders: {\n" in orders and "  customers: {" not in orders
    assert "interface Order {" in orders
    assert unknown.value.error.code == types.INVALID_PARAMS and "orders" in unknown.value.error.message
    assert completed.completion.values == ["orders"]


async def test_describe_function_gives_typescript_declarations_on_request(shop: tuple[FastAPI, Gateway]) -> None:
    app, _ = shop
    async with connect(app) as admin:
        described = await admin.call_tool(
            "describe_function", {"names": ["orders.get_order", "orders.get_ordr"], "format": "typescript"}
        )
        as_text = await admin.call_tool("describe_function", {"names": ["orders.get_order"], "format": "text"})
        nothing = await admin.call_tool("describe_function", {"names": ["orders.nope"], "format": "typescript"})
    catalog = demo_catalog()
    head, _, rest = text(described).partition("\n")
    assert head.startswith("// No function named 'orders.get_ordr'. Closest: orders.get_order")
    assert rest == declarations(catalog, [catalog.function("orders.get_order")]).text
    assert text(as_text).startswith("orders.get_order(order_id: integer) -> Order")
    assert nothing.is_error and text(nothing).startswith("// No function named 'orders.nope'.")


async def test_run_scripts_description_points_to_the_declarations(shop: tuple[FastAPI, Gateway]) -> None:
    app, _ = shop
    async with connect(app) as admin:
        tools = {tool.name: tool for tool in (await admin.list_tools()).tools}
    assert "format 'typescript' (all functions: the resource catalog://types)" in (
        tools["run_script"].description or ""
    )
    assert tools["describe_function"].input_schema["properties"]["format"]["enum"] == ["text", "typescript"]


async def test_a_hidden_function_is_in_no_declaration_of_the_caller(shop: tuple[FastAPI, Gateway]) -> None:
    app, _ = shop
    async with connect(app, MEMBER_KEY) as member:
        whole = await read(member, "catalog://types")
        orders = await read(member, "catalog://types/orders")
        described = await member.call_tool(
            "describe_function", {"names": [HIDDEN, "orders.get_order"], "format": "typescript"}
        )
    for declared in (whole, orders, text(described)):
        assert "get_order_invoice(" not in declared
    assert text(described).startswith(f"// No function named '{HIDDEN}'. Closest: orders.get_order")


# The static check


async def test_a_call_of_a_function_that_does_not_exist_is_refused_before_the_script_runs(
    shop: tuple[FastAPI, Gateway],
) -> None:
    app, _ = shop
    code = "const order = await api.orders.get_ordr({order_id: 1});\norder.id"
    async with connect(app) as admin:
        refused = await admin.call_tool("run_script", {"code": code})
    assert refused.is_error
    assert text(refused) == (
        "The script was not run: line 1: api.orders has no function 'get_ordr'; did you mean api.orders.get_order, "
        "api.orders.create_order, api.orders.get_order_invoice? Nothing ran: fix these calls and run the script "
        "again. describe_function with format 'typescript' gives the functions' exact names and arguments (all of "
        "them: the resource catalog://types)."
    )


async def test_an_unknown_argument_is_refused_with_the_functions_own_arguments(shop: tuple[FastAPI, Gateway]) -> None:
    app, _ = shop
    code = "await api.orders.list_orders({status: 'paid',\n  customer: 1})"
    async with connect(app) as admin:
        refused = await admin.call_tool("run_script", {"code": code})
    assert refused.is_error
    assert text(refused).startswith(
        "The script was not run: line 2: api.orders.list_orders takes no argument 'customer'; did you mean "
        "'customer_id'? (its arguments: status, customer_id, limit, cursor). Nothing ran"
    )


async def test_the_refusal_suggests_only_the_callers_own_functions(shop: tuple[FastAPI, Gateway]) -> None:
    app, _ = shop
    code = "await api.orders.get_order_invoic({order_id: 1})"
    async with connect(app, MEMBER_KEY) as member, connect(app) as admin:
        for_member = text(await member.call_tool("run_script", {"code": code}))
        for_admin = text(await admin.call_tool("run_script", {"code": code}))
    assert "api.orders.get_order_invoice" in for_admin.split("did you mean")[1]
    assert "get_order_invoice" not in for_member.replace("'get_order_invoic'", "")
    assert for_member.startswith("The script was not run: line 1: api.orders has no function 'get_order_invoic'")


async def test_a_script_whose_calls_check_runs_as_before(shop: tuple[FastAPI, Gateway]) -> None:
    app, _ = shop
    code = """
    // api.orders.nope() in a comment, and in a string: 'api.orders.nope()'
    const page = await api.orders.list_orders({status: 'paid', limit: 2});
    const key = 'order_id';
    const first = await api['orders']['get_order']({[key]: page.items[0].id});
    [page.items.length, first.id === page.items[0].id]
    """
    async with connect(app) as admin:
        result = await admin.call_tool("run_script", {"code": code})
    assert not result.is_error, text(result)
    assert text(result) == "[2,true]"


# Real documents


@pytest.mark.parametrize("name", ["github-api.github.com.json", "stripe-spec3.yaml"])
async def test_a_large_apis_types_keep_to_the_output_cap_and_say_what_was_left_out(name: str) -> None:
    catalog = corpus_catalog(name)
    gateway = Gateway(spec=catalog, upstream="https://api.example.com", output=Output(max_output_bytes=24_000))
    caller = gateway.policy.of(RequestInfo(transport="in-process"))
    whole = await gateway.resources.read("catalog://types", caller)
    module = catalog.modules[0].name
    one = await gateway.resources.read(f"catalog://types/{module}", caller)
    for contents in (whole, one):
        assert contents.text is not None and len(contents.text.encode()) <= 24_000
    assert whole.text is not None and "// Cut at the size limit: " in whole.text
    assert "read catalog://types/{module} for one module." in whole.text
