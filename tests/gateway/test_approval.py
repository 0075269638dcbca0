"""Calls that wait for a person's approval (`Effects.approval`), through the official `mcp` client over the demo
shop: the two-step confirmation of clients without MCP Apps, the form's approve_call and cancel_call for clients
that render them, every refusal (other arguments, function, caller, expired, used, hidden), the budget of handles,
scripts, batches, a store that cannot answer, and the option left at "none"."""

from __future__ import annotations

import argparse
import functools
import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, get_args

import anyio
import httpx2
import mcp_types as types
import pytest
from fastapi import FastAPI
from mcp import Client
from mcp.client import advertise
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from catalog.builder import load_catalog
from catalog.model import Catalog
from demo import ADMIN_KEY, MEMBER_KEY, create_app
from gateway.cli.gateways import gateway_flags
from gateway.cli.options import gateway_options
from gateway.errors import ConfigError
from gateway.gateway import Gateway
from gateway.limits import Limits
from gateway.mcp.capabilities import APP_MIME_TYPE, UI_EXTENSION, client_supports_ui
from gateway.options import Effects, GatewayConfig
from gateway.policy import Access, ApprovalLevel, Policy
from gateway.rest.credentials import Credentials
from gateway.tools.confirmation import APPROVAL_META
from gateway.tools.scripts import ScriptConfig
from sandbox import ScriptLimits
from tests.oauth.conftest import FakeClock

pytestmark = pytest.mark.anyio

BASE = "http://localhost"
ADMIN = {"authorization": f"Bearer {ADMIN_KEY}"}
#: Bearer tokens of the MCP requests, and the credentials (with the grant) each one stands for.
GRANTS: Mapping[str, Credentials] = {
    "alice": Credentials(ADMIN, scopes=["shop:read", "shop:write"]),
    "alice-narrow": Credentials(ADMIN, scopes=["shop:write"]),
    "bob": Credentials({"authorization": f"Bearer {MEMBER_KEY}"}, scopes=["shop:read", "shop:write"]),
}
DELETE = "products.delete_product"
UI = advertise(UI_EXTENSION, {"mimeTypes": [APP_MIME_TYPE]})


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@functools.cache
def demo_catalog() -> Catalog:
    return load_catalog(create_app())


async def by_token(token: str | None) -> Credentials:
    """The grants above; without a token, an anonymous caller with no credentials at all."""
    return GRANTS[token] if token is not None else Credentials({})


def make_gateway(approval: str = "destructive", **options: Any) -> tuple[FastAPI, Gateway]:
    app = create_app()
    effects = options.pop("effects", Effects(approval=approval))  # type: ignore[arg-type]
    defaults: dict[str, Any] = {"app": app, "whoami": "users.get_current_user", "spec": demo_catalog()}
    gateway = Gateway(**{**defaults, "auth": by_token, "effects": effects, **options})
    gateway.mount(app, "/mcp")
    return app, gateway


@asynccontextmanager
async def connect(
    app: FastAPI,
    token: str | None = "alice",  # noqa: S107 - a grant of the tests (GRANTS)
    *,
    ui: bool = False,
    mode: Any = "auto",
) -> AsyncIterator[Client]:
    headers = {"authorization": f"Bearer {token}"} if token is not None else {}
    async with (
        httpx2.AsyncClient(transport=httpx2.ASGITransport(app), headers=headers) as http,
        Client(
            streamable_http_client(f"{BASE}/mcp", http_client=http), extensions=[UI] if ui else None, mode=mode
        ) as client,
    ):
        yield client


