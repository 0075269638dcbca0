"""MCP's conformance suite and MCP Inspector's CLI, from npm, on real uvicorn: against the toy endpoint (every
scenario for tools, resources, prompts and completions, with the tools, resources and prompts the suite asks for
by name) and against the real gateway over the demo shop (every scenario that applies to a server whose tools,
resources and prompts are the gateway's own), over HTTP and over stdio.

`scripts/install-node-tools` puts Node 22, `@modelcontextprotocol/conformance` and
`@modelcontextprotocol/inspector` under `.tools/`; without that folder these tests are skipped.
"""

from __future__ import annotations

import json
import os
import re
import socket
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
import uvicorn
from starlette.types import ASGIApp

from demo import ADMIN_KEY, create_app
from gateway.errors import ToolError
from gateway.gateway import Gateway
from gateway.mcp.endpoint import McpEndpoint
from gateway.mcp.prompts import Prompt, PromptArgument, PromptSet
from gateway.mcp.resources import Resource, ResourceSet, ResourceTemplate
from gateway.mcp.toolspec import Content, EmbeddedResource, ImageContent, TextContent, ToolResult, ToolSpec
from gateway.options import Output
from gateway.policy import CallerPolicy
from tests.gateway.conftest import RED_PIXEL, TOY_INSTRUCTIONS, TOY_TOOLS, serve_http, toy_handle

REPO = Path(__file__).resolve().parents[2]
TOOLS = REPO / ".tools"
CONFORMANCE = TOOLS / "bin" / "conformance"
INSPECTOR = TOOLS / "bin" / "mcp-inspector"

pytestmark = [
    pytest.mark.anyio,
    # CI installs the tools (make test does), so there a missing .tools/ fails instead of skipping.
    pytest.mark.skipif(
        not TOOLS.is_dir() and not os.environ.get("CI"), reason=".tools/ is absent: run scripts/install-node-tools"
    ),
]

_NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}}


def _tool(name: str, description: str, schema: dict[str, Any] | None = None) -> ToolSpec:
    return ToolSpec(
        name=name,
        title=name.replace("_", " ").capitalize(),
        description=description,
        input_schema=schema or _NO_ARGS,
        read_only=True,
        destructive=False,
        idempotent=True,
        open_world=False,
    )


# The tools the suite's tools-call-* and json-schema-2020-12 scenarios call by name, and one with an
# `x-mcp-header` argument for http-custom-header-server-validation (SEP-2243).
SUITE_TOOLS = (
    _tool("test_simple_text", "Returns one text block."),
    _tool("test_image_content", "Returns one PNG image."),
    _tool("test_embedded_resource", "Returns one embedded blob resource."),
    _tool("test_multiple_content_types", "Returns text, an image and an embedded resource."),
    _tool("test_error_handling", "Always fails."),
    _tool(
        "json_schema_2020_12_tool",
        "Tool with JSON Schema 2020-12 features",
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "$anchor": "addressDef",
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                }
            },
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
                "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                "phone": {"type": "string"},
                "email": {"type": "string"},
            },
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
            "then": {"required": ["phone"]},
            "else": {"required": ["email"]},
            "additionalProperties": False,
        },
    ),
    _tool(
        "find_region",
        "Echo a region that also travels in the Mcp-Param-Region header.",
        {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}},
    ),
)


async def _suite_handle(name: str, args: dict[str, Any], caller: CallerPolicy) -> ToolResult:
    blob = EmbeddedResource(blob=b"embedded bytes", mime_type="application/octet-stream", uri="test://embedded")
    if name == "test_simple_text":
        return ToolResult.text("This is a simple text response for testing.")
    if name == "test_image_content":
        return ToolResult(content=(ImageContent(data=RED_PIXEL, mime_type="image/png"),))
    if name == "test_embedded_resource":
        return ToolResult(content=(blob,))
    if name == "test_multiple_content_types":
        text = TextContent(text="Multiple content types test:")
        return ToolResult(content=(text, ImageContent(data=RED_PIXEL, mime_type="image/png"), blob))
    if name == "test_error_handling":
        raise ToolError("This tool intentionally returns an error for testing")
    if name in ("json_schema_2020_12_tool", "find_region"):
        return ToolResult.text(json.dumps(args))
    return await toy_handle(name, args, caller)


