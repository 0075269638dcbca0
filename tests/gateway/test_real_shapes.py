"""The shapes of real FastAPI apps (see `tests.gateway.shapes`), through the documented mount, `serve --app` and
`stdio --app`, with the official `mcp` client."""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from fastapi import FastAPI
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from catalog.search import search
from gateway import ConfigError, Gateway, ScriptConfig
from gateway.options import Effects, Output
from gateway.rest.credentials import header_templates
from tests.gateway import shapes
from tests.gateway.conftest import serve_http

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
BEARER = {"authorization": f"Bearer {shapes.KEY}"}


def text(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


@asynccontextmanager
async def over_http(url: str, headers: dict[str, str] | None = None) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(headers=BEARER if headers is None else headers, timeout=30) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http), mode="legacy") as client,
    ):
        yield client


@asynccontextmanager
async def mounted(app: FastAPI, **options: Any) -> AsyncIterator[Client]:
    """The documented mount (README.md, docs/mounting.md), `Gateway(app=app).mount(app, "/mcp")`, on real uvicorn."""
    Gateway(app=app, **options).mount(app, "/mcp")
    async with serve_http(app) as url, over_http(url) as client:
        yield client


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _cli_env() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if not key.startswith("MCP_GATEWAY_")}


@asynccontextmanager
async def served(*args: str) -> AsyncIterator[Client]:
    """`mcp-gateway serve ARGS` as a subprocess on a free port, once uvicorn says it is running."""
    port = _free_port()
    command = [sys.executable, "-m", "gateway.cli", "serve", "--port", str(port), *args]
    process = await anyio.open_process(command, cwd=REPO, env=_cli_env())
    try:
        assert process.stderr is not None
        seen = b""
        with anyio.fail_after(30):
            while b"Uvicorn running on" not in seen:
                chunk = await process.stderr.receive()
                seen += chunk
        async with over_http(f"http://127.0.0.1:{port}") as client:
            yield client
    finally:
        process.terminate()
        await process.wait()


def stdio(*args: str, token: str = shapes.KEY) -> StdioServerParameters:
    env = {**_cli_env(), "MCP_GATEWAY_TOKEN": token}
    return StdioServerParameters(
        command=sys.executable, args=["-m", "gateway.cli", "stdio", *args], env=env, cwd=str(REPO)
    )


@pytest.mark.parametrize("factory", [shapes.limited_app, shapes.admit_one_app], ids=["limiter", "admit-one"])
async def test_a_per_request_middleware_never_holds_the_mcp_request_while_its_calls_run(
    factory: Callable[[], FastAPI],
) -> None:
    async with mounted(factory()) as client:
        one = await client.call_tool("call_function", {"name": "items.get_item", "args": {"item_id": 1}})
        listing = await client.call_tool("call_function", {"name": "items.list_items", "args": {}})
    assert not one.is_error, text(one)
    assert one.structured_content == shapes.ITEMS[1]
    assert not listing.is_error and json.loads(text(listing)) == list(shapes.ITEMS.values())


async def test_a_script_calls_through_a_per_request_limiter_concurrently() -> None:
    app = shapes.limited_app()
    async with mounted(app, whoami="users.read_me", scripts=ScriptConfig()) as client:
        result = await client.call_tool(
            "run_script",
            {
                "code": "const r = await callAll([1, 2].map(id => ({name: 'items.get_item', args: {item_id: id}})));"
                " r.map(i => i.name)"
            },
        )
    assert not result.is_error, text(result)
    assert json.loads(text(result)) == ["anvil", "rope"]


async def test_the_host_middleware_still_runs_on_every_in_process_call() -> None:
    app = shapes.limited_app()
    Gateway(app=app).mount(app)
    calls: list[str] = []

    @app.middleware("http")
    async def record(request: Any, call_next: Any) -> Any:
        calls.append(request.url.path)
        return await call_next(request)

    async with serve_http(app) as url, over_http(url) as client:
        await client.call_tool("call_function", {"name": "items.get_item", "args": {"item_id": 2}})
    # The MCP request itself passes the host's middleware by (even middleware added after mount()); the REST
    # call it made goes through it.
    assert calls == ["/items/2"]


