"""The gateway mounted next to a real FastAPI app (the demo shop: a store opened in its lifespan, API-key auth),
driven through the official `mcp` client: in-process over httpx2.ASGITransport and on real uvicorn."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import mcp_types as types
import pytest
from fastapi import FastAPI
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from catalog.composite import Concept, Invoker, composite
from catalog.errors import SchemaTooLargeError
from catalog.render import function_line
from demo import ADMIN_KEY, MEMBER_KEY, create_app
from gateway.errors import ConfigError, RestError, ToolError
from gateway.gateway import Gateway
from gateway.limits import Limits
from gateway.options import Additions, Effects, Observability, Output, Security
from gateway.rest.credentials import bearer_to_headers
from gateway.rest.lifespan import app_lifespan
from tests.gateway.conftest import serve_http

pytestmark = pytest.mark.anyio

MODES = ("legacy", "2026-07-28")


class Reported:
    """Collects what the gateway's on_error hook receives."""

    def __init__(self) -> None:
        self.errors: list[tuple[str, Exception]] = []

    async def __call__(self, tool: str, error: Exception) -> None:
        self.errors.append((tool, error))


ID = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}


def make_gateway(**options: Any) -> tuple[FastAPI, Gateway]:
    app = create_app(debug_routes=True)
    defaults: dict[str, Any] = {"app": app, "whoami": "users.get_current_user", "limits": Limits(timeout=1.0)}
    gateway = Gateway(**{**defaults, **options})
    gateway.mount(app, "/mcp")
    return app, gateway


@asynccontextmanager
async def connect(app: FastAPI, *, key: str | None = ADMIN_KEY, mode: str = "legacy") -> AsyncIterator[Client]:
    headers = {"authorization": f"Bearer {key}"} if key else {}
    async with (
        app_lifespan(app),
        httpx2.AsyncClient(transport=httpx2.ASGITransport(app), headers=headers) as http,
        Client(streamable_http_client("http://localhost/mcp", http_client=http), mode=mode) as client,
    ):
        yield client


def text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.mark.parametrize("mode", MODES)
async def test_an_agent_searches_describes_and_calls_a_read_and_a_write(mode: str) -> None:
    app, _ = make_gateway()
    async with connect(app, mode=mode) as client:
        found = text(await client.call_tool("search_functions", {"query": "cancel an order"}))
        assert found.splitlines()[0].startswith("orders.cancel_order(order_id: integer) -> Order")
        described = text(await client.call_tool("describe_function", {"names": ["orders.create_order"]}))
        assert "customer_id: integer (body, required)" in described
        read = await client.call_tool("call_function", {"name": "orders.get_order", "args": {"order_id": 3}})
        assert not read.is_error
        assert json.loads(text(read))["status"] == "paid"
        assert read.structured_content is not None and read.structured_content["id"] == 3
        write = await client.call_tool(
            "call_function",
            {"name": "orders.create_order", "args": {"customer_id": 1, "items": [{"product_id": 1, "quantity": 2}]}},
        )
        assert not write.is_error, text(write)
        created = json.loads(text(write))
        assert (created["status"], created["total_cents"]) == ("pending", 5000)
        again = await client.call_tool(
            "call_function", {"name": "orders.get_order", "args": {"order_id": created["id"]}}
        )
        assert json.loads(text(again))["id"] == created["id"]


