"""The MCP side of the gateway: the protocol endpoint over any tool set, its HTTP and stdio transports, JSON-RPC,
the one bridge into the SDK's internals, resources, prompts, progress, tasks, and what clients declare they can
do (`capabilities`: MCP Apps).

Nothing here knows the catalog or the REST API: tools arrive as `ToolSpec`s with a handler, and every request is
answered under the caller policy the transport built for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gateway._lazy import lazy_exports

if TYPE_CHECKING:
    from gateway.mcp.endpoint import McpEndpoint
    from gateway.mcp.http import StreamableHttpApp
    from gateway.mcp.security import TransportSecurity
    from gateway.mcp.stdio import run_stdio

__all__ = ["McpEndpoint", "StreamableHttpApp", "TransportSecurity", "run_stdio"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "gateway.mcp.endpoint": ("McpEndpoint",),
        "gateway.mcp.http": ("StreamableHttpApp",),
        "gateway.mcp.security": ("TransportSecurity",),
        "gateway.mcp.stdio": ("run_stdio",),
    },
    globals(),
)
