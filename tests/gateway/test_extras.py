"""The bare install and the extras: without any extra the gateway serves a document over real HTTP (tools,
resources, prompts, in-memory tasks), and each feature that needs an extra is refused at start-up naming its pip
command. "Without" is a Python whose import system cannot find the extras' packages (a `sys.meta_path` wrapper),
run in a subprocess; tests/test_install.py does the same from a fresh virtualenv."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import anyio
import httpx2
import pytest

from demo import ADMIN_KEY, create_app
from gateway.errors import ConfigError, MissingExtraError
from gateway.extras import EXTRAS, install_command, require
from tests.gateway.conftest import serve_http

REPO = Path(__file__).resolve().parents[2]

#: What the bare install has anyway: the MCP SDK requires cryptography (PyJWT's) and opentelemetry-api.
BARE_ANYWAY = frozenset({"cryptography", "opentelemetry"})
#: The import names no bare install holds: every extra's, and what only those bring (read by our modules too).
REFUSED = frozenset(
    {module for extra in EXTRAS.values() for module in extra.modules} - BARE_ANYWAY
    | {"quickjs", "jsonschema_path", "joserfc", "werkzeug"}
)

#: Run first in the subprocess: the extras' packages are not found, as where they were never installed.
WITHOUT_EXTRAS = f"""
import importlib.abc, sys

REFUSED = frozenset({sorted(REFUSED)!r})


class Refusing(importlib.abc.MetaPathFinder):
    def __init__(self, finder):
        self.finder = finder

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in REFUSED or not hasattr(self.finder, "find_spec"):
            return None
        return self.finder.find_spec(name, path, target)

    def find_distributions(self, *args, **kwargs):
        found = getattr(self.finder, "find_distributions", None)
        return iter(()) if found is None else found(*args, **kwargs)

    def invalidate_caches(self):
        getattr(self.finder, "invalidate_caches", lambda: None)()