def _fixed(uri: str, mime_type: str, body: str | bytes) -> Resource:
    async def read(caller: CallerPolicy) -> str | bytes:
        return body

    return Resource(
        uri=uri,
        name=uri.rpartition("/")[2],
        title=uri,
        description=f"The suite's {uri}.",
        mime_type=mime_type,
        read=read,
    )


async def _template_data(values: Mapping[str, str], caller: CallerPolicy) -> str:
    return json.dumps({"id": values["id"], "templateTest": True, "data": f"Data for ID: {values['id']}"})


# The resources and prompts the suite's resources-*, prompts-* and completion-complete scenarios ask for by name.
SUITE_RESOURCES = ResourceSet(
    [
        _fixed("test://static-text", "text/plain", "This is the content of the static text resource."),
        _fixed("test://static-binary", "image/png", RED_PIXEL),
        _fixed("test://watched-resource", "text/plain", "A resource to subscribe to."),
    ],
    [
        ResourceTemplate(
            uri_template="test://template/{id}/data",
            name="template-data",
            title="Template data",
            description="Data for one id.",
            mime_type="application/json",
            read=_template_data,
            complete={"id": lambda caller: ["123", "124", "200"]},
        )
    ],
)


def _suite_prompts() -> PromptSet:
    def embedded(arguments: Mapping[str, str], caller: CallerPolicy) -> Sequence[Content]:
        resource = EmbeddedResource(
            blob=b"Embedded resource content for testing.", mime_type="text/plain", uri=arguments["resourceUri"]
        )
        return (resource, TextContent(text="Please process the embedded resource above."))

    def image(arguments: Mapping[str, str], caller: CallerPolicy) -> Sequence[Content]:
        return (
            ImageContent(data=RED_PIXEL, mime_type="image/png"),
            TextContent(text="Please analyze the image above."),
        )

    return PromptSet(
        [
            Prompt(
                name="test_simple_prompt",
                description="A simple prompt.",
                template="This is a simple prompt for testing.",
            ),
            Prompt(
                name="test_prompt_with_arguments",
                description="A prompt with two arguments.",
                arguments=(
                    PromptArgument(name="arg1", description="First test argument", required=True),
                    PromptArgument(name="arg2", description="Second test argument", required=True),
                ),
                template="Prompt with arguments: arg1='{arg1}', arg2='{arg2}'",
            ),
            Prompt(
                name="test_prompt_with_embedded_resource",
                description="A prompt that embeds a resource.",
                arguments=(
                    PromptArgument(name="resourceUri", description="URI of the resource to embed", required=True),
                ),
                template="{resourceUri}",
            ),
            Prompt(name="test_prompt_with_image", description="A prompt with an image.", template="image"),
        ],
        renderers={"test_prompt_with_embedded_resource": embedded, "test_prompt_with_image": image},
    )


def conformance_endpoint() -> McpEndpoint:
    """The toy tools plus the tools, resources and prompts the suite's scenarios ask for by name."""
    return McpEndpoint(
        name="toy-conformance",
        version="1.0.0",
        instructions=TOY_INSTRUCTIONS,
        tools=(*TOY_TOOLS, *SUITE_TOOLS),
        handle=_suite_handle,
        resources=SUITE_RESOURCES,
        prompts=_suite_prompts(),
    )


