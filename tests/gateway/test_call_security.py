"""What an agent cannot make the gateway send: calls from a borrowed address, credentials in URLs or to hosts
the operator did not allow."""

from __future__ import annotations

import http.server
import json
import logging
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from gateway import ConfigError, Gateway, ToolError
from gateway.cli.commands import main
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


# Where calls go when the operator names no upstream: the document's first server, within limits


class DocumentSite:
    """A real http server on 127.0.0.1 that serves one document at /openapi.json and answers every other GET with
    the path and Authorization header it was sent."""

    def __init__(self) -> None:
        self.document: dict[str, Any] = {}
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path == "/openapi.json":
                    body = json.dumps(site.document).encode()
                else:
                    body = json.dumps({"path": self.path, "auth": self.headers.get("authorization")}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def serving(self, servers: list[dict[str, Any]]) -> str:
        """The URL of a document whose `servers` are these."""
        self.document = document(servers)
        return self.url + "/openapi.json"


@pytest.fixture
def site() -> Iterator[DocumentSite]:
    served = DocumentSite()
    thread = threading.Thread(target=served.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        served.server.shutdown()
        served.server.server_close()
        thread.join()


def test_a_document_cannot_send_credentials_over_plain_http_to_another_machine() -> None:
    with pytest.raises(ConfigError) as refused:
        Gateway(spec=document([{"url": "http://api.example.com/v1"}]))
    message = str(refused.value)
    assert message.startswith("the document's first server URL http://api.example.com/v1 is plain http to ")
    assert "--upstream http://api.example.com/v1" in message
    assert "Gateway(upstream='http://api.example.com/v1')" in message


def test_a_protocol_relative_server_takes_the_documents_scheme_and_is_refused_over_plain_http(
    site: DocumentSite,
) -> None:
    with pytest.raises(ConfigError, match=r"http://api\.example\.com/v1 is plain http to api\.example\.com"):
        Gateway(spec=site.serving([{"url": "//api.example.com/v1"}]))


def test_plain_http_the_operator_names_is_its_own_choice() -> None:
    gateway = Gateway(spec=document([{"url": "http://api.example.com/v1"}]), upstream="http://api.example.com/v1")
    assert gateway.upstream == "http://api.example.com/v1"


async def test_a_document_on_this_machine_may_name_plain_http_on_this_machine_and_calls_go_there(
    site: DocumentSite, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="gateway"):
        gateway = Gateway(spec=site.serving([{"url": "/v1"}]))
    assert not [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert f"calls go to {site.url}/v1, the document's first server URL" in caplog.text
    async with gateway.lifespan():
        answer = await gateway.call({"authorization": "Bearer caller-token"}, "f.list", {})
    assert answer == {"path": "/v1/files", "auth": "Bearer caller-token"}


def test_a_fetched_document_that_names_another_host_for_its_api_is_served_with_a_warning_naming_both(
    site: DocumentSite, caplog: pytest.LogCaptureFixture
) -> None:
    # GitHub's own: the document on raw.githubusercontent.com, the API on api.github.com.
    with caplog.at_level(logging.WARNING, logger="gateway"):
        gateway = Gateway(spec=site.serving([{"url": "https://api.example.com/v1"}]))
    assert gateway.upstream == "https://api.example.com/v1"
    warned = [record.message for record in caplog.records if record.levelno == logging.WARNING]
    assert len(warned) == 1, warned
    assert warned[0].startswith("the API's document came from 127.0.0.1, and its first server URL sends every call")
    assert "to api.example.com:" in warned[0] and "--upstream" in warned[0]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="gateway"):
        Gateway(spec=site.serving([{"url": "https://api.example.com/v1"}]), upstream="https://api.example.com/v1")
    assert not caplog.records


def test_the_command_line_refuses_a_plain_http_document_server_and_names_the_flag_that_accepts_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "openapi.json"
    spec.write_text(json.dumps(document([{"url": "http://api.example.com/v1"}])), encoding="utf-8")
    snapshot = tmp_path / "api.json"
    assert main(["snapshot", "check", str(snapshot), "--spec", str(spec), "--update"]) == 1
    assert "--upstream http://api.example.com/v1" in capsys.readouterr().err
    named = ["--spec", str(spec), "--upstream", "http://api.example.com/v1", "--update"]
    assert main(["snapshot", "check", str(snapshot), *named]) == 0
