"""The `mcp-gateway catalog ...` commands: output for people, errors on stderr, exit codes scripts rely on."""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from starlette.applications import Starlette

from gateway.cli import gateways
from gateway.cli.commands import EXIT_INTERRUPTED, EXIT_OK, EXIT_REFUSED, EXIT_USAGE, main, parser_for
from gateway.cli.oauth import OAuthFlags, oauth_server
from gateway.cli.options import environment, given
from gateway.cli.serve import with_oauth
from gateway.errors import ConfigError
from gateway.gateway import Gateway
from gateway.limits import Limits
from gateway.mcp.admission import AdmissionGate
from tests.corpus import CORPUS
from tests.gateway import shapes

PETSTORE = str(CORPUS / "swagger-petstore-v3.yaml")


def test_check_prints_counts_and_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "check", PETSTORE]) == EXIT_OK
    out = capsys.readouterr().out
    assert out.startswith("Swagger Petstore - OpenAPI 3.0")
    assert "3 modules, 19 functions, 6 terms" in out


def test_check_converts_swagger_2_and_says_so_in_a_warning(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "check", str(CORPUS / "oai-uber-swagger2.json")]) == EXIT_OK
    out = capsys.readouterr().out
    assert out.startswith("Uber API 1.0.0: 3 modules, 5 functions")
    assert "warning: #/swagger: a Swagger 2.0 document, converted in-process to OpenAPI 3.0.3 (5 operations)" in out


def test_a_missing_file_is_refused_clearly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "check", str(tmp_path / "nope.yaml")]) == EXIT_REFUSED
    assert "nope.yaml" in capsys.readouterr().err


def test_search_describe_and_term_render_what_the_agent_reads(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "search", PETSTORE, "find pets by status"]) == EXIT_OK
    assert capsys.readouterr().out.startswith("pet.find_pets_by_status(")
    assert main(["catalog", "describe", PETSTORE, "pet.add_pet", "store.place_order"]) == EXIT_OK
    described = capsys.readouterr().out
    assert described.startswith("pet.add_pet(") and "\n\nstore.place_order(" in described
    assert main(["catalog", "term", PETSTORE, "pet"]) == EXIT_OK
    assert capsys.readouterr().out.startswith("Pet\n")


def test_unknown_names_exit_one_with_suggestions(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "describe", PETSTORE, "pet.add_pets"]) == EXIT_REFUSED
    assert "did you mean pet.add_pet" in capsys.readouterr().err


def test_snapshot_writes_stable_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "snapshots" / "new" / "snap.json"  # folders made as needed
    assert main(["catalog", "snapshot", PETSTORE, "-o", str(target)]) == EXIT_OK
    first = target.read_text(encoding="utf-8")
    assert main(["catalog", "snapshot", PETSTORE]) == EXIT_OK
    assert capsys.readouterr().out == first
    assert [m["name"] for m in json.loads(first)["modules"]] == ["pet", "store", "user"]


def test_the_demo_is_a_spec_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "search", "demo", "who am i"]) == EXIT_OK
    assert "users.get_current_user(" in capsys.readouterr().out


def test_catalog_commands_read_the_document_of_the_app_named_with_app(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "check", "demo"]) == EXIT_OK
    from_spec = capsys.readouterr().out.splitlines()[0]
    assert main(["catalog", "check", "--app", "demo:create_app"]) == EXIT_OK
    out = capsys.readouterr().out
    assert out.splitlines()[0] == from_spec
    assert "routes: the documented operations route in the app at its root" in out
    assert main(["catalog", "search", "--app", "demo:create_app", "who am I"]) == EXIT_OK
    assert capsys.readouterr().out.startswith("users.get_current_user(")
    assert main(["catalog", "describe", "--app", "demo:create_app", "users.get_current_user", "orders.get_order"]) == 0
    assert "\n\norders.get_order(" in capsys.readouterr().out
    assert main(["catalog", "term", "--app", "demo:create_app", "Product"]) == EXIT_OK
    assert capsys.readouterr().out.startswith("Product")


