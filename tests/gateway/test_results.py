"""What tool results look like to an agent: the output cap on every tool, structured content, compact encoding.

Driven through the official `mcp` client in-process, on the demo shop and on the corpus documents.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from pydantic import BaseModel
from starlette.applications import Starlette

from catalog.composite import Caller, composite
from gateway.app import Gateway
from gateway.demo import ADMIN_KEY, create_app
from gateway.lifespan import app_lifespan
from tests.corpus import corpus_catalog

pytestmark = pytest.mark.anyio

ADMIN = {"authorization": f"Bearer {ADMIN_KEY}"}


@asynccontextmanager
async def client_of(gateway: Gateway, headers: dict[str, str] | None = None) -> AsyncIterator[Client]:
    """The official client connected in-process to `gateway` at /mcp of its app (or on its own)."""
    app = gateway.wrap(gateway.app or Starlette(), "/mcp")
    async with (
        app_lifespan(app),
        httpx2.AsyncClient(transport=httpx2.ASGITransport(app), headers=headers or {}) as http,
        Client(streamable_http_client("http://localhost/mcp", http_client=http)) as client,
    ):
        yield client


def text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def stripe(**options: Any) -> Gateway:
    return Gateway(catalog=corpus_catalog("stripe-spec3.yaml"), upstream="https://api.stripe.com", **options)


@pytest.mark.slow
async def test_search_describe_and_explain_keep_to_the_output_cap_and_say_how_to_narrow() -> None:
    async with client_of(stripe(max_output_bytes=4000)) as client:
        searched = text(await client.call_tool("search_functions", {"query": "charge", "limit": 50}))
        described = text(
            await client.call_tool(
                "describe_function",
                {"names": ["subscriptions.post_subscriptions_subscription_exposed_id", "charges.get_charges"]},
            )
        )
        explained = text(await client.call_tool("explain_term", {"name": "invoice"}))
        part = text(await client.call_tool("explain_term", {"name": "invoice.lines"}))
    for answer in (searched, described, explained):
        assert len(answer.encode()) <= 4000
    assert "smaller limit, or give a module" in searched
    # Whole lines only: every line before the note is a whole function line with its marks.
    assert all(line.endswith("]") for line in searched.split("\n… [cut:")[0].splitlines())
    assert "left out: " in described and "describe one function per call" in described
    assert "'charges.get_charges'; describe them in another call" in described
    assert "explain_term('invoice.<field>') explains one field" in explained
    assert part.startswith("invoice.lines — ") and "data: line_item[]" in part


@pytest.mark.slow
async def test_listing_the_modules_or_one_module_past_the_cap_says_to_search_with_a_query() -> None:
    async with client_of(stripe(max_output_bytes=1000)) as client:
        modules = text(await client.call_tool("search_functions", {}))
        listing = text(await client.call_tool("search_functions", {"module": "subscriptions"}))
    assert len(modules.encode()) <= 1000 and "give one module to list its functions" in modules
    assert len(listing.encode()) <= 1000 and "module='subscriptions'" in listing


class Total(BaseModel):
    orders: int
    total_cents: int


@composite("reports", summary="Add up the totals of some orders")
async def orders_total(call: Caller, order_ids: list[int]) -> Total:
    orders = [await call.call("orders.get_order", {"order_id": order_id}) for order_id in order_ids]
    return Total(orders=len(orders), total_cents=sum(order["total_cents"] for order in orders))


def shop(**options: Any) -> Gateway:
    return Gateway(app=create_app(), whoami="users.get_current_user", **options)


async def test_a_composite_whose_input_is_not_an_object_takes_it_as_one_argument_named_after_the_parameter() -> None:
    gateway = shop(composites=[orders_total], tools=["reports.orders_total"])
    async with client_of(gateway, ADMIN) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        called = await client.call_tool(
            "call_function", {"name": "reports.orders_total", "args": {"order_ids": [1, 2]}}
        )
        promoted = await client.call_tool("reports-orders_total", {"order_ids": [1]})
        refused = await client.call_tool("reports-orders_total", {"order_ids": "1"})
    schema = listed["reports-orders_total"].input_schema
    assert schema["required"] == ["order_ids"] and schema["properties"]["order_ids"]["type"] == "array"
    assert not called.is_error and json.loads(text(called))["orders"] == 2
    assert not promoted.is_error and json.loads(text(promoted))["orders"] == 1
    assert refused.is_error and "order_ids" in text(refused)