# What `conformance list --server` offers (0.2.0-alpha.12), sorted into what the toy endpoint answers.
# Each applicable scenario maps to the spec versions it runs at; the suite runs once per version.
APPLICABLE: dict[str, tuple[str, ...]] = {
    "server-initialize": ("2025-06-18", "2025-11-25"),
    "server-session-lifecycle": ("2025-06-18", "2025-11-25"),
    "ping": ("2025-06-18", "2025-11-25"),
    "tools-list": ("2025-06-18", "2025-11-25", "2026-07-28"),
    "tools-call-simple-text": ("2025-06-18", "2025-11-25", "2026-07-28"),
    "tools-call-image": ("2025-06-18", "2025-11-25", "2026-07-28"),
    "tools-call-embedded-resource": ("2025-06-18", "2025-11-25", "2026-07-28"),
    "tools-call-mixed-content": ("2025-06-18", "2025-11-25", "2026-07-28"),
    "tools-call-error": ("2025-06-18", "2025-11-25", "2026-07-28"),
    "json-schema-2020-12": ("2025-11-25", "2026-07-28"),
    "dns-rebinding-protection": ("2025-11-25", "2026-07-28"),
    "server-stateless": ("2026-07-28",),
    "http-header-validation": ("2026-07-28",),
    "http-custom-header-server-validation": ("2026-07-28",),
    "caching": ("2026-07-28",),
    "completion-complete": ("2025-06-18", "2025-11-25", "2026-07-28"),
    "resources-list": ("2025-06-18", "2025-11-25", "2026-07-28"),
    "resources-read-text": ("2025-06-18", "2025-11-25", "2026-07-28"),
    "resources-read-binary": ("2025-06-18", "2025-11-25", "2026-07-28"),
    "resources-templates-read": ("2025-06-18", "2025-11-25", "2026-07-28"),
    "resources-subscribe": ("2025-06-18", "2025-11-25"),
    "resources-unsubscribe": ("2025-06-18", "2025-11-25"),
    "sep-2164-resource-not-found": ("2026-07-28",),
    "prompts-list": ("2025-06-18", "2025-11-25", "2026-07-28"),
    "prompts-get-simple": ("2025-06-18", "2025-11-25", "2026-07-28"),
    "prompts-get-with-args": ("2025-06-18", "2025-11-25", "2026-07-28"),
    "prompts-get-embedded-resource": ("2025-06-18", "2025-11-25", "2026-07-28"),
    "prompts-get-with-image": ("2025-06-18", "2025-11-25", "2026-07-28"),
}
SPEC_VERSIONS = ("2025-06-18", "2025-11-25", "2026-07-28")

_NO_CLIENT_REQUESTS = "the tools never ask the client for input (sampling, elicitation, roots)"
NOT_APPLICABLE: dict[str, str] = {
    "logging-set-level": "the server sends no log notifications (logging is deprecated in 2026-07-28)",
    "tools-call-audio": "results carry text, images and embedded resources, never audio",
    "tools-call-with-logging": "the server sends no log notifications",
    "tools-call-with-progress": "answers are single JSON responses, without progress notifications",
    "tools-call-sampling": _NO_CLIENT_REQUESTS,
    "tools-call-elicitation": _NO_CLIENT_REQUESTS,
    "elicitation-sep1034-defaults": _NO_CLIENT_REQUESTS,
    "elicitation-sep1330-enums": _NO_CLIENT_REQUESTS,
    "server-sse-polling": "responses are JSON, never SSE streams",
    "server-sse-multiple-streams": "responses are JSON, never SSE streams",
    **{
        f"input-required-result-{case}": _NO_CLIENT_REQUESTS
        for case in (
            "basic-elicitation",
            "basic-sampling",
            "basic-list-roots",
            "request-state",
            "multiple-input-requests",
            "multi-round",
            "missing-input-response",
            "non-tool-request",
            "result-type",
            "unsupported-methods",
            "tampered-state",
            "capability-check",
            "ignore-extra-params",
            "validate-input",
        )
    },
}
# Checks inside applicable scenarios that probe features the toy endpoint does not have.
NOT_APPLICABLE_CHECKS: dict[tuple[str, str], str] = {
    ("server-stateless", "sep-2575-server-rejects-undeclared-capability"): _NO_CLIENT_REQUESTS,
    ("server-stateless", "sep-2575-missing-capability-http-400"): _NO_CLIENT_REQUESTS,
    ("server-stateless", "sep-2575-http-server-no-independent-requests-on-stream"): _NO_CLIENT_REQUESTS,
    ("server-stateless", "sep-2575-server-no-log-without-loglevel"): "the server sends no log notifications",
}