def test_check_with_app_says_where_the_operations_route_and_refuses_a_prefix_where_they_do_not(
    capsys: pytest.CaptureFixture[str],
) -> None:
    app = ["catalog", "check", "--app", "tests.gateway.shapes:publishing_host"]
    assert main([*app, "--prefix", "/api"]) == EXIT_OK
    assert "routes: the documented operations route in the app under '/api'" in capsys.readouterr().out
    assert main([*app, "--prefix", "/v9"]) == EXIT_REFUSED
    assert "--prefix /api" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("reference", "said"),
    [
        ("tests.gateway.no_such_module:app", "--app: cannot import 'tests.gateway.no_such_module'"),
        ("tests.gateway.shapes:nothing", "has no attribute 'nothing'"),
        ("tests.gateway.shapes:KEY", "is a str ('shape-key'), not an ASGI app"),
        ("tests.gateway.test_cli:_starlette_app", "without an openapi() method"),
    ],
)
def test_catalog_with_an_app_that_has_no_document_says_why(
    reference: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["catalog", "check", "--app", reference]) == EXIT_REFUSED
    assert said in capsys.readouterr().err


def _starlette_app() -> Starlette:
    return Starlette()


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["check"], "name the OpenAPI document"),
        (["check", "demo", "--app", "demo:create_app"], "give SPEC or --app, not both"),
        (["check", "demo", "--prefix", "/api"], "--prefix applies to --app"),
    ],
)
def test_catalog_commands_need_one_document_exactly(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["catalog", *argv])
    assert exit_info.value.code == EXIT_USAGE
    assert said in capsys.readouterr().err


def test_wrong_usage_exits_two(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog"]) == EXIT_USAGE
    assert capsys.readouterr().err.startswith("usage: mcp-gateway catalog")  # the catalog's own actions
    with pytest.raises(SystemExit) as exit_info:
        main(["catalog", "search"])
    assert exit_info.value.code == EXIT_USAGE


def test_the_bare_command_prints_its_help_and_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == EXIT_OK
    out = capsys.readouterr().out
    assert out.startswith("usage: mcp-gateway") and "catalog" in out and "serve" in out


def test_version_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == EXIT_OK
    assert re.fullmatch(r"mcp-gateway \d+\.\d+\.\d+\S*\n", capsys.readouterr().out)


@pytest.mark.parametrize("action", ["check", "search", "describe", "term", "snapshot"])
def test_every_positional_argument_of_the_catalog_commands_says_what_it_is(
    action: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["catalog", action, "--help"])
    help_text = capsys.readouterr().out
    section = help_text.split("positional arguments:\n", 1)[1].split("\n\n", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("  ") and not line.startswith("   ")]
    assert lines and all(len(line.split(None, 1)) == 2 for line in lines), section


def test_check_of_a_document_without_operations_exits_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("openapi: 3.1.0\ninfo: {title: Empty, version: '1'}\npaths: {}\n", encoding="utf-8")
    assert main(["catalog", "check", str(empty)]) == EXIT_REFUSED
    captured = capsys.readouterr()
    assert "0 functions" in captured.out
    assert "describes no operations" in captured.err


def test_a_spec_url_that_never_answers_fails_saying_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MCP_GATEWAY_FETCH_TIMEOUT", "0.2")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:  # accepts, never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/openapi.json"
        assert main(["catalog", "check", url]) == EXIT_REFUSED
    assert f"{url!r} did not answer within 0.2 s" in capsys.readouterr().err


def test_an_html_page_given_as_the_spec_is_called_an_html_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "docs"
    page.write_text("<!DOCTYPE html>\n<html><head><title>API reference</title></head></html>\n", encoding="utf-8")
    assert main(["catalog", "check", str(page)]) == EXIT_REFUSED
    assert "is an HTML page, not an OpenAPI document; give the URL of the JSON or YAML" in capsys.readouterr().err


def test_an_unknown_tool_suggests_functions_with_a_near_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reference", "--tool", "list_item"]) == EXIT_REFUSED
    said = capsys.readouterr().err
    # What its words name (an item of a shop is a product), and the nearest spelling.
    assert "no function 'list_item'; did you mean products.list_products," in said
    assert "users.list_users?" in said
    assert main(["reference", "--tool", "nope"]) == EXIT_REFUSED
    assert "catalog search SPEC WORDS" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["serve", "--port", "-5"], "argument --port: a port is 0 to 65535, not '-5'"),
        (["serve", "--port", "http"], "argument --port: 'http' is not a whole number"),
        (["serve", "--timeout", "0"], "argument --timeout: must be a positive number of seconds, not '0'"),
        (["serve", "--max-output-bytes", "0"], "argument --max-output-bytes: must be 1 or more, not '0'"),
        (["catalog", "search", "demo", "refund", "--limit", "0"], "argument --limit: must be 1 or more, not '0'"),
        (["catalog", "check", "demo", "--warnings", "-1"], "argument --warnings: must be 0 or more, not '-1'"),
    ],
)
def test_out_of_range_options_are_usage_errors_that_say_what_is_allowed(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == EXIT_USAGE
    assert says in capsys.readouterr().err


def test_a_bad_port_in_the_environment_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MCP_GATEWAY_PORT", "eighty")
    with pytest.raises(SystemExit) as exit_info:
        main(["serve"])
    assert exit_info.value.code == EXIT_USAGE
    assert "'eighty' is not a whole number" in capsys.readouterr().err


def test_a_query_too_long_to_read_exits_two_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "search", "demo", "refund " * 200]) == EXIT_USAGE
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "say the task in at most 1,000" in captured.err


