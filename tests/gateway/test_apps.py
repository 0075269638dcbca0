"""MCP Apps views through the official `mcp` client: linked and served only to clients that declare the UI
extension, exactly today's tools, resources and results for any other; views follow the caller policy; the page
is built so that no string from the API or the document becomes markup; views read from real documents."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
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
from mcp.client import advertise
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from demo import ADMIN_KEY, create_app
from gateway.apps import CALL_FUNCTION_VIEW, VIEW_KEY, View, bundle_bytes, content_security_policy, view_of, view_page
from gateway.gateway import Gateway
from gateway.mcp.capabilities import APP_MIME_TYPE, UI_EXTENSION
from gateway.options import Effects, Output
from gateway.policy import Access
from tests.corpus import corpus_catalog

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
LOCAL = "http://localhost/mcp"
MODES = ("legacy", "2026-07-28")
APPS = advertise(UI_EXTENSION, {"mimeTypes": [APP_MIME_TYPE]})


def _demo(**options: Any) -> Gateway:
    output = options.pop("output", Output())
    return Gateway(
        app=create_app(),
        whoami="users.get_current_user",
        tools=["orders.get_order", "orders.list_orders"],
        output=replace(output, name="demo-shop"),
        **options,
    )


@asynccontextmanager
async def _client(gateway: Gateway, mode: str, *, apps: bool) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(
            transport=httpx2.ASGITransport(gateway.asgi()), headers={"authorization": f"Bearer {ADMIN_KEY}"}
        ) as http,
        Client(streamable_http_client(LOCAL, http_client=http), mode=mode, extensions=[APPS] if apps else None) as c,
    ):
        yield c


async def _seen(client: Client) -> dict[str, Any]:
    """Everything a client is shown: tools, resources, templates, and a call_function result, as wire JSON."""
    tools = await client.list_tools()
    resources = await client.list_resources()
    templates = await client.list_resource_templates()
    call = await client.call_tool("call_function", {"name": "orders.list_orders", "args": {"limit": 2}})
    promoted = await client.call_tool("orders-get_order", {"order_id": 1})
    shown = (tools, resources, templates, call, promoted)
    dumped = [item.model_dump(by_alias=True, exclude_none=True) for item in shown]
    for result in dumped[3:]:
        result.get("_meta", {}).pop("io.modelcontextprotocol/serverInfo", None)
    return dict(zip(("tools", "resources", "templates", "call", "promoted"), dumped, strict=True))


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_that_does_not_declare_the_extension_gets_exactly_what_a_gateway_without_apps_gives(
    mode: str,
) -> None:
    async with _client(_demo(), mode, apps=False) as client:
        with_apps = await _seen(client)
    async with _client(_demo(output=Output(apps=False)), mode, apps=False) as client:
        without = await _seen(client)
    assert with_apps == without
    assert "ui://" not in json.dumps(with_apps)


async def test_a_2026_client_that_declares_the_extension_gets_tools_linked_to_their_views() -> None:
    async with _client(_demo(), "2026-07-28", apps=True) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        resources = [resource.uri for resource in (await client.list_resources()).resources]
        templates = [template.uri_template for template in (await client.list_resource_templates()).resource_templates]
    assert tools["call_function"].meta == {"ui": {"resourceUri": CALL_FUNCTION_VIEW}}
    assert tools["orders-get_order"].meta == {"ui": {"resourceUri": "ui://views/orders.get_order"}}
    assert tools["orders-list_orders"].meta == {"ui": {"resourceUri": "ui://views/orders.list_orders"}}
    assert tools["search_functions"].meta is None
    assert CALL_FUNCTION_VIEW in resources and "ui://views/{function}" in templates


async def test_a_view_is_an_mcp_app_page_with_a_policy_that_allows_no_outside_origin() -> None:
    async with _client(_demo(), "2026-07-28", apps=True) as client:
        page = (await client.read_resource("ui://views/orders.list_orders")).contents[0]
        generic = (await client.read_resource(CALL_FUNCTION_VIEW)).contents[0]
    for contents in (page, generic):
        assert isinstance(contents, types.TextResourceContents)
        assert contents.mime_type == APP_MIME_TYPE
        assert contents.meta == {"ui": {"csp": {"connectDomains": [], "resourceDomains": []}, "prefersBorder": True}}
        assert contents.text.startswith("<!doctype html>")
    assert isinstance(page, types.TextResourceContents) and isinstance(generic, types.TextResourceContents)
    embedded = json.loads(re.search(r'id="gateway-view">(.*?)</script>', page.text)[1])  # type: ignore[index]
    assert embedded["kind"] == "table" and embedded["tool"] == "orders-list_orders"
    assert embedded["paging"] == {"style": "cursor", "arg": "cursor", "next": ["next_cursor"], "size": "limit"}
    assert 'id="gateway-view"' not in generic.text


async def test_a_call_function_result_brings_its_functions_view_to_a_client_that_renders_views() -> None:
    async with _client(_demo(), "2026-07-28", apps=True) as client:
        listed = await client.call_tool("call_function", {"name": "orders.list_orders", "args": {"limit": 2}})
        failed = await client.call_tool("call_function", {"name": "orders.get_order", "args": {"order_id": 999999}})
        promoted = await client.call_tool("orders-get_order", {"order_id": 1})
    view = (listed.meta or {})[VIEW_KEY]
    assert view["function"] == "orders.list_orders" and view["kind"] == "table" and view["tool"] == "orders-list_orders"
    assert [column["name"] for column in view["columns"]][:3] == ["id", "customer_id", "status"]
    assert failed.is_error and (failed.meta or {})[VIEW_KEY]["kind"] == "detail"
    assert VIEW_KEY not in (promoted.meta or {})  # its page holds its view


async def test_over_http_a_handshake_clients_declaration_travels_in_the_session_id_it_is_given() -> None:
    # The transport keeps no session: the id it gives an initialize that declares the extension says so itself.
    async with _client(_demo(), "legacy", apps=True) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        call = await client.call_tool("call_function", {"name": "orders.list_orders", "args": {"limit": 1}})
        page = (await client.read_resource("ui://views/orders.get_order")).contents[0]
    assert tools["call_function"].meta == {"ui": {"resourceUri": CALL_FUNCTION_VIEW}}
    assert (call.meta or {})[VIEW_KEY]["kind"] == "table"
    assert page.mime_type == APP_MIME_TYPE


async def test_only_an_initialize_that_declares_the_extension_is_given_a_session_id() -> None:
    gateway = _demo()
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "clientInfo": {"name": "t", "version": "1"}, "capabilities": {}},
    }
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    declaring = {"extensions": {UI_EXTENSION: {"mimeTypes": [APP_MIME_TYPE]}}}
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(gateway.asgi())) as http:
        plain = await http.post(LOCAL, json=initialize, headers=headers)
        initialize["params"]["capabilities"] = declaring  # type: ignore[index]
        apps = await http.post(LOCAL, json=initialize, headers=headers)
    assert plain.status_code == apps.status_code == 200
    assert "mcp-session-id" not in plain.headers
    assert re.fullmatch(r"mcp-apps-[0-9a-f]{32}", apps.headers["mcp-session-id"])


async def test_over_stdio_the_initialize_declaration_holds_for_the_whole_connection() -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("MCP_GATEWAY_")}
    env["MCP_GATEWAY_TOKEN"] = ADMIN_KEY
    server = StdioServerParameters(command=sys.executable, args=["-m", "gateway.cli", "stdio"], env=env, cwd=REPO)
    async with Client(server, mode="legacy", extensions=[APPS]) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        call = await client.call_tool("call_function", {"name": "orders.get_order", "args": {"order_id": 1}})
        page = (await client.read_resource("ui://views/orders.get_order")).contents[0]
    assert tools["call_function"].meta == {"ui": {"resourceUri": CALL_FUNCTION_VIEW}}
    assert (call.meta or {})[VIEW_KEY]["kind"] == "detail"
    assert page.mime_type == APP_MIME_TYPE


async def test_with_apps_off_a_client_that_declares_the_extension_gets_no_views() -> None:
    async with _client(_demo(output=Output(apps=False)), "2026-07-28", apps=True) as client:
        tools = (await client.list_tools()).tools
        with pytest.raises(MCPError):
            await client.read_resource(CALL_FUNCTION_VIEW)
    assert all(tool.meta is None for tool in tools)


@pytest.mark.parametrize("mode", MODES)
async def test_with_apps_off_a_declaring_client_is_asked_for_approval_in_two_steps_not_in_a_form(mode: str) -> None:
    gateway = _demo(output=Output(apps=False), effects=Effects(approval="destructive"))
    async with _client(gateway, mode, apps=True) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        first = await client.call_tool("call_function", {"name": "products.delete_product", "args": {"product_id": 3}})
    assert not {"approve_call", "cancel_call"} & tools
    assert (first.structured_content or {})["status"] == "confirmation_required"
    assert "io.modelcontextprotocol/approval" not in (first.meta or {})


async def test_with_apps_off_no_initialize_is_given_a_session_id() -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "clientInfo": {"name": "t", "version": "1"},
            "capabilities": {"extensions": {UI_EXTENSION: {"mimeTypes": [APP_MIME_TYPE]}}},
        },
    }
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    gateway = _demo(output=Output(apps=False))
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(gateway.asgi())) as http:
        answer = await http.post(LOCAL, json=initialize, headers=headers)
    assert answer.status_code == 200 and "mcp-session-id" not in answer.headers


async def test_a_hidden_function_has_no_view_in_the_same_words_as_a_function_that_does_not_exist() -> None:
    gateway = _demo(access=Access(hide=["customers.*"]))
    async with _client(gateway, "2026-07-28", apps=True) as client:
        errors = []
        for name in ("customers.get_customer", "customerz.get_customer"):
            with pytest.raises(MCPError) as raised:
                await client.read_resource(f"ui://views/{name}")
            errors.append((raised.value.error.code, raised.value.error.message.replace(name, "NAME")))
        shown = await client.read_resource("ui://views/orders.get_order")
    assert errors[0] == errors[1] and errors[0][0] == types.INVALID_PARAMS
    assert shown.contents


# The page


def _hostile_view() -> View:
    hostile = "</script><img src=x onerror=alert(1)>\u2028<!--&amp;"
    return View(
        function="a.b",
        title=hostile,
        kind="table",
        effect="read",
        rows=[],
        columns=[{"name": hostile, "title": "javascript:alert(1)", "type": "string"}],
        paging=None,
        args=[],
        tool=None,
    )


def test_no_string_of_a_view_can_end_its_data_block_or_become_markup() -> None:
    page = view_page(_hostile_view())
    assert page.count("</script>") == 2  # the data block's and the script's own
    assert "<img" not in page and "<!--" not in page and "\u2028" not in page
    data = re.search(r'id="gateway-view">(.*?)</script>', page, re.S)
    assert data is not None and json.loads(data[1]) == _hostile_view()


def test_the_policy_allows_exactly_the_inline_script_and_style_the_page_carries() -> None:
    page = view_page(None)
    policy = content_security_policy()
    assert f'content="{policy}"' in page
    script = re.search(r"<script>(.*)</script>", page, re.S)
    style = re.search(r"<style>(.*)</style>", page, re.S)
    assert script is not None and style is not None
    for text in (script[1], style[1]):
        digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in policy
    assert policy.startswith("default-src 'none';") and "http" not in policy and "'unsafe-inline'" not in policy
    assert re.search(r"\b(src|href)=", page) is None  # nothing loaded from anywhere


def test_the_view_script_builds_the_page_from_text_alone() -> None:
    script = (REPO / "gateway" / "apps" / "static" / "view.js").read_text(encoding="utf-8")
    sinks = ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "Function(", ".href", ".src")
    assert [sink for sink in sinks if sink in script] == []
    # Attributes set from anything but a constant: none (no on*, href or src from data).
    assert re.findall(r"setAttribute\(([^,]+),", script) == ['"aria-sort"'] * 3


def test_the_view_code_is_one_small_bundle() -> None:
    assert bundle_bytes() < 40_000


# Views from real documents


@pytest.mark.parametrize("document", ["github-api.github.com.json", "stripe-spec3.yaml"])
def test_every_function_of_a_large_document_gets_a_small_view(document: str) -> None:
    catalog = corpus_catalog(document)
    kinds: dict[str, int] = {}
    for function in catalog.functions():
        view = view_of(function)
        kinds[view["kind"]] = kinds.get(view["kind"], 0) + 1
        assert len(json.dumps(view)) < 40_000, function.name
    assert kinds["table"] > 50 and kinds["detail"] > 50


def test_github_lists_page_by_page_number_and_stripe_lists_by_cursor() -> None:
    repos = view_of(corpus_catalog("github-api.github.com.json").function("repos.list_for_org"))
    assert repos["kind"] == "table" and repos["rows"] == []
    assert repos["paging"] == {"style": "page", "arg": "page", "next": None, "size": "per_page"}
    stripe = corpus_catalog("stripe-spec3.yaml")
    customers = view_of(next(f for f in stripe.functions() if f.method == "GET" and f.path == "/v1/customers"))
    assert customers["kind"] == "table" and customers["rows"] == ["data"]
    assert customers["paging"] == {
        "style": "cursor",
        "arg": "starting_after",
        "next": None,
        "last": "id",
        "size": "limit",
    }


def test_prefect_lists_page_by_an_offset_in_the_request_body() -> None:
    flows = view_of(corpus_catalog("prefect-server-api.json").function("flows.read_flows"))
    assert flows["kind"] == "table" and flows["rows"] == []
    assert flows["paging"] == {"style": "offset", "arg": "offset", "next": None, "size": "limit"}


def test_an_object_with_many_fields_besides_a_list_is_a_detail_not_a_page() -> None:
    catalog = _demo().catalog
    assert view_of(catalog.function("orders.get_order"))["kind"] == "detail"  # an order and its lines
    page = view_of(catalog.function("orders.list_orders"))
    assert page["kind"] == "table" and page["rows"] == ["items"]


def test_an_optional_header_is_a_secondary_field_of_the_form_and_every_other_argument_is_not() -> None:
    delete_flow = view_of(corpus_catalog("prefect-server-api.json").function("flows.delete_flow"))
    assert [(f["name"], f["required"], f["secondary"]) for f in delete_flow["args"]] == [
        ("id", True, False),
        ("x-prefect-api-version", False, True),
    ]
    create_order = view_of(_demo().catalog.function("orders.create_order"))
    secondary = [field["name"] for field in create_order["args"] if field["secondary"]]
    assert secondary == ["Idempotency-Key"]  # not the optional body fields shipping_address and note


def test_an_array_of_strings_is_a_list_field_typed_a_line_each_and_an_array_of_objects_stays_json() -> None:
    github = corpus_catalog("github-api.github.com.json")
    fields = {field["name"]: field for field in view_of(github.function("issues.create"))["args"]}
    assert fields["assignees"]["type"] == "list" and fields["assignees"]["item"] == "string"
    assert fields["labels"]["type"] == "json" and "item" not in fields["labels"]  # strings or objects
    assert fields["issue_field_values"]["type"] == "json"
    milestone = {field["name"]: field for field in view_of(github.function("issues.create_milestone"))["args"]}
    assert milestone["due_on"]["format"] == "date-time"  # the form checks it before the call