_RESULT_DIR = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$")


def _env(home: Path) -> dict[str, str]:
    # Inspector keeps a catalog under $HOME; colours only clutter a failure message.
    return {**os.environ, "HOME": str(home), "NO_COLOR": "1", "FORCE_COLOR": "0"}


def _results(output: Path) -> dict[str, list[dict[str, Any]]]:
    """The checks of each scenario the suite ran, by scenario name."""
    results: dict[str, list[dict[str, Any]]] = {}
    for folder in output.iterdir():
        match = _RESULT_DIR.match(folder.name)
        assert match is not None, f"unexpected result folder {folder.name!r}"
        results[match["scenario"]] = json.loads((folder / "checks.json").read_text())
    return results


async def _run_suite(url: str, version: str, home: Path) -> tuple[dict[str, list[dict[str, Any]]], str]:
    """Run every server scenario of the suite at `version` against `url`: the checks by scenario, and the log."""
    output = home / "results"
    command = [str(CONFORMANCE), "server", "--url", url, "--suite", "all", "--spec-version", version]
    with anyio.fail_after(120):
        # Exits non-zero for the scenarios that do not apply; the verdict is read from the results.
        run = await anyio.run_process([*command, "-o", str(output)], check=False, env=_env(home))
    return _results(output), run.stderr.decode(errors="replace")[-4000:]


def _assert_passes(
    results: dict[str, list[dict[str, Any]]],
    log: str,
    version: str,
    applicable: Mapping[str, tuple[str, ...]],
    not_applicable: Mapping[str, str],
) -> None:
    """Every applicable scenario ran and passed, and the suite has no scenario the test has not sorted."""
    unclassified = sorted(set(results) - applicable.keys() - not_applicable.keys())
    assert not unclassified, f"the suite has scenarios this test does not know; sort them: {unclassified}"
    expected = sorted(name for name, versions in applicable.items() if version in versions)
    assert sorted(set(expected) - results.keys()) == [], f"applicable scenarios did not run:\n{log}"
    failures = [
        f"{scenario} / {check['id']}: {check.get('errorMessage')}"
        for scenario in expected
        for check in results[scenario]
        if check["status"] in ("FAILURE", "WARNING") and (scenario, check["id"]) not in NOT_APPLICABLE_CHECKS
    ]
    assert failures == []
    passed = [check for scenario in expected for check in results[scenario] if check["status"] == "SUCCESS"]
    assert passed


@pytest.mark.parametrize("version", SPEC_VERSIONS)
async def test_the_conformance_suite_passes_every_scenario_for_tools_resources_prompts_and_completions(
    version: str, tmp_path: Path
) -> None:
    async with serve_http(conformance_endpoint().http_app()) as base:
        results, log = await _run_suite(f"{base}/mcp", version, tmp_path)
    _assert_passes(results, log, version, APPLICABLE, NOT_APPLICABLE)


async def _inspect(home: Path, *target_and_args: str) -> tuple[int, Any]:
    with anyio.fail_after(60):
        run = await anyio.run_process([str(INSPECTOR), "--cli", *target_and_args], check=False, env=_env(home))
    assert run.stdout, run.stderr.decode(errors="replace")
    return run.returncode, json.loads(run.stdout)


def _assert_tools_listed(listing: Any) -> None:
    tools = {tool["name"]: tool for tool in listing["tools"]}
    assert list(tools) == [spec.name for spec in (*TOY_TOOLS, *SUITE_TOOLS)]
    for spec in TOY_TOOLS:
        assert tools[spec.name]["title"] == spec.title
        assert tools[spec.name]["annotations"] == {
            "title": spec.title,
            "readOnlyHint": spec.read_only,
            "destructiveHint": spec.destructive,
            "idempotentHint": spec.idempotent,
            "openWorldHint": spec.open_world,
        }


