"""`mcp-gateway stdio` as Claude Desktop and Claude Code start it: the CLI as a subprocess, the official `mcp` client.

The CLI serves the bundled demo shop; `MCP_GATEWAY_TOKEN` carries the API key that every REST call of the
connection sends, since stdio has no per-request credentials.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from demo import ADMIN_KEY, MEMBER_KEY

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]


def _cli(token: str | None) -> StdioServerParameters:
    env = {key: value for key, value in os.environ.items() if not key.startswith("MCP_GATEWAY_")}
    if token is not None:
        env["MCP_GATEWAY_TOKEN"] = token
    return StdioServerParameters(command=sys.executable, args=["-m", "gateway.cli", "stdio"], env=env, cwd=REPO)


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("2026-07-28", "2026-07-28")])
async def test_the_cli_over_stdio_serves_the_demo_with_the_tokens_credentials(mode: str, version: str) -> None:
    async with Client(_cli(ADMIN_KEY), mode=mode) as client:
        assert client.protocol_version == version
        # The handshake carries the instructions; a 2026-07-28 client without server/discover has none to read.
        assert mode != "legacy" or "search_functions" in (client.instructions or "")
        tools = [tool.name for tool in (await client.list_tools()).tools]
        me = await client.call_tool("whoami", {})
        found = await client.call_tool("search_functions", {"query": "cancel an order"})
        order = await client.call_tool("call_function", {"name": "orders.get_order", "args": {"order_id": 3}})
        missing = await client.call_tool("call_function", {"name": "orders.get_order", "args": {"order_id": 999}})
    assert tools[:5] == ["whoami", "search_functions", "describe_function", "explain_term", "call_function"]
    assert json.loads(_text(me))["name"] == "Alice Martin"
    assert _text(found).splitlines()[0].startswith("orders.cancel_order(")
    assert not order.is_error and order.structured_content is not None
    assert (order.structured_content["id"], order.structured_content["status"]) == (3, "paid")
    assert missing.is_error and "404" in _text(missing)


async def test_over_stdio_the_rest_app_decides_what_the_token_may_do() -> None:
    async with Client(_cli(MEMBER_KEY), mode="legacy") as member, Client(_cli(None), mode="legacy") as anonymous:
        me = await member.call_tool("whoami", {})
        refused = await anonymous.call_tool("call_function", {"name": "orders.get_order", "args": {"order_id": 3}})
    assert json.loads(_text(me))["name"] == "Bob Okafor"
    assert refused.is_error and "401" in _text(refused)
