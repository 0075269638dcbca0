"""Serve a catalog as one MCP server with a small, fixed tool set, dispatching calls to the REST API."""

from __future__ import annotations

__all__: list[str] = []
