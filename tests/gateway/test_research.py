"""ChatGPT's `search`/`fetch` pair over the demo shop, driven through the official `mcp` client.

OpenAI's contract (platform.openai.com/docs/mcp): `search(query)` and `fetch(id)`, each answering exactly one
text content item whose text is JSON: `{"results": [{"id", "title", "url"}]}` and `{"id", "title", "text",
"url", "metadata"}`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import cache
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from fastapi import FastAPI
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from catalog.builder import load_catalog
from catalog.model import Catalog, Function
from demo import ADMIN_KEY, MEMBER_KEY, create_app
from gateway.errors import ConfigError
from gateway.gateway import Gateway
from gateway.limits import Limits
from gateway.options import Output
from gateway.policy import Access, Caller
from gateway.reference import reference_page
from gateway.rest.lifespan import app_lifespan
from gateway.tools.research import DataSource, ResearchConfig
from tests.gateway.conftest import serve_http

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
REFERENCE = "https://shop.example.com/reference"
CUSTOMERS = DataSource(
    search="customers.list_customers",
    query_arg="q",
    fetch="customers.get_customer",
    id_arg="customer_id",
    url_template="https://shop.example.com/customers/{id}",
)
FIXED = ["whoami", "search_functions", "describe_function", "explain_term", "call_function"]


@cache
def demo_catalog() -> Catalog:
    """The demo shop's catalog, built once: building it is most of a gateway's construction time."""
    return load_catalog(create_app())


def make_gateway(research: bool | ResearchConfig, **options: Any) -> tuple[FastAPI, Gateway]:
    app = create_app()
    gateway = Gateway(
        app=app,
        spec=demo_catalog(),
        whoami="users.get_current_user",
        research=research,
        **options,
        limits=Limits(timeout=5.0),
    )
    gateway.mount(app, "/mcp")
    return app, gateway


@asynccontextmanager
async def connect(app: FastAPI, *, key: str | None = ADMIN_KEY) -> AsyncIterator[Client]:
    headers = {"authorization": f"Bearer {key}"} if key else {}
    async with (
        app_lifespan(app),
        httpx2.AsyncClient(transport=httpx2.ASGITransport(app), headers=headers) as http,
        Client(streamable_http_client("http://localhost/mcp", http_client=http), mode="legacy") as client,
    ):
        yield client


def only_text(result: types.CallToolResult) -> str:
    """The text of the one text content item OpenAI's contract allows."""
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def search_results(result: types.CallToolResult) -> list[dict[str, Any]]:
    """The results of a search answer, checked against the documented shape."""
    assert not result.is_error, only_text(result)
    payload = json.loads(only_text(result))
    assert list(payload) == ["results"]
    for hit in payload["results"]:
        assert set(hit) <= {"id", "title", "url"} and {"id", "title"} <= set(hit)
        assert all(isinstance(value, str) and value for value in hit.values())
    results: list[dict[str, Any]] = payload["results"]
    return results


def document(result: types.CallToolResult) -> dict[str, Any]:
    """The document of a fetch answer, checked against the documented shape."""
    assert not result.is_error, only_text(result)
    payload: dict[str, Any] = json.loads(only_text(result))
    assert {"id", "title", "text", "metadata"} <= set(payload) <= {"id", "title", "text", "url", "metadata"}
    assert all(isinstance(payload[key], str) for key in ("id", "title", "text"))
    assert isinstance(payload["metadata"], dict)
    return payload


# Listing