async def test_inspector_lists_and_calls_the_tools_over_http(tmp_path: Path) -> None:
    async with serve_http(conformance_endpoint().http_app()) as base:
        url = f"{base}/mcp"
        # --strict: exit 6 when a tool schema has a portability problem of error severity.
        listed_code, listing = await _inspect(tmp_path, url, "--method", "tools/list", "--strict")
        called_code, called = await _inspect(
            tmp_path, url, "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "text=hi", "shout=true"
        )
        refused_code, refused = await _inspect(tmp_path, url, "--method", "tools/call", "--tool-name", "refuse")
    assert listed_code == 0
    _assert_tools_listed(listing)
    assert called_code == 0
    assert called["structuredContent"] == {"text": "HI"}
    assert called["content"] == [{"type": "text", "text": '{"text": "HI"}'}]
    assert refused_code != 0
    assert refused["isError"] is True
    assert refused["content"][0]["text"] == "refused on purpose; call echo instead"


async def test_inspector_lists_and_calls_the_tools_over_stdio(tmp_path: Path) -> None:
    server = [sys.executable, "-m", "tests.gateway.test_transport"]
    cwd = ["--cwd", str(REPO)]
    code, listing = await _inspect(tmp_path, *server, *cwd, "--method", "tools/list")
    called_code, called = await _inspect(tmp_path, *server, *cwd, "--method", "tools/call", "--tool-name", "whoami")
    assert code == 0
    assert [tool["name"] for tool in listing["tools"]] == [spec.name for spec in TOY_TOOLS]
    assert called_code == 0
    assert json.loads(called["content"][0]["text"])["transport"] == "stdio"


# The real gateway: `Gateway` over the demo shop, as `mcp-gateway serve` runs it, one server for the module.

#: Scenarios that call the suite's own test tools, resources or prompts by name; the gateway's are its own.
_SUITE_TOOL = "calls a test tool by name that only the toy endpoint has"
_SUITE_RESOURCE = "reads or subscribes to a test resource by URI that only the toy endpoint has"
_SUITE_PROMPT = "gets or completes a test prompt by name that only the toy endpoint has"
NEEDS_SUITE_TOOLS: dict[str, str] = {
    "tools-call-simple-text": _SUITE_TOOL,
    "tools-call-image": _SUITE_TOOL,
    "tools-call-embedded-resource": _SUITE_TOOL,
    "tools-call-mixed-content": _SUITE_TOOL,
    "tools-call-error": _SUITE_TOOL,
    "json-schema-2020-12": _SUITE_TOOL,
    "http-custom-header-server-validation": "calls a test tool with an x-mcp-header argument",
    "resources-read-text": _SUITE_RESOURCE,
    "resources-read-binary": _SUITE_RESOURCE,
    "resources-templates-read": _SUITE_RESOURCE,
    "resources-subscribe": _SUITE_RESOURCE,
    "resources-unsubscribe": _SUITE_RESOURCE,
    "prompts-get-simple": _SUITE_PROMPT,
    "prompts-get-with-args": _SUITE_PROMPT,
    "prompts-get-embedded-resource": _SUITE_PROMPT,
    "prompts-get-with-image": _SUITE_PROMPT,
    "completion-complete": _SUITE_PROMPT,
}
GATEWAY_APPLICABLE = {name: versions for name, versions in APPLICABLE.items() if name not in NEEDS_SUITE_TOOLS}


@contextmanager
def serve_in_thread(app: ASGIApp) -> Iterator[str]:
    """Run `app` on uvicorn on 127.0.0.1 in a thread of its own (so one server can outlive a test); yields its URL."""
    started = threading.Event()

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            try:
                await super().startup(sockets)
            finally:
                started.set()

        @contextmanager
        def capture_signals(self) -> Iterator[None]:
            # Signal handlers can only be installed in the main thread; pytest owns them anyway.
            yield

    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on", access_log=False)
    server = Server(config)
    thread = threading.Thread(target=server.run, name="gateway-uvicorn", daemon=True)
    thread.start()
    try:
        assert started.wait(timeout=30) and server.started, "uvicorn did not start; see its log above"
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def demo_gateway() -> Gateway:
    """The gateway `mcp-gateway serve` runs by default: the demo shop, in-process, whoami set."""
    return Gateway(app=create_app(), whoami="users.get_current_user", output=Output(name="demo-shop"))