def test_a_path_that_cannot_be_written_or_read_exits_one_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["catalog", "snapshot", "demo", "-o", str(tmp_path)]) == EXIT_REFUSED
    assert capsys.readouterr().err == f"mcp-gateway: {tmp_path}: Is a directory\n"
    assert main(["snapshot", "check", str(tmp_path)]) == EXIT_REFUSED
    assert capsys.readouterr().err.endswith(f"\nmcp-gateway: {tmp_path}: Is a directory\n")


def test_serve_help_names_every_variable_the_options_read(capsys: pytest.CaptureFixture[str]) -> None:
    from gateway.cli.serve import Listen
    from gateway.options import GatewayConfig
    from gateway.serving import ServeLimits

    read = {name for cls in (GatewayConfig, Listen, ServeLimits, OAuthFlags) for name, _ in environment(cls)}
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    shown = set(re.findall(r"MCP_GATEWAY_[A-Z_]*[A-Z]", capsys.readouterr().out))
    assert {*read, "MCP_GATEWAY_APP_DIR", "MCP_GATEWAY_TOKEN", "MCP_GATEWAY_OAUTH_SECRET"} <= shown, read - shown


def test_every_gateway_option_the_command_line_takes_reads_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_GATEWAY_MAX_OUTPUT_BYTES", "5000")
    monkeypatch.setenv("MCP_GATEWAY_HIDE", "customers.*,orders.cancel_order")
    monkeypatch.setenv("MCP_GATEWAY_BATCH_ELEMENTS", "7")
    monkeypatch.setenv("MCP_GATEWAY_SCRIPTS_ALLOW_WRITES", "yes")
    monkeypatch.setenv("MCP_GATEWAY_CALLER_KEY", "a-secret-read-from-the-environment-only")
    config = _cli_gateway().config
    assert config.output.max_output_bytes == 5000
    assert tuple(config.access.hide) == ("customers.*", "orders.cancel_order")
    assert config.limits.batch_elements == 7
    assert config.scripts is not None and config.scripts.allow_writes is True
    assert config.observability.caller_key == "a-secret-read-from-the-environment-only"
    assert _cli_gateway("--batch-elements", "9").config.limits.batch_elements == 9


