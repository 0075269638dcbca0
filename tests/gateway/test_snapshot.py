"""The agent-facing surface as a committed snapshot: the demo's drift test, the classification of each kind of
change, the three report formats, `mcp-gateway snapshot check` and the one-line pytest helper."""

from __future__ import annotations

import copy
import json
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from catalog.snapshot import dump_snapshot
from demo import create_app
from gateway.cli.commands import main
from gateway.errors import ConfigError
from gateway.gateway import Gateway
from gateway.rest.lifespan import app_lifespan
from gateway.snapshot.check import (
    SnapshotCheck,
    check_snapshot,
    diff_snapshots,
    gateway_snapshot,
    load_snapshot,
    render_check,
)
from gateway.snapshot.schema_diff import Direction, schema_changes
from gateway.testing import UPDATE_ENV, assert_snapshot
from tests.corpus import CORPUS

REPO = Path(__file__).resolve().parents[2]
DEMO_SNAPSHOT = REPO / "snapshots" / "demo.json"
PETSTORE = CORPUS / "swagger-petstore-v3.yaml"

Surface = dict[str, Any]


@pytest.fixture(scope="module")
def gateway() -> Gateway:
    return Gateway(app=create_app(), whoami="users.get_current_user", tools=["orders.get_order"])


@pytest.fixture(scope="module")
def surface(gateway: Gateway) -> Surface:
    return gateway_snapshot(gateway)


