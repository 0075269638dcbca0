"""What an agent cannot make the gateway send: calls from a borrowed address, credentials in URLs or to hosts
the operator did not allow."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import mcp_types as types
import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from gateway import ConfigError, Gateway, ToolError
from gateway.rest.transports import UpstreamTransport
from gateway.rest.transports.upstream import shown_url

pytestmark = pytest.mark.anyio

OK = {"200": {"description": "ok"}}


def loopback_only_app() -> FastAPI:
    """An admin endpoint that answers only to this machine, as many apps guard their internals."""
    app = FastAPI(title="Guarded")

    @app.get("/admin/secret", tags=["admin"], operation_id="read_secret")
    async def read_secret(request: Request) -> Any:
        if request.client is None or request.client.host != "127.0.0.1":
            return JSONResponse({"detail": "local callers only"}, status_code=403)
        return {"secret": "s3cr3t"}

    return app


@asynccontextmanager
async def client_from(app: FastAPI, address: str, headers: dict[str, str]) -> AsyncIterator[Client]:
    """The official client, connecting from `address` (as the server sees the peer)."""
    transport = httpx2.ASGITransport(app, client=(address, 40123))
    async with (
        httpx2.AsyncClient(transport=transport, headers=headers) as http,
        Client(streamable_http_client("http://localhost/mcp", http_client=http), mode="legacy") as client,
    ):
        yield client


def text(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def test_a_remote_caller_cannot_borrow_the_gateways_loopback_address() -> None:
    app = loopback_only_app()
    Gateway(app=app).mount(app)
    spoofed = {"x-forwarded-for": "127.0.0.1", "x-real-ip": "127.0.0.1"}
    async with client_from(app, "203.0.113.7", spoofed) as remote, client_from(app, "127.0.0.1", {}) as local:
        refused = await remote.call_tool("call_function", {"name": "admin.read_secret", "args": {}})
        allowed = await local.call_tool("call_function", {"name": "admin.read_secret", "args": {}})
    # As the REST API answers the same callers directly.
    assert refused.is_error and "HTTP 403" in text(refused) and "s3cr3t" not in text(refused)
    assert allowed.structured_content == {"secret": "s3cr3t"}


def document(top: list[dict[str, Any]] | None = None, **operation: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": "Files", "version": "1"},
        "paths": {"/files": {"get": {"operationId": "list", "tags": ["f"], "responses": OK, **operation}}},
    }
    if top is not None:
        doc["servers"] = top
    return doc


@pytest.mark.parametrize(
    ("options", "what"),
    [
        ({"upstream": "https://svc:hunter2@api.example.com/v1"}, "upstream"),
        ({"spec": document([{"url": "https://svc:hunter2@api.example.com"}])}, "the document's server URL"),
        (
            {
                "spec": document(servers=[{"url": "https://svc:hunter2@files.example.com"}]),
                "upstream": "https://api.example.com",
            },
            "the server URL of f.list",
        ),
    ],
    ids=["upstream", "document-server", "operation-server"],
)
def test_a_url_with_a_password_is_refused_without_ever_printing_it(options: dict[str, Any], what: str) -> None:
    # A copy: the parameter dicts outlive one run of the test (mutmut runs the suite more than once in a process).
    options = dict(options)
    spec = options.pop("spec", document())
    with pytest.raises(ConfigError) as refused:
        Gateway(spec=spec, **options)
    message = str(refused.value)
    assert message.startswith(f"{what} 'https://") and "carries a user name or password" in message
    assert "hunter2" not in message and "svc" not in message
    assert "header_templates" in message and "--auth-header" in message


def test_urls_in_messages_never_carry_userinfo_or_a_query() -> None:
    assert shown_url("https://user:pw@api.example.com:8443/v1/?token=abc") == "https://api.example.com:8443/v1"


def other_host_document(url: str) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "Files", "version": "1"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": {
            "/uploads": {"post": {"operationId": "upload", "tags": ["f"], "responses": OK, "servers": [{"url": url}]}}
        },
    }


async def test_an_operations_own_server_gets_no_credentials_unless_the_operator_allows_its_host(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="gateway"):
        gateway = Gateway(spec=other_host_document("https://evil.example.net/u"))
    warned = [record.message for record in caplog.records if "cannot be called (f.upload)" in record.message]
    assert (
        warned and warned[0].startswith("1 function cannot be called") and "--other-host evil.example.net" in warned[0]
    )
    async with gateway.lifespan():
        with pytest.raises(ToolError, match=r"served at evil\.example\.net, another host than the API's"):
            await gateway.call({"authorization": "Bearer caller-token"}, "f.upload", {})


def test_an_allowed_other_host_is_called_over_https_only() -> None:
    transport = UpstreamTransport("https://api.example.com", timeout=1, other_hosts=["uploads.example.com"])
    assert transport.refusal("https://uploads.example.com/u") is None
    assert "over https only" in (transport.refusal("http://uploads.example.com/u") or "")
    assert "--other-host files.example.com" in (transport.refusal("https://files.example.com") or "")
    # Loopback never leaves the machine: plain http is fine there.
    local = UpstreamTransport("http://127.0.0.1:1", timeout=1, other_hosts=["127.0.0.1:2"])
    assert local.refusal("http://127.0.0.1:2/u") is None
