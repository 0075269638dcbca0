"""The MCP stdio transport of an `McpEndpoint`, for clients that start the server as a subprocess."""

from __future__ import annotations

import anyio
from mcp.server.stdio import stdio_server

from gateway.mcp.endpoint import McpEndpoint

__all__ = ["run_stdio"]


async def run_stdio(
    endpoint: McpEndpoint,
    *,
    stdin: anyio.AsyncFile[str] | None = None,
    stdout: anyio.AsyncFile[str] | None = None,
) -> None:
    """Serve `endpoint` over stdin and stdout (or the streams given) until the client closes stdin.

    One connection, in the era the client opens with: the initialize handshake (2024-11-05 to 2025-11-25)
    or the 2026-07-28 per-request envelope. Tools see `RequestInfo(transport="stdio")`: no headers, so no
    credentials; `authenticate` does not run. While serving, the SDK points fd 1 at stderr so stray prints
    cannot corrupt the protocol stream.
    """
    server = endpoint.server
    async with stdio_server(stdin, stdout) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