async def test_the_pair_is_listed_after_the_fixed_tools_with_openais_input_schemas_and_read_only_hints() -> None:
    app, _ = make_gateway(True, tools=["orders.get_order"])
    async with connect(app) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert list(tools) == [*FIXED, "search", "fetch", "orders-get_order"]
    assert tools["search"].input_schema == {
        "type": "object",
        "properties": {"query": {"type": "string", "description": "What to look for, in a few words."}},
        "required": ["query"],
    }
    assert tools["fetch"].input_schema == {
        "type": "object",
        "properties": {"id": {"type": "string", "description": "The id of a search result."}},
        "required": ["id"],
    }
    for name in ("search", "fetch"):
        annotations = tools[name].annotations
        assert annotations is not None and tools[name].title and annotations.title == tools[name].title
        hints = (annotations.read_only_hint, annotations.destructive_hint, annotations.idempotent_hint)
        assert hints == (True, False, True)
        assert annotations.open_world_hint is False


async def test_the_pair_is_off_by_default() -> None:
    _, gateway = make_gateway(False)
    assert [spec.name for spec in gateway.tools()] == FIXED


async def test_in_data_mode_the_pair_is_open_world_and_says_what_it_searches() -> None:
    _, gateway = make_gateway(ResearchConfig(data=CUSTOMERS))
    specs = {spec.name: spec for spec in gateway.tools()}
    assert (specs["search"].open_world, specs["search"].read_only, specs["fetch"].destructive) == (True, True, False)
    assert "List customers" in specs["search"].description


# Catalog mode


async def test_search_finds_functions_and_terms_with_ids_titles_and_reference_urls() -> None:
    app, _ = make_gateway(ResearchConfig(reference_url=REFERENCE))
    async with connect(app) as client:
        hits = search_results(await client.call_tool("search", {"query": "cancel an order"}))
    ids = [hit["id"] for hit in hits]
    assert ids[0] == "function:orders.cancel_order"
    assert "term:Order" in ids and ids.index("term:Order") > ids.index("function:orders.cancel_order")
    assert hits[0]["title"] == "orders.cancel_order — Cancel an order"
    assert hits[0]["url"] == f"{REFERENCE}#fn-orders.cancel_order"
    assert {hit["url"] for hit in hits if hit["id"] == "term:Order"} == {f"{REFERENCE}#term-Order"}


async def test_every_catalog_url_points_at_an_entry_of_the_served_reference_page() -> None:
    app, gateway = make_gateway(ResearchConfig(reference_url=REFERENCE))
    page = reference_page(gateway)
    async with connect(app) as client:
        hits = [
            hit
            for query in ("order", "customer", "stock level", "product image")
            for hit in search_results(await client.call_tool("search", {"query": query}))
        ]
    fragments = {hit["url"].removeprefix(f"{REFERENCE}#") for hit in hits}
    assert len(fragments) > 20
    assert [fragment for fragment in sorted(fragments) if f'id="{fragment}"' not in page] == []


async def test_with_a_served_reference_page_urls_use_the_host_the_client_called() -> None:
    app, _ = make_gateway(True, output=Output(reference_path="/reference"))
    async with connect(app) as client:
        hits = search_results(await client.call_tool("search", {"query": "cancel an order"}))
        fetched = document(await client.call_tool("fetch", {"id": hits[0]["id"]}))
    assert all(hit["url"].startswith("http://localhost/reference#") for hit in hits)
    assert fetched["url"] == hits[0]["url"]


async def test_search_puts_the_term_the_query_names_first() -> None:
    app, _ = make_gateway(True)
    async with connect(app) as client:
        hits = search_results(await client.call_tool("search", {"query": "orderstatus"}))
    assert hits[0]["id"] == "term:OrderStatus"
    assert hits[0]["title"].startswith("OrderStatus — Where an order is in its life")


async def test_without_a_reference_page_results_have_no_url_and_a_blank_query_finds_nothing() -> None:
    app, _ = make_gateway(True, output=Output(reference_path=""))
    async with connect(app) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        hits = search_results(await client.call_tool("search", {"query": "customer email"}))
        blank = search_results(await client.call_tool("search", {"query": "  "}))
    assert hits and all("url" not in hit for hit in hits)
    assert blank == []
    assert "url" not in (tools["search"].description or "")
    assert "url" not in (tools["fetch"].description or "")


