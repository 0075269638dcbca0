"""Resources, prompts and completions of the gateway, through the official `mcp` client over HTTP and stdio."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from catalog.snapshot import dump_snapshot
from demo import ADMIN_KEY, create_app
from gateway.errors import ConfigError
from gateway.gateway import Gateway
from gateway.mcp.prompts import Prompt, PromptArgument
from gateway.mcp.toolspec import TextContent
from gateway.options import Additions, Output
from gateway.requests import RequestInfo
from gateway.snapshot.check import gateway_snapshot

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
MODES = ("legacy", "2026-07-28")
#: A request from this process, which sees everything where no access rule says otherwise.
OPERATOR = RequestInfo(transport="in-process")
LOCAL = "http://localhost/mcp"
REFUND = Prompt(
    name="refund_order",
    title="Refund an order",
    description="Refund one order, checking its state first.",
    arguments=(
        PromptArgument(name="order_id", description="The order to refund.", required=True),
        PromptArgument(name="reason", description="Why.", choices=("damaged", "late")),
    ),
    template="Refund order {order_id} ({reason}): get it with orders.get_order, check it is paid, then refund it.",
)


def _demo(**options: Any) -> Gateway:
    output = options.pop("output", Output())
    return Gateway(
        app=create_app(), whoami="users.get_current_user", **options, output=replace(output, name="demo-shop")
    )


@asynccontextmanager
async def _client(gateway: Gateway, mode: str = "legacy") -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(transport=httpx2.ASGITransport(gateway.asgi())) as http,
        Client(streamable_http_client(LOCAL, http_client=http), mode=mode) as client,
    ):
        yield client


async def _all_resources(client: Client) -> list[types.Resource]:
    listed: list[types.Resource] = []
    cursor: str | None = None
    while True:
        page = await client.list_resources(cursor=cursor)
        listed.extend(page.resources)
        cursor = page.next_cursor
        if cursor is None:
            return listed


def _text(contents: types.TextResourceContents | types.BlobResourceContents) -> str:
    assert isinstance(contents, types.TextResourceContents)
    return contents.text


async def _tool_text(gateway: Gateway, name: str, args: dict[str, Any]) -> str:
    result = await gateway.call_tool({}, name, args)
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def _big_spec(operations: int) -> dict[str, Any]:
    """A document with `operations` GET operations in one tag, for pagination and completion caps."""
    paths = {
        f"/items{index}": {
            "get": {
                "operationId": f"get_item_{index:03d}",
                "tags": ["items"],
                "responses": {"200": {"description": "ok"}},
            }
        }
        for index in range(operations)
    }
    return {"openapi": "3.1.0", "info": {"title": "Big", "version": "1"}, "paths": paths}


# Resources


@pytest.mark.parametrize("mode", MODES)
async def test_resources_list_shows_the_overview_snapshot_and_every_module_function_and_term(mode: str) -> None:
    gateway = _demo()
    async with _client(gateway, mode) as client:
        listed = await _all_resources(client)
        capabilities = client.server_capabilities
    uris = [resource.uri for resource in listed]
    catalog = gateway.catalog
    assert uris[:3] == ["catalog://overview", "catalog://snapshot", "catalog://types"]
    assert uris[3:] == [
        *(f"catalog://modules/{module.name}" for module in catalog.modules),
        *(f"catalog://functions/{function.name}" for function in catalog.functions()),
        *(f"catalog://terms/{term.name}" for term in catalog.terms),
    ]
    assert all(resource.name and resource.description and resource.mime_type for resource in listed)
    if mode == "legacy":  # a 2026-07-28 client learns capabilities only from server/discover
        assert capabilities.resources is not None and capabilities.resources.subscribe is True
        assert capabilities.prompts is not None and capabilities.completions is not None


@pytest.mark.parametrize("mode", MODES)
async def test_resources_read_as_the_tools_answer_them(mode: str) -> None:
    gateway = _demo()
    async with _client(gateway, mode) as client:
        overview = (await client.read_resource("catalog://overview")).contents[0]
        function = (await client.read_resource("catalog://functions/orders.get_order")).contents[0]
        module = (await client.read_resource("catalog://modules/orders")).contents[0]
        term = (await client.read_resource("catalog://terms/Order")).contents[0]
    assert (overview.uri, overview.mime_type, _text(overview)) == (
        "catalog://overview",
        "text/plain",
        gateway.instructions,
    )
    assert _text(function) == await _tool_text(gateway, "describe_function", {"names": ["orders.get_order"]})
    assert _text(module) == await _tool_text(gateway, "search_functions", {"module": "orders"})
    assert _text(term) == await _tool_text(gateway, "explain_term", {"name": "Order"})


async def test_the_snapshot_resource_is_the_committed_surface_and_the_reference_page_is_served_where_configured() -> (
    None
):
    plain, served = _demo(), _demo(output=Output(reference_path="/reference"))
    async with _client(plain) as client:
        snapshot = (await client.read_resource("catalog://snapshot")).contents[0]
        plain_uris = [resource.uri for resource in await _all_resources(client)]
    async with _client(served) as client:
        page = (await client.read_resource("catalog://reference")).contents[0]
        served_uris = [resource.uri for resource in await _all_resources(client)]
    assert snapshot.mime_type == "application/json"
    assert _text(snapshot) == dump_snapshot(gateway_snapshot(plain))
    assert "catalog://reference" not in plain_uris
    assert served_uris[:4] == ["catalog://overview", "catalog://reference", "catalog://snapshot", "catalog://types"]
    assert page.mime_type == "text/html"
    assert _text(page) == (await served.reference_app().rendered(served.policy.of(OPERATOR))).body.decode()


@pytest.mark.parametrize("mode", MODES)
async def test_an_unknown_resource_is_invalid_params_with_its_uri_and_the_closest_names(mode: str) -> None:
    async with _client(_demo(), mode) as client:
        with pytest.raises(MCPError) as function:
            await client.read_resource("catalog://functions/orders.get_ordr")
        with pytest.raises(MCPError) as other:
            await client.read_resource("test://nothing")
    assert function.value.code == other.value.code == types.INVALID_PARAMS
    assert function.value.data["uri"] == "catalog://functions/orders.get_ordr"
    assert "orders.get_order" in function.value.message
    assert other.value.data == {"uri": "test://nothing"}
    assert "resources/list" in other.value.message


async def test_resources_are_listed_in_pages_of_100_behind_cursors_and_a_forged_cursor_is_refused() -> None:
    gateway = Gateway(spec=_big_spec(250), upstream="https://big.example.com")
    async with _client(gateway) as client:
        first = await client.list_resources()
        listed = await _all_resources(client)
        with pytest.raises(MCPError) as forged:
            await client.list_resources(cursor="not-a-cursor")
    assert len(first.resources) == 100 and first.next_cursor is not None
    assert len(listed) == len(gateway.resources.entries(gateway.policy.of(OPERATOR))) == 3 + 1 + 250
    assert len({resource.uri for resource in listed}) == len(listed)
    assert forged.value.code == types.INVALID_PARAMS


@pytest.mark.parametrize("mode", MODES)
async def test_the_templates_are_listed_and_their_variables_complete_by_prefix(mode: str) -> None:
    async with _client(_demo(), mode) as client:
        templates = (await client.list_resource_templates()).resource_templates
        functions = await client.complete(
            types.ResourceTemplateReference(uri="catalog://functions/{function}"), {"name": "function", "value": "ord"}
        )
        parts = await client.complete(
            types.ResourceTemplateReference(uri="catalog://functions/{function}"),
            {"name": "function", "value": "get_o"},
        )
        modules = await client.complete(
            types.ResourceTemplateReference(uri="catalog://modules/{module}"), {"name": "module", "value": ""}
        )
        terms = await client.complete(
            types.ResourceTemplateReference(uri="catalog://terms/{term}"), {"name": "term", "value": "order"}
        )
        with pytest.raises(MCPError) as unknown:
            await client.complete(types.ResourceTemplateReference(uri="catalog://x/{y}"), {"name": "y", "value": ""})
    assert [template.uri_template for template in templates] == [
        "catalog://modules/{module}",
        "catalog://functions/{function}",
        "catalog://terms/{term}",
        "catalog://types/{module}",
    ]
    # Names that start with the prefix first, then those with a part that does.
    values = functions.completion.values
    assert values[:6] == [function.name for function in _demo().catalog.module("orders").functions]
    assert "customers.list_customer_orders" in values[6:]
    assert parts.completion.values == ["orders.get_order", "orders.get_order_invoice"]
    assert modules.completion.values == ["customers", "inventory", "orders", "products", "users"]
    assert "Order" in terms.completion.values and all(v.lower().startswith("order") for v in terms.completion.values)
    assert unknown.value.code == types.INVALID_PARAMS


async def test_completion_is_capped_at_100_values_and_says_there_are_more() -> None:
    gateway = Gateway(spec=_big_spec(250), upstream="https://big.example.com")
    async with _client(gateway) as client:
        found = await client.complete(
            types.ResourceTemplateReference(uri="catalog://functions/{function}"),
            {"name": "function", "value": "items"},
        )
    assert len(found.completion.values) == 100
    assert (found.completion.total, found.completion.has_more) == (250, True)


# Prompts


@pytest.mark.parametrize("mode", MODES)
async def test_the_built_in_prompts_teach_the_workflow_and_explore_a_module(mode: str) -> None:
    gateway = _demo(additions=Additions(prompts=[REFUND]))
    async with _client(gateway, mode) as client:
        listed = (await client.list_prompts()).prompts
        work = await client.get_prompt("work_with_api", {"task": "cancel order 3"})
        explore = await client.get_prompt("explore_module", {"module": "orders"})
        completed = await client.complete(
            types.PromptReference(name="explore_module"), {"name": "module", "value": "pro"}
        )
    assert [prompt.name for prompt in listed] == ["work_with_api", "explore_module", "refund_order"]
    assert listed[0].title == "Work with Demo Shop API"
    assert listed[1].arguments == [
        types.PromptArgument(name="module", description="The module to explore.", required=True)
    ]
    text = work.messages[0].content
    assert isinstance(text, types.TextContent) and work.messages[0].role == "user"
    assert gateway.instructions in text.text and text.text.endswith("The task: cancel order 3")
    assert "- orders (6)" in text.text
    listing = explore.messages[0].content
    assert isinstance(listing, types.TextContent)
    assert await _tool_text(gateway, "search_functions", {"module": "orders"}) in listing.text
    assert completed.completion.values == ["products"]


@pytest.mark.parametrize("mode", MODES)
async def test_an_operator_prompt_is_filled_in_and_its_choices_complete(mode: str) -> None:
    async with _client(_demo(additions=Additions(prompts=[REFUND])), mode) as client:
        got = await client.get_prompt("refund_order", {"order_id": "3", "reason": "late"})
        bare = await client.get_prompt("refund_order", {"order_id": "4"})
        reasons = await client.complete(types.PromptReference(name="refund_order"), {"name": "reason", "value": "d"})
        free = await client.complete(types.PromptReference(name="refund_order"), {"name": "order_id", "value": "1"})
    content, bare_content = got.messages[0].content, bare.messages[0].content
    assert isinstance(content, types.TextContent) and isinstance(bare_content, types.TextContent)
    assert content.text.startswith("Refund order 3 (late): get it")
    assert bare_content.text.startswith("Refund order 4 (): get it")
    assert got.description == REFUND.description
    assert (reasons.completion.values, free.completion.values) == (["damaged"], [])


@pytest.mark.parametrize(
    ("name", "arguments", "fragment"),
    [
        ("explore_modul", {"module": "orders"}, "unknown prompt 'explore_modul'; closest: explore_module"),
        ("explore_module", {}, "needs the argument 'module' (The module to explore.)"),
        ("explore_module", {"module": "orders", "mdule": "x"}, "takes no argument 'mdule'; closest: module"),
        ("explore_module", {"module": "ordrs"}, "'ordrs' is not a module for 'module'; closest: orders"),
        ("refund_order", {"order_id": "1", "reason": "bored"}, "'bored' is not a choice for 'reason'"),
    ],
)
async def test_prompts_get_refuses_bad_names_and_arguments_with_invalid_params_saying_what_to_send(
    name: str, arguments: dict[str, str], fragment: str
) -> None:
    async with _client(_demo(additions=Additions(prompts=[REFUND]))) as client:
        with pytest.raises(MCPError) as raised:
            await client.get_prompt(name, arguments)
    assert raised.value.code == types.INVALID_PARAMS
    assert fragment in raised.value.message


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"name": "has space"}, "must be 1-64 letters"),
        ({"description": " "}, "description must not be empty"),
        ({"template": "Hi {who}"}, "uses {who}, which is not one of its arguments"),
        ({"template": "Hi {order_id!r}"}, "must be a plain argument name"),
        ({"template": "Hi {"}, "the template is malformed"),
        ({"arguments": (PromptArgument(name="a"), PromptArgument(name="a"))}, "argument 'a' is given twice"),
        ({"arguments": ("order_id",)}, "must be a list of PromptArgument values"),
    ],
)
def test_an_operator_prompt_is_checked_when_made(options: dict[str, Any], fragment: str) -> None:
    fields: dict[str, Any] = {
        "name": "p",
        "description": "A prompt.",
        "template": "Order {order_id}",
        "arguments": (PromptArgument(name="order_id"),),
        **options,
    }
    with pytest.raises(ConfigError) as raised:
        Prompt(**fields)
    assert fragment in str(raised.value)


def test_prompt_arguments_and_names_that_clash_are_refused() -> None:
    with pytest.raises(ConfigError, match="identifier"):
        PromptArgument(name="order id")
    with pytest.raises(ConfigError, match="complete must be one of"):
        PromptArgument(name="x", complete="tools")  # type: ignore[arg-type]
    clash = Prompt(name="explore_module", description="Mine.", template="x")
    with pytest.raises(ConfigError, match="'explore_module' is given twice"):
        _demo(additions=Additions(prompts=[clash]))
    with pytest.raises(ConfigError, match=r"list of gateway\.Prompt values"):
        _demo(additions=Additions(prompts=["explore_module"]))  # type: ignore[list-item]


# stdio, the CLI as Claude Desktop starts it


async def test_over_stdio_the_cli_serves_resources_prompts_and_completions() -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("MCP_GATEWAY_")}
    env["MCP_GATEWAY_TOKEN"] = ADMIN_KEY
    server = StdioServerParameters(command=sys.executable, args=["-m", "gateway.cli", "stdio"], env=env, cwd=REPO)
    async with Client(server, mode="legacy") as client:
        uris = [resource.uri for resource in await _all_resources(client)]
        read = (await client.read_resource("catalog://functions/orders.get_order")).contents[0]
        prompts = [prompt.name for prompt in (await client.list_prompts()).prompts]
        explored = await client.get_prompt("explore_module", {"module": "orders"})
        completed = await client.complete(
            types.ResourceTemplateReference(uri="catalog://terms/{term}"), {"name": "term", "value": "Addr"}
        )
        snapshot = json.loads(_text((await client.read_resource("catalog://snapshot")).contents[0]))
    assert "catalog://modules/orders" in uris
    assert _text(read).startswith("orders.get_order(order_id: integer) -> Order")
    assert prompts == ["work_with_api", "explore_module"]
    assert explored.messages
    assert completed.completion.values == ["Address"]
    assert snapshot["server"]["name"] == "demo-shop"