async def test_tools_list_shows_the_fixed_tools_with_every_annotation_and_title() -> None:
    app, gateway = make_gateway(tools=["orders.get_order", "orders.create_order", "customers.delete_customer"])
    async with connect(app) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert list(tools) == [spec.name for spec in gateway.tools()]
    assert list(tools)[:5] == ["whoami", "search_functions", "describe_function", "explain_term", "call_function"]
    for tool in tools.values():
        annotations = tool.annotations
        assert annotations is not None and tool.title
        hints = (annotations.read_only_hint, annotations.destructive_hint, annotations.idempotent_hint)
        assert None not in hints and annotations.open_world_hint is not None
    assert tools["search_functions"].annotations == types.ToolAnnotations(
        title="Search functions",
        read_only_hint=True,
        destructive_hint=False,
        idempotent_hint=True,
        open_world_hint=False,
    )
    call = tools["call_function"].annotations
    assert call is not None and (call.destructive_hint, call.open_world_hint, call.read_only_hint) == (
        True,
        True,
        False,
    )
    get = tools["orders-get_order"]
    assert get.annotations is not None and get.annotations.read_only_hint is True
    assert get.input_schema["required"] == ["order_id"]
    create = tools["orders-create_order"].annotations
    assert create is not None and create.destructive_hint is True
    delete = tools["customers-delete_customer"].annotations
    assert delete is not None and (delete.destructive_hint, delete.idempotent_hint) == (True, True)


async def test_promoted_writes_marked_additive_are_not_destructive() -> None:
    _, gateway = make_gateway(tools=["orders.create_order"], effects=Effects(additive=["orders.create_order"]))
    (spec,) = [tool for tool in gateway.tools() if tool.name == "orders-create_order"]
    assert (spec.read_only, spec.destructive) == (False, False)


async def test_instructions_carry_the_operator_paragraph_then_modules_and_how_to_use_the_tools() -> None:
    app, _ = make_gateway(output=Output(instructions="Acme sells shirts and mugs."))
    async with connect(app) as client:
        instructions = client.instructions
    assert instructions is not None
    assert instructions.startswith("Acme sells shirts and mugs.")
    assert "search_functions" in instructions and "- orders (6)" in instructions


async def test_whoami_calls_the_whoami_function_with_the_callers_credentials() -> None:
    app, _ = make_gateway()
    async with connect(app, key=MEMBER_KEY) as client:
        result = await client.call_tool("whoami", {})
    assert json.loads(text(result))["name"] == "Bob Okafor"


async def test_whoami_without_a_function_reports_the_server_and_whether_a_credential_came() -> None:
    app, _ = make_gateway(whoami=None)
    async with connect(app, key=None) as client:
        anonymous = json.loads(text(await client.call_tool("whoami", {})))
    async with connect(app) as client:
        known = json.loads(text(await client.call_tool("whoami", {})))
    assert anonymous["credential_presented"] is False
    assert known["credential_presented"] is True
    assert known["credential_checked"] is False and "nothing checked the credential" in known["note"]
    assert known["server"] == "Demo Shop API" or known["server"]


async def test_bad_arguments_name_every_bad_or_missing_arg_and_point_to_describe_function() -> None:
    app, _ = make_gateway()
    async with connect(app) as client:
        result = await client.call_tool(
            "call_function", {"name": "orders.create_order", "args": {"items": "many", "colour": "red"}}
        )
    assert result.is_error
    message = text(result)
    for part in ("missing required argument 'customer_id'", "unknown argument 'colour'", "'items'"):
        assert part in message
    assert "describe_function('orders.create_order')" in message


async def test_a_function_over_the_schema_node_cap_is_still_called_and_its_arguments_checked() -> None:
    app, gateway = make_gateway(limits=Limits(max_schema_nodes=5))
    with pytest.raises(SchemaTooLargeError):
        gateway.catalog.function("orders.create_order").input_schema()
    async with connect(app) as client:
        bad = await client.call_tool("call_function", {"name": "orders.create_order", "args": {"colour": "red"}})
        product = await client.call_tool("call_function", {"name": "products.get_product", "args": {"product_id": 1}})
    assert bad.is_error
    assert "missing required argument 'customer_id'" in text(bad) and "unknown argument 'colour'" in text(bad)
    assert not product.is_error and json.loads(text(product))["id"] == 1