async def test_search_and_fetch_serve_the_reference_page_by_default_so_every_hit_has_a_citable_url() -> None:
    app, gateway = make_gateway(True)
    async with connect(app) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        hits = search_results(await client.call_tool("search", {"query": "customer email"}))
        async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app)) as http:
            page = await http.get("http://localhost/reference")
    assert gateway.reference_path == "/reference"
    assert hits and all(hit["url"].startswith("http://localhost/reference#") for hit in hits)
    assert "url" in (tools["search"].description or "")
    assert page.status_code == 200


async def test_a_search_longer_than_the_catalog_reads_is_a_failed_result_saying_the_cap() -> None:
    app, _ = make_gateway(True)
    async with connect(app) as client:
        result = await client.call_tool("search", {"query": "orders " * 300})
    assert result.is_error
    assert only_text(result) == "the query is 2,099 characters; say the task in at most 1,000 (a few words work best)"


async def test_fetch_gives_exactly_the_text_describe_function_and_explain_term_give() -> None:
    app, _ = make_gateway(ResearchConfig(reference_url=REFERENCE))
    async with connect(app) as client:
        function = document(await client.call_tool("fetch", {"id": "function:orders.create_order"}))
        described = only_text(await client.call_tool("describe_function", {"names": ["orders.create_order"]}))
        term = document(await client.call_tool("fetch", {"id": "term:order"}))
        explained = only_text(await client.call_tool("explain_term", {"name": "Order"}))
    assert function["text"] == described
    assert function["id"] == "function:orders.create_order"
    assert function["url"] == f"{REFERENCE}#fn-orders.create_order"
    assert function["metadata"] == {
        "kind": "function",
        "module": "orders",
        "method": "POST",
        "path": "/orders",
        "read_only": False,
    }
    assert (term["id"], term["text"], term["url"]) == ("term:Order", explained, f"{REFERENCE}#term-Order")
    assert term["title"] == "Order — A customer's order."


@pytest.mark.parametrize(
    ("id_", "expected"),
    [
        ("orders.create_order", "ids look like 'function:orders.create' or 'term:Order'"),
        ("function:orders.cancle_order", "Closest: function:orders.cancel_order"),
        ("term:Ordr", "Closest: term:Order"),
    ],
)
async def test_fetch_of_an_unknown_id_is_a_tool_error_saying_how_ids_look(id_: str, expected: str) -> None:
    app, _ = make_gateway(True)
    async with connect(app) as client:
        result = await client.call_tool("fetch", {"id": id_})
    assert result.is_error
    assert expected in only_text(result)
    assert repr(id_) in only_text(result) and "search" in only_text(result)


# Data mode


def admins_see_customers(caller: Caller, function: Function) -> bool:
    return function.module != "customers" or caller.credentials.get("authorization") == f"Bearer {ADMIN_KEY}"


async def test_under_a_per_caller_surface_search_and_fetch_know_only_the_callers_functions() -> None:
    app, _ = make_gateway(True, access=Access(visible=admins_see_customers))
    async with connect(app, key=MEMBER_KEY) as member:
        mine = search_results(await member.call_tool("search", {"query": "get a customer"}))
        hidden = await member.call_tool("fetch", {"id": "function:customers.get_customer"})
        missing = await member.call_tool("fetch", {"id": "function:customers.get_customr"})
    async with connect(app, key=ADMIN_KEY) as admin:
        theirs = search_results(await admin.call_tool("search", {"query": "get a customer"}))
        shown_to_admin = document(await admin.call_tool("fetch", {"id": "function:customers.get_customer"}))
    assert "function:customers.get_customer" in [hit["id"] for hit in theirs]
    assert all(not hit["id"].startswith("function:customers.") for hit in mine)
    assert hidden.is_error and missing.is_error
    said = only_text(hidden).replace("customers.get_customer", "NAME")
    # The same words as for a name that does not exist; the closest names come from the caller's own functions.
    assert (
        said.split(" Closest:")[0] == only_text(missing).replace("customers.get_customr", "NAME").split(" Closest:")[0]
    )
    assert "customers." not in said
    assert shown_to_admin["metadata"]["module"] == "customers"