assert not REFUSED & set(sys.modules), "loaded before the finders were wrapped"
sys.meta_path[:] = [Refusing(finder) for finder in sys.meta_path]
"""

SERVE = WITHOUT_EXTRAS + "from gateway.cli import main\nsys.exit(main(sys.argv[1:]))\n"


def test_the_refusing_import_system_finds_none_of_the_extras_packages_that_are_installed_here() -> None:
    # Here, in the test environment, every extra is installed: only the wrapper hides them.
    assert all(importlib.util.find_spec(module) is not None for extra in EXTRAS.values() for module in extra.modules)
    program = WITHOUT_EXTRAS + (
        "import importlib.util\n"
        "print([name for name in sorted(REFUSED) if importlib.util.find_spec(name) is not None])\n"
        "import gateway.extras\n"
        "print(sorted(name for name in gateway.extras.EXTRAS if not gateway.extras.missing(name)))\n"
    )
    ran = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True, timeout=60)
    assert ran.stdout.splitlines() == ["[]", "['otel']"]  # opentelemetry-api comes with the MCP SDK


def listening_port(server: subprocess.Popen[str]) -> tuple[int | None, str]:
    """The port uvicorn says it listens on (None when the server stopped first), and its log so far."""
    assert server.stderr is not None
    seen = ""
    for line in server.stderr:
        seen += line
        running = re.search(r"Uvicorn running on http://127\.0\.0\.1:(\d+)", line)
        if running:
            return int(running.group(1)), seen
    return None, seen


async def _rpc(client: httpx2.AsyncClient, method: str, params: dict[str, object] | None = None) -> dict[str, object]:
    message: dict[str, object] = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params is not None:
        message["params"] = params
    answer = await client.post("/mcp", json=message)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert "result" in body, body
    result: dict[str, object] = body["result"]
    return result


@pytest.mark.anyio
async def test_the_bare_install_serves_a_document_over_http_with_its_tools_resources_prompts_and_tasks(
    tmp_path: Path,
) -> None:
    document = tmp_path / "demo.json"
    document.write_text(json.dumps(create_app().openapi()))
    async with serve_http(create_app()) as upstream:
        argv = ["serve", "--spec", str(document), "--upstream", upstream, "--port", "0"]
        argv += ["--whoami", "users.get_current_user", "--tasks"]
        server = subprocess.Popen(
            [sys.executable, "-c", SERVE, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        try:
            with anyio.fail_after(60):
                port, log = await anyio.to_thread.run_sync(listening_port, server)
            assert port is not None, log
            headers = {"Authorization": f"Bearer {ADMIN_KEY}", "Accept": "application/json, text/event-stream"}
            async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=30) as client:
                hello = await _rpc(
                    client,
                    "initialize",
                    {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
                )
                assert hello["serverInfo"] == {"name": "Demo Shop API", "version": "1.0.0"}
                client.headers["MCP-Protocol-Version"] = "2025-11-25"
                tools = await _rpc(client, "tools/list")
                names = {tool["name"] for tool in tools["tools"]}  # type: ignore[attr-defined]
                assert {"whoami", "search_functions", "describe_function", "explain_term", "call_function"} <= names
                called = await _rpc(
                    client,
                    "tools/call",
                    {"name": "call_function", "arguments": {"name": "users.get_current_user", "args": {}}},
                )
                assert called["isError"] is False
                assert called["structuredContent"] == {
                    "id": 1,
                    "name": "Alice Martin",
                    "email": "alice@example.com",
                    "role": "admin",
                }
                found = await _rpc(client, "tools/call", {"name": "search_functions", "arguments": {"query": "orders"}})
                assert "orders." in json.dumps(found)
                assert (await _rpc(client, "resources/list"))["resources"]
                assert (await _rpc(client, "prompts/list"))["prompts"]
                task = await _rpc(client, "tools/call", {"name": "whoami", "arguments": {}, "task": {}})
                assert task["task"]["status"] in ("working", "completed")  # type: ignore[index]
        finally:
            server.terminate()
            out, _ = server.communicate(timeout=30)
    # The default feature whose extra is missing is off, and start-up says how to turn it on.
    off = "Checking answers against the document: off, the 'strict' extra is not installed"
    assert f"{off} ({install_command('strict')})" in out


#: Each feature that needs an extra, configured on the command line, and the extra it names.
REFUSALS = [
    (["serve", "--scripts"], "scripts"),
    (["serve", "--tasks-store", "redis://127.0.0.1:9/0"], "redis"),
    (["serve", "--metrics-path", "/metrics"], "metrics"),
    (["serve", "--oauth"], "oauth"),
    (["stdio", "--scripts"], "scripts"),
    (["catalog", "check", "--strict"], "strict"),
]


def test_each_feature_without_its_extra_is_refused_at_start_up_naming_its_pip_command(tmp_path: Path) -> None:
    document = tmp_path / "demo.json"
    document.write_text(json.dumps(create_app().openapi()))
    api = ["--spec", str(document), "--upstream", "http://127.0.0.1:9", "--whoami", "users.get_current_user"]
    runs = [[*argv, *api] if argv[0] != "catalog" else [*argv, str(document)] for argv, _ in REFUSALS]
    # The bundled demo (FastAPI) is the `demo` extra's, for `serve` and for the catalog commands alike.
    runs += [["serve", "--port", "0"], ["catalog", "check", "demo"]]
    extras = [extra for _, extra in REFUSALS] + ["demo", "demo"]
    program = WITHOUT_EXTRAS + (
        "import contextlib, io, json\n"
        "from gateway.cli import main\n"
        "answers = []\n"
        "for argv in json.loads(sys.argv[1]):\n"
        "    said = io.StringIO()\n"
        "    with contextlib.redirect_stderr(said), contextlib.redirect_stdout(io.StringIO()):\n"
        "        answers.append([main(argv), said.getvalue()])\n"
        "print(json.dumps(answers))\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", program, json.dumps(runs)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    answers = json.loads(ran.stdout)
    for argv, extra, (code, said) in zip(runs, extras, answers, strict=True):
        assert code == 1, (argv, said)
        assert said.startswith("mcp-gateway: "), (argv, said)
        assert said.endswith(f" needs the {extra!r} extra: pip install 'openapi-mcp-gateway[{extra}]'\n"), (argv, said)


def test_the_gateway_itself_refuses_a_feature_without_its_extra_when_it_is_made() -> None:
    program = WITHOUT_EXTRAS + (
        "from gateway import Gateway, MissingExtraError, Observability, ScriptConfig, TaskConfig\n"
        "spec = {'openapi': '3.1.0', 'info': {'title': 'T', 'version': '1'}, 'paths': {'/me': {'get': {\n"
        "    'operationId': 'me', 'tags': ['users'], 'responses': {'200': {'description': 'me'}}}}}}\n"
        "base = dict(spec=spec, upstream='http://127.0.0.1:9', whoami='users.me')\n"
        "for options in (dict(scripts=ScriptConfig()), dict(observability=Observability(metrics_path='/m')),\n"
        "                dict(tasks=TaskConfig(store='redis://127.0.0.1:9/0'))):\n"
        "    try:\n"
        "        Gateway(**base, **options)\n"
        "    except MissingExtraError as error:\n"
        "        print(error.extra, error)\n"
        "Gateway(**base)\n"
        "print('bare: served')\n"
    )
    ran = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True, timeout=60)
    assert ran.stdout.splitlines() == [
        "scripts run_script (scripts=ScriptConfig(), --scripts) needs the 'scripts' extra: "
        "pip install 'openapi-mcp-gateway[scripts]'",
        "metrics metrics_path (--metrics-path) needs the 'metrics' extra: pip install 'openapi-mcp-gateway[metrics]'",
        "redis a Redis task store (--tasks-store redis://...) needs the 'redis' extra: "
        "pip install 'openapi-mcp-gateway[redis]'",
        "bare: served",
    ]


def test_a_missing_module_is_a_config_error_naming_the_feature_its_extra_and_the_command() -> None:
    with pytest.raises(MissingExtraError) as raised:
        require("speed", "http='httptools'", modules=("no_such_module_anywhere",))
    assert isinstance(raised.value, ConfigError)
    assert raised.value.extra == "speed"
    assert str(raised.value) == "http='httptools' needs the 'speed' extra: pip install 'openapi-mcp-gateway[speed]'"
    require("speed", "json", modules=("json",))  # found: nothing to say


def test_the_extras_the_gateway_names_are_the_projects_and_all_holds_every_one() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    optional = project["optional-dependencies"]
    assert set(EXTRAS) <= set(optional)
    (everything,) = optional["all"]
    name, _, listed = everything.partition("[")
    assert name == project["name"]
    assert set(listed.rstrip("]").split(",")) == set(EXTRAS)
    # None of what an extra holds is required by the bare install.
    bare = {re.split(r"[<>=;\[ ]", requirement)[0].lower() for requirement in project["dependencies"]}
    held = {re.split(r"[<>=;\[ ]", requirement)[0].lower() for extra in EXTRAS for requirement in optional[extra]}
    assert bare & held == set()


@pytest.mark.anyio
async def test_the_install_pages_mount_example_serves_without_any_extra(tmp_path: Path) -> None:
    page = (REPO / "docs" / "install.md").read_text()
    (example,) = re.findall(r"```python\n(.*?)```", page, flags=re.DOTALL)
    (tmp_path / "app.py").write_text(example)
    program = WITHOUT_EXTRAS + "import uvicorn\nuvicorn.run('app:app', host='127.0.0.1', port=0, app_dir=sys.argv[1])\n"
    server = subprocess.Popen(
        [sys.executable, "-c", program, str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        with anyio.fail_after(60):
            port, log = await anyio.to_thread.run_sync(listening_port, server)
        assert port is not None, log
        headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
        async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=30) as client:
            called = await _rpc(client, "tools/call", {"name": "whoami", "arguments": {}})
        assert called["structuredContent"] == {"id": 1, "name": "Ada"}
    finally:
        server.terminate()
        server.communicate(timeout=30)
