"""The extensions the client of the request being served declared (MCP 2025-11-25 `ClientCapabilities.extensions`).

`client_extension(name)` is the one accessor: the settings the client declared for extension `name`, or None.
The transports say who the client is with `declared_by(capabilities)` around the work of one request: the SDK's
handlers from the connection's capabilities (the initialize handshake over stdio, or a 2026-07-28 request's own
`_meta` envelope), the HTTP transport's lean 2026-07-28 `tools/call` from that envelope. The HTTP transport is
stateless, so a handshake-era request over HTTP declares nothing (its initialize was another request).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final

__all__ = ["APP_MIME_TYPE", "UI_EXTENSION", "client_extension", "declared_by", "offers_apps"]

#: MCP Apps (SEP-1865): tools linked to `ui://` HTML views the host renders.
UI_EXTENSION: Final = "io.modelcontextprotocol/ui"
#: The media type of an MCP Apps view; a client declares it among the extension's `mimeTypes`.
APP_MIME_TYPE: Final = "text/html;profile=mcp-app"

_declared: ContextVar[Mapping[str, Any]] = ContextVar("gateway.client_extensions", default={})  # noqa: B039


def _extensions(capabilities: object) -> Mapping[str, Any]:
    """The `extensions` map of client capabilities given as the SDK's model or as wire JSON (else empty)."""
    if capabilities is None:
        return {}
    found = capabilities.get("extensions") if isinstance(capabilities, Mapping) else None
    if found is None and not isinstance(capabilities, Mapping):
        found = getattr(capabilities, "extensions", None)
    return found if isinstance(found, Mapping) else {}


@contextmanager
def declared_by(capabilities: object) -> Iterator[None]:
    """Serve the block for a client that declared `capabilities` (the SDK's `ClientCapabilities`, its wire JSON,
    or None for nothing)."""
    token = _declared.set(_extensions(capabilities))
    try:
        yield
    finally:
        _declared.reset(token)


def client_extension(name: str) -> Mapping[str, Any] | None:
    """The settings the client of the request being served declared for extension `name`; None when it did not."""
    settings = _declared.get().get(name)
    return settings if isinstance(settings, Mapping) else None


def offers_apps() -> bool:
    """Whether the client of the request being served renders MCP Apps views: it declared the UI extension with
    the `text/html;profile=mcp-app` media type (as the SDK's `mcp.server.apps.client_supports_apps` reads it)."""
    settings = client_extension(UI_EXTENSION)
    mime_types = settings.get("mimeTypes") if settings is not None else None
    return isinstance(mime_types, list | tuple) and APP_MIME_TYPE in mime_types