async def test_a_sub_app_document_is_served_under_the_one_mounted_path_where_it_routes_and_said_loudly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="gateway"):
        async with mounted(shapes.mounted, spec=shapes.sub_api.openapi()) as client:
            result = await client.call_tool("call_function", {"name": "items.get_item", "args": {"item_id": 2}})
    assert result.structured_content == shapes.ITEMS[2]
    warned = (
        "none of the document's 3 operations route in the app at the app's root, and all of them route under '/api'"
    )
    assert any(warned in record.message and "--prefix /api" in record.message for record in caplog.records)


def test_a_prefix_under_which_nothing_routes_is_refused_naming_the_one_that_fits() -> None:
    with pytest.raises(ConfigError) as refused:
        Gateway(app=shapes.mounted, spec=shapes.sub_api.openapi(), prefix="/v2")
    message = str(refused.value)
    assert "none of the document's 3 operations route in the app under the prefix '/v2'" in message
    assert "prefix='/api'" in message and "--prefix /api" in message


def test_a_document_that_routes_under_two_mounted_paths_is_refused_rather_than_guessed() -> None:
    host = shapes._host(shapes._items_api("One"))
    host.mount("/api2", shapes._items_api("Two"))
    with pytest.raises(ConfigError, match=r"They route under '/api' or '/api2': pass prefix='/api'"):
        Gateway(app=host, spec=shapes.sub_api.openapi())


@pytest.mark.parametrize(
    "options",
    [
        {"app": shapes.mounted, "spec": shapes.sub_api.openapi(), "prefix": "/api"},
        {"app": shapes.relative, "spec": shapes.relative_api.openapi()},
    ],
    ids=["prefix", "relative-server-url"],
)
async def test_a_sub_app_under_a_prefix_is_called_there(options: dict[str, Any]) -> None:
    host: FastAPI = options["app"]
    Gateway(**options).mount(host, "/mcp")
    async with serve_http(host) as url, over_http(url) as client:
        result = await client.call_tool("call_function", {"name": "items.get_item", "args": {"item_id": 2}})
    assert not result.is_error, text(result)
    assert result.structured_content == shapes.ITEMS[2]


async def test_the_sub_app_itself_can_be_the_gateways_app() -> None:
    host = shapes._host(shapes._items_api("Own shop"))
    api = host.routes[-1].app  # type: ignore[attr-defined]
    Gateway(app=api).mount(host, "/mcp")
    async with serve_http(host) as url, over_http(url) as client:
        result = await client.call_tool("call_function", {"name": "items.get_item", "args": {"item_id": 1}})
    assert result.structured_content == shapes.ITEMS[1]


def test_a_document_that_mostly_routes_is_served_as_it_is(caplog: pytest.LogCaptureFixture) -> None:
    document = shapes.sub_api.openapi()
    extra = {"get": {"operationId": "gone", "tags": ["items"], "responses": {"200": {"description": "ok"}}}}
    with caplog.at_level(logging.WARNING, logger="gateway"):
        gateway = Gateway(app=shapes.sub_api, spec={**document, "paths": {**document["paths"], "/gone": extra}})
    assert gateway.catalog.has_function("items.gone") and not caplog.records