async def test_describing_a_term_or_a_misspelt_name_says_what_to_do_with_the_name_as_given() -> None:
    app, gateway = make_gateway()
    async with connect(app) as client:
        term = await client.call_tool("describe_function", {"names": ["Order"]})
        misspelt = await client.call_tool("describe_function", {"names": ["orders.Get_Ordr"]})
    assert term.is_error and misspelt.is_error
    assert "Order is a term, not a function: explain_term explains it" in text(term)
    lines = text(misspelt).split("\n")
    assert lines[:2] == [
        "Unknown function 'orders.Get_Ordr'. The closest:",
        f"- {function_line(gateway.catalog.function('orders.get_order'))}",
    ]
    assert all(line.startswith("- orders.") for line in lines[2:-1])
    assert lines[-1] == "(search_functions finds functions by task)"


async def test_describing_more_than_fits_gives_whole_descriptions_and_names_the_rest() -> None:
    app, _ = make_gateway(output=Output(max_output_bytes=1_000))
    names = ["orders.create_order", "orders.get_order", "orders.list_orders", "products.get_product"]
    async with connect(app) as client:
        result = await client.call_tool("describe_function", {"names": names})
    described = text(result)
    assert not result.is_error
    assert len(described.encode()) <= 1_000
    assert described.startswith("orders.create_order(")
    last = described.rsplit("\n\n", 1)[1]
    assert last.startswith("… ") and "more not described here (over the 1000-byte limit)" in last
    assert last.endswith("; describe them in another call")
    left = last.split("limit): ", 1)[1].removesuffix("; describe them in another call").split(", ")
    assert left == [repr(name) for name in names[len(names) - len(left) :]]
    for name in names[: len(names) - len(left)]:
        assert f"\n\n{name}(" in f"\n\n{described}"


async def test_a_huge_argument_is_refused_without_being_echoed_back() -> None:
    app, _ = make_gateway()
    huge = "kettle " * 20_000
    async with connect(app) as client:
        query = await client.call_tool("search_functions", {"query": huge})
        status = await client.call_tool("call_function", {"name": "orders.list_orders", "args": {"status": huge}})
    for result in (query, status):
        assert result.is_error
        message = text(result)
        assert "'kettle kettle" in message and "… (140,002 characters)" in message, message
        assert len(message) < 800
    assert "argument 'query': 'kettle" in text(query) and "is too long" in text(query)
    assert "argument 'status'" in text(status)


async def test_huge_unknown_names_are_quoted_cut_short_in_every_error() -> None:
    app, _ = make_gateway()
    huge = "orders." + "x" * 100_000
    async with connect(app) as client:
        results = [
            await client.call_tool("call_function", {"name": huge}),
            await client.call_tool("call_function", {"name": "orders.list_orders", "args": {huge: 1}}),
            await client.call_tool("describe_function", {"names": [huge]}),
            await client.call_tool("explain_term", {"name": huge}),
            await client.call_tool("search_functions", {"module": huge}),
        ]
    for result in results:
        assert result.is_error
        assert "xxx'… (100,007 characters)" in text(result), text(result)[:300]
        assert len(text(result)) < 1_000


async def test_rest_errors_are_tool_errors_with_status_and_body() -> None:
    app, _ = make_gateway()
    async with connect(app) as client:
        missing = await client.call_tool("call_function", {"name": "orders.get_order", "args": {"order_id": 999}})
        invalid = await client.call_tool(
            "call_function", {"name": "orders.list_orders", "args": {"cursor": "not-a-real-cursor"}}
        )
    async with connect(app, key=MEMBER_KEY) as member:
        forbidden = await member.call_tool("call_function", {"name": "users.list_users", "args": {}})
    assert missing.is_error and "HTTP 404" in text(missing) and "order 999 not found" in text(missing)
    assert forbidden.is_error and "HTTP 403" in text(forbidden)
    assert invalid.is_error and "HTTP 422" in text(invalid) and "cursor" in text(invalid)


