"""What the client of a request declares it can do, read in one place: whether it renders MCP Apps (SEP-1865,
the `io.modelcontextprotocol/ui` extension).

A client declares extensions in `capabilities.extensions`: in its initialize request (a session that outlives one
request: stdio), or with each request at 2026-07-28 (`_meta["io.modelcontextprotocol/clientCapabilities"]`).
Stateless HTTP at an initialize-era version keeps nothing between requests, so such a client renders no app here.
The endpoint reads the capabilities of each tools/list and tools/call and sets `renders_ui` for the call's
handlers.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import Final

__all__ = ["APP_MIME_TYPE", "UI_EXTENSION", "client_supports_ui", "renders_ui"]

UI_EXTENSION: Final = "io.modelcontextprotocol/ui"
"""The MCP Apps extension's identifier."""

APP_MIME_TYPE: Final = "text/html;profile=mcp-app"
"""The MIME type of an app's `ui://` resource, which a client that renders apps lists in its settings."""


def client_supports_ui(capabilities: object) -> bool:
    """Whether client `capabilities` (the SDK's `ClientCapabilities`, their JSON, or None) declare the MCP Apps
    extension with the app MIME type among its `mimeTypes`, as the SDK's `client_supports_apps` reads them."""
    if capabilities is None:
        return False
    if isinstance(capabilities, Mapping):
        extensions = capabilities.get("extensions")
    else:
        extensions = getattr(capabilities, "extensions", None)
    settings = extensions.get(UI_EXTENSION) if isinstance(extensions, Mapping) else None
    mime_types = settings.get("mimeTypes") if isinstance(settings, Mapping) else None
    return isinstance(mime_types, list | tuple) and APP_MIME_TYPE in mime_types


renders_ui: ContextVar[bool] = ContextVar("gateway.renders_ui", default=False)
"""Whether the client of the tools/list or tools/call being served renders MCP Apps (set by the endpoint)."""