async def test_post_reads_and_post_deletes_are_classified_everywhere_from_one_answer() -> None:
    app = shapes.effects_app()
    gateway = Gateway(
        app=app,
        whoami="flows.create_flow",
        tools=["flows.read_flows", "flows.count_flows", "flows.purge_flows", "flows.bulk_delete_flows"],
        scripts=ScriptConfig(),
        effects=Effects(read_only=["*.count_*"], destructive=["flows.bulk_delete_*"]),
    )
    catalog = gateway.catalog
    effects = {f.name: (f.read_only, f.destructive, f.effect_source) for f in catalog.functions()}
    assert effects == {
        "flows.read_flows": (True, False, "document"),
        "flows.count_flows": (True, False, "operator"),
        "flows.bulk_delete_flows": (False, True, "operator"),
        "flows.purge_flows": (False, True, "document"),
        "flows.create_flow": (False, False, "method"),
    }
    annotations = {tool.name: (tool.read_only, tool.destructive) for tool in gateway.tools()}
    assert annotations["flows-read_flows"] == (True, False)
    assert annotations["flows-count_flows"] == (True, False)
    assert annotations["flows-purge_flows"] == (False, True)
    listing = search(catalog, None, module="flows").text
    assert "flows.count_flows() -> integer" in listing
    marks = {line.split("(", 1)[0]: line.rsplit("[", 1)[1].rstrip("]") for line in listing.splitlines() if "[" in line}
    assert marks["flows.count_flows"] == "read" and marks["flows.bulk_delete_flows"] == "destructive"
    gateway.mount(app)
    async with serve_http(app) as url, over_http(url) as client:
        script = await client.call_tool(
            "run_script", {"code": "[await api.flows.count_flows(), (await api.flows.read_flows())[0].name]"}
        )
        refused = await client.call_tool("run_script", {"code": "await api.flows.bulk_delete_flows()"})
    assert json.loads(text(script)) == [1, "nightly"]
    assert refused.is_error and "changes data" in text(refused)


def test_conflicting_effect_rules_are_refused_naming_both() -> None:
    with pytest.raises(Exception, match=r"flows.count_flows is matched by rules that disagree"):
        Gateway(app=shapes.effects_app(), effects=Effects(read_only=["*.count_*"], destructive=["flows.count*"]))


async def test_whoami_shows_the_identity_and_never_the_credentials() -> None:
    async with mounted(shapes.secrets_app(), whoami="users.get_me") as client:
        result = await client.call_tool("whoami", {})
    shown = text(result)
    assert result.structured_content == {
        "id": 42,
        "name": "Grace",
        "email": "grace@example.com",
        "role": "owner",
        "settings": {"theme": "dark"},
        "last_login": "2026-12-01T10:00:00Z",
    }
    assert "tok_0123" not in shown and "PRIVATE KEY" not in shown and "sk-live" not in shown
    assert "left out because they look like credentials: api_token, settings.ssh_private_key, keys" in shown


async def test_whoami_fields_choose_what_whoami_shows() -> None:
    async with mounted(
        shapes.secrets_app(), whoami="users.get_me", output=Output(whoami_fields=["name", "settings.theme"])
    ) as client:
        result = await client.call_tool("whoami", {})
    assert result.structured_content == {"name": "Grace", "settings": {"theme": "dark"}}
    assert "left out: id, email, role, api_token, keys, last_login" in text(result)


async def test_a_handler_that_raises_is_the_apis_500_not_the_gateways_internal_error() -> None:
    async with mounted(shapes.raising_app()) as client:
        result = await client.call_tool("call_function", {"name": "reports.get_report", "args": {"report_id": 1}})
    assert result.is_error
    assert text(result).startswith("HTTP 500 Internal Server Error from reports.get_report (GET /reports/{report_id}).")
    assert "Internal error in call_function" not in text(result) and "ZeroDivisionError" not in text(result)


@pytest.mark.parametrize("shape", ["factory-with-limiter", "sub-app-prefix"])
async def test_serve_and_stdio_with_app_call_through_the_same_shapes(shape: str, tmp_path: Path) -> None:
    if shape == "factory-with-limiter":
        args = ["--app", "tests.gateway.shapes:limited_app"]
    else:
        spec = tmp_path / "api.json"
        spec.write_text(json.dumps(shapes.sub_api.openapi()), encoding="utf-8")
        args = ["--app", "tests.gateway.shapes:mounted", "--spec", str(spec), "--prefix", "/api"]
    async with served(*args) as over_serve, Client(stdio(*args), mode="legacy") as over_stdio:
        results = [
            await client.call_tool("call_function", {"name": "items.get_item", "args": {"item_id": 1}})
            for client in (over_serve, over_stdio)
        ]
    for result in results:
        assert not result.is_error, text(result)
        assert result.structured_content == shapes.ITEMS[1]