@pytest.fixture(scope="module")
def gateway_url() -> Iterator[str]:
    with serve_in_thread(demo_gateway().standalone()) as base:
        yield f"{base}/mcp"


GATEWAY_TOOLS = [spec.name for spec in demo_gateway().tools()]
DEMO_STDIO = [sys.executable, "-m", "gateway.cli", "stdio"]


@pytest.mark.parametrize("version", SPEC_VERSIONS)
async def test_the_conformance_suite_passes_every_scenario_that_applies_to_the_gateway(
    version: str, gateway_url: str, tmp_path: Path
) -> None:
    results, log = await _run_suite(gateway_url, version, tmp_path)
    _assert_passes(results, log, version, GATEWAY_APPLICABLE, {**NOT_APPLICABLE, **NEEDS_SUITE_TOOLS})


def _assert_gateway_tools_listed(listing: Any) -> None:
    tools = listing["tools"]
    assert [tool["name"] for tool in tools] == GATEWAY_TOOLS
    for tool in tools:
        assert tool["title"] and tool["annotations"]["title"] == tool["title"]
        hints = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
        assert all(isinstance(tool["annotations"][hint], bool) for hint in hints), tool["name"]


def _first_text(result: Any) -> str:
    assert result.get("isError") is not True, result
    text = result["content"][0]["text"]
    assert isinstance(text, str)
    return text


async def test_inspector_lists_searches_and_calls_the_gateway_over_http(gateway_url: str, tmp_path: Path) -> None:
    listed_code, listing = await _inspect(tmp_path, gateway_url, "--method", "tools/list", "--strict")
    call = [gateway_url, "--method", "tools/call"]
    found_code, found = await _inspect(
        tmp_path, *call, "--tool-name", "search_functions", "--tool-arg", "query=cancel an order"
    )
    auth = ["--header", f"Authorization: Bearer {ADMIN_KEY}"]
    who_code, who = await _inspect(tmp_path, *call, "--tool-name", "whoami", *auth)
    assert (listed_code, found_code, who_code) == (0, 0, 0)
    _assert_gateway_tools_listed(listing)
    assert _first_text(found).splitlines()[0].startswith("orders.cancel_order(")
    assert json.loads(_first_text(who))["name"] == "Alice Martin"


async def test_inspector_lists_searches_and_calls_the_gateway_over_stdio(tmp_path: Path) -> None:
    server = [*DEMO_STDIO, "--cwd", str(REPO), "-e", f"MCP_GATEWAY_TOKEN={ADMIN_KEY}"]
    listed_code, listing = await _inspect(tmp_path, *server, "--method", "tools/list")
    found_code, found = await _inspect(
        tmp_path,
        *server,
        "--method",
        "tools/call",
        "--tool-name",
        "search_functions",
        "--tool-arg",
        "query=cancel an order",
    )
    who_code, who = await _inspect(tmp_path, *server, "--method", "tools/call", "--tool-name", "whoami")
    assert (listed_code, found_code, who_code) == (0, 0, 0)
    _assert_gateway_tools_listed(listing)
    assert _first_text(found).splitlines()[0].startswith("orders.cancel_order(")
    assert json.loads(_first_text(who))["name"] == "Alice Martin"