def text(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def delete(client: Client, product_id: int = 1, **more: Any) -> types.CallToolResult:
    return await client.call_tool("call_function", {"name": DELETE, "args": {"product_id": product_id}, **more})


async def product_exists(client: Client, product_id: int) -> bool:
    found = await client.call_tool(
        "call_function", {"name": "products.get_product", "args": {"product_id": product_id}}
    )
    return not found.is_error


async def confirmation_of(client: Client, product_id: int = 1) -> str:
    first = await delete(client, product_id)
    assert not first.is_error and first.structured_content is not None
    handle = first.structured_content["confirmation"]
    assert isinstance(handle, str)
    return handle


# The rule: which functions wait


def test_destructive_holds_destructive_functions_and_writes_holds_every_function_that_is_not_read_only() -> None:
    catalog = demo_catalog()
    held = {
        level: {f.name for f in catalog.functions() if Policy(catalog, approval=level).needs_approval(f)}
        for level in get_args(ApprovalLevel)
    }
    assert held["none"] == set()
    assert held["destructive"] == {"customers.delete_customer", "products.delete_product"}
    assert held["writes"] == {f.name for f in catalog.functions() if not f.read_only} > held["destructive"]


def test_the_approval_option_is_a_flag_and_a_variable_and_refuses_a_level_it_does_not_know(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = argparse.ArgumentParser()
    gateway_flags(parser, ("all", "http", "serve"))
    options = gateway_options(parser.parse_args(["--approval", "destructive", "--approval-ttl", "60"]))
    effects = GatewayConfig(**options).effects
    assert (effects.approval, effects.approval_ttl) == ("destructive", 60.0)

    monkeypatch.setenv("MCP_GATEWAY_APPROVAL", "writes")
    parser = argparse.ArgumentParser()
    gateway_flags(parser, ("all", "http", "serve"))
    assert GatewayConfig(**gateway_options(parser.parse_args([]))).effects.approval == "writes"
    with pytest.raises(SystemExit):
        parser.parse_args(["--approval", "everything"])
    assert "must be one of none, destructive, writes, not 'everything'" in capsys.readouterr().err

    with pytest.raises(ConfigError, match="approval must be one of 'none', 'destructive', 'writes'"):
        Effects(approval="all")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="approval_ttl must be a positive number of seconds"):
        Effects(approval="writes", approval_ttl=0)


def test_client_supports_ui_when_it_declares_the_apps_extension_with_the_app_mime_type() -> None:
    declared = {"extensions": {UI_EXTENSION: {"mimeTypes": [APP_MIME_TYPE]}}}
    assert client_supports_ui(declared)
    assert client_supports_ui(types.ClientCapabilities.model_validate(declared))
    others: list[object] = [
        None,
        {},
        {"extensions": {UI_EXTENSION: {}}},
        {"extensions": {UI_EXTENSION: {"mimeTypes": []}}},
    ]
    for other in others:
        assert not client_supports_ui(other)


# Without MCP Apps: the agent relays the person's answer


async def test_a_destructive_call_runs_only_once_the_person_confirmed_it_with_the_same_arguments() -> None:
    app, gateway = make_gateway()
    async with gateway.lifespan(), connect(app) as client:
        first = await delete(client, 1)
        assert not first.is_error
        said = text(first)
        assert "Not run" in said and "DELETE /products/{product_id}" in said and '{"product_id": 1}' in said
        structured = first.structured_content or {}
        assert {key: structured[key] for key in ("status", "function", "method", "path", "effect", "arguments")} == {
            "status": "confirmation_required",
            "function": DELETE,
            "method": "DELETE",
            "path": "/products/{product_id}",
            "effect": "destructive",
            "arguments": {"product_id": 1},
        }
        handle = structured["confirmation"]
        assert f'"confirmation": "{handle}"' in said and len(handle) >= 32
        assert await product_exists(client, 1)

        done = await delete(client, 1, confirmation=handle)
        assert not done.is_error and "204" in text(done)
        assert not await product_exists(client, 1)


async def test_a_confirmation_for_other_arguments_or_another_function_runs_nothing_and_stays_good() -> None:
    app, gateway = make_gateway()
    async with gateway.lifespan(), connect(app) as client:
        handle = await confirmation_of(client, 2)
        other_arguments = await delete(client, 3, confirmation=handle)
        assert (
            other_arguments.is_error
            and "other arguments" in text(other_arguments)
            and "nothing ran" in text(other_arguments)
        )
        other_function = await client.call_tool(
            "call_function",
            {"name": "customers.delete_customer", "args": {"customer_id": 2}, "confirmation": handle},
        )
        assert other_function.is_error and f"approves a call of {DELETE}" in text(other_function)
        assert await product_exists(client, 2) and await product_exists(client, 3)
        assert not (await delete(client, 2, confirmation=handle)).is_error
        assert not await product_exists(client, 2)


async def test_a_confirmation_is_good_once_and_a_second_use_runs_nothing() -> None:
    app, gateway = make_gateway()
    async with gateway.lifespan(), connect(app) as client:
        handle = await confirmation_of(client, 4)
        assert not (await delete(client, 4, confirmation=handle)).is_error
        again = await delete(client, 4, confirmation=handle)
    assert again.is_error and "valid once" in text(again) and "without confirmation" in text(again)


@pytest.mark.parametrize("other", ["alice-narrow", "bob", None])
async def test_only_the_caller_who_was_given_a_confirmation_can_use_it(other: str | None) -> None:
    app, gateway = make_gateway()
    async with gateway.lifespan(), connect(app, "alice") as alice, connect(app, other) as someone:
        handle = await confirmation_of(alice, 5)
        refused = await delete(someone, 5, confirmation=handle)
        assert refused.is_error and text(refused).startswith("No call is waiting for approval")
        assert await product_exists(alice, 5)
        assert not (await delete(alice, 5, confirmation=handle)).is_error


async def test_a_confirmation_expires_after_the_approval_ttl() -> None:
    clock = FakeClock()
    app, gateway = make_gateway(effects=Effects(approval="destructive", approval_ttl=60, approval_clock=clock))
    async with gateway.lifespan(), connect(app) as client:
        kept = await confirmation_of(client, 6)
        late = await confirmation_of(client, 7)
        clock.advance(59)
        assert not (await delete(client, 6, confirmation=kept)).is_error
        clock.advance(2)
        expired = await delete(client, 7, confirmation=late)
        assert expired.is_error and "for 1 minutes" in text(expired)
        assert await product_exists(client, 7)


async def test_of_two_uses_of_one_confirmation_at_the_same_time_exactly_one_runs() -> None:
    app, gateway = make_gateway()
    async with gateway.lifespan(), connect(app) as one, connect(app) as two:
        handle = await confirmation_of(one, 8)
        results: list[types.CallToolResult] = []

        async def use(client: Client) -> None:
            results.append(await delete(client, 8, confirmation=handle))

        async with anyio.create_task_group() as group:
            group.start_soon(use, one)
            group.start_soon(use, two)
    assert sorted(result.is_error for result in results) == [False, True]


async def test_a_hidden_function_gets_no_confirmation_but_the_unknown_function_error() -> None:
    app, gateway = make_gateway(access=Access(hide=[DELETE]))
    async with gateway.lifespan(), connect(app) as client:
        hidden = await delete(client, 1)
    assert hidden.is_error and text(hidden).startswith(f"Unknown function {DELETE!r}")


async def test_arguments_that_do_not_fit_are_refused_before_anyone_is_asked() -> None:
    app, gateway = make_gateway()
    async with gateway.lifespan(), connect(app) as client:
        wrong = await delete(client, "one")  # type: ignore[arg-type]
    assert wrong.is_error and text(wrong).startswith(f"Invalid arguments for {DELETE}")


async def test_writes_holds_every_change_and_lets_reads_through() -> None:
    app, gateway = make_gateway("writes")
    async with gateway.lifespan(), connect(app) as client:
        created = await client.call_tool(
            "call_function", {"name": "customers.create_customer", "args": {"name": "Ada", "email": "ada@example.com"}}
        )
        assert (created.structured_content or {}).get("status") == "confirmation_required"
        assert (created.structured_content or {}).get("effect") == "write"
        listed = await client.call_tool("call_function", {"name": "customers.list_customers", "args": {}})
        assert not listed.is_error and "status" not in (listed.structured_content or {})


async def test_a_promoted_tool_that_waits_gains_a_confirmation_argument_and_drops_its_output_schema() -> None:
    app, gateway = make_gateway(tools=[DELETE, "products.get_product"])
    async with gateway.lifespan(), connect(app) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        deleting, reading = tools["products-delete_product"], tools["products-get_product"]
        assert deleting.input_schema["properties"]["confirmation"]["type"] == "string"
        assert "confirmation" not in deleting.input_schema.get("required", [])
        assert deleting.output_schema is None
        assert "confirmation" not in reading.input_schema["properties"] and reading.output_schema is not None
        assert "confirmation" in tools["call_function"].input_schema["properties"]

        first = await client.call_tool("products-delete_product", {"product_id": 9})
        handle = (first.structured_content or {})["confirmation"]
        assert "call products-delete_product again" in text(first)
        refused = await client.call_tool("products-delete_product", {"product_id": 10, "confirmation": handle})
        assert refused.is_error and await product_exists(client, 10)
        done = await client.call_tool("products-delete_product", {"product_id": 9, "confirmation": handle})
        assert not done.is_error and not await product_exists(client, 9)


async def test_run_script_refuses_a_function_that_waits_and_names_call_function() -> None:
    limits = ScriptLimits(timeout=5.0, max_concurrent=1, slot_wait=0.5)
    app, gateway = make_gateway(scripts=ScriptConfig(allow_writes=True, limits=limits))
    code = (
        "let r; try { await call('products.delete_product', {product_id: 1}); r = 'ran' } "
        "catch (e) { r = e.message }; r"
    )
    async with gateway.lifespan(), connect(app) as client:
        said = text(await client.call_tool("run_script", {"code": code}))
        assert "needs a person's approval" in said and "call_function" in said
        assert await product_exists(client, 1)


async def test_a_caller_has_at_most_its_budget_of_calls_waiting_and_a_used_one_frees_its_place() -> None:
    app, gateway = make_gateway(limits=Limits(approvals_pending_per_caller=2))
    async with gateway.lifespan(), connect(app, "alice") as alice, connect(app, "bob") as bob:
        first = await confirmation_of(alice, 1)
        await confirmation_of(alice, 2)
        refused = await delete(alice, 3)
        assert refused.is_error and "Limits.approvals_pending_per_caller (--approvals-pending-per-caller) is 2" in text(
            refused
        )
        await confirmation_of(bob, 3)  # another caller's budget is its own
        assert not (await delete(alice, 1, confirmation=first)).is_error
        await confirmation_of(alice, 3)


async def test_in_process_callers_have_no_address_so_only_their_own_limit_and_the_overall_one_count() -> None:
    app, gateway = make_gateway(limits=Limits(approvals_pending_per_address=1, approvals_pending=4))
    call = {"name": DELETE, "args": {"product_id": 1}}
    async with gateway.lifespan():
        in_process = [await gateway.call_tool({"x-api-key": ADMIN_KEY}, "call_function", call) for _ in range(3)]
        async with connect(app, "alice") as alice, connect(app, "bob") as bob:
            await confirmation_of(alice)
            refused = await delete(bob)  # bob's first, but alice's address is bob's: its share is 1
        over = await gateway.call_tool({"x-api-key": ADMIN_KEY}, "call_function", call)
    assert [result.structured is not None and not result.is_error for result in in_process] == [True] * 3
    assert refused.is_error and "Limits.approvals_pending_per_address (--approvals-pending-per-address) is 1" in text(
        refused
    )
    assert over.is_error and "Limits.approvals_pending (--approvals-pending) is 4" in over.texts[0]


async def test_a_batch_answers_each_call_that_waits_with_its_own_confirmation_and_runs_none() -> None:
    app, gateway = make_gateway()

    def call(index: int, **more: str) -> dict[str, Any]:
        arguments = {"name": DELETE, "args": {"product_id": index}, **more}
        return {
            "jsonrpc": "2.0",
            "id": index,
            "method": "tools/call",
            "params": {"name": "call_function", "arguments": arguments},
        }

    headers = {"authorization": "Bearer alice", "accept": "application/json, text/event-stream"}
    async with gateway.lifespan(), httpx2.AsyncClient(transport=httpx2.ASGITransport(app), base_url=BASE) as http:
        answer = await http.post(
            "/mcp", json=[call(1), call(2)], headers={**headers, "mcp-protocol-version": "2025-03-26"}
        )
        results = [message["result"] for message in answer.json()]
        handles = [result["structuredContent"]["confirmation"] for result in results]
        assert [result["isError"] for result in results] == [False, False] and len(set(handles)) == 2
        confirmed = [call(1, confirmation=handles[0])]
        ran = await http.post("/mcp", json=confirmed, headers={**headers, "mcp-protocol-version": "2025-03-26"})
        assert ran.json()[0]["result"]["isError"] is False
        async with connect(app) as client:
            assert not await product_exists(client, 1) and await product_exists(client, 2)


async def test_a_store_that_cannot_answer_is_the_servers_trouble_with_a_retry() -> None:
    app, gateway = make_gateway(effects=Effects(approval="destructive", approval_store="redis://127.0.0.1:1/0"))
    async with gateway.lifespan(), connect(app) as client:
        with pytest.raises(MCPError) as failed:
            await delete(client, 1)
        assert failed.value.error.code == -32000
        assert failed.value.error.message == "the approval store is unavailable; retry shortly"
        assert isinstance((failed.value.error.data or {}).get("retryAfter"), int)
        assert await product_exists(client, 1)
        assert await gateway.readiness.problems() == ["the approval store is unavailable"]


async def test_approval_none_leaves_tools_and_calls_as_they_were() -> None:
    app, gateway = make_gateway("none", tools=[DELETE])
    async with gateway.lifespan(), connect(app, ui=True) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert "approve_call" not in tools and "cancel_call" not in tools
        assert "confirmation" not in tools["call_function"].input_schema["properties"]
        assert "confirmation" not in tools["products-delete_product"].input_schema["properties"]
        done = await delete(client, 1)
        assert not done.is_error and "204" in text(done)
    assert gateway.approvals is None


# With MCP Apps: the person answers in a form


async def test_an_apps_client_is_told_the_person_is_asked_and_only_the_result_meta_holds_the_handle() -> None:
    app, gateway = make_gateway()
    async with gateway.lifespan(), connect(app, ui=True) as client:
        first = await delete(client, 2)
        assert not first.is_error
        assert first.structured_content == {
            "status": "awaiting_approval",
            "function": DELETE,
            "arguments": {"product_id": 2},
            "effect": "destructive",
        }
        approval = (first.meta or {})[APPROVAL_META]
        assert set(approval) == {"handle", "expiresAt"} and approval["expiresAt"].endswith("Z")
        assert approval["handle"] not in text(first) and approval["handle"] not in json.dumps(first.structured_content)
        assert "Nothing has happened yet" in text(first) and "form" in text(first)
        assert await product_exists(client, 2)


async def test_approve_call_runs_the_arguments_the_person_approved_and_answers_as_call_function() -> None:
    app, gateway = make_gateway()
    async with gateway.lifespan(), connect(app, ui=True) as client:
        handle = (await delete(client, 2)).meta[APPROVAL_META]["handle"]  # type: ignore[index]
        approved = await client.call_tool("approve_call", {"handle": handle, "arguments": {"product_id": 3}})
        assert not approved.is_error and text(approved) == "HTTP 204 No Content: done, no content."
        assert await product_exists(client, 2) and not await product_exists(client, 3)
        again = await client.call_tool("approve_call", {"handle": handle, "arguments": {"product_id": 2}})
        assert again.is_error and await product_exists(client, 2)


async def test_approve_call_checks_the_arguments_as_any_call_and_keeps_the_handle_for_a_fixed_form() -> None:
    app, gateway = make_gateway()
    async with gateway.lifespan(), connect(app, ui=True) as client:
        handle = (await delete(client, 4)).meta[APPROVAL_META]["handle"]  # type: ignore[index]
        wrong = await client.call_tool("approve_call", {"handle": handle, "arguments": {"product_id": "four"}})
        assert wrong.is_error and text(wrong).startswith(f"Invalid arguments for {DELETE}")
        assert not (await client.call_tool("approve_call", {"handle": handle, "arguments": {"product_id": 4}})).is_error


async def test_cancel_call_spends_the_handle_and_runs_nothing() -> None:
    app, gateway = make_gateway()
    async with gateway.lifespan(), connect(app, ui=True) as client:
        handle = (await delete(client, 5)).meta[APPROVAL_META]["handle"]  # type: ignore[index]
        cancelled = await client.call_tool("cancel_call", {"handle": handle})
        assert not cancelled.is_error and cancelled.structured_content == {"status": "cancelled", "function": DELETE}
        late = await client.call_tool("approve_call", {"handle": handle, "arguments": {"product_id": 5}})
        assert late.is_error and await product_exists(client, 5)
        assert (await client.call_tool("cancel_call", {"handle": handle})).is_error


@pytest.mark.parametrize("other", ["alice-narrow", "bob", None])
async def test_a_form_handle_is_refused_to_every_other_caller(other: str | None) -> None:
    app, gateway = make_gateway()
    async with gateway.lifespan(), connect(app, ui=True) as alice, connect(app, other, ui=True) as someone:
        handle = (await delete(alice, 6)).meta[APPROVAL_META]["handle"]  # type: ignore[index]
        for tool, arguments in (("approve_call", {"arguments": {"product_id": 6}}), ("cancel_call", {})):
            refused = await someone.call_tool(tool, {"handle": handle, **arguments})
            assert refused.is_error and text(refused).startswith("No call is waiting for approval")
        assert await product_exists(alice, 6)


async def test_a_form_handle_is_no_confirmation_and_a_confirmation_is_no_form_handle() -> None:
    app, gateway = make_gateway()
    async with gateway.lifespan(), connect(app, ui=True) as apps, connect(app) as plain:
        form = (await delete(apps, 7)).meta[APPROVAL_META]["handle"]  # type: ignore[index]
        assert (await delete(apps, 7, confirmation=form)).is_error
        confirmation = await confirmation_of(plain, 7)
        refused = await apps.call_tool("approve_call", {"handle": confirmation, "arguments": {"product_id": 7}})
        assert refused.is_error and await product_exists(apps, 7)


async def test_approve_call_and_cancel_call_are_listed_and_served_to_apps_clients_alone() -> None:
    app, gateway = make_gateway()
    async with gateway.lifespan(), connect(app, ui=True) as apps, connect(app) as plain:
        listed = {tool.name: tool for tool in (await apps.list_tools()).tools}
        for name in ("approve_call", "cancel_call"):
            assert (listed[name].meta or {}).get("ui") == {"visibility": ["app"]}
        assert not {"approve_call", "cancel_call"} & {tool.name for tool in (await plain.list_tools()).tools}
        with pytest.raises(MCPError) as unknown:
            await plain.call_tool("cancel_call", {"handle": "x"})
        assert unknown.value.error.code == types.INVALID_PARAMS


async def test_a_handshake_era_client_over_http_that_declared_apps_gets_the_form_through_its_session_id() -> None:
    # The stateless transport answers its initialize with a session id that records the declaration.
    app, gateway = make_gateway()
    async with gateway.lifespan(), connect(app, ui=True, mode="legacy") as client:
        first = await delete(client, 8)
        assert (first.structured_content or {}).get("status") == "awaiting_approval"
        handle = (first.meta or {})[APPROVAL_META]["handle"]
        assert not (await client.call_tool("approve_call", {"handle": handle, "arguments": {"product_id": 8}})).is_error
        assert not await product_exists(client, 8)


async def test_a_handshake_era_client_over_http_that_declared_nothing_gets_the_confirmation() -> None:
    app, gateway = make_gateway()
    async with gateway.lifespan(), connect(app, mode="legacy") as client:
        first = await delete(client, 8)
    assert (first.structured_content or {}).get("status") == "confirmation_required" and not first.meta


async def test_a_client_on_a_lasting_session_is_read_from_its_initialize_as_over_stdio() -> None:
    _, gateway = make_gateway()
    gateway.use_stdio_credentials(ADMIN)
    async with gateway.lifespan(), Client(gateway.endpoint.server, mode="legacy", extensions=[UI]) as client:
        assert "approve_call" in {tool.name for tool in (await client.list_tools()).tools}
        first = await delete(client, 9)
        assert (first.structured_content or {}).get("status") == "awaiting_approval"
        handle = (first.meta or {})[APPROVAL_META]["handle"]
        assert not (await client.call_tool("approve_call", {"handle": handle, "arguments": {"product_id": 9}})).is_error
        assert not await product_exists(client, 9)


def test_a_function_with_its_own_confirmation_argument_cannot_be_promoted_with_approval() -> None:
    document = {
        "openapi": "3.0.3",
        "info": {"title": "Vault", "version": "1"},
        "servers": [{"url": "https://vault.example"}],
        "paths": {
            "/secrets/{id}": {
                "delete": {
                    "operationId": "delete_secret",
                    "tags": ["secrets"],
                    "parameters": [
                        {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}},
                        {"name": "confirmation", "in": "query", "schema": {"type": "string"}},
                    ],
                    "responses": {"204": {"description": "gone"}},
                }
            }
        },
    }
    Gateway(spec=document, tools=["secrets.delete_secret"])
    with pytest.raises(ConfigError, match="argument named 'confirmation', which approval adds; call it with call_func"):
        Gateway(spec=document, tools=["secrets.delete_secret"], effects=Effects(approval="destructive"))