@pytest.mark.parametrize(
    ("templates", "token"),
    [
        (["Authorization: Basic {basic}"], f"{shapes.BASIC_USER}:{shapes.BASIC_PASSWORD}"),
        (["X-User: {key}", "X-Password: {secret}"], f"{shapes.BASIC_USER}:{shapes.BASIC_PASSWORD}"),
    ],
    ids=["basic", "key-secret"],
)
async def test_header_templates_turn_the_token_into_the_apis_own_credentials(templates: list[str], token: str) -> None:
    app = shapes.basic_app()
    Gateway(app=app, auth=header_templates(templates), whoami="users.read_me").mount(app)
    async with serve_http(app) as url, over_http(url, {"authorization": f"Bearer {token}"}) as client:
        result = await client.call_tool("whoami", {})
    if templates[0].startswith("Authorization"):
        assert result.structured_content == {"name": shapes.BASIC_USER}
    else:
        # The app wants Basic, so split headers are refused by the app itself, as the REST call would be.
        assert result.is_error and "HTTP 401" in text(result)


async def test_stdio_sends_the_token_through_an_auth_header_template() -> None:
    token = f"{shapes.BASIC_USER}:{shapes.BASIC_PASSWORD}"
    args = ["--app", "tests.gateway.shapes:basic_app", "--whoami", "users.read_me"]
    async with (
        Client(stdio(*args, "--auth-header", "Authorization: Basic {basic}", token=token), mode="legacy") as basic,
        Client(stdio(*args, token=token), mode="legacy") as bearer,
    ):
        accepted = await basic.call_tool("whoami", {})
        refused = await bearer.call_tool("whoami", {})
    assert accepted.structured_content == {"name": shapes.BASIC_USER}
    assert refused.is_error and "HTTP 401" in text(refused)


@pytest.mark.parametrize(
    ("template", "said"),
    [
        ("X-API-Key {token}", "must be 'Name: value'"),
        ("X-API-Key: {password}", "uses 'password'; the placeholders are {token}, {key}, {secret} and {basic}"),
        ("Bad Name: {token}", "must be 'Name: value'"),
    ],
)
def test_a_header_template_that_cannot_work_is_refused_saying_why(template: str, said: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(said)):
        header_templates([template])


def test_a_fastapi_default_title_is_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    app = FastAPI()

    @app.get("/ping", tags=["health"])
    async def ping() -> dict[str, str]:
        return {"pong": "yes"}

    with caplog.at_level(logging.WARNING, logger="gateway"):
        Gateway(app=app)
        assert any("FastAPI's default 'FastAPI'" in record.message for record in caplog.records)
        caplog.clear()
        Gateway(app=app, output=Output(name="pinger"))
    assert not caplog.records


async def test_mounting_where_the_app_already_serves_a_route_is_refused_and_another_path_works() -> None:
    app = shapes._items_api("Own MCP")

    @app.post("/mcp")
    async def own_mcp() -> dict[str, str]:
        return {"mine": "yes"}

    with pytest.raises(ConfigError, match=r"the app already serves /mcp itself.*gateway.mount\(app, '/gateway/mcp'\)"):
        Gateway(app=app).mount(app, "/mcp")
    Gateway(app=app).mount(app, "/gateway/mcp")
    async with serve_http(app) as url, over_http(f"{url}/gateway") as client:
        result = await client.call_tool("call_function", {"name": "items.get_item", "args": {"item_id": 1}})
        async with httpx2.AsyncClient() as http:
            own = await http.post(f"{url}/mcp")
    assert result.structured_content == shapes.ITEMS[1]
    # The app's own /mcp is untouched.
    assert own.json() == {"mine": "yes"}
