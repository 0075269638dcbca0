"""The HTTP transport's single-exchange path answers exactly what the SDK's own stateless transport answers.

Each request goes to the toy endpoint twice, in-process through httpx2: once with `single_exchange` on (the
default: tools/call and tools/list skip the SDK's per-request session manager) and once with it off (every
request through the SDK's `StreamableHTTPSessionManager`). Status, Content-Type and body must match.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx2
import pytest
from starlette.types import Receive, Scope, Send

from gateway.mcp.endpoint import McpEndpoint
from gateway.mcp.http import StreamableHttpApp, TransportSecurity
from gateway.mcp.toolspec import ToolResult, ToolSpec
from gateway.policy import CallerPolicy
from tests.gateway.conftest import TOY_TOOLS, toy_endpoint, toy_handle

pytestmark = pytest.mark.anyio

JSON_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def _call(name: str, arguments: Any, request_id: Any = 1, **params: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, **params},
    }


class _Counting(StreamableHttpApp):
    """Counts the requests handed to the SDK's own transport."""

    handed_over = 0

    async def _serve_sdk(self, scope: Scope, receive: Receive, send: Send, *, stream: bool = False) -> None:
        self.handed_over += 1
        await super()._serve_sdk(scope, receive, send, stream=stream)


async def _both(
    body: bytes,
    headers: dict[str, str],
    *,
    handed_over: int,
    max_body_bytes: int = 4096,
    endpoint: McpEndpoint | None = None,
) -> list[tuple[Any, ...]]:
    """(status, content type, body) from the single-exchange app and from the SDK-only app."""
    answers = []
    endpoint = endpoint or toy_endpoint()
    for single_exchange in (True, False):
        app = _Counting(
            endpoint, security=TransportSecurity(), max_body_bytes=max_body_bytes, single_exchange=single_exchange
        )
        async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app), base_url="http://localhost") as http:
            response = await http.post("/mcp", content=body, headers=headers)
        answers.append((response.status_code, response.headers.get("content-type"), response.content))
        assert app.handed_over == (handed_over if single_exchange else 1)
    return answers


CALLS = {
    "text and structured content": _call("echo", {"text": "hi", "shout": True}),
    "a string id": _call("echo", {"text": "hi"}, request_id="call-7"),
    "id zero": _call("echo", {"text": "hi"}, request_id=0),
    "a tool error": _call("refuse", {}),
    "a crashing tool": _call("crash", {}),
    "invalid arguments": _call("echo", {"shout": "loud"}),
    "arguments that are not an object": _call("echo", "hi"),
    "an unknown tool": _call("nope", {}),
    "images and binary content": _call("picture", {}),
    "the request's headers": _call("whoami", {}),
    "tools/list": {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
}


@pytest.mark.parametrize("version", [None, "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
@pytest.mark.parametrize("case", list(CALLS))
async def test_the_single_exchange_path_answers_byte_for_byte_what_the_sdk_answers(
    case: str, version: str | None
) -> None:
    headers = {**JSON_HEADERS, "authorization": "Bearer t0k3n", "x-forwarded-for": "203.0.113.9"}
    if version is not None:
        headers["mcp-protocol-version"] = version
    fast, sdk = await _both(json.dumps(CALLS[case]).encode(), headers, handed_over=0)
    assert fast == sdk
    assert fast[0] == 200 and fast[1] == "application/json"


async def test_a_call_with_a_progress_token_is_answered_as_an_sse_stream_and_json_only_clients_get_json() -> None:
    body = json.dumps(_call("echo", {"text": "hi"}, _meta={"progressToken": "p1"})).encode()
    headers = {**JSON_HEADERS, "authorization": "Bearer t0k3n"}
    streamed, _ = await _both(body, headers, handed_over=0)
    assert streamed[0] == 200 and streamed[1].startswith("text/event-stream")
    assert b'"text":"hi"' in streamed[2]
    fast, sdk = await _both(body, {**headers, "accept": "application/json"}, handed_over=0)
    assert fast == sdk and fast[1] == "application/json"


# Requests the single-exchange path hands over to the SDK, after reading (and replaying) the body or not.
HANDED_OVER = {
    "a ping": ({}, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()),
    "initialize": (
        {},
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            }
        ).encode(),
    ),
    "a notification": ({}, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()),
    "malformed JSON": ({}, b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call"'),
    "an Accept without JSON": ({"accept": "text/event-stream"}, json.dumps(_call("echo", {"text": "hi"})).encode()),
    "a Content-Type that is not JSON": (
        {"content-type": "text/plain"},
        json.dumps(_call("echo", {"text": "hi"})).encode(),
    ),
    "an unknown protocol version": (
        {"mcp-protocol-version": "1999-01-01"},
        json.dumps(_call("echo", {"text": "hi"})).encode(),
    ),
}


@pytest.mark.parametrize("case", list(HANDED_OVER))
async def test_requests_outside_the_single_exchange_path_get_the_sdks_own_answer(case: str) -> None:
    extra, body = HANDED_OVER[case]
    fast, sdk = await _both(body, {**JSON_HEADERS, "mcp-protocol-version": "2025-11-25", **extra}, handed_over=1)
    assert fast == sdk


MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


#: A tool whose `region` argument is routed in an `Mcp-Param-Region` header (2026-07-28, `x-mcp-header`).
ROUTED = ToolSpec(
    name="route",
    title="Route",
    description="Answer from a region.",
    input_schema={
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}, "note": {"type": "string"}},
        "required": ["region"],
        "additionalProperties": False,
    },
    read_only=True,
    destructive=False,
    idempotent=True,
    open_world=False,
)


