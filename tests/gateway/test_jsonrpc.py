"""JSON-RPC envelopes over HTTP: batches at 2025-03-26, refused after; short protocol errors; the body limit.

Raw HTTP first (in-process through httpx2, and on real uvicorn), then the official `mcp` client, which shows a
JSON-RPC error body as the error's own message.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from gateway.mcp.http import StreamableHttpApp, TransportSecurity
from tests.gateway.conftest import serve_http, toy_endpoint

pytestmark = pytest.mark.anyio

JSON_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def _call(name: str, arguments: Any, request_id: Any = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def _app(max_body_bytes: int = 4096, *, single_exchange: bool = True) -> StreamableHttpApp:
    return StreamableHttpApp(
        toy_endpoint(), security=TransportSecurity(), max_body_bytes=max_body_bytes, single_exchange=single_exchange
    )


async def _post(body: Any, version: str | None, *, app: StreamableHttpApp | None = None) -> httpx2.Response:
    headers = dict(JSON_HEADERS)
    if version is not None:
        headers["mcp-protocol-version"] = version
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    transport = httpx2.ASGITransport(app or _app())
    async with httpx2.AsyncClient(transport=transport, base_url="http://localhost") as http:
        return await http.post("/mcp", content=content, headers=headers)


@pytest.mark.parametrize("version", [None, "2025-03-26", "2024-11-05"])
@pytest.mark.parametrize("single_exchange", [True, False], ids=["single exchange", "sdk only"])
async def test_a_batch_at_2025_03_26_is_answered_as_a_batch_in_order(
    version: str | None, single_exchange: bool
) -> None:
    batch = [
        _call("echo", {"text": "one"}, request_id=1),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "two", "method": "tools/list"},
        _call("echo", {"text": "three"}, request_id=3),
        {"jsonrpc": "2.0", "id": 4, "method": "ping"},
    ]
    response = await _post(batch, version, app=_app(single_exchange=single_exchange))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    answers = response.json()
    assert [answer["id"] for answer in answers] == [1, "two", 3, 4]
    assert answers[0]["result"]["structuredContent"] == {"text": "one"}
    assert "echo" in [tool["name"] for tool in answers[1]["result"]["tools"]]
    assert answers[2]["result"]["structuredContent"] == {"text": "three"}
    assert answers[3]["result"] == {}


async def test_each_answer_in_a_batch_is_what_the_same_request_gets_alone() -> None:
    requests = [_call("echo", {"text": "hi"}), _call("refuse", {}, 2), _call("nope", {}, 3), _call("echo", {}, 4)]
    alone = [(await _post(request, "2025-03-26")).json() for request in requests]
    batched = (await _post(requests, "2025-03-26")).json()
    assert batched == alone


async def test_a_batch_of_only_notifications_is_accepted_with_202() -> None:
    response = await _post([{"jsonrpc": "2.0", "method": "notifications/initialized"}], "2025-03-26")
    assert response.status_code == 202
    assert response.content == b""


async def test_bad_members_of_a_batch_get_their_own_short_errors() -> None:
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
        {"jsonrpc": "1.0", "id": 2, "method": "ping"},
        7,
        {"jsonrpc": "2.0", "id": 3, "method": "ping"},
    ]
    answers = (await _post(batch, "2025-03-26")).json()
    assert [(answer["id"], answer.get("error", {}).get("code")) for answer in answers] == [
        (1, -32600),
        (2, -32600),
        (None, -32600),
        (3, None),
    ]
    assert "initialize" in answers[0]["error"]["message"]
    assert '"jsonrpc": "2.0"' in answers[1]["error"]["message"]
    assert all(len(answer["error"]["message"]) < 200 for answer in answers[:3])


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
@pytest.mark.parametrize("single_exchange", [True, False], ids=["single exchange", "sdk only"])
async def test_a_batch_after_2025_03_26_is_refused_with_a_clear_invalid_request(
    version: str, single_exchange: bool
) -> None:
    response = await _post([_call("echo", {"text": "hi"})], version, app=_app(single_exchange=single_exchange))
    assert response.status_code == 400
    error = response.json()
    assert error["id"] is None
    assert error["error"]["code"] == -32600
    message = error["error"]["message"]
    assert "batch" in message and version in message and "own POST" in message
    assert len(message) < 200
    assert "data" not in error["error"]


async def test_an_empty_batch_is_an_invalid_request() -> None:
    response = await _post([], "2025-03-26")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32600


BAD_ENVELOPES = {
    "a wrong jsonrpc version": ({"jsonrpc": "1.0", "id": 1, "method": "tools/call"}, 1, '"jsonrpc": "2.0"'),
    "a method that is not a string": ({"jsonrpc": "2.0", "id": 1, "method": 5}, 1, '"method"'),
    "an id that is an object": ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}, None, '"id"'),
    "params as an array": ({"jsonrpc": "2.0", "id": 9, "method": "ping", "params": [1]}, 9, '"params"'),
    "neither a request nor a response": ({"jsonrpc": "2.0", "id": 1}, 1, '"method"'),
    "a JSON string": ("tools/call", None, "JSON object"),
}


@pytest.mark.parametrize("case", list(BAD_ENVELOPES))
async def test_a_message_that_is_not_json_rpc_gets_a_short_invalid_request_without_a_dump(case: str) -> None:
    body, echoed_id, named = BAD_ENVELOPES[case]
    response = await _post(body, "2025-11-25")
    assert response.status_code == 400
    error = response.json()
    assert error["id"] == echoed_id
    assert error["error"]["code"] == -32600
    assert named in error["error"]["message"]
    assert len(error["error"]["message"]) < 200
    assert "pydantic" not in response.text and "validation error" not in response.text.lower()


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
@pytest.mark.parametrize("declared", [True, False], ids=["declared length", "chunked"])
async def test_an_oversized_request_gets_a_json_rpc_error_naming_the_limit(version: str, declared: bool) -> None:
    body = json.dumps(_call("echo", {"text": "x" * 5000})).encode()
    headers = {**JSON_HEADERS, "mcp-protocol-version": version}

    async def chunks() -> Any:
        yield body[:2000]
        yield body[2000:]

    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(_app(4096)), base_url="http://localhost") as http:
        response = await http.post("/mcp", content=body if declared else chunks(), headers=headers)
    assert response.status_code == 413
    assert response.headers["content-type"] == "application/json"
    error = response.json()["error"]
    assert error["code"] == -32600
    assert "4,096 bytes" in error["message"] and "max_body_bytes" in error["message"]
    if declared:
        assert f"{len(body):,} bytes" in error["message"]


async def test_batches_and_refusals_hold_on_real_uvicorn() -> None:
    async with serve_http(_app()) as base, httpx2.AsyncClient(base_url=base) as http:
        headers = {**JSON_HEADERS, "host": "localhost"}
        batch = json.dumps([_call("echo", {"text": "a"}), _call("echo", {"text": "b"}, 2)])
        answered = await http.post("/mcp", content=batch, headers={**headers, "mcp-protocol-version": "2025-03-26"})
        refused = await http.post("/mcp", content=batch, headers={**headers, "mcp-protocol-version": "2025-11-25"})
        big = json.dumps(_call("echo", {"text": "x" * 5000}))
        too_big = await http.post("/mcp", content=big, headers={**headers, "mcp-protocol-version": "2025-11-25"})
    assert [answer["result"]["structuredContent"]["text"] for answer in answered.json()] == ["a", "b"]
    assert (refused.status_code, refused.json()["error"]["code"]) == (400, -32600)
    assert (too_big.status_code, too_big.json()["error"]["code"]) == (413, -32600)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_official_client_shows_the_body_limit_in_the_error(mode: str) -> None:
    transport = httpx2.ASGITransport(_app(4096))
    async with (
        httpx2.AsyncClient(transport=transport) as http,
        Client(streamable_http_client("http://localhost/mcp", http_client=http), mode=mode) as client,
    ):
        assert (await client.call_tool("echo", {"text": "small"})).is_error is False
        with pytest.raises(MCPError) as raised:
            await client.call_tool("echo", {"text": "x" * 5000})
    assert raised.value.error.code == -32600
    assert "4,096 bytes" in raised.value.error.message