async def _inspect_surface(home: Path, *target: str) -> dict[str, Any]:
    """Inspector's answers for resources, a template read and prompts (its CLI offers no completion/complete)."""
    answers: dict[str, Any] = {}
    for key, args in (
        ("resources", ["--method", "resources/list"]),
        ("templates", ["--method", "resources/templates/list"]),
        ("read", ["--method", "resources/read", "--uri", "catalog://functions/orders.get_order"]),
        ("prompts", ["--method", "prompts/list"]),
        ("prompt", ["--method", "prompts/get", "--prompt-name", "explore_module", "--prompt-args", "module=orders"]),
    ):
        # A generous connect timeout: a stdio server's start-up is slow on a busy machine.
        code, answers[key] = await _inspect(home, *target, *args, "--connect-timeout", "60000")
        assert code == 0, (key, answers[key])
    return answers


def _assert_surface(answers: Mapping[str, Any]) -> None:
    uris = [resource["uri"] for resource in answers["resources"]["resources"]]
    assert uris[0] == "catalog://overview" and "catalog://terms/Order" in uris
    templates = [template["uriTemplate"] for template in answers["templates"]["resourceTemplates"]]
    assert templates == [
        "catalog://modules/{module}",
        "catalog://functions/{function}",
        "catalog://terms/{term}",
        "catalog://types/{module}",
    ]
    assert answers["read"]["contents"][0]["text"].startswith("orders.get_order(order_id: integer) -> Order")
    assert [prompt["name"] for prompt in answers["prompts"]["prompts"]] == ["work_with_api", "explore_module"]
    assert "orders.get_order(" in answers["prompt"]["messages"][0]["content"]["text"]


async def test_inspector_reads_the_gateways_resources_and_gets_its_prompts_over_http(
    gateway_url: str, tmp_path: Path
) -> None:
    _assert_surface(await _inspect_surface(tmp_path, gateway_url))


async def test_inspector_reads_the_gateways_resources_and_gets_its_prompts_over_stdio(tmp_path: Path) -> None:
    server = [*DEMO_STDIO, "--cwd", str(REPO), "-e", f"MCP_GATEWAY_TOKEN={ADMIN_KEY}"]
    _assert_surface(await _inspect_surface(tmp_path, *server))


def _assert_structured_order(listing: Any, called: Any) -> None:
    tool = next(tool for tool in listing["tools"] if tool["name"] == "orders-get_order")
    schema = tool["outputSchema"]
    assert schema["type"] == "object" and {"id", "total_cents"} <= set(schema["properties"])
    assert called.get("isError") is not True, called
    assert called["structuredContent"]["id"] == 3
    assert json.loads(called["content"][0]["text"]) == called["structuredContent"]


async def test_inspector_sees_a_promoted_tools_output_schema_and_structured_content_over_http(tmp_path: Path) -> None:
    gateway = Gateway(app=create_app(), whoami="users.get_current_user", tools=["orders.get_order"])
    with serve_in_thread(gateway.standalone()) as base:
        url = f"{base}/mcp"
        listed_code, listing = await _inspect(tmp_path, url, "--method", "tools/list", "--strict")
        called_code, called = await _inspect(
            tmp_path,
            *(url, "--method", "tools/call", "--tool-name", "orders-get_order", "--tool-arg", "order_id=3"),
            *("--header", f"Authorization: Bearer {ADMIN_KEY}"),
        )
    assert (listed_code, called_code) == (0, 0)
    _assert_structured_order(listing, called)


async def test_inspector_sees_a_promoted_tools_output_schema_and_structured_content_over_stdio(tmp_path: Path) -> None:
    server = [*DEMO_STDIO, "--tool", "orders.get_order", "--cwd", str(REPO), "-e", f"MCP_GATEWAY_TOKEN={ADMIN_KEY}"]
    timeout = ("--connect-timeout", "60000")
    listed_code, listing = await _inspect(tmp_path, *server, "--method", "tools/list", *timeout)
    called_code, called = await _inspect(
        tmp_path,
        *server,
        "--method",
        "tools/call",
        "--tool-name",
        "orders-get_order",
        "--tool-arg",
        "order_id=3",
        *timeout,
    )
    assert (listed_code, called_code) == (0, 0)
    _assert_structured_order(listing, called)
