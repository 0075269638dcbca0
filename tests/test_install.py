"""`pip install openapi-mcp-gateway` with no extra, into a fresh virtualenv, serves a document: `mcp-gateway serve
--spec FILE` answers an MCP initialize, tools/list and a call over HTTP, and no extra's package came with it.

It installs from the package index (pip's cache makes it take seconds), so it runs where CI or
MCP_GATEWAY_TEST_INSTALL is set; .ci/run sets the latter, so `make test` on CI always runs it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import httpx2
import pytest

from demo import ADMIN_KEY, create_app
from gateway.extras import EXTRAS
from tests.gateway.conftest import serve_http
from tests.gateway.test_extras import BARE_ANYWAY, listening_port

REPO = Path(__file__).resolve().parents[1]
#: What the package is built from (pyproject.toml's packages and the files it reads).
SOURCES = ("pyproject.toml", "README.md", "catalog", "gateway", "sandbox", "oauth", "demo")

pytestmark = pytest.mark.skipif(
    not (os.environ.get("CI") or os.environ.get("MCP_GATEWAY_TEST_INSTALL")),
    reason="installs from the package index into a fresh virtualenv: set MCP_GATEWAY_TEST_INSTALL=1 (CI sets it)",
)


def _environment() -> dict[str, str]:
    """This environment without what would make the new virtualenv import this checkout or read our settings."""
    return {
        name: value
        for name, value in os.environ.items()
        if name not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV") and not name.startswith("MCP_GATEWAY_")
    }


def _bare_install(folder: Path) -> Path:
    """A new virtualenv in `folder` with the project installed from a copy of its sources, without extras, at the
    versions of constraints.txt; its `bin` folder."""
    source = folder / "source"
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            source.mkdir(parents=True, exist_ok=True)
            shutil.copy(REPO / name, source / name)
    venv = folder / "venv"
    env = _environment()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120, env=env)
    python = venv / "bin" / "python"
    install = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(source)]
    ran = subprocess.run(
        [*install, "-c", str(REPO / "constraints.txt")], capture_output=True, text=True, timeout=600, env=env
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return venv / "bin"


@pytest.mark.anyio
async def test_the_project_installed_without_extras_serves_a_document_over_http(tmp_path: Path) -> None:
    bin_folder = _bare_install(tmp_path)
    modules = sorted(module for extra in EXTRAS.values() for module in extra.modules)
    program = f"import importlib.util, json; print(json.dumps([m for m in {modules!r} if importlib.util.find_spec(m)]))"
    found = subprocess.run(
        [str(bin_folder / "python"), "-c", program], capture_output=True, text=True, check=True, env=_environment()
    )
    assert set(json.loads(found.stdout)) == BARE_ANYWAY
    document = tmp_path / "demo.json"
    document.write_text(json.dumps(create_app().openapi()))
    async with serve_http(create_app()) as upstream:
        argv = ["serve", "--spec", str(document), "--upstream", upstream, "--port", "0"]
        server = subprocess.Popen(
            [str(bin_folder / "mcp-gateway"), *argv],
            cwd=tmp_path,
            env=_environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            with anyio.fail_after(60):
                port, log = await anyio.to_thread.run_sync(listening_port, server)
            assert port is not None, log
            headers = {"Authorization": f"Bearer {ADMIN_KEY}", "Accept": "application/json, text/event-stream"}
            async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=30) as client:
                start = {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                }
                hello = await client.post(
                    "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": start}
                )
                assert hello.json()["result"]["serverInfo"]["name"] == "Demo Shop API"
                client.headers["MCP-Protocol-Version"] = "2025-11-25"
                listed = await client.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
                names = {tool["name"] for tool in listed.json()["result"]["tools"]}
                assert {"whoami", "search_functions", "describe_function", "explain_term", "call_function"} <= names
                call = {"name": "call_function", "arguments": {"name": "users.get_current_user", "args": {}}}
                called = await client.post(
                    "/mcp", json={"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call}
                )
                assert called.json()["result"]["structuredContent"]["name"] == "Alice Martin"
        finally:
            server.terminate()
            server.communicate(timeout=30)