@pytest.fixture(autouse=True)
def _no_update_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(UPDATE_ENV, raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def function(surface: Surface, name: str) -> dict[str, Any]:
    for module in surface["catalog"]["modules"]:
        for entry in module["functions"]:
            if entry["name"] == name:
                found: dict[str, Any] = entry
                return found
    raise AssertionError(name)


def term(surface: Surface, name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(entry for entry in surface["catalog"]["terms"] if entry["name"] == name)
    return found


def tool(surface: Surface, name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(entry for entry in surface["tools"] if entry["name"] == name)
    return found


def arg(surface: Surface, function_name: str, arg_name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(a for a in function(surface, function_name)["args"] if a["name"] == arg_name)
    return found


# The committed demo snapshot


def test_the_demo_surface_matches_the_committed_snapshot(capsys: pytest.CaptureFixture[str]) -> None:
    # The drift test of snapshots/demo.json: `mcp-gateway snapshot check snapshots/demo.json --update` rewrites it.
    code = main(["snapshot", "check", str(DEMO_SNAPSHOT)])
    assert code == 0, capsys.readouterr().out


@pytest.mark.anyio
async def test_snapshot_lists_the_tools_exactly_as_tools_list_shows_them(gateway: Gateway, surface: Surface) -> None:
    app = create_app()
    gateway = Gateway(app=app, whoami="users.get_current_user", tools=["orders.get_order"])
    gateway.mount(app, "/mcp")
    async with (
        app_lifespan(app),
        httpx2.AsyncClient(transport=httpx2.ASGITransport(app)) as http,
        Client(streamable_http_client("http://localhost/mcp", http_client=http)) as client,
    ):
        listed = (await client.list_tools()).tools
    wire = [json.loads(json.dumps(t.model_dump(by_alias=True, exclude_none=True, mode="json"))) for t in listed]
    assert wire == surface["tools"]
    assert [t["name"] for t in surface["tools"]][-1] == "orders-get_order"


def test_snapshot_holds_server_instructions_and_the_catalog(gateway: Gateway, surface: Surface) -> None:
    assert surface["server"] == {"name": gateway.name, "version": gateway.version}
    assert surface["instructions"] == gateway.instructions
    assert {module["name"] for module in surface["catalog"]["modules"]} == {
        "customers",
        "inventory",
        "orders",
        "products",
        "users",
    }
    assert function(surface, "orders.cancel_order")["signature"] == "orders.cancel_order(order_id: integer) -> Order"


# Classification: each kind of change, old → new


def _set(path: Callable[[Surface], dict[str, Any]], key: str, value: Any) -> Callable[[Surface], None]:
    def mutate(surface: Surface) -> None:
        path(surface)[key] = value

    return mutate


def _remove_function(name: str) -> Callable[[Surface], None]:
    def mutate(surface: Surface) -> None:
        for module in surface["catalog"]["modules"]:
            module["functions"] = [f for f in module["functions"] if f["name"] != name]

    return mutate


def _rename_function(surface: Surface) -> None:
    function(surface, "orders.cancel_order")["name"] = "orders.cancel"


def _add_function(surface: Surface) -> None:
    added = dict(function(surface, "orders.get_order"), name="orders.get_order_v2", path="/v2/orders/{order_id}")
    surface["catalog"]["modules"][2]["functions"].append(added)


def _add_arg(required: bool) -> Callable[[Surface], None]:
    def mutate(surface: Surface) -> None:
        function(surface, "orders.cancel_order")["args"].append(
            {"name": "reason", "in": "body", "required": required, "type": "string", "description": "", "schema": {}}
        )

    return mutate


def _remove_arg(surface: Surface) -> None:
    entry = function(surface, "orders.list_orders")
    entry["args"] = [a for a in entry["args"] if a["name"] != "cursor"]


def _arg_schema(function_name: str, arg_name: str, **schema: Any) -> Callable[[Surface], None]:
    def mutate(surface: Surface) -> None:
        arg(surface, function_name, arg_name)["schema"] = schema

    return mutate


def _enum(change: Callable[[list[Any]], None]) -> Callable[[Surface], None]:
    def mutate(surface: Surface) -> None:
        change(term(surface, "OrderStatus")["schema"]["enum"])

    return mutate


def _remove_term(surface: Surface) -> None:
    surface["catalog"]["terms"] = [t for t in surface["catalog"]["terms"] if t["name"] != "Problem"]


def _rename_term(surface: Surface) -> None:
    term(surface, "Problem")["name"] = "ErrorBody"


def _remove_tool(surface: Surface) -> None:
    surface["tools"] = [t for t in surface["tools"] if t["name"] != "orders-get_order"]


def _hint(name: str, value: bool) -> Callable[[Surface], None]:
    def mutate(surface: Surface) -> None:
        tool(surface, "orders-get_order")["annotations"][name] = value

    return mutate


def _tool_arg(required: bool) -> Callable[[Surface], None]:
    def mutate(surface: Surface) -> None:
        schema = tool(surface, "orders-get_order")["inputSchema"]
        schema["properties"]["expand"] = {"type": "boolean"}
        if required:
            schema["required"] = [*schema["required"], "expand"]

    return mutate


def _prompt(surface: Surface, name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(entry for entry in surface["prompts"] if entry["name"] == name)
    return found


def _prompt_arg(required: bool) -> Callable[[Surface], None]:
    def mutate(surface: Surface) -> None:
        _prompt(surface, "explore_module")["arguments"].append(
            {"name": "depth", "description": "", "required": required}
        )

    return mutate


def _remove_prompt(surface: Surface) -> None:
    surface["prompts"] = [p for p in surface["prompts"] if p["name"] != "explore_module"]


def _remove_resource(surface: Surface) -> None:
    surface["resources"] = [r for r in surface["resources"] if r["uri"] != "catalog://overview"]


def _remove_template(surface: Surface) -> None:
    surface["resourceTemplates"] = [t for t in surface["resourceTemplates"] if t["name"] != "term"]


CASES: list[tuple[str, Callable[[Surface], None], bool, str]] = [
    ("function removed", _remove_function("orders.cancel_order"), True, "function orders.cancel_order: removed"),
    ("function renamed", _rename_function, True, "function orders.cancel_order: renamed to orders.cancel"),
    ("function added", _add_function, False, "function orders.get_order_v2: added"),
    ("arg added as required", _add_arg(True), True, "arg 'reason' added as required"),
    ("arg added as optional", _add_arg(False), False, "arg 'reason' added as optional"),
    ("arg removed", _remove_arg, True, "function orders.list_orders: arg 'cursor' removed"),
    (
        "arg made required",
        _set(lambda s: arg(s, "orders.list_orders", "limit"), "required", True),
        True,
        "now required",
    ),
    ("arg made optional", _set(lambda s: arg(s, "orders.get_order", "order_id"), "required", False), False, "optional"),
    (
        "arg type narrowed",
        _arg_schema("orders.list_orders", "cursor", type="integer"),
        True,
        "arg 'cursor': type changed from string | null to integer",
    ),
    (
        "arg nullability removed",
        _arg_schema("orders.list_orders", "cursor", type="string"),
        True,
        "arg 'cursor': type narrowed from string | null to string",
    ),
    (
        "arg type widened",
        _arg_schema("orders.get_order", "order_id", type="number", minimum=1, title="Order Id"),
        False,
        "arg 'order_id': type widened from integer to number",
    ),
    (
        "arg bound tightened",
        _arg_schema("orders.list_orders", "limit", type="integer", minimum=1, maximum=50, default=20, title="Limit"),
        True,
        "arg 'limit': narrowed, maximum 100 → 50",
    ),
    ("enum value removed", _enum(lambda values: values.remove("shipped")), True, 'enum value "shipped" removed'),
    ("enum value added", _enum(lambda values: values.append("lost")), False, 'enum value "lost" added'),
    ("return type changed", _set(lambda s: function(s, "orders.get_order"), "returns", "OrderPage"), True, "return"),
    ("now destructive", _set(lambda s: function(s, "orders.get_order"), "destructive", True), True, "now destructive"),
    ("summary reworded", _set(lambda s: function(s, "orders.get_order"), "summary", "Fetch"), False, "summary changed"),
    ("term removed", _remove_term, True, "term Problem: removed"),
    ("term renamed", _rename_term, True, "term Problem: renamed to ErrorBody"),
    ("tool removed", _remove_tool, True, "tool orders-get_order: removed"),
    ("tool no longer read-only", _hint("readOnlyHint", False), True, "no longer read-only"),
    ("tool argument added as required", _tool_arg(True), True, "argument 'expand': added as required"),
    ("tool argument added as optional", _tool_arg(False), False, "argument 'expand': added"),
    (
        "instructions reworded",
        lambda s: s.update(instructions=s["instructions"] + "\nBe nice."),
        False,
        "instructions: changed (1 line added, 0 removed)",
    ),
    ("server renamed", _set(lambda s: s["server"], "name", "shop"), False, "server: name changed"),
    ("resource removed", _remove_resource, True, "resource catalog://overview: resource removed"),
    ("template removed", _remove_template, True, "resource catalog://terms/{term}: template removed"),
    (
        "resource media type changed",
        _set(lambda s: s["resources"][0], "mimeType", "text/markdown"),
        True,
        "media type changed from text/plain to text/markdown",
    ),
    ("resource reworded", _set(lambda s: s["resources"][0], "description", "New."), False, "description changed"),
    ("prompt removed", _remove_prompt, True, "prompt explore_module: removed"),
    ("prompt argument added as required", _prompt_arg(True), True, "argument 'depth' added as required"),
    ("prompt argument added as optional", _prompt_arg(False), False, "argument 'depth' added as optional"),
    (
        "prompt argument removed",
        _set(lambda s: _prompt(s, "explore_module"), "arguments", []),
        True,
        "argument 'module' removed",
    ),
    (
        "prompt argument made optional",
        lambda s: _prompt(s, "explore_module")["arguments"][0].update(required=False),
        False,
        "argument 'module' is now optional",
    ),
    ("prompt reworded", _set(lambda s: _prompt(s, "work_with_api"), "title", "Hi"), False, "title changed"),
]


@pytest.mark.parametrize(("mutate", "breaking", "message"), [case[1:] for case in CASES], ids=[c[0] for c in CASES])
def test_each_kind_of_change_is_classified(
    surface: Surface, mutate: Callable[[Surface], None], breaking: bool, message: str
) -> None:
    new = copy.deepcopy(surface)
    mutate(new)
    changes = diff_snapshots(surface, new).changes
    found = [change for change in changes if message in str(change)]
    assert found, [str(change) for change in changes]
    assert found[0].breaking is breaking, str(found[0])


def test_equal_snapshots_have_no_changes(surface: Surface) -> None:
    assert not diff_snapshots(surface, copy.deepcopy(surface))


def test_a_difference_the_rules_do_not_know_is_still_reported(surface: Surface) -> None:
    new = copy.deepcopy(surface)
    function(new, "orders.get_order")["x-rate-limit"] = 10
    new["x-extra"] = True
    changes = diff_snapshots(surface, new).changes
    assert [str(change) for change in changes] == [
        "function orders.get_order: x-rate-limit changed: None → 10",
        "snapshot: x-extra changed: None → True",
    ]
    assert not any(change.breaking for change in changes)


def test_a_renamed_function_is_one_change_not_a_changed_line_and_signature_too(surface: Surface) -> None:
    new = copy.deepcopy(surface)
    entry = function(new, "orders.cancel_order")
    entry["name"] = "orders.cancel"
    entry["line"] = entry["line"].replace("orders.cancel_order", "orders.cancel", 1)
    entry["signature"] = entry["signature"].replace("orders.cancel_order", "orders.cancel", 1)
    assert [str(change) for change in diff_snapshots(surface, new).changes] == [
        "function orders.cancel_order: renamed to orders.cancel"
    ]


def test_one_added_argument_is_one_change_not_a_changed_signature_too(surface: Surface) -> None:
    new = copy.deepcopy(surface)
    entry = function(new, "orders.cancel_order")
    entry["args"].append(
        {"name": "why", "in": "query", "required": False, "type": "string", "description": "", "schema": {}}
    )
    entry["signature"] = entry["signature"].replace(")", ", why?: string)", 1)
    assert [str(change) for change in diff_snapshots(surface, new).changes] == [
        "function orders.cancel_order: arg 'why' added as optional"
    ]


@pytest.mark.parametrize(
    ("old", "new", "direction", "expected"),
    [
        ({"type": "string"}, {"anyOf": [{"type": "string"}, {"type": "null"}]}, "input", [(False, "type widened")]),
        ({"type": "string"}, {"anyOf": [{"type": "string"}, {"type": "null"}]}, "output", [(True, "type widened")]),
        ({"type": "integer"}, {"type": "number"}, "input", [(False, "type widened")]),
        ({"type": "number"}, {"type": "integer"}, "input", [(True, "type narrowed")]),
        ({"$ref": "#/components/schemas/A"}, {"$ref": "#/components/schemas/B"}, "output", [(True, "from A to B")]),
        ({"type": "string"}, {"type": "string", "enum": ["a"]}, "input", [(True, 'now limited to "a"')]),
        ({"type": "string"}, {"type": "string", "format": "date-time"}, "input", [(True, "format 'date-time' added")]),
        ({"type": "string", "description": "a"}, {"type": "string", "description": "b"}, "both", [(False, "changed")]),
        (
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"type": "object", "properties": {"a": {"type": "string"}}},
            "output",
            [(True, "field 'a': now optional")],
        ),
        (
            {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}},
            {"type": "array", "items": {"type": "object", "properties": {}}},
            "output",
            [(True, "field '[].a': removed")],
        ),
        ({"type": "string", "enum": ["a", "b"]}, {"type": "string"}, "input", [(False, "no longer limited")]),
        ({"type": "string", "enum": ["a", "b"]}, {"type": "string"}, "output", [(True, "no longer limited")]),
        ({"type": "integer", "maximum": 5}, {"type": "integer", "maximum": 9}, "input", [(False, "widened, maximum")]),
        ({"type": "string"}, {"type": "string", "pattern": "^a"}, "input", [(True, "narrowed, pattern '^a' added")]),
        ({"type": "string", "minLength": 2}, {"type": "string"}, "input", [(False, "minLength 2 removed")]),
        ({"type": "string", "format": "uri"}, {"type": "string"}, "output", [(True, "format 'uri' removed")]),
        ({"type": "string", "format": "uri"}, {"type": "string", "format": "email"}, "input", [(True, "format")]),
        ({"type": "object"}, {"type": "object", "additionalProperties": False}, "input", [(True, "no longer")]),
        ({"type": "object", "additionalProperties": False}, {"type": "object"}, "output", [(True, "now allows")]),
        (
            {"type": "object", "additionalProperties": {"type": "integer"}},
            {"type": "object", "additionalProperties": {"type": "string"}},
            "input",
            [(True, "field '*': type changed")],
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string"}}},
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            "input",
            [(True, "field 'a': now required")],
        ),
        (
            {"type": "object", "properties": {}},
            {"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b"]},
            "output",
            [(False, "field 'b': added as required")],
        ),
        (
            {"allOf": [{"$ref": "#/components/schemas/A"}]},
            {"allOf": [{"$ref": "#/components/schemas/B"}]},
            "input",
            [(True, "type changed from A to B")],
        ),
        (
            {"oneOf": [{"$ref": "#/components/schemas/A"}, {"$ref": "#/components/schemas/B"}]},
            {"oneOf": [{"$ref": "#/components/schemas/A"}, {"$ref": "#/components/schemas/C"}]},
            "output",
            [(True, "type changed from A | B to A | C")],
        ),
        (
            {"oneOf": [{"type": "object", "properties": {"a": {}}}, {"type": "string"}]},
            {"oneOf": [{"type": "object", "properties": {"a": {}}, "title": "x"}, {"type": "string"}]},
            "output",
            [(False, "schema details changed")],
        ),
        ({"type": "string", "deprecated": True}, {"type": "string"}, "input", [(False, "no longer deprecated")]),
        ({"type": "string"}, True, "input", [(True, "schema changed")]),
    ],
)
def test_schema_changes_are_judged_by_direction(
    old: dict[str, Any], new: dict[str, Any], direction: Direction, expected: list[tuple[bool, str]]
) -> None:
    found = list(schema_changes(old, new, root="field", label="schema", direction=direction))
    assert len(found) == len(expected), found
    for (breaking, message), (expected_breaking, part) in zip(found, expected, strict=True):
        assert part in message and breaking is expected_breaking, (breaking, message)


# Reports


def _drifted(tmp_path: Path, gateway: Gateway, mutate: Callable[[Surface], None]) -> SnapshotCheck:
    """A committed file that differs from the gateway by `mutate` (applied to the committed side)."""
    committed = gateway_snapshot(gateway)
    mutate(committed)
    path = tmp_path / "api.json"
    path.write_text(dump_snapshot(committed), encoding="utf-8")
    return check_snapshot(gateway, path)


def _drift(surface: Surface) -> None:
    # What was committed had a function and an enum value the gateway no longer has, and another summary.
    surface["catalog"]["modules"][2]["functions"].append(
        dict(function(surface, "orders.get_order"), name="orders.refund_order", path="/orders/{order_id}/refund")
    )
    term(surface, "OrderStatus")["schema"]["enum"].append("lost")
    function(surface, "orders.get_order")["summary"] = "Get an order <b>now</b> 100%"


def test_text_report_lists_breaking_changes_first_and_says_how_to_accept(tmp_path: Path, gateway: Gateway) -> None:
    check = _drifted(tmp_path, gateway, _drift)
    text = render_check(check, "text", accept="make snapshot")
    assert text.splitlines() == [
        f"{check.path} differs from the gateway's agent-facing surface: 3 changes (2 breaking, 1 non-breaking)",
        "Breaking:",
        "  - function orders.refund_order: removed",
        '  - term OrderStatus: schema: enum value "lost" removed',
        "Non-breaking:",
        "  - function orders.get_order: summary changed: 'Get an order <b>now</b> 100%' → 'Get an order'",
        "If these changes are intended, accept them with: make snapshot",
    ]


def test_markdown_report_escapes_html_and_puts_names_in_code(tmp_path: Path, gateway: Gateway) -> None:
    check = _drifted(tmp_path, gateway, _drift)
    markdown = render_check(check, "markdown", accept="mcp-gateway snapshot check api.json --update")
    assert markdown.startswith("### Breaking changes to the agent-facing surface\n")
    assert "- function `orders.refund_order`: removed" in markdown
    assert "&lt;b&gt;now&lt;/b&gt;" in markdown and "<b>" not in markdown
    assert markdown.endswith("run `mcp-gateway snapshot check api.json --update` and commit the file.")


def test_github_report_annotates_each_change_at_its_line_of_the_committed_file(
    tmp_path: Path, gateway: Gateway
) -> None:
    check = _drifted(tmp_path, gateway, _drift)
    lines = check.committed_text.split("\n")
    refund = lines.index('            "name": "orders.refund_order",') + 1
    annotations = [line for line in render_check(check, "github").splitlines() if line.startswith("::")]
    assert annotations[0] == (
        f"::error file={check.path},line={refund},title=Breaking API change::function orders.refund_order: removed"
    )
    assert annotations[1].startswith("::error ") and "term OrderStatus" in annotations[1]
    # A message escapes %, a property also ':' and ','.
    assert annotations[2].startswith("::warning ") and annotations[2].endswith("<b>now</b> 100%25' → 'Get an order'")
    relaxed = render_check(check, "github", fail_on="breaking").splitlines()
    assert [line.split(" ", 1)[0] for line in relaxed if line.startswith("::")] == ["::error", "::error", "::notice"]


# The command line


def test_snapshot_check_exits_1_on_drift_and_0_once_updated(
    tmp_path: Path, gateway: Gateway, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "demo.json"
    assert main(["snapshot", "check", str(path)]) == 1
    assert "does not exist; write it with: mcp-gateway snapshot check" in capsys.readouterr().out
    assert main(["snapshot", "check", str(path), "--update"]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {path}: 5 tools, 25 functions in 5 modules")
    assert path.read_text(encoding="utf-8") == DEMO_SNAPSHOT.read_text(encoding="utf-8")
    committed = json.loads(path.read_text(encoding="utf-8"))
    _remove_function("orders.cancel_order")(committed)  # as if the gateway had gained it since
    function(committed, "orders.get_order")["description"] = "Old words."
    path.write_text(dump_snapshot(committed), encoding="utf-8")
    assert main(["snapshot", "check", str(path), "--fail-on", "breaking"]) == 0
    assert main(["snapshot", "check", str(path)]) == 1
    out = capsys.readouterr().out
    assert "function orders.cancel_order: added" in out and "function orders.get_order: description changed" in out
    assert main(["snapshot", "check", str(path), "--update"]) == 0
    assert "updated" in capsys.readouterr().out
    assert main(["snapshot", "check", str(path)]) == 0


def test_snapshot_check_fails_on_breaking_drift_whatever_the_gate(tmp_path: Path, gateway: Gateway) -> None:
    check = _drifted(tmp_path, gateway, _drift)
    assert main(["snapshot", "check", str(check.path), "--fail-on", "breaking", "--format", "markdown"]) == 1


def test_the_command_a_check_suggests_repeats_the_options_that_chose_the_api(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "pets.json"
    assert main(["snapshot", "check", str(path), "--spec", str(PETSTORE), "--format", "markdown"]) == 1
    suggested = f"mcp-gateway snapshot check {path} --spec {PETSTORE} --update"
    assert suggested in capsys.readouterr().out
    # Running it as printed snapshots the document named, not the demo.
    assert main(shlex.split(suggested)[1:]) == 0
    assert main(["snapshot", "check", str(path), "--spec", str(PETSTORE)]) == 0
    assert main(["snapshot", "check", str(path)]) == 1
    assert "checking the bundled demo API" in capsys.readouterr().err


def test_snapshot_check_reads_a_spec_and_writes_the_step_summary_on_github(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "petstore.json"
    assert main(["snapshot", "check", str(path), "--spec", str(PETSTORE), "--update"]) == 0
    assert load_snapshot(path) is not None
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    committed = json.loads(path.read_text(encoding="utf-8"))
    committed["instructions"] = "Old instructions."
    path.write_text(dump_snapshot(committed), encoding="utf-8")
    capsys.readouterr()
    assert main(["snapshot", "check", str(path), "--spec", str(PETSTORE), "--format", "github"]) == 1
    assert "::warning file=" in capsys.readouterr().out
    assert summary.read_text(encoding="utf-8").startswith("### Non-breaking changes to the agent-facing surface")


# Where calls go and who may make them

VENDOR: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Vendor API", "version": "1"},
    "servers": [{"url": "https://api.vendor.example/v1"}],
    "components": {
        "securitySchemes": {
            "oauth": {
                "type": "oauth2",
                "flows": {"clientCredentials": {"tokenUrl": "https://x/token", "scopes": {"admin": "", "read": ""}}},
            }
        }
    },
    "security": [{"oauth": ["read"]}],
    "paths": {
        "/orders/{id}": {
            "delete": {
                "operationId": "deleteOrder",
                "tags": ["orders"],
                "parameters": [
                    {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}},
                    {"name": "filter", "in": "query", "schema": {"type": "object"}},
                ],
                "responses": {"204": {"description": "gone"}},
            }
        }
    },
}


def _vendor(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    document = copy.deepcopy(VENDOR)
    change(document)
    return document


def _delete(document: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = document["paths"]["/orders/{id}"]["delete"]
    return found


DOCUMENT_CHANGES: list[tuple[str, Callable[[dict[str, Any]], None], bool, str]] = [
    (
        "servers moved to plain http on another host",
        lambda d: d.update(servers=[{"url": "http://collector.attacker.example/v1"}]),
        True,
        "server: calls now go to http://collector.attacker.example/v1, not https://api.vendor.example/v1 "
        "(another host, plain http)",
    ),
    (
        "servers moved to another path on the same host",
        lambda d: d.update(servers=[{"url": "https://api.vendor.example/v2"}]),
        False,
        "server: calls now go to https://api.vendor.example/v2, not https://api.vendor.example/v1",
    ),
    (
        "a second server listed",
        lambda d: d["servers"].append({"url": "https://eu.vendor.example/v1"}),
        False,
        "server: API servers changed from [https://api.vendor.example/v1] to [https://api.vendor.example/v1, "
        "https://eu.vendor.example/v1]",
    ),
    (
        "an operation given its own server",
        lambda d: _delete(d).update(servers=[{"url": "https://attacker.example"}]),
        True,
        "function orders.delete_order: now called at https://attacker.example, not at the API's servers",
    ),
    (
        "a query parameter sent as deepObject",
        lambda d: _delete(d)["parameters"][1].update(style="deepObject", explode=True),
        False,
        "function orders.delete_order: arg 'filter' now sent in style deepObject (explode true), not query's "
        "default style",
    ),
    (
        "a scope required",
        lambda d: _delete(d).update(security=[{"oauth": ["admin", "read"]}]),
        True,
        "function orders.delete_order: security tightened from oauth [read] to oauth [admin, read]",
    ),
    (
        "a scope no longer required",
        lambda d: _delete(d).update(security=[{"oauth": []}]),
        False,
        "function orders.delete_order: security loosened from oauth [read] to oauth",
    ),
]


@pytest.mark.parametrize(
    ("change", "breaking", "message"), [case[1:] for case in DOCUMENT_CHANGES], ids=[c[0] for c in DOCUMENT_CHANGES]
)
def test_snapshot_check_reports_a_document_change_of_where_calls_go_or_who_may_make_them(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    change: Callable[[dict[str, Any]], None],
    breaking: bool,
    message: str,
) -> None:
    spec, path = tmp_path / "openapi.json", tmp_path / "api.json"
    # Named by the operator, the upstream is not the document's to choose, and the snapshot records the document.
    served = ["--spec", str(spec), "--upstream", "https://api.vendor.example/v1"]
    spec.write_text(json.dumps(VENDOR), encoding="utf-8")
    assert main(["snapshot", "check", str(path), *served, "--update"]) == 0
    spec.write_text(json.dumps(_vendor(change)), encoding="utf-8")
    capsys.readouterr()
    assert main(["snapshot", "check", str(path), *served, "--fail-on", "breaking"]) == int(breaking)
    assert main(["snapshot", "check", str(path), *served]) == 1
    out = capsys.readouterr().out
    heading = "Breaking:" if breaking else "Non-breaking:"
    assert f"{heading}\n  - {message}\n" in out, out


def test_a_snapshot_of_the_older_format_fails_saying_the_format_changed_and_how_to_re_record_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec, path = tmp_path / "openapi.json", tmp_path / "api.json"
    spec.write_text(json.dumps(VENDOR), encoding="utf-8")
    assert main(["snapshot", "check", str(path), "--spec", str(spec), "--update"]) == 0
    older = json.loads(path.read_text(encoding="utf-8"))
    catalog = older["catalog"]
    catalog["format"] = 1
    del catalog["servers"]
    for entry in catalog["modules"][0]["functions"]:
        del entry["security"]
    path.write_text(dump_snapshot(older), encoding="utf-8")
    capsys.readouterr()
    assert main(["snapshot", "check", str(path), "--spec", str(spec), "--fail-on", "breaking"]) == 1
    out = capsys.readouterr().out
    assert "1 change (1 breaking, 0 non-breaking)" in out  # nothing the older file did not record
    assert "snapshot: catalog format changed from 1 to 2, which also records where calls go" in out
    assert f"accept them with: mcp-gateway snapshot check {path} --spec {spec} --update" in out
    assert main(["snapshot", "check", str(path), "--spec", str(spec), "--update"]) == 0
    assert main(["snapshot", "check", str(path), "--spec", str(spec), "--fail-on", "breaking"]) == 0


@pytest.mark.parametrize(
    ("content", "hint"),
    [
        ("{not json", "is not JSON"),
        ('{"format": 1, "modules": []}', "is a catalog snapshot"),
        ("[]", "is not a gateway surface snapshot"),
    ],
)
def test_snapshot_check_refuses_a_file_that_is_not_a_surface_snapshot(
    tmp_path: Path, content: str, hint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "api.json"
    path.write_text(content, encoding="utf-8")
    assert main(["snapshot", "check", str(path)]) == 1
    error = capsys.readouterr().err
    assert hint in error and "--update" in error
    with pytest.raises(ConfigError):
        load_snapshot(path)
    assert main(["snapshot", "check", str(path), "--update"]) == 0  # --update replaces it
    assert load_snapshot(path) is not None


# The pytest helper


def test_assert_snapshot_fails_with_the_diff_and_passes_once_updated_through_the_environment(
    tmp_path: Path, gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "api.json"
    with pytest.raises(AssertionError, match=f"does not exist; write it with: {UPDATE_ENV}=1 pytest"):
        assert_snapshot(gateway, path)
    monkeypatch.setenv(UPDATE_ENV, "1")
    assert assert_snapshot(gateway, path).updated
    monkeypatch.delenv(UPDATE_ENV)
    assert not assert_snapshot(gateway, path).diff
    _drifted(tmp_path, gateway, _drift)
    with pytest.raises(AssertionError, match=r"function orders\.refund_order: removed"):
        assert_snapshot(gateway, path)
    assert_snapshot(gateway, path, update=True)
    assert_snapshot(gateway, path)


def test_snapshot_holds_the_resources_templates_and_prompts_as_clients_list_them(surface: Surface) -> None:
    assert [r["uri"] for r in surface["resources"]] == ["catalog://overview", "catalog://snapshot", "catalog://types"]
    assert [t["uriTemplate"] for t in surface["resourceTemplates"]] == [
        "catalog://modules/{module}",
        "catalog://functions/{function}",
        "catalog://terms/{term}",
        "catalog://types/{module}",
    ]
    assert [p["name"] for p in surface["prompts"]] == ["work_with_api", "explore_module"]
    assert _prompt(surface, "explore_module")["arguments"] == [
        {"name": "module", "description": "The module to explore.", "required": True}
    ]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--scripts"], "run_script"),
        (["--chatgpt-tools"], "fetch"),
        (["--tool", "orders.get_order"], "orders-get_order"),
    ],
)
def test_snapshot_check_takes_every_serve_option_that_changes_the_tools(
    tmp_path: Path, options: list[str], expected: str
) -> None:
    path = tmp_path / "served.json"
    assert main(["snapshot", "check", str(path), *options, "--update"]) == 0
    assert expected in [entry["name"] for entry in json.loads(path.read_text(encoding="utf-8"))["tools"]]
    assert main(["snapshot", "check", str(path), *options]) == 0
    assert main(["snapshot", "check", str(path)]) == 1  # the surface served without the option differs


def test_snapshot_check_lists_the_reference_page_where_serve_serves_one(tmp_path: Path) -> None:
    demo, off, spec = tmp_path / "demo.json", tmp_path / "off.json", tmp_path / "pets.json"
    assert main(["snapshot", "check", str(demo), "--update"]) == 0
    assert main(["snapshot", "check", str(off), "--reference-path", "", "--update"]) == 0
    assert main(["snapshot", "check", str(spec), "--spec", str(PETSTORE), "--reference-path", "/ref", "--update"]) == 0

    def uris(path: Path) -> list[str]:
        return [entry["uri"] for entry in json.loads(path.read_text(encoding="utf-8"))["resources"]]

    assert "catalog://reference" in uris(demo) and "catalog://reference" in uris(spec)
    assert "catalog://reference" not in uris(off)