async def test_a_missing_key_reaches_the_rest_app_and_its_401_comes_back() -> None:
    app, _ = make_gateway()
    async with connect(app, key=None) as client:
        result = await client.call_tool("call_function", {"name": "orders.list_orders", "args": {}})
    assert result.is_error and "HTTP 401" in text(result)


async def test_an_exception_in_the_app_is_the_apis_own_500_logged_for_the_operator_and_serving_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    reported = Reported()
    app, _ = make_gateway(observability=Observability(on_error=reported))
    async with connect(app) as client:
        boom = await client.call_tool("call_function", {"name": "debug.boom", "args": {}})
        after = await client.call_tool("call_function", {"name": "orders.get_order", "args": {"order_id": 1}})
    assert boom.is_error
    assert text(boom).startswith("HTTP 500 Internal Server Error from debug.boom (GET /debug/boom).")
    assert "Internal error in" not in text(boom) and "Traceback" not in text(boom)
    assert "will likely fail again" in text(boom)
    assert not after.is_error
    # The gateway did nothing wrong: on_error is for its own faults; the operator's log has the traceback.
    assert reported.errors == []
    assert any(record.exc_info and "this endpoint always fails" in str(record.exc_info[1]) for record in caplog.records)


async def test_a_slow_handler_past_the_timeout_is_a_clear_tool_error() -> None:
    app, _ = make_gateway(limits=Limits(timeout=0.2))
    async with connect(app) as client:
        result = await client.call_tool("call_function", {"name": "debug.slow", "args": {"seconds": 3}})
    assert result.is_error and "did not answer within 0.2 s" in text(result)


async def test_an_oversized_result_is_cut_with_a_hint_to_narrow_the_request() -> None:
    app, _ = make_gateway(output=Output(max_output_bytes=2000))
    async with connect(app) as client:
        result = await client.call_tool("call_function", {"name": "orders.list_orders", "args": {"limit": 100}})
    body = text(result)
    assert len(body.encode()) <= 2000
    assert "over the 2000-byte limit" in body and "limit" in body.rsplit("[cut:", 1)[1]
    assert result.structured_content is None


@pytest.mark.parametrize("levels", [300, 5_000])
async def test_deeply_nested_json_comes_back_as_text_without_failing_the_response(levels: int) -> None:
    app, _ = make_gateway(output=Output(max_output_bytes=100_000))
    async with connect(app) as client:
        result = await client.call_tool("call_function", {"name": "debug.nested", "args": {"levels": levels}})
    assert not result.is_error
    assert text(result).startswith('{"a":{"a":') and text(result).endswith("}}")
    assert result.structured_content is None


async def test_a_redirect_says_where_the_answer_is_without_following_it() -> None:
    app, _ = make_gateway()
    async with connect(app) as client:
        result = await client.call_tool("call_function", {"name": "debug.moved", "args": {}})
    assert not result.is_error
    assert (
        text(result) == "HTTP 302 Found: the answer is at https://downloads.example.com/archive.tar.gz (not followed)."
    )


async def test_images_come_back_as_image_content() -> None:
    app, _ = make_gateway()
    async with connect(app) as client:
        result = await client.call_tool(
            "call_function", {"name": "products.get_product_image", "args": {"product_id": 1}}
        )
    (block,) = result.content
    assert isinstance(block, types.ImageContent) and block.mime_type == "image/png"


async def test_unknown_names_answer_with_the_closest_matches() -> None:
    app, _ = make_gateway()
    async with connect(app) as client:
        call = await client.call_tool("call_function", {"name": "orders.get_ordr", "args": {}})
        term = await client.call_tool("explain_term", {"name": "Ordr"})
        described = await client.call_tool("describe_function", {"names": ["orders.list_order"]})
        module = await client.call_tool("search_functions", {"module": "order"})
    assert call.is_error and "orders.get_order" in text(call)
    assert term.is_error and "Order" in text(term)
    assert described.is_error and "orders.list_orders" in text(described)
    assert module.is_error and "orders" in text(module)


