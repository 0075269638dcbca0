"""The OAuth 2.1 authorization server that logs hosted MCP clients in and guards the MCP endpoint."""

from __future__ import annotations

__all__: list[str] = []