async def test_under_a_per_caller_surface_data_search_answers_only_callers_who_may_call_its_function() -> None:
    app, _ = make_gateway(ResearchConfig(data=CUSTOMERS), access=Access(visible=admins_see_customers))
    async with connect(app, key=MEMBER_KEY) as member:
        refused = await member.call_tool("search", {"query": "liskov"})
    async with connect(app, key=ADMIN_KEY) as admin:
        hits = search_results(await admin.call_tool("search", {"query": "liskov"}))
    assert refused.is_error and "no records with this caller's access" in only_text(refused)
    assert [hit["id"] for hit in hits] == ["10"]


async def test_data_search_returns_the_apis_records_with_the_callers_credentials() -> None:
    app, _ = make_gateway(ResearchConfig(data=CUSTOMERS))
    async with connect(app, key=MEMBER_KEY) as client:
        hits = search_results(await client.call_tool("search", {"query": "liskov"}))
        many = search_results(await client.call_tool("search", {"query": "example.org"}))
    assert hits == [
        {"id": "10", "title": "Barbara Liskov", "url": "https://shop.example.com/customers/10"},
    ]
    assert 1 < len(many) <= 10


async def test_data_search_without_credentials_fails_with_the_apis_401() -> None:
    app, _ = make_gateway(ResearchConfig(data=CUSTOMERS))
    async with connect(app, key=None) as client:
        result = await client.call_tool("search", {"query": "liskov"})
    assert result.is_error
    assert only_text(result).startswith("HTTP 401")


async def test_data_fetch_returns_one_records_text_title_and_url() -> None:
    app, _ = make_gateway(ResearchConfig(data=CUSTOMERS))
    async with connect(app) as client:
        fetched = document(await client.call_tool("fetch", {"id": "10"}))
        missing = await client.call_tool("fetch", {"id": "999"})
        malformed = await client.call_tool("fetch", {"id": "liskov"})
    assert (fetched["id"], fetched["title"]) == ("10", "Barbara Liskov")
    assert fetched["url"] == "https://shop.example.com/customers/10"
    record = json.loads(fetched["text"])
    assert (record["id"], record["email"]) == (10, "barbara.liskov@example.org")
    assert fetched["metadata"] == {"source": "customers.get_customer"}
    assert missing.is_error and only_text(missing).startswith("HTTP 404")
    assert malformed.is_error and "takes an integer 'customer_id'" in only_text(malformed)


async def test_data_mapping_picks_title_text_and_url_fields_and_passes_fixed_search_args() -> None:
    source = DataSource(
        search="customers.list_customers",
        query_arg="q",
        search_args={"limit": 2},
        fetch="customers.get_customer",
        id_arg="customer_id",
        items="items",
        title_field="email",
        text_field="shipping_address.city",
    )
    app, _ = make_gateway(ResearchConfig(data=source))
    async with connect(app) as client:
        hits = search_results(await client.call_tool("search", {"query": "example.org"}))
        fetched = document(await client.call_tool("fetch", {"id": "10"}))
    assert len(hits) == 2 and all(hit["title"].endswith("@example.org") and "url" not in hit for hit in hits)
    assert (fetched["title"], fetched["text"]) == ("barbara.liskov@example.org", "Cambridge")