def header_echo_app(seen: list[dict[str, str]]) -> FastAPI:
    """A REST app whose one operation records the headers it receives."""
    rest = FastAPI()

    @rest.get("/echo", operation_id="echo", tags=["t"])
    async def echo(request: Request) -> dict[str, str]:
        seen.append(dict(request.headers))
        return {"ok": "yes"}

    return rest


def me_app(answer: dict[str, Any]) -> FastAPI:
    """A REST app whose `me` operation answers with `answer`."""
    rest = FastAPI()

    @rest.get("/me", operation_id="get_me", tags=["users"])
    async def get_me() -> dict[str, Any]:
        return answer

    return rest


def texts(result: types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


async def test_whoami_redacts_a_password_inside_a_url_and_shows_times_and_flags_named_after_the_password() -> None:
    rest = me_app(
        {
            "name": "Grace",
            "database_url": "postgres://admin:PASSWORD@db.internal:5432/app",
            "password_changed_at": "2026-01-01T00:00:00Z",
            "password_needs_reset": False,
            "api_token": "tok_0123456789abcdef",
        }
    )
    Gateway(app=rest, whoami="users.get_me").mount(rest)
    async with connect(rest) as client:
        result = await client.call_tool("whoami", {})
    assert result.structured_content == {
        "name": "Grace",
        "database_url": "postgres://admin:…@db.internal:5432/app",
        "password_changed_at": "2026-01-01T00:00:00Z",
        "password_needs_reset": False,
    }
    shown = texts(result)
    assert not any("PASSWORD" in part or "tok_0123" in part for part in shown)
    assert shown[-1] == (
        "(left out because they look like credentials: api_token; "
        "redacted in place because they hold credentials, shown as …: database_url)"
    )


async def test_whoami_says_what_it_redacted_when_it_left_nothing_out() -> None:
    rest = me_app({"name": "Grace", "links": ["https://example.com/cb?api_key=abc&x=1"]})
    Gateway(app=rest, whoami="users.get_me").mount(rest)
    async with connect(rest) as client:
        result = await client.call_tool("whoami", {})
    assert result.structured_content == {"name": "Grace", "links": ["https://example.com/cb?api_key=…&x=1"]}
    assert texts(result)[-1] == "(redacted in place because they hold credentials, shown as …: links[0])"


async def test_credentials_can_be_split_from_a_key_secret_token() -> None:
    seen: list[dict[str, str]] = []
    rest = header_echo_app(seen)
    Gateway(app=rest, auth=bearer_to_headers("X-Key", "X-Secret"), whoami="t.echo").mount(rest)
    async with connect(rest, key="abc:s3cret") as client:
        await client.call_tool("whoami", {})
    assert (seen[0]["x-key"], seen[0]["x-secret"]) == ("abc", "s3cret")
    assert "authorization" not in seen[0]
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(rest)) as http:
        refused = await http.post(
            "http://localhost/mcp",
            headers={"authorization": "Bearer no-colon", "accept": "application/json, text/event-stream"},
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        )
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"].startswith("Bearer")


class TokenStoreDown(Exception):
    """What an auth function whose store cannot answer raises (as oauth.errors.StoreUnavailableError does)."""

    retry_after = 5


async def test_an_auth_function_that_cannot_check_tokens_now_is_503_with_retry_after_and_no_challenge() -> None:
    async def auth(token: str | None) -> dict[str, str]:
        raise TokenStoreDown("the token store is unavailable; retry shortly")

    rest = header_echo_app([])
    Gateway(app=rest, auth=auth).mount(rest)
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(rest)) as http:
        answer = await http.post(
            "http://localhost/mcp",
            headers={"authorization": "Bearer good-token", "accept": "application/json, text/event-stream"},
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        )
    assert answer.status_code == 503
    assert answer.headers["retry-after"] == "5" and "www-authenticate" not in answer.headers
    assert answer.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32000, "message": "the token store is unavailable; retry shortly"},
    }


