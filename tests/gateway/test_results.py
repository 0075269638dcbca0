"""What tool results look like to an agent: the output cap on every tool, structured content, compact encoding.

Driven through the official `mcp` client in-process, on the demo shop and on the corpus documents.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
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
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from catalog.composite import Invoker, composite
from catalog.schemas import inline_refs
from demo import ADMIN_KEY, create_app
from gateway.gateway import Gateway
from gateway.options import Additions, Output
from gateway.rest.lifespan import app_lifespan
from gateway.tools._compact import compact_text
from gateway.tools.results import value_result
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


def resource_text(result: types.ReadResourceResult) -> str:
    block = result.contents[0]
    assert isinstance(block, types.TextResourceContents)
    return block.text


def stripe(**options: Any) -> Gateway:
    return Gateway(spec=corpus_catalog("stripe-spec3.yaml"), upstream="https://api.stripe.com", **options)


@pytest.mark.slow
async def test_search_describe_and_explain_keep_to_the_output_cap_and_say_how_to_narrow() -> None:
    async with client_of(stripe(output=Output(max_output_bytes=4000))) as client:
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
    async with client_of(stripe(output=Output(max_output_bytes=1000))) as client:
        modules = text(await client.call_tool("search_functions", {}))
        listing = text(await client.call_tool("search_functions", {"module": "subscriptions"}))
        read = resource_text(await client.read_resource("catalog://modules/subscriptions"))
    assert len(modules.encode()) <= 1000 and "give one module to list its functions" in modules
    assert len(listing.encode()) <= 1000 and "module='subscriptions'" in listing
    assert read == listing


@pytest.mark.slow
async def test_resource_reads_keep_to_the_output_cap_and_read_as_the_tools_answer() -> None:
    async with client_of(stripe(output=Output(max_output_bytes=4000))) as client:
        term = resource_text(await client.read_resource("catalog://terms/invoice"))
        function = resource_text(
            await client.read_resource("catalog://functions/subscriptions.post_subscriptions_subscription_exposed_id")
        )
        module = resource_text(await client.read_resource("catalog://modules/customers"))
        overview = resource_text(await client.read_resource("catalog://overview"))
        snapshot = resource_text(await client.read_resource("catalog://snapshot"))
        explained = text(await client.call_tool("explain_term", {"name": "invoice"}))
        described = text(
            await client.call_tool(
                "describe_function", {"names": ["subscriptions.post_subscriptions_subscription_exposed_id"]}
            )
        )
        listed = text(await client.call_tool("search_functions", {"module": "customers"}))
    for answer in (term, function, module, overview):
        assert len(answer.encode()) <= 4000
    assert all("\n… [cut: " in answer for answer in (term, function, overview))
    assert (term, function, module) == (explained, described, listed)
    assert "explain_term('invoice.<field>') explains one field" in term
    assert "read catalog://modules/{module} for one module's functions" in overview
    # The snapshot is a JSON document, which a cut would break: it is read whole.
    assert len(snapshot.encode()) > 4000 and json.loads(snapshot)["format"] == 1


class Total(BaseModel):
    orders: int
    total_cents: int


@composite("reports", summary="Add up the totals of some orders")
async def orders_total(call: Invoker, order_ids: list[int]) -> Total:
    orders = [await call.call("orders.get_order", {"order_id": order_id}) for order_id in order_ids]
    return Total(orders=len(orders), total_cents=sum(order["total_cents"] for order in orders))


def shop(**options: Any) -> Gateway:
    return Gateway(app=create_app(), whoami="users.get_current_user", **options)


async def test_a_composite_whose_input_is_not_an_object_takes_it_as_one_argument_named_after_the_parameter() -> None:
    gateway = shop(tools=["reports.orders_total"], additions=Additions(composites=[orders_total]))
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


def test_promoted_tools_inline_their_refs_and_keep_defs_only_for_recursion() -> None:
    gateway = shop(tools=["orders.create_order", "orders.get_order"])
    specs = {spec.name: spec for spec in gateway.tools()}
    created = specs["orders-create_order"]
    assert "$defs" not in created.input_schema
    assert "$ref" not in json.dumps(created.input_schema)
    assert created.input_schema["properties"]["items"]["items"]["type"] == "object"
    output = specs["orders-get_order"].output_schema
    assert output is not None and output["type"] == "object" and "$defs" not in output
    recursive = inline_refs(
        {
            "$ref": "#/$defs/Node",
            "$defs": {
                "Node": {
                    "type": "object",
                    "properties": {"next": {"$ref": "#/$defs/Node"}, "tag": {"$ref": "#/$defs/Tag"}},
                },
                "Tag": {"type": "string"},
            },
        },
        max_nodes=100,
    )
    assert recursive["$defs"] == {
        "Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}, "tag": {"type": "string"}}}
    }


async def test_promoted_tools_and_composites_answer_structured_content_that_matches_their_output_schema() -> None:
    gateway = shop(tools=["orders.get_order", "reports.orders_total"], additions=Additions(composites=[orders_total]))
    async with client_of(gateway, ADMIN) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        # The SDK client validates structured content against the listed outputSchema, and fails the call if not.
        order = await client.call_tool("orders-get_order", {"order_id": 3})
        total = await client.call_tool("reports-orders_total", {"order_ids": [1, 2]})
    assert listed["orders-get_order"].output_schema is not None
    assert listed["reports-orders_total"].output_schema is not None
    assert not order.is_error and order.structured_content is not None and order.structured_content["id"] == 3
    assert total.structured_content == json.loads(text(total))


def lying_api() -> tuple[Starlette, dict[str, Any]]:
    """An API whose document promises {id: integer, name: string} and which answers {"id": "seven"}."""

    async def thing(request: Request) -> JSONResponse:
        return JSONResponse({"id": "seven"})

    document = {
        "openapi": "3.0.3",
        "info": {"title": "Things", "version": "1"},
        "paths": {
            "/things/{id}": {
                "get": {
                    "operationId": "get_thing",
                    "tags": ["things"],
                    "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}},
                        }
                    },
                }
            }
        },
        "components": {
            "schemas": {
                "Thing": {
                    "type": "object",
                    "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
                    "required": ["id", "name"],
                }
            }
        },
    }
    return Starlette(routes=[Route("/things/{id}", thing)]), document


async def test_an_answer_the_document_does_not_describe_comes_as_text_and_the_operator_is_told_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app, document = lying_api()
    gateway = Gateway(app=app, spec=document, tools=["things.get_thing"])
    with caplog.at_level("WARNING", logger="gateway.tools.results"):
        async with client_of(gateway) as client:
            first = await client.call_tool("things-get_thing", {"id": "7"})
            second = await client.call_tool("things-get_thing", {"id": "7"})
            plain = await client.call_tool("call_function", {"name": "things.get_thing", "args": {"id": "7"}})
    for result in (first, second):
        assert result.is_error and result.structured_content is None
        assert json.loads(text(result)) == {"id": "seven"}
        assert "document does not describe" in "".join(
            block.text for block in result.content if isinstance(block, types.TextContent)
        )
    assert not plain.is_error
    warnings = [record for record in caplog.records if "things.get_thing" in record.getMessage()]
    assert len(warnings) == 1 and "get_thing" in warnings[0].getMessage()


def changing_api(answers: list[Any]) -> tuple[Starlette, dict[str, Any]]:
    """The lying API's document, served by an app that gives `answers` in turn."""
    _, document = lying_api()
    given = iter(answers)

    async def thing(request: Request) -> JSONResponse:
        return JSONResponse(next(given))

    thing_schema = document["components"]["schemas"]["Thing"]
    thing_schema["properties"]["seen"] = {"type": "string", "format": "date-time"}
    return Starlette(routes=[Route("/things/{id}", thing)]), document