def test_a_reader_that_goes_away_ends_the_command_quietly(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    read, write = os.pipe()
    os.close(read)  # as `... | head` does once it has its lines
    with open(write, "w", encoding="utf-8") as broken:
        monkeypatch.setattr("sys.stdout", broken)
        assert main(["catalog", "snapshot", "demo"]) == EXIT_REFUSED
        monkeypatch.undo()
    assert capsys.readouterr().err == ""


def test_check_lists_post_functions_whose_names_read_like_reads_or_deletes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "flows.json"
    spec.write_text(json.dumps(shapes.effects_app().openapi()), encoding="utf-8")
    assert main(["catalog", "check", str(spec)]) == EXIT_OK
    out = capsys.readouterr().out
    assert "2 POST functions counted as writes but named like reads or deletes" in out
    assert "flows.count_flows (POST /flows/count): reads like read? --read-only flows.count_flows" in out
    assert "flows.bulk_delete_flows (POST /flows/bulk_delete): reads like destructive?" in out
    # Marked in the document (read_flows, purge_flows) or plainly a write (create_flow): not listed.
    assert "read_flows (" not in out and "purge_flows" not in out and "create_flow" not in out
    assert main(["catalog", "check", str(spec), "--read-only", "*.count_*", "--destructive", "*.bulk_*"]) == EXIT_OK
    assert "POST functions" not in capsys.readouterr().out


@pytest.mark.parametrize(
    ("reference", "said"),
    [
        ("tests.gateway.shapes:KEY", "tests.gateway.shapes:KEY is a str ('shape-key'), not an ASGI app"),
        ("tests.gateway.shapes:PerRequestLimiter", "is a class ("),
        ("tests.gateway.shapes:_key", "is a function ("),
        ("tests.gateway.shapes:nothing", "has no attribute 'nothing'"),
    ],
)
def test_app_says_what_it_found_when_it_is_neither_an_app_nor_a_factory(
    reference: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["snapshot", "check", "/nonexistent.json", "--app", reference]) == EXIT_REFUSED
    assert said in capsys.readouterr().err


def test_app_accepts_a_factory() -> None:
    app = gateways.import_app("tests.gateway.shapes:limited_app")
    assert app.title == "Limited shop"


def test_a_prefix_under_which_the_documents_paths_do_not_route_exits_one_naming_the_one_that_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "api.json"
    spec.write_text(json.dumps(shapes.sub_api.openapi()), encoding="utf-8")
    args = ["snapshot", "check", str(tmp_path / "s.json"), "--app", "tests.gateway.shapes:mounted", "--spec", str(spec)]
    assert main([*args, "--prefix", "/v9"]) == EXIT_REFUSED
    assert "--prefix /api" in capsys.readouterr().err
    assert main([*args, "--prefix", "/api", "--update"]) == EXIT_OK


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["catalog", "check", PETSTORE],
        ["catalog", "search", PETSTORE, "find pets"],
        ["catalog", "describe", PETSTORE, "pet.add_pet"],
        ["catalog", "term", PETSTORE, "pet"],
        ["catalog", "snapshot", PETSTORE],
    ],
    ids=lambda argv: " ".join(word for word in argv if word != PETSTORE),
)
def test_catalog_commands_load_neither_the_mcp_sdk_nor_a_server_nor_an_http_client(argv: list[str]) -> None:
    program = (
        "import contextlib, io, sys\n"
        "from gateway.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        f"    main({argv!r})\n"
        "print(' '.join(sorted({name.split('.')[0] for name in sys.modules})))\n"
    )
    ran = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True, timeout=120)
    loaded = set(ran.stdout.split())
    assert "catalog" in loaded or argv == ["--help"]
    heavy = {"mcp", "mcp_types", "uvicorn", "authlib", "starlette", "fastapi", "httpx2", "anyio", "pydantic", "oauth"}
    assert loaded & heavy == set()


def test_snapshot_check_builds_the_gateway_without_the_mcp_sdk_a_server_or_oauth(tmp_path: Path) -> None:
    snapshot = tmp_path / "api.json"
    check = ["snapshot", "check", str(snapshot), "--spec", PETSTORE, "--tool", "pet.add_pet"]
    program = (
        "import contextlib, io, sys\n"
        "from gateway.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    codes = [main({[*check, '--update']!r}), main({check!r})]\n"
        "print(codes, ' '.join(sorted({name.split('.')[0] for name in sys.modules})))\n"
    )
    ran = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True, timeout=120)
    codes, _, modules = ran.stdout.partition("] ")
    assert codes == f"[{EXIT_OK}, {EXIT_OK}"
    assert "gateway" in modules.split() and snapshot.exists()
    assert set(modules.split()) & {"mcp", "mcp_types", "uvicorn", "authlib", "oauth"} == set()


def test_strict_check_lists_the_documents_own_validation_errors_at_their_pointers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = {
        "openapi": "3.0.3",
        "info": {"title": "Bad", "version": "1"},
        "paths": {"/b": {"get": {"operationId": "b", "tags": ["t"], "responses": {}}}},
    }
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    assert main(["catalog", "check", str(path)]) == EXIT_OK
    capsys.readouterr()
    assert main(["catalog", "check", "--strict", str(path)]) == EXIT_REFUSED
    assert "  /paths/~1b/get/responses: {} should be non-empty" in capsys.readouterr().out
    assert main(["catalog", "check", "--strict", PETSTORE]) == EXIT_OK
    assert "the document is valid OpenAPI" in capsys.readouterr().out


def _parse(*argv: str) -> argparse.Namespace:
    words = ["serve", *argv]
    return parser_for(words).parse_args(words)


