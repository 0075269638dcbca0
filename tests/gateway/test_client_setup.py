"""What `serve` prints for Claude Desktop, Claude Code and URL-configured clients works as printed: the Desktop
entry starts the same API over stdio from any folder, and stdio says how to fix a missing or refused key."""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from gateway.cli.commands import parser_for
from gateway.cli.gateways import stdio_args
from gateway.cli.serve import print_client_setup
from gateway.requests import RestContext

pytestmark = pytest.mark.anyio

APP_SOURCE = textwrap.dedent(
    """
    from fastapi import FastAPI, Header, HTTPException

    app = FastAPI(title="Notes")

    @app.get("/me", tags=["me"], operation_id="get_me")
    def me(authorization: str = Header("")) -> dict[str, str]:
        if authorization != "Bearer right-key":
            raise HTTPException(401, "bad key")
        return {"id": "n1", "name": "Nora"}

    @app.get("/notes", tags=["notes"], operation_id="list_notes")
    def notes() -> list[str]:
        return ["first"]

    @app.get("/drafts", tags=["notes"], operation_id="list_drafts")
    def drafts(authorization: str = Header("")) -> list[str]:
        if authorization != "Bearer right-key":
            raise HTTPException(403, "Not authenticated")  # as FastAPI's own security classes long answered
        return ["draft"]
    """
)


STDIO = ["-m", "gateway.cli", "stdio", "--app", "notes_api:app", "--whoami", "me.get_me"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "notes_api.py").write_text(APP_SOURCE)
    return folder


def desktop_entry(argv: list[str], monkeypatch: pytest.MonkeyPatch, cwd: Path) -> dict[str, Any]:
    monkeypatch.chdir(cwd)
    options = parse(argv)
    out = io.StringIO()
    print_client_setup(options, "Notes", "http://127.0.0.1:8000/mcp", demo=False, oauth=False, out=out)
    line = next(line for line in out.getvalue().splitlines() if line.startswith("Claude Desktop"))
    config: dict[str, Any] = json.loads(line.split(": ", 1)[1])
    (entry,) = config["mcpServers"].values()
    return dict(entry)


def parse(argv: list[str]) -> argparse.Namespace:
    return parser_for(argv).parse_args(argv)


def text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def _clean_env() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if not key.startswith("MCP_GATEWAY_")}


def test_the_desktop_entry_is_a_command_with_absolute_paths_and_a_token_variable(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = desktop_entry(["serve", "--app", "notes_api:app", "--whoami", "me.get_me"], monkeypatch, project)
    assert set(entry) == {"command", "args", "env"}
    assert Path(entry["command"]).is_absolute()
    assert entry["args"][:3] == ["-m", "gateway.cli", "stdio"]
    assert entry["args"][entry["args"].index("--app-dir") + 1] == str(project)
    assert "--port" not in entry["args"]
    assert entry["env"] == {"MCP_GATEWAY_TOKEN": "YOUR_API_KEY"}


def test_a_relative_spec_path_becomes_absolute_and_environment_settings_become_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "api.yaml").write_text("openapi: 3.0.0\n")
    monkeypatch.setenv("MCP_GATEWAY_TIMEOUT", "45")
    options = parse(["serve", "--spec", "api.yaml", "--tool", "a.b"])
    monkeypatch.chdir(tmp_path)
    args = stdio_args(options)
    assert args == ["--spec", str(tmp_path / "api.yaml"), "--tool", "a.b", "--timeout", "45"]
    assert os.environ["MCP_GATEWAY_TIMEOUT"] == "45"


async def test_the_desktop_entry_serves_the_app_when_started_from_another_folder(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = desktop_entry(["serve", "--app", "notes_api:app", "--whoami", "me.get_me"], monkeypatch, project)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    server = StdioServerParameters(
        command=entry["command"],
        args=entry["args"],
        env={**_clean_env(), "MCP_GATEWAY_TOKEN": "right-key"},
        cwd=elsewhere,
    )
    async with Client(server, mode="legacy") as client:
        who = await client.call_tool("whoami", {})
        notes = await client.call_tool("call_function", {"name": "notes.list_notes", "args": {}})
    assert json.loads(text(who)) == {"id": "n1", "name": "Nora"}
    assert json.loads(text(notes)) == ["first"]


async def test_over_stdio_a_missing_token_says_to_set_mcp_gateway_token(project: Path) -> None:
    server = StdioServerParameters(
        command=sys.executable,
        args=[*STDIO, "--app-dir", str(project)],
        env=_clean_env(),
        cwd=project.parent,
    )
    async with Client(server, mode="legacy") as client:
        result = await client.call_tool("whoami", {})
        forbidden = await client.call_tool("call_function", {"name": "notes.list_drafts", "args": {}})
    assert result.is_error
    assert "started without MCP_GATEWAY_TOKEN" in text(result)
    assert "claude_desktop_config.json" in text(result)
    # An API that answers a missing key with 403, not 401: the same advice, since no key was sent at all.
    assert forbidden.is_error and text(forbidden).startswith("HTTP 403")
    assert "started without MCP_GATEWAY_TOKEN" in text(forbidden)


async def test_over_stdio_a_refused_token_says_the_key_in_mcp_gateway_token_was_refused(project: Path) -> None:
    server = StdioServerParameters(
        command=sys.executable,
        args=[*STDIO, "--app-dir", str(project)],
        env={**_clean_env(), "MCP_GATEWAY_TOKEN": "wrong-key"},
        cwd=project.parent,
    )
    async with Client(server, mode="legacy") as client:
        result = await client.call_tool("whoami", {})
        forbidden = await client.call_tool("call_function", {"name": "notes.list_drafts", "args": {}})
    assert result.is_error
    assert "refused the key in MCP_GATEWAY_TOKEN" in text(result)
    # A 403 to a key that was sent says the key lacks permission, not that it was refused.
    assert forbidden.is_error and "MCP_GATEWAY_TOKEN" not in text(forbidden)


def test_an_app_dir_that_is_not_a_folder_is_refused_naming_the_module(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from gateway.cli.commands import main

    code = main(["stdio", "--app", "notes_api:app", "--app-dir", str(tmp_path / "missing")])
    assert code != 0
    assert "--app-dir" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("given", "hinted"),
    [(True, {401}), (False, {401, 403, 407})],
)
def test_the_credential_hint_answers_each_refusal_of_credentials_and_nothing_else(
    given: bool, hinted: set[int]
) -> None:
    context = RestContext(credential_hint="set the key", credentials_given=given)
    answered = {status for status in (400, 401, 403, 404, 407, 429, 500) if context.refusal_hint(status)}
    assert answered == hinted