async def test_an_auth_function_that_crashes_is_a_logged_500_that_shows_nothing_of_the_crash(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def auth(token: str | None) -> dict[str, str]:
        raise RuntimeError("database down: password=hunter2")

    rest = header_echo_app([])
    Gateway(app=rest, auth=auth).mount(rest)
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(rest)) as http:
        answer = await http.post(
            "http://localhost/mcp",
            headers={"authorization": "Bearer good-token", "accept": "application/json, text/event-stream"},
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        )
    assert answer.status_code == 500 and "www-authenticate" not in answer.headers
    assert answer.json()["error"]["message"] == "internal error while checking credentials; the server logged it"
    assert "hunter2" not in answer.text
    failed = [record for record in caplog.records if record.getMessage() == "the authenticate hook failed"]
    assert len(failed) == 1 and failed[0].exc_info is not None  # the operator gets the traceback


@pytest.mark.parametrize(("trusted", "forwarded_for"), [((), "127.0.0.1"), (("127.0.0.0/8",), "10.1.2.3, 127.0.0.1")])
async def test_transport_headers_stay_out_and_forwarded_ones_are_rebuilt_for_the_rest_app(
    trusted: tuple[str, ...], forwarded_for: str
) -> None:
    seen: list[dict[str, str]] = []
    rest = header_echo_app(seen)
    Gateway(app=rest, security=Security(trusted_proxies=trusted)).mount(rest)
    async with (
        httpx2.AsyncClient(
            transport=httpx2.ASGITransport(rest),
            headers={"authorization": "Bearer t0k", "x-forwarded-for": "10.1.2.3", "x-request-id": "req-7"},
        ) as http,
        Client(streamable_http_client("http://localhost/mcp", http_client=http), mode="legacy") as client,
    ):
        await client.call_tool("call_function", {"name": "t.echo", "args": {}})
    (headers,) = seen
    assert headers["authorization"] == "Bearer t0k"
    # The caller's own X-Forwarded-For is kept only from a trusted proxy; the peer the gateway saw is appended.
    assert headers["x-forwarded-for"] == forwarded_for and headers["x-request-id"] == "req-7"
    assert not any(name.startswith("mcp-") for name in headers)
    assert "text/event-stream" not in headers.get("accept", "")


class SummaryArgs(BaseModel):
    customer_id: int


class Summary(BaseModel):
    orders: int
    spent_cents: int


@composite("reports", summary="Count a customer's orders and what they spent")
async def customer_summary(call: Invoker, args: SummaryArgs) -> Summary:
    page = await call.call("customers.list_customer_orders", {"customer_id": args.customer_id, "limit": 100})
    items = page["items"]
    return Summary(orders=len(items), spent_cents=sum(item["total_cents"] for item in items))


async def test_composites_run_through_the_same_caller_with_the_callers_credentials() -> None:
    app, _ = make_gateway(
        additions=Additions(composites=[customer_summary], concepts={"Basket": Concept(text="The items of an order.")})
    )
    async with connect(app) as client:
        result = await client.call_tool(
            "call_function", {"name": "reports.customer_summary", "args": {"customer_id": 4}}
        )
        term = await client.call_tool("explain_term", {"name": "basket"})
    async with connect(app, key=None) as nobody:
        anonymous = await nobody.call_tool(
            "call_function", {"name": "reports.customer_summary", "args": {"customer_id": 4}}
        )
    summary = json.loads(text(result))
    assert summary["orders"] >= 1 and summary["spent_cents"] > 0
    assert anonymous.is_error
    assert "The items of an order." in text(term)