def _cli_gateway(*argv: str) -> Gateway:
    gateway, _ = gateways.build_gateway(_parse(*argv))
    return gateway


@pytest.mark.anyio
async def test_hide_keeps_functions_from_every_caller() -> None:
    gateway = _cli_gateway("--hide", "customers.*", "--hide", "orders.cancel_order")
    headers = {"authorization": "Bearer demo-key-alice"}
    modules = (await gateway.call_tool(headers, "search_functions", {})).texts[0]
    called = await gateway.call_tool(headers, "call_function", {"name": "customers.list_customers", "args": {}})
    found = (await gateway.call_tool(headers, "search_functions", {"query": "cancel an order"})).texts[0]
    assert "\ncustomers (" not in modules and "\norders (" in modules
    assert called.is_error and called.texts[0].startswith("Unknown function 'customers.list_customers'.")
    assert "orders.cancel_order(" not in found


def test_a_hide_pattern_that_names_no_function_is_refused_with_the_closest_names() -> None:
    with pytest.raises(ConfigError, match=r"hide 'orders.cancel_ordr' names no function of the catalog; closest: "):
        _cli_gateway("--hide", "orders.cancel_ordr")


def test_scopes_from_flags_and_the_environment_map_oauth_scopes_to_functions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_GATEWAY_SCOPES", "shop:read=orders.get_*,shop:read=products.*")
    gateway = _cli_gateway("--scope", "shop:admin=customers.*")
    assert gateway.policy.access.scopes == {"shop:read": ("orders.get_*", "products.*"), "shop:admin": ("customers.*",)}
    with pytest.raises(ConfigError, match=r"--scope takes SCOPE=PATTERN, e.g. .* not 'shop:read'"):
        _cli_gateway("--scope", "shop:read")


def test_max_running_sizes_the_admission_gate_and_zero_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _cli_gateway().config.limits.max_running == Limits().max_running
    assert isinstance(_cli_gateway().asgi(), AdmissionGate)
    assert _cli_gateway("--max-running", "4").config.limits.max_running == 4
    assert not isinstance(_cli_gateway("--max-running", "0").asgi(), AdmissionGate)
    monkeypatch.setenv("MCP_GATEWAY_MAX_RUNNING", "8")
    assert _cli_gateway().config.limits.max_running == 8
    with pytest.raises(SystemExit):
        _parse("--max-running", "-1")
    with pytest.raises(ConfigError, match=r"Limits.max_running \(--max-running\) must be a whole number, 0 or more"):
        Limits(max_running=-1)


def test_tasks_flags_turn_on_task_calls_and_travel_into_the_stdio_entry(tmp_path: Path) -> None:
    store = str(tmp_path / "tasks.sqlite3")
    options = _parse("--tasks-store", store, "--task-timeout", "120")
    gateway, _ = gateways.build_gateway(options)
    assert gateway.tasks is not None and gateway.config.tasks is not None
    assert (gateway.config.tasks.store, gateway.config.tasks.timeout) == (store, 120.0)
    assert gateways.stdio_args(options) == ["--tasks-store", store, "--task-timeout", "120"]
    assert gateways.build_gateway(_parse())[0].tasks is None


@pytest.mark.anyio
async def test_with_oauth_tasks_live_in_the_oauth_store_unless_a_tasks_store_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_GATEWAY_OAUTH_SECRET", "s" * 40)
    oauth_store = str(tmp_path / "oauth.sqlite3")
    options = _parse("--oauth", "--tasks", "--oauth-store", oauth_store)
    flags = OAuthFlags(**given(options, OAuthFlags))
    oauth = oauth_server(options, flags, host="127.0.0.1", port=8000, path="/mcp", demo=True)
    gateway, _ = gateways.build_gateway(options, lambda config: with_oauth(config, oauth, flags))
    oauth.start(gateway.catalog)
    assert gateway.tasks is not None and gateway.config.tasks is not None
    assert gateway.config.tasks.store == oauth_store  # beside the OAuth records, in a table of its own
    await gateway.tasks.aclose()

    separate = str(tmp_path / "tasks.sqlite3")
    options = _parse("--oauth", "--tasks-store", separate, "--oauth-store", oauth_store)
    gateway, _ = gateways.build_gateway(options, lambda config: with_oauth(config, oauth, flags))
    assert gateway.config.tasks is not None and gateway.config.tasks.store == separate
    assert gateway.tasks is not None
    await gateway.tasks.aclose()
    await oauth.server.aclose()