async def test_after_a_conforming_answer_each_later_one_is_still_held_to_the_document() -> None:
    good = {"id": 7, "name": "seven"}
    app, document = changing_api([good, {"id": "seven"}, good])
    gateway = Gateway(app=app, spec=document, tools=["things.get_thing"])
    async with client_of(gateway) as client:
        answers = [await client.call_tool("things-get_thing", {"id": "7"}) for _ in range(3)]
    assert [answer.structured_content for answer in answers] == [good, None, good]
    assert answers[1].is_error and "document does not describe" in "".join(
        block.text for block in answers[1].content if isinstance(block, types.TextContent)
    )


async def test_an_answer_that_fits_the_output_schema_but_breaks_the_documents_format_comes_as_text(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The output schema leaves `format` to the client (an annotation in JSON Schema); openapi-core checks it.
    wrong = {"id": 7, "name": "seven", "seen": "yesterday"}
    app, document = changing_api([wrong, wrong])
    gateway = Gateway(app=app, spec=document, tools=["things.get_thing"])
    with caplog.at_level("WARNING", logger="gateway.tools.results"):
        async with client_of(gateway) as client:
            answers = [await client.call_tool("things-get_thing", {"id": "7"}) for _ in range(2)]
    assert all(answer.is_error and answer.structured_content is None for answer in answers)
    assert [json.loads(text(answer)) for answer in answers] == [wrong, wrong]
    warnings = [record.getMessage() for record in caplog.records if "things.get_thing" in record.getMessage()]
    assert len(warnings) == 1 and "date-time" in warnings[0]


def test_openapi_core_is_not_imported_until_an_answer_is_checked() -> None:
    probe = "import sys, gateway.cli, gateway.gateway; print(sorted(m for m in sys.modules if m.startswith('openapi')))"
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[]"


def test_the_compact_encoding_writes_like_objects_as_a_header_and_rows_and_keeps_json_where_it_saves_little() -> None:
    listing = {
        "items": [
            {"id": 1, "name": "Mug, large", "owner": {"login": "ada"}, "tags": ["a", "b"]},
            {"id": 2, "name": "Tee", "owner": {"login": "grace"}, "tags": []},
            {"id": 3, "name": "", "owner": {"login": "alan"}},
        ],
        "next": None,
    }
    assert compact_text(listing) == (
        "items[3]{id,name,owner.login,tags}:\n"
        '  1,"Mug, large",ada,["a","b"]\n'
        "  2,Tee,grace,[]\n"
        '  3,"",alan,\n'
        "next: null"
    )
    assert compact_text({"id": 1, "name": "Tee"}) is None  # one small object: JSON is as short
    assert '  "12"\n  "true"' in (compact_text([{"number": "12"}, {"number": "true"}] * 3) or "")


async def test_with_compact_results_a_listing_comes_as_a_table_and_the_call_tools_say_how_to_read_it() -> None:
    async with client_of(shop(tools=["products.list_products"], output=Output(compact_results=True)), ADMIN) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        listed = await client.call_tool("call_function", {"name": "products.list_products", "args": {"limit": 3}})
        promoted = await client.call_tool("products-list_products", {"limit": 3})
        single = await client.call_tool("call_function", {"name": "products.get_product", "args": {"product_id": 1}})
    assert "`key[N]{a,b,c}:`" in (tools["call_function"].description or "")
    assert "`key[N]{a,b,c}:`" in (tools["products-list_products"].description or "")
    assert text(listed).startswith("items[3]{id,sku,name,")
    assert not promoted.is_error and text(promoted).startswith("items[3]{")
    assert promoted.structured_content is not None and len(promoted.structured_content["items"]) == 3
    assert json.loads(text(single))["id"] == 1  # under 20% saved: JSON
    async with client_of(shop(), ADMIN) as client:
        plain = await client.call_tool("call_function", {"name": "products.list_products", "args": {"limit": 3}})
    assert json.loads(text(plain))["items"][0]["id"]


def _nested(levels: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(levels - 1):
        value = {"x": value}
    return {"x": value} if levels else leaf


def test_structured_content_goes_with_values_up_to_100_levels_deep_and_never_deeper() -> None:
    function = shop().catalog.function("orders.get_order")
    braces = {"note": "{[" * 200, "items": [{"a": [1]}]}  # brackets in strings are not levels
    for value, structured in ((_nested(100), True), (_nested(101), False), (braces, True)):
        result = value_result(function, value, max_output_bytes=1_000_000)
        assert (result.structured is not None) is structured
        assert json.loads(result.texts[0]) == value
    compact = {"rows": [{"id": n, "deep": _nested(100)} for n in range(3)]}
    assert value_result(function, compact, max_output_bytes=1_000_000, compact=True).structured is None


async def test_an_answer_is_held_to_the_documents_patterns_in_linear_time() -> None:
    # Python's backtracking `re` takes minutes on this answer (twice as long for each more "a"); RE2 no time.
    hostile = {"id": 7, "name": "a" * 31 + "!"}
    app, document = changing_api([hostile])
    document["components"]["schemas"]["Thing"]["properties"]["name"]["pattern"] = "^(a+)+$"
    gateway = Gateway(app=app, spec=document, tools=["things.get_thing"])
    async with client_of(gateway) as client:
        started = time.perf_counter()
        answer = await client.call_tool("things-get_thing", {"id": "7"})
        took = time.perf_counter() - started
    assert answer.is_error and answer.structured_content is None
    assert json.loads(text(answer)) == hostile
    assert took < 10, f"took {took:.1f} s"