async def test_over_real_uvicorn_the_data_pair_answers_with_the_callers_key() -> None:
    app, _ = make_gateway(ResearchConfig(data=CUSTOMERS))
    async with (
        serve_http(app) as base,
        httpx2.AsyncClient(headers={"authorization": f"Bearer {ADMIN_KEY}"}) as http,
        Client(streamable_http_client(f"{base}/mcp", http_client=http), mode="legacy") as client,
    ):
        hits = search_results(await client.call_tool("search", {"query": "dijkstra"}))
        fetched = document(await client.call_tool("fetch", {"id": hits[0]["id"]}))
    assert fetched["title"] == "Edsger Dijkstra"


async def test_the_cli_flag_serves_the_pair_over_stdio() -> None:
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "gateway.cli", "stdio", "--chatgpt-tools"],
        env={"MCP_GATEWAY_TOKEN": ADMIN_KEY},
        cwd=REPO,
    )
    async with Client(server, mode="legacy") as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        hits = search_results(await client.call_tool("search", {"query": "stock level"}))
    assert names[:5] == list(FIXED)
    assert {"search", "fetch"} <= set(names)
    assert any(hit["id"].startswith("function:inventory.") for hit in hits)


# Construction errors


def _source(**changes: Any) -> DataSource:
    fields: dict[str, Any] = {
        "search": "customers.list_customers",
        "query_arg": "q",
        "fetch": "customers.get_customer",
        "id_arg": "customer_id",
    }
    return DataSource(**{**fields, **changes})


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"search": "customers.list_customer"}, "DataSource.search: the catalog has no function"),
        ({"search": "customers.create_customer"}, "changes data; search and fetch are read-only"),
        ({"query_arg": "query"}, "has no argument 'query' (its arguments: q, limit, cursor)"),
        ({"search_args": {"limit": 1000}}, "cannot be called with 'q' and search_args {'limit': 1000}"),
        ({"search": "customers.list_customer_orders", "query_arg": "status"}, "missing required argument"),
        ({"fetch": "customers.list_customer_orders"}, "the records 'customers.list_customer_orders' returns have no"),
        ({"id_arg": "customer"}, "DataSource.id_arg: 'customers.get_customer' has no argument 'customer'"),
        ({"items": "results"}, "has no field 'results' (its fields: items, next_cursor)"),
        ({"items": "next_cursor"}, "is not a list"),
        ({"id_field": "uuid"}, "DataSource.id_field: the records 'customers.list_customers' returns have no field"),
        ({"title_field": "full_name"}, "no field 'full_name' (their fields: id, name, email, phone"),
        ({"text_field": "shipping_address.street"}, "DataSource.text_field"),
        ({"search": "users.get_current_user", "query_arg": "q"}, "has no argument 'q'"),
    ],
)
def test_a_data_source_that_does_not_fit_its_functions_is_refused_saying_why(
    changes: dict[str, Any], expected: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        make_gateway(ResearchConfig(data=_source(**changes)))
    assert expected in str(raised.value)


@pytest.mark.parametrize(
    ("build", "expected"),
    [
        (lambda: ResearchConfig(reference_url="/reference"), "reference_url must be an absolute http(s) URL"),
        (lambda: ResearchConfig(reference_url=f"{REFERENCE}#top"), "must not have a fragment"),
        (lambda: ResearchConfig(max_results=0), "max_results must be between 1 and 50"),
        (lambda: _source(url_field="href", url_template="https://x.example/{id}"), "not both"),
        (lambda: _source(url_template="/customers/{id}"), "url_template must be an absolute"),
        (lambda: _source(search_args={"q": "x"}), "must not set the query argument 'q'"),
        (lambda: _source(id_arg=""), "DataSource.id_arg must be a non-empty string"),
    ],
)
def test_invalid_research_settings_are_refused_saying_what_to_fix(build: Any, expected: str) -> None:
    with pytest.raises(ConfigError) as raised:
        build()
    assert expected in str(raised.value)


def test_research_must_be_a_flag_or_a_research_config() -> None:
    with pytest.raises(ConfigError, match="research must be True, False or a ResearchConfig"):
        make_gateway(CUSTOMERS)  # type: ignore[arg-type]