@pytest.mark.anyio
async def test_the_upstream_flags_describe_the_provider_and_its_client_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from oauth.upstream import ProviderLogin

    monkeypatch.setenv("MCP_GATEWAY_OAUTH_SECRET", "s" * 40)
    monkeypatch.setenv("MCP_GATEWAY_OAUTH_UPSTREAM_CLIENT_SECRET", "provider-secret")
    options = _parse(
        "--oauth",
        "--oauth-store",
        str(tmp_path / "oauth.sqlite3"),
        "--oauth-upstream",
        "https://tenant.eu.auth0.com/",
        "--oauth-upstream-client-id",
        "gateway",
        "--oauth-upstream-auth-method",
        "client_secret_post",
        "--oauth-upstream-audience",
        "https://api.example.com",
        "--oauth-upstream-scope",
        "offline_access",
    )
    flags = OAuthFlags(**given(options, OAuthFlags))
    oauth = oauth_server(options, flags, host="127.0.0.1", port=8000, path="/mcp", demo=True)
    gateway, _ = gateways.build_gateway(options, lambda config: with_oauth(config, oauth, flags))
    server = oauth.start(gateway.catalog)
    assert isinstance(server.login, ProviderLogin)
    provider = server.login.provider
    assert provider.issuer == "https://tenant.eu.auth0.com/"  # as the provider's discovery document names it
    assert (provider.client_id, provider.client_secret, provider.auth_method) == (
        "gateway",
        "provider-secret",
        "client_secret_post",
    )
    assert provider.audience == "https://api.example.com"
    assert "offline_access" in provider.scopes
    assert server.config.default_scopes == ("offline_access",)
    await server.aclose()


def test_an_unknown_token_endpoint_method_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["serve", "--oauth-upstream-auth-method", "private_key_jwt"])
    assert exit_info.value.code == EXIT_USAGE
    assert "'private_key_jwt' is not client_secret_basic or client_secret_post" in capsys.readouterr().err


def test_check_names_the_search_ranking_and_with_a_query_set_how_often_it_finds_the_expected_function(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    queries = tmp_path / "petstore.yaml"
    queries.write_text(
        "queries:\n"
        "  - {q: 'find pets by status', expect: [pet.find_pets_by_status]}\n"
        "  - {q: 'sign out', expect: [user.logout_user]}\n"
        "  - {q: 'zzz', expect: [store.get_inventory]}\n"
    )
    assert main(["catalog", "check", PETSTORE, "--queries", str(queries), "--no-semantic-search"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "search: lexical (semantic reranking turned off)\n" in out
    assert "query set petstore.yaml: 3 phrasings; found in the top 1 / 5 / 10:\n" in out
    assert "\n  lexical  66.7% / 66.7% / 66.7%\n" in out
    assert "  semantic" not in out


def test_check_refuses_a_query_set_it_cannot_read_saying_what_one_looks_like(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    queries = tmp_path / "bad.yaml"
    queries.write_text("queries: [{query: 'find pets'}]\n")
    assert main(["catalog", "check", PETSTORE, "--queries", str(queries)]) != EXIT_OK
    assert "is not a readable query set" in capsys.readouterr().err


def test_no_semantic_search_turns_semantic_ranking_off_and_by_default_the_extra_decides(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from catalog.search import Ranking

    monkeypatch.delenv("MCP_GATEWAY_SEMANTIC_SEARCH")
    assert _cli_gateway().toolset.ranking == Ranking(semantic=None)
    assert _cli_gateway("--no-semantic-search").toolset.ranking == Ranking(semantic=False)
    monkeypatch.setenv("MCP_GATEWAY_SEMANTIC_SEARCH", "0")
    assert _cli_gateway().toolset.ranking == Ranking(semantic=False)


def test_serve_stopped_with_ctrl_c_shuts_down_in_order_and_exits_130_without_a_traceback() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "MCP_GATEWAY_SEMANTIC_SEARCH": "0"},
    ) as server:
        assert server.stderr is not None
        said = []
        for line in server.stderr:
            said.append(line)
            if "Uvicorn running on" in line:
                break
        server.send_signal(signal.SIGINT)
        rest = server.stderr.read()
        code = server.wait(timeout=60)
    assert code == EXIT_INTERRUPTED, "".join(said) + rest
    assert "Application shutdown complete." in rest
    assert "Traceback" not in rest
