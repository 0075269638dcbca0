"""The MCP protocol layer through the official `mcp` client: in-process, on real uvicorn, and over stdio.

Run as `python -m tests.gateway.test_transport` it serves the toy endpoint over stdio, for the stdio tests.
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from fastapi import FastAPI
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, KNOWN_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from gateway.errors import ConfigError, ToolError
from gateway.mcp.endpoint import McpEndpoint
from gateway.mcp.http import StreamableHttpApp, TransportSecurity
from gateway.mcp.stdio import run_stdio
from gateway.mcp.toolspec import EmbeddedResource, ImageContent, TextContent, ToolResult, ToolSpec
from gateway.policy import CallerPolicy
from gateway.requests import RequestInfo
from tests.gateway.conftest import (
    GOOD_TOKEN,
    RED_PIXEL,
    TOY_INSTRUCTIONS,
    TOY_TOOLS,
    serve_http,
    toy_endpoint,
    toy_handle,
)

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
MODES = ("legacy", "2026-07-28")
LOCAL = "http://localhost/mcp"
JSON_ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


def _asgi(app: StreamableHttpApp, **kwargs: Any) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app), **kwargs)


@asynccontextmanager
async def _client(
    app: StreamableHttpApp, mode: str, *, url: str = LOCAL, headers: Mapping[str, str] | None = None
) -> AsyncIterator[Client]:
    """The official client over httpx2.ASGITransport, in the given connect mode."""
    async with (
        _asgi(app, headers=dict(headers or {})) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        yield client


@asynccontextmanager
async def _handshake(http: httpx2.AsyncClient, url: str, version: str) -> AsyncIterator[ClientSession]:
    """An official client session that opens with `initialize` at `version` (Client always offers the latest)."""
    async with (
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(dispatcher=JSONRPCDispatcher(read, write)) as session,
    ):
        params = types.InitializeRequestParams(
            protocol_version=version,
            capabilities=types.ClientCapabilities(),
            client_info=types.Implementation(name="transport-tests", version="1"),
        )
        result = await session.send_request(types.InitializeRequest(params=params), types.InitializeResult)
        assert result.protocol_version == version
        session.adopt(result)
        await session.send_notification(types.InitializedNotification())
        yield session


def _leaves(group: BaseExceptionGroup[MCPError]) -> Iterator[MCPError]:
    for error in group.exceptions:
        if isinstance(error, BaseExceptionGroup):
            yield from _leaves(error)
        else:
            yield error


def _text(result: types.CallToolResult) -> str:
    assert len(result.content) >= 1
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def _assert_toy_tools(tools: list[types.Tool]) -> None:
    assert [tool.name for tool in tools] == [spec.name for spec in TOY_TOOLS]
    for tool, spec in zip(tools, TOY_TOOLS, strict=True):
        assert tool.title == spec.title
        assert tool.description == spec.description
        assert tool.input_schema == spec.input_schema
        assert tool.output_schema == spec.output_schema
        assert tool.annotations == types.ToolAnnotations(
            title=spec.title,
            read_only_hint=spec.read_only,
            destructive_hint=spec.destructive,
            idempotent_hint=spec.idempotent,
            open_world_hint=spec.open_world,
        )


# Tool specs and endpoint construction


def _spec(**changes: Any) -> ToolSpec:
    fields: dict[str, Any] = {
        "name": "t",
        "title": "T",
        "description": "A tool.",
        "input_schema": {"type": "object"},
        "read_only": True,
        "destructive": False,
        "idempotent": True,
        "open_world": False,
    }
    return ToolSpec(**(fields | changes))


@pytest.mark.parametrize("name", ["", "a.b", "has space", "x" * 65, "ünï"])
def test_a_tool_spec_refuses_names_claude_and_openai_reject(name: str) -> None:
    with pytest.raises(ConfigError, match="must match"):
        _spec(name=name)


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"title": " "}, "title must not be empty"),
        ({"description": ""}, "description must not be empty"),
        ({"input_schema": {"type": "array"}}, "'type': 'object'"),
        ({"input_schema": []}, "must be a JSON Schema object"),
        ({"input_schema": {"type": "object", "properties": 3}}, "not a valid JSON Schema"),
        ({"output_schema": {"type": "string"}}, "output_schema must have 'type': 'object'"),
        ({"read_only": None}, "read_only must be True or False"),
    ],
)
def test_a_tool_spec_refuses_what_clients_cannot_use(changes: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        _spec(**changes)


def test_an_endpoint_refuses_a_tool_name_given_twice() -> None:
    with pytest.raises(ConfigError, match="given twice"):
        McpEndpoint(name="x", version="1", instructions=None, tools=[_spec(), _spec()], handle=toy_handle)


def test_an_endpoint_refuses_an_empty_name_or_version() -> None:
    with pytest.raises(ConfigError, match="name"):
        McpEndpoint(name=" ", version="1", instructions=None, tools=[], handle=toy_handle)
    with pytest.raises(ConfigError, match="version"):
        McpEndpoint(name="x", version="", instructions=None, tools=[], handle=toy_handle)


def test_request_info_reads_the_bearer_token_and_forwarded_headers() -> None:
    info = RequestInfo(
        transport="http",
        headers={"Authorization": "Bearer  abc ", "X-Forwarded-For": "10.0.0.1", "X-Request-Id": "r-1"},
    )
    assert (info.bearer_token, info.forwarded_for, info.request_id) == ("abc", "10.0.0.1", "r-1")
    assert RequestInfo(transport="http", headers={"authorization": "Basic abc"}).bearer_token is None
    assert RequestInfo(transport="stdio").bearer_token is None


# Transport security settings


@pytest.mark.parametrize(
    ("allowed", "host", "accepted"),
    [
        ((), "localhost", True),
        ((), "localhost:8000", True),
        ((), "127.0.0.1:1", True),
        ((), "[::1]:8000", True),
        ((), "LOCALHOST:80", True),
        ((), "evil.example.com", False),
        ((), "localhost.evil.example.com", False),
        ((), None, False),
        ((), "[::1", False),
        (("mcp.example.com",), "mcp.example.com:443", True),
        (("mcp.example.com:8443",), "mcp.example.com:443", False),
        (("mcp.example.com:8443",), "mcp.example.com:8443", True),
        (("*.example.com",), "a.b.example.com", True),
        (("*.example.com",), "example.com.evil.net", False),
        (("*",), "anything.at.all", True),
    ],
)
def test_transport_security_accepts_loopback_and_configured_hosts(
    allowed: tuple[str, ...], host: str | None, accepted: bool
) -> None:
    assert TransportSecurity(allowed_hosts=allowed).host_allowed(host) is accepted


@pytest.mark.parametrize(
    ("allowed", "origin", "host", "accepted"),
    [
        ((), None, "localhost:8000", True),
        ((), "http://localhost:6274", "localhost:8000", True),
        ((), "http://[::1]:6274", "localhost:8000", True),
        ((), "http://evil.example.com", "localhost:8000", False),
        ((), "null", "localhost:8000", False),
        ((), "https://mcp.example.com", "mcp.example.com", True),
        ((), "https://mcp.example.com", "mcp.example.com:443", True),
        ((), "https://mcp.example.com:8443", "mcp.example.com", False),
        (("https://app.example.com",), "https://app.example.com", "mcp.example.com", True),
        (("https://app.example.com",), "http://app.example.com", "mcp.example.com", False),
        (("https://app.example.com:*",), "https://app.example.com:9000", "mcp.example.com", True),
        (("*",), "https://anything.example", "mcp.example.com", True),
    ],
)
def test_transport_security_accepts_no_origin_same_origin_and_configured_origins(
    allowed: tuple[str, ...], origin: str | None, host: str, accepted: bool
) -> None:
    assert TransportSecurity(allowed_origins=allowed).origin_allowed(origin, host) is accepted


@pytest.mark.parametrize(
    "settings", [{"allowed_hosts": "localhost"}, {"allowed_hosts": ("a b",)}, {"allowed_origins": ("example.com",)}]
)
def test_transport_security_refuses_malformed_patterns(settings: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        TransportSecurity(**settings)


# In-process, through the official client over httpx2.ASGITransport


@pytest.mark.parametrize("mode", MODES)
async def test_tools_list_shows_each_tool_with_its_title_and_all_four_annotations(mode: str) -> None:
    async with _client(toy_endpoint().http_app(), mode) as client:
        _assert_toy_tools((await client.list_tools()).tools)


@pytest.mark.parametrize("version", HANDSHAKE_PROTOCOL_VERSIONS)
async def test_each_handshake_version_negotiates_and_serves_tools(version: str) -> None:
    async with _asgi(toy_endpoint().http_app()) as http, _handshake(http, LOCAL, version) as session:
        assert session.protocol_version == version
        assert session.instructions == TOY_INSTRUCTIONS
        assert [tool.name for tool in (await session.list_tools()).tools] == [spec.name for spec in TOY_TOOLS]
        result = await session.call_tool("echo", {"text": "hi"})
        assert _text(result) == '{"text": "hi"}'


async def test_an_unknown_handshake_version_is_answered_with_the_latest_one() -> None:
    async with _asgi(toy_endpoint().http_app()) as http:
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2023-01-01",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        response = await http.post(LOCAL, json=body, headers=JSON_ACCEPT)
    assert response.json()["result"]["protocolVersion"] == HANDSHAKE_PROTOCOL_VERSIONS[-1]


async def test_the_2026_07_28_discover_negotiates_and_carries_the_instructions() -> None:
    async with _client(toy_endpoint().http_app(), "auto") as client:
        assert client.protocol_version == "2026-07-28"
        discover = client.session.discover_result
        assert discover is not None
        assert discover.supported_versions == list(MODERN_PROTOCOL_VERSIONS)
        assert discover.instructions == TOY_INSTRUCTIONS
        assert client.server_info == types.Implementation(name="toy", version="1.2.3")


def test_every_protocol_version_the_sdk_knows_is_served() -> None:
    # The two tests above cover these sets; this one fails when the SDK learns a version they miss.
    assert set(KNOWN_PROTOCOL_VERSIONS) == {*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS}


async def test_initialize_carries_the_instructions_and_server_identity() -> None:
    async with _client(toy_endpoint().http_app(), "legacy") as client:
        assert client.session.instructions == TOY_INSTRUCTIONS
        assert client.server_info == types.Implementation(name="toy", version="1.2.3")
        assert client.server_capabilities.tools is not None


@pytest.mark.parametrize("mode", MODES)
async def test_a_tool_call_returns_text_and_structured_content(mode: str) -> None:
    async with _client(toy_endpoint().http_app(), mode) as client:
        result = await client.call_tool("echo", {"text": "hi", "shout": True})
    assert not result.is_error
    assert _text(result) == '{"text": "HI"}'
    assert result.structured_content == {"text": "HI"}


@pytest.mark.parametrize("mode", MODES)
async def test_images_and_binary_content_arrive_base64_encoded(mode: str) -> None:
    async with _client(toy_endpoint().http_app(), mode) as client:
        result = await client.call_tool("picture", {})
    image, resource = result.content
    assert isinstance(image, types.ImageContent)
    assert (base64.b64decode(image.data), image.mime_type) == (RED_PIXEL, "image/png")
    assert isinstance(resource, types.EmbeddedResource)
    assert isinstance(resource.resource, types.BlobResourceContents)
    assert base64.b64decode(resource.resource.blob) == b"\x00\x01"
    assert (resource.resource.uri, resource.resource.mime_type) == ("toy://blob", "application/octet-stream")


@pytest.mark.parametrize("mode", MODES)
async def test_a_tool_error_is_a_failed_result_carrying_its_message(mode: str) -> None:
    async with _client(toy_endpoint().http_app(), mode) as client:
        result = await client.call_tool("refuse", {})
    assert result.is_error
    assert _text(result) == "refused on purpose; call echo instead"


@pytest.mark.parametrize("mode", MODES)
async def test_invalid_arguments_are_a_failed_result_naming_each_argument(mode: str) -> None:
    async with _client(toy_endpoint().http_app(), mode) as client:
        missing = await client.call_tool("echo", {"shout": "yes", "loud": 1})
    assert missing.is_error
    text = _text(missing)
    assert "missing required argument 'text'" in text
    assert "unknown argument 'loud'" in text
    assert "argument 'shout'" in text
    assert text.endswith("call echo again.")


async def test_a_crashing_tool_is_an_internal_error_reported_to_on_error_and_the_server_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    reported: list[tuple[str, Exception]] = []

    async def on_error(name: str, error: Exception) -> None:
        reported.append((name, error))

    endpoint = McpEndpoint(
        name="toy", version="1", instructions=None, tools=TOY_TOOLS, handle=toy_handle, on_error=on_error
    )
    async with _client(endpoint.http_app(), "legacy") as client:
        crashed = await client.call_tool("crash", {})
        after = await client.call_tool("echo", {"text": "still here"})
    assert crashed.is_error
    assert "Internal error in crash" in _text(crashed)
    assert "boom" not in _text(crashed)
    assert [(name, str(error)) for name, error in reported] == [("crash", "boom")]
    assert any(record.exc_info and "crash" in record.getMessage() for record in caplog.records)
    assert not after.is_error


async def test_a_result_without_the_structured_content_its_output_schema_promises_is_an_internal_error() -> None:
    async def bare(name: str, args: dict[str, Any], caller: CallerPolicy) -> ToolResult:
        return ToolResult.text("no structure")

    endpoint = McpEndpoint(name="toy", version="1", instructions=None, tools=TOY_TOOLS[:1], handle=bare)
    result = await endpoint.call_tool("echo", {"text": "x"}, endpoint.policy.of(RequestInfo(transport="in-process")))
    assert result.is_error
    assert "Internal error in echo" in result.texts[0]


async def test_a_schema_that_cannot_be_evaluated_is_an_internal_error_not_a_crash() -> None:
    dangling = _spec(input_schema={"type": "object", "properties": {"x": {"$ref": "#/$defs/missing"}}})
    endpoint = McpEndpoint(name="toy", version="1", instructions=None, tools=[dangling], handle=toy_handle)
    result = await endpoint.call_tool("t", {"x": 1}, endpoint.policy.of(RequestInfo(transport="in-process")))
    assert result.is_error
    assert "Internal error in t" in result.texts[0]


async def test_arguments_are_validated_in_the_dialect_the_schema_names() -> None:
    draft7 = _spec(
        input_schema={
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"n": {"type": "integer", "exclusiveMinimum": 0}},
        }
    )

    async def ok(name: str, args: dict[str, Any], caller: CallerPolicy) -> ToolResult:
        return ToolResult.text("ok")

    endpoint = McpEndpoint(name="toy", version="1", instructions=None, tools=[draft7], handle=ok)
    info = endpoint.policy.of(RequestInfo(transport="in-process"))
    assert not (await endpoint.call_tool("t", {"n": 1}, info)).is_error
    assert (await endpoint.call_tool("t", {"n": 0}, info)).is_error


async def test_a_handler_that_breaks_the_result_contract_is_an_internal_error_and_a_failing_hook_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def sloppy(name: str, args: dict[str, Any], caller: CallerPolicy) -> Any:
        return {"not": "a ToolResult"} if name == "t" else ToolResult(content=("raw text",))  # type: ignore[arg-type]

    async def failing_hook(name: str, error: Exception) -> None:
        raise RuntimeError("hook down")

    tools = [_spec(), _spec(name="u")]
    endpoint = McpEndpoint(
        name="toy", version="1", instructions=None, tools=tools, handle=sloppy, on_error=failing_hook
    )
    info = endpoint.policy.of(RequestInfo(transport="in-process"))
    for name in ("t", "u"):
        result = await endpoint.call_tool(name, {}, info)
        assert result.is_error
        assert f"Internal error in {name}" in result.texts[0]
    assert sum("on_error hook failed" in record.getMessage() for record in caplog.records) == 2


async def test_without_argument_validation_the_handler_sees_the_arguments_as_sent() -> None:
    async def show(name: str, args: dict[str, Any], caller: CallerPolicy) -> ToolResult:
        return ToolResult.text(json.dumps(args))

    endpoint = McpEndpoint(
        name="toy", version="1", instructions=None, tools=TOY_TOOLS[1:2], handle=show, validate_arguments=False
    )
    result = await endpoint.call_tool(
        "whoami", {"unexpected": 1}, endpoint.policy.of(RequestInfo(transport="in-process"))
    )
    assert result.texts == ('{"unexpected": 1}',)


def test_an_endpoint_refuses_tools_that_are_not_tool_specs_and_a_non_positive_body_cap() -> None:
    with pytest.raises(ConfigError, match="ToolSpec"):
        McpEndpoint(name="x", version="1", instructions=None, tools=[{"name": "t"}], handle=toy_handle)  # type: ignore[list-item]
    with pytest.raises(ConfigError, match="max_body_bytes"):
        toy_endpoint().http_app(max_body_bytes=0)


@pytest.mark.parametrize("mode", MODES)
async def test_an_unknown_tool_is_a_protocol_error(mode: str) -> None:
    async with _client(toy_endpoint().http_app(), mode) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("nope", {})
    assert raised.value.error.code == types.INVALID_PARAMS


async def test_call_tool_in_process_answers_what_a_client_gets() -> None:
    endpoint = toy_endpoint()
    info = endpoint.policy.of(RequestInfo(transport="in-process", headers={"Authorization": "Bearer t"}))
    assert await endpoint.call_tool("echo", {"text": "a"}, info) == ToolResult(
        content=(TextContent(text='{"text": "a"}'),), structured={"text": "a"}
    )
    seen = json.loads((await endpoint.call_tool("whoami", {}, info)).texts[0])
    assert (seen["transport"], seen["token"]) == ("in-process", "t")
    refused = await endpoint.call_tool("refuse", {}, info)
    assert (refused.is_error, refused.texts) == (True, ("refused on purpose; call echo instead",))
    picture = await endpoint.call_tool("picture", {}, info)
    assert isinstance(picture.content[0], ImageContent)
    assert isinstance(picture.content[1], EmbeddedResource)
    with pytest.raises(ToolError, match="unknown tool 'nope'"):
        await endpoint.call_tool("nope", {}, info)
    assert endpoint.tools() == TOY_TOOLS


@pytest.mark.parametrize("mode", MODES)
async def test_the_request_headers_reach_the_tool(mode: str) -> None:
    headers = {"Authorization": f"Bearer {GOOD_TOKEN}", "X-Forwarded-For": "10.1.2.3", "X-Request-Id": "req-7"}
    async with _client(toy_endpoint(authenticate=True).http_app(), mode, headers=headers) as client:
        seen = json.loads(_text(await client.call_tool("whoami", {})))
    assert seen == {
        "transport": "http",
        "token": GOOD_TOKEN,
        "forwarded_for": "10.1.2.3",
        "request_id": "req-7",
        "principal": "toy-user",
    }


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_rejected_token_is_a_401_with_a_bearer_challenge_before_the_mcp_layer(mode: str) -> None:
    responses: list[httpx2.Response] = []

    async def record(response: httpx2.Response) -> None:
        responses.append(response)

    app = toy_endpoint(authenticate=True).http_app()
    refusals: list[MCPError] = []
    async with _asgi(app, headers={"Authorization": "Bearer bad"}, event_hooks={"response": [record]}) as http:
        try:
            async with Client(streamable_http_client(LOCAL, http_client=http), mode=mode):
                pass
        except* MCPError as group:
            refusals = list(_leaves(group))
    assert refusals
    assert {response.status_code for response in responses} == {401}
    assert responses[0].headers["www-authenticate"] == 'Bearer error="invalid_token"'


async def test_a_failing_authenticate_hook_is_a_500_and_the_server_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    async def broken(headers: Mapping[str, str]) -> object:
        raise RuntimeError("database down")

    endpoint = McpEndpoint(
        name="toy", version="1", instructions=None, tools=TOY_TOOLS, handle=toy_handle, authenticate=broken
    )
    async with _asgi(endpoint.http_app()) as http:
        response = await http.post(LOCAL, json=PING, headers=JSON_ACCEPT)
    assert response.status_code == 500
    assert "database down" not in response.text
    assert any(record.exc_info for record in caplog.records)


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT"])
async def test_methods_other_than_post_are_405(method: str) -> None:
    async with _asgi(toy_endpoint().http_app()) as http:
        response = await http.request(method, LOCAL, headers={"accept": "text/event-stream"})
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"


async def test_a_foreign_origin_is_403_and_a_local_or_same_origin_is_served() -> None:
    async with _asgi(toy_endpoint().http_app()) as http:
        foreign = await http.post(LOCAL, json=PING, headers=JSON_ACCEPT | {"origin": "http://evil.example.com"})
        local = await http.post(LOCAL, json=PING, headers=JSON_ACCEPT | {"origin": "http://localhost:6274"})
        same = await http.post(LOCAL, json=PING, headers=JSON_ACCEPT | {"origin": "http://localhost"})
    assert foreign.status_code == 403
    assert foreign.json()["error"]["code"] == types.INVALID_REQUEST
    assert (local.status_code, same.status_code) == (200, 200)


async def test_an_unknown_host_is_421_unless_the_operator_allows_it() -> None:
    url = "http://mcp.example.com/mcp"
    async with _asgi(toy_endpoint().http_app()) as http:
        refused = await http.post(url, json=PING, headers=JSON_ACCEPT)
    allowed = toy_endpoint().http_app(security=TransportSecurity(allowed_hosts=("mcp.example.com",)))
    async with _client(allowed, "legacy", url=url) as client:
        assert (await client.list_tools()).tools
    assert refused.status_code == 421
    assert "allowed_hosts" in refused.json()["error"]["message"]


async def test_the_server_is_stateless_and_answers_json() -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    async with _asgi(toy_endpoint().http_app()) as http:
        response = await http.post(LOCAL, json=body, headers=JSON_ACCEPT)
        # No session: a request without initialize before it is served all the same.
        listed = await http.post(
            LOCAL,
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            headers=JSON_ACCEPT | {"mcp-protocol-version": "2025-11-25"},
        )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert "mcp-session-id" not in response.headers
    assert len(listed.json()["result"]["tools"]) == len(TOY_TOOLS)


async def test_an_oversized_body_is_413() -> None:
    app = toy_endpoint().http_app(max_body_bytes=100)
    async with _asgi(app) as http:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "text": "x" * 200}}
        response = await http.post(LOCAL, json=body, headers=JSON_ACCEPT)
    assert response.status_code == 413


def test_a_websocket_is_refused() -> None:
    with TestClient(toy_endpoint().http_app()) as client, pytest.raises(WebSocketDisconnect) as refused:
        with client.websocket_connect("/mcp"):
            pass
    assert refused.value.code == 1008


# Real uvicorn on 127.0.0.1


@pytest.mark.parametrize("mode", [*MODES, "auto"])
async def test_over_uvicorn_the_app_runs_bare_with_its_own_lifespan(mode: str) -> None:
    async with (
        serve_http(toy_endpoint().http_app(), lifespan="on") as base,
        Client(f"{base}/mcp", mode=mode) as client,
    ):
        _assert_toy_tools((await client.list_tools()).tools)
        result = await client.call_tool("echo", {"text": "over tcp"})
    assert result.structured_content == {"text": "over tcp"}


@pytest.mark.parametrize("version", HANDSHAKE_PROTOCOL_VERSIONS)
async def test_over_uvicorn_each_handshake_version_negotiates(version: str) -> None:
    async with (
        serve_http(toy_endpoint().http_app()) as base,
        httpx2.AsyncClient() as http,
        _handshake(http, f"{base}/mcp", version) as session,
    ):
        await session.send_ping()
        assert (await session.call_tool("echo", {"text": version})).structured_content == {"text": version}


async def test_over_uvicorn_the_405_403_and_421_answers_hold() -> None:
    async with serve_http(toy_endpoint().http_app()) as base, httpx2.AsyncClient() as http:
        get = await http.get(f"{base}/mcp", headers={"accept": "text/event-stream"})
        origin = await http.post(f"{base}/mcp", json=PING, headers=JSON_ACCEPT | {"origin": "http://evil.example.com"})
        host = await http.post(f"{base}/mcp", json=PING, headers=JSON_ACCEPT | {"host": "evil.example.com"})
    assert (get.status_code, origin.status_code, host.status_code) == (405, 403, 421)


async def test_mounted_in_a_starlette_app_it_answers_at_its_path() -> None:
    endpoint = toy_endpoint()
    host = Starlette(routes=[Route("/mcp", endpoint.http_app())])
    async with serve_http(host) as base:
        for mode in MODES:
            async with Client(f"{base}/mcp", mode=mode) as client:
                assert (await client.call_tool("echo", {"text": mode})).structured_content == {"text": mode}


@pytest.mark.parametrize("how", ["route", "mount"])
async def test_mounted_in_a_fastapi_app_beside_its_routes(how: str) -> None:
    api = FastAPI()

    @api.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    if how == "route":
        api.router.routes.append(Route("/mcp", toy_endpoint().http_app()))
        path = "/mcp"
    else:
        # Starlette redirects /mcp to /mcp/ (307) for a mount, so the client uses the slash.
        api.mount("/mcp", toy_endpoint().http_app())
        path = "/mcp/"
    async with serve_http(api) as base, Client(f"{base}{path}", mode="auto") as client:
        assert (await client.call_tool("echo", {"text": how})).structured_content == {"text": how}
        async with httpx2.AsyncClient() as http:
            assert (await http.get(f"{base}/health")).json() == {"status": "ok"}


async def test_the_sdk_server_also_serves_through_the_sdk_own_http_app_with_headers_reaching_tools() -> None:
    # The seam `McpEndpoint.server` is a plain low-level SDK server; tools still see the request headers.
    sdk_app = toy_endpoint().server.streamable_http_app(stateless_http=True, json_response=True)
    async with (
        serve_http(sdk_app) as base,
        httpx2.AsyncClient(headers={"X-Request-Id": "sdk-1"}) as http,
        Client(streamable_http_client(f"{base}/mcp", http_client=http), mode="legacy") as client,
    ):
        seen = json.loads(_text(await client.call_tool("whoami", {})))
    assert (seen["transport"], seen["request_id"], seen["principal"]) == ("http", "sdk-1", None)


# stdio, to this module run with `python -m`


def _stdio() -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "tests.gateway.test_transport"], cwd=REPO)


@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
async def test_over_stdio_the_toy_tools_are_listed_and_called(mode: str, version: str) -> None:
    async with Client(_stdio(), mode=mode) as client:
        assert (client.protocol_version, client.session.instructions) == (version, TOY_INSTRUCTIONS)
        _assert_toy_tools((await client.list_tools()).tools)
        echoed = await client.call_tool("echo", {"text": "pipe"})
        seen = json.loads(_text(await client.call_tool("whoami", {})))
        refused = await client.call_tool("refuse", {})
    assert echoed.structured_content == {"text": "pipe"}
    assert seen["transport"] == "stdio"
    assert seen["token"] is None
    assert refused.is_error


if __name__ == "__main__":
    anyio.run(run_stdio, toy_endpoint())
