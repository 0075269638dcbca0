"""What the client of a request declares it can do, read in one place: whether it renders MCP Apps (SEP-1865,
the `io.modelcontextprotocol/ui` extension).

A client declares extensions in `capabilities.extensions`: in its initialize request (a session that outlives one
request: stdio), or with each request at 2026-07-28 (`_meta["io.modelcontextprotocol/clientCapabilities"]`).
Stateless HTTP keeps nothing between requests, so the HTTP transport answers an initialize that declares MCP Apps
with an `Mcp-Session-Id` that says so (`ui_session_id`), and every request that sends such an id back is served as
declaring it (`declared_in_session`); no state is kept anywhere. The endpoint reads the capabilities of each
request and sets `renders_ui` for its handlers.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Final

__all__ = [
    "APP_MIME_TYPE",
    "UI_EXTENSION",
    "client_supports_ui",
    "declared_in_session",
    "renders_ui",
    "ui_session",
    "ui_session_id",
]

UI_EXTENSION: Final = "io.modelcontextprotocol/ui"
"""The MCP Apps extension's identifier."""

APP_MIME_TYPE: Final = "text/html;profile=mcp-app"
"""The MIME type of an app's `ui://` resource, which a client that renders apps lists in its settings."""


def client_supports_ui(capabilities: object) -> bool:
    """Whether client `capabilities` (the SDK's `ClientCapabilities`, their JSON, or None) declare the MCP Apps
    extension with the app MIME type among its `mimeTypes`, as the SDK's `client_supports_apps` reads them; or the
    request's session says its client declared them at initialize (`declared_in_session`)."""
    if declared_in_session.get():
        return True
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


#: The `Mcp-Session-Id` prefix of a client whose initialize declared MCP Apps (stateless: the id is the record).
_UI_SESSION: Final = "mcp-apps-"

declared_in_session: ContextVar[bool] = ContextVar("gateway.declared_in_session", default=False)
"""Whether the HTTP request being served carries a `ui_session_id` (set by the transport)."""


def ui_session_id() -> str:
    """A new `Mcp-Session-Id` for a client whose initialize declared MCP Apps: unguessable, as MCP 2025-11-25
    transports ask, and recognisable by its prefix alone."""
    return _UI_SESSION + secrets.token_hex(16)


def ui_session(session_id: str | None) -> bool:
    """Whether an `Mcp-Session-Id` header's value is one `ui_session_id` made."""
    return session_id is not None and session_id.startswith(_UI_SESSION) and len(session_id) == len(_UI_SESSION) + 32