async def test_construction_refuses_what_it_cannot_serve() -> None:
    app = create_app()
    cases: list[tuple[dict[str, Any], str]] = [
        ({"tools": ["orders.nope"]}, "no function 'orders.nope'"),
        ({"tools": ["orders.get_order", "orders.get_order"]}, "twice"),
        ({"whoami": "orders.get_order"}, "required arguments (order_id)"),
        ({"whoami": "users.missing"}, "no function 'users.missing'"),
        ({"upstream": "http://example.invalid"}, "not both"),
        ({"output": "max_output_bytes=10"}, "output must be a gateway.Output"),
        ({"tools": ["orders.get_order"], "limits": Limits(max_schema_nodes=2)}, "over the cap"),
    ]
    for options, message in cases:
        with pytest.raises(ConfigError) as error:
            Gateway(app=app, **options)
        assert message in str(error.value), options
    with pytest.raises(ConfigError, match="max_output_bytes must be at least 1000, got 10"):
        Output(max_output_bytes=10)
    wrong: tuple[tuple[str, Any], ...] = (("effects", ["*.list_*"]), ("limits", {"timeout": 5}), ("security", "x"))
    for group, value in wrong:
        with pytest.raises(ConfigError) as error:
            Gateway(app=app, **{group: value})
        message = f"{group} must be a gateway.{group.capitalize()}, e.g. {group}={group.capitalize()}(...)"
        assert message in str(error.value), group


async def test_the_python_api_offers_exactly_the_mcp_tools() -> None:
    app, gateway = make_gateway()
    async with app_lifespan(app):
        headers = {"authorization": f"Bearer {ADMIN_KEY}"}
        order = await gateway.call(headers, "orders.get_order", {"order_id": 1})
        assert order["id"] == 1
        with pytest.raises(RestError) as error:
            await gateway.call(headers, "orders.get_order", {"order_id": 999})
        assert error.value.status == 404
        result = await gateway.call_tool(
            headers, "call_function", {"name": "orders.get_order", "args": {"order_id": 1}}
        )
        assert not result.is_error and json.loads(result.texts[0])["id"] == 1
        bad = await gateway.call_tool(headers, "describe_function", {"names": []})
        assert bad.is_error


@pytest.mark.parametrize("mode", MODES)
async def test_mounted_on_real_uvicorn_the_host_lifespan_serves_the_gateway(mode: str) -> None:
    app, _ = make_gateway()
    async with (
        serve_http(app, lifespan="on") as base,
        httpx2.AsyncClient(headers={"authorization": f"Bearer {ADMIN_KEY}"}) as http,
        Client(streamable_http_client(f"{base}/mcp", http_client=http), mode=mode) as client,
    ):
        result = await client.call_tool("call_function", {"name": "customers.get_customer", "args": {"customer_id": 1}})
        assert not result.is_error
        assert json.loads(text(result))["id"] == 1
        assert (await http.get(f"{base}/mcp")).status_code == 405


async def test_an_owned_app_gets_its_lifespan_state_in_every_call() -> None:
    from collections.abc import AsyncIterator as Iter
    from contextlib import asynccontextmanager as context

    @context
    async def lifespan(app: FastAPI) -> Iter[dict[str, Any]]:
        yield {"db": {"answer": 42}}

    rest = FastAPI(lifespan=lifespan)

    @rest.get("/answer", operation_id="answer", tags=["t"])
    async def answer(request: Request) -> dict[str, int]:
        return {"answer": request.state.db["answer"]}

    gateway = Gateway(app=rest)
    async with gateway.lifespan():
        assert await gateway.call({}, "t.answer", {}) == {"answer": 42}


async def test_a_spec_alone_calls_the_api_at_the_documents_first_absolute_server() -> None:
    document = {
        "openapi": "3.1.0",
        "info": {"title": "Remote", "version": "1"},
        "servers": [{"url": "https://{region}.example.com"}, {"url": "https://api.example.com/v2"}],
        "paths": {
            "/ping": {"get": {"operationId": "ping", "tags": ["t"], "responses": {"200": {"description": "ok"}}}}
        },
    }
    assert Gateway(spec=document).upstream == "https://api.example.com/v2"
    assert Gateway(spec=document, upstream="http://127.0.0.1:9").upstream == "http://127.0.0.1:9"
    assert Gateway(spec={**document, "servers": [{"url": "/relative"}]}).upstream is None
    templated = [{"url": "https://{region}.example.com", "variables": {"region": {"default": "eu"}}}]
    assert Gateway(spec={**document, "servers": templated}).upstream == "https://eu.example.com"


