"""The `mcp-gateway` command line: serving the gateway (HTTP and stdio), health checks, snapshots, the reference
page, and catalog inspection. The catalog commands import no web framework, MCP SDK or OAuth library."""

from __future__ import annotations

from gateway.cli.commands import main

__all__ = ["main"]