#: A tool whose structured answer holds what JSON cannot write (an API answering `NaN`, read by `json.loads`).
ODD = ToolSpec(
    name="odd",
    title="Odd",
    description="Answer numbers JSON cannot write.",
    input_schema={"type": "object", "properties": {}, "additionalProperties": False},
    read_only=True,
    destructive=False,
    idempotent=True,
    open_world=False,
)


async def _routed_handle(name: str, args: dict[str, Any], caller: CallerPolicy) -> ToolResult:
    if name == "route":
        return ToolResult.text(f"served from {args['region']}")
    if name == "odd":
        return ToolResult.text("odd", structured={"nan": float("nan"), "inf": float("inf"), "text": "é"})
    return await toy_handle(name, args, caller)


def _routed_endpoint() -> McpEndpoint:
    return McpEndpoint(
        name="toy", version="1.2.3", instructions=None, tools=(*TOY_TOOLS, ROUTED, ODD), handle=_routed_handle
    )


def _modern(name: str, arguments: Any, request_id: Any = 1) -> bytes:
    return json.dumps(_call(name, arguments, request_id, _meta=MODERN_META)).encode()


#: 2026-07-28 requests: (body, extra headers, handed to the SDK's entry by the single-exchange app).
MODERN_CALLS: dict[str, tuple[bytes, dict[str, str], int]] = {
    "text and structured content": (_modern("echo", {"text": "hi", "shout": True}), {}, 0),
    "a string id": (_modern("echo", {"text": "hi"}, "call-7"), {}, 0),
    "id zero": (_modern("echo", {"text": "hi"}, 0), {}, 0),
    "a tool error": (_modern("refuse", {}), {"mcp-name": "refuse"}, 0),
    "a crashing tool": (_modern("crash", {}), {"mcp-name": "crash"}, 0),
    "invalid arguments": (_modern("echo", {"shout": "loud"}), {}, 0),
    "images and binary content": (_modern("picture", {}), {"mcp-name": "picture"}, 0),
    "the request's headers": (_modern("whoami", {}), {"mcp-name": "whoami"}, 0),
    "a routed argument with its header": (
        _modern("route", {"region": "eu"}),
        {"mcp-name": "route", "mcp-param-region": "eu"},
        0,
    ),
    "a routed argument whose header disagrees": (
        _modern("route", {"region": "eu"}),
        {"mcp-name": "route", "mcp-param-region": "us"},
        1,
    ),
    "a routed argument without its header": (_modern("route", {"region": "eu"}), {"mcp-name": "route"}, 1),
    "an Mcp-Param header for a tool that routes nothing": (_modern("echo", {"text": "hi"}), {"mcp-param-text": "x"}, 0),
    "numbers JSON cannot write, and non-ASCII text": (_modern("odd", {}), {"mcp-name": "odd"}, 0),
    "arguments that are not an object": (_modern("echo", "hi"), {}, 1),
    "an unknown tool": (_modern("nope", {}), {"mcp-name": "nope"}, 1),
    "a mismatched Mcp-Method": (_modern("echo", {"text": "hi"}), {"mcp-method": "tools/list"}, 1),
    "a mismatched Mcp-Name": (_modern("echo", {"text": "hi"}), {"mcp-name": "whoami"}, 1),
    "an envelope without its protocol version": (
        json.dumps(_call("echo", {"text": "hi"}, _meta={"io.modelcontextprotocol/clientCapabilities": {}})).encode(),
        {},
        1,
    ),
    "an Accept without JSON": (_modern("echo", {"text": "hi"}), {"accept": "text/event-stream"}, 1),
}


@pytest.mark.parametrize("case", list(MODERN_CALLS))
async def test_a_2026_07_28_call_is_answered_byte_for_byte_as_the_sdks_own_entry_answers(case: str) -> None:
    body, extra, handed_over = MODERN_CALLS[case]
    headers = {
        **JSON_HEADERS,
        "authorization": "Bearer t0k3n",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "echo",
        **extra,
    }
    fast, sdk = await _both(body, headers, handed_over=handed_over, endpoint=_routed_endpoint())
    assert fast == sdk
    if handed_over == 0:
        assert fast[0] == 200 and fast[1] == "application/json"
        assert b'"resultType":"complete"' in fast[2] and b"io.modelcontextprotocol/serverInfo" in fast[2]


async def test_a_per_request_session_manager_logs_nothing_at_info(caplog: pytest.LogCaptureFixture) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    with caplog.at_level(logging.DEBUG, logger="mcp"):
        fast, _ = await _both(body, {**JSON_HEADERS, "mcp-protocol-version": "2025-11-25"}, handed_over=1)
    assert fast[0] == 200
    noisy = [r.getMessage() for r in caplog.records if r.name.startswith("mcp.server.streamable_http")]
    assert [m for m in noisy if "session manager" in m or "Terminating session" in m] == []
