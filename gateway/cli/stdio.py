"""`mcp-gateway stdio`: the gateway over stdio for a local client (Claude Desktop, Claude Code), whose only
credential is the token in MCP_GATEWAY_TOKEN."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Final, TextIO

from gateway.cli.gateways import build_gateway, gateway_flags
from gateway.errors import CredentialError

__all__ = ["KEY_ADVICE", "KEY_MISSING", "KEY_REFUSED", "configure", "stdio_command"]

#: Over stdio the only credential is the server's MCP_GATEWAY_TOKEN: each message says how to set it.
KEY_ADVICE: Final = (
    'Set MCP_GATEWAY_TOKEN to an API key in the server\'s environment and restart it (Claude Desktop: the "env" '
    "of its entry in claude_desktop_config.json; Claude Code: `claude mcp add NAME -e MCP_GATEWAY_TOKEN=KEY -- "
    "mcp-gateway stdio ...`)."
)
KEY_MISSING: Final = (
    f"This stdio server was started without MCP_GATEWAY_TOKEN, so calls reach the API without a key. {KEY_ADVICE}"
)
KEY_REFUSED: Final = (
    f"The API refused the key in MCP_GATEWAY_TOKEN, the only credential of this stdio server. {KEY_ADVICE}"
)


def configure(parser: argparse.ArgumentParser) -> None:
    """The flags of `stdio`: every gateway option a local server takes."""
    gateway_flags(parser, {"all"})
    parser.set_defaults(run=stdio_command)


def stdio_command(options: argparse.Namespace, out: TextIO) -> int:
    """Serve the gateway the options describe over stdio until the client closes it."""
    import anyio

    from gateway.mcp.stdio import run_stdio

    gateway, _ = build_gateway(options)
    token = os.environ.get("MCP_GATEWAY_TOKEN") or None
    if token is None:
        print(f"mcp-gateway stdio: {KEY_MISSING}", file=sys.stderr)

    async def run() -> None:
        try:
            headers = await gateway.authentication.of_token(token)
        except CredentialError as error:
            raise CredentialError(f"MCP_GATEWAY_TOKEN was refused ({error}). {KEY_ADVICE}") from None
        gateway.use_stdio_credentials(
            headers, hint=KEY_MISSING if token is None else KEY_REFUSED, given=token is not None
        )
        async with gateway.lifespan():
            await run_stdio(gateway.endpoint)

    anyio.run(run)
    return 0