def test_a_gateway_made_before_the_apps_routes_warns_that_agents_will_find_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = FastAPI()
    with caplog.at_level("WARNING", logger="gateway.gateway"):
        early = Gateway(app=app)
    assert "create the Gateway after the app's routes" in caplog.text
    assert early.catalog.functions() == ()

    @app.get("/items", tags=["items"])
    def list_items() -> list[str]:
        return []

    assert [function.name for function in Gateway(app=app).catalog.functions()] == ["items.list_items"]
    assert list(app.openapi()["paths"]) == ["/items"]  # the app's own document is not left empty either


async def test_an_api_that_cannot_be_reached_is_a_tool_error_that_says_so() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there
    document = {
        "openapi": "3.1.0",
        "info": {"title": "Notes", "version": "1"},
        "paths": {
            "/notes": {"get": {"operationId": "list", "tags": ["notes"], "responses": {"200": {"description": "ok"}}}}
        },
    }
    gateway = Gateway(spec=document, upstream=f"http://127.0.0.1:{port}/v1")
    async with gateway.lifespan():
        with pytest.raises(ToolError, match=rf"could not reach the API at http://127.0.0.1:{port}/v1 \("):
            await gateway.call({}, "notes.list", {})


async def test_an_operation_with_its_own_server_is_called_there_and_the_others_at_the_upstream() -> None:
    def host(name: str) -> Starlette:
        async def where(request: Request) -> JSONResponse:
            return JSONResponse({"host": name, "path": request.url.path, "auth": request.headers.get("authorization")})

        return Starlette(routes=[Route("/{rest:path}", where, methods=["GET", "POST"])])

    async with serve_http(host("api")) as api, serve_http(host("uploads")) as uploads:
        ok = {"200": {"description": "ok"}}
        document = {
            "openapi": "3.1.0",
            "info": {"title": "Files", "version": "1"},
            "servers": [{"url": "https://api.example.com/v1"}],
            "paths": {
                "/files": {"get": {"operationId": "list", "tags": ["f"], "responses": ok}},
                "/files/{id}/content": {
                    "servers": [{"url": "https://api.example.com/v1"}],  # the document's own: the upstream serves it
                    "get": {"operationId": "download", "tags": ["f"], "responses": ok, "parameters": [ID]},
                },
                "/uploads": {
                    "post": {
                        "operationId": "upload",
                        "tags": ["f"],
                        "responses": ok,
                        "servers": [{"url": uploads + "/u"}],
                    }
                },
            },
        }
        headers = {"authorization": "Bearer t"}
        refusing = Gateway(spec=document, upstream=api + "/v1")
        gateway = Gateway(
            spec=document, upstream=api + "/v1", security=Security(other_hosts=[uploads.removeprefix("http://")])
        )
        async with refusing.lifespan(), gateway.lifespan():
            listed = await gateway.call(headers, "f.list", {})
            downloaded = await gateway.call(headers, "f.download", {"id": "7"})
            uploaded = await gateway.call(headers, "f.upload", {})
            with pytest.raises(ToolError, match=r"another host than the API's.*--other-host 127\.0\.0\.1:"):
                await refusing.call(headers, "f.upload", {})
    assert listed == {"host": "api", "path": "/v1/files", "auth": "Bearer t"}
    assert downloaded == {"host": "api", "path": "/v1/files/7/content", "auth": "Bearer t"}
    assert uploaded == {"host": "uploads", "path": "/u/uploads", "auth": "Bearer t"}
