"""Serve a catalog as one MCP server with a small, fixed tool set, dispatching calls to the REST API.

Mount it next to a FastAPI or Starlette app in three lines::

    from gateway import Gateway

    gateway = Gateway(app=app, whoami="users.get_current_user")
    gateway.mount(app, "/mcp")

The names below are imported on first use (PEP 562), so that `import gateway.cli` and the catalog commands do
not pay for the MCP SDK, uvicorn or the web framework.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gateway._lazy import lazy_exports

if TYPE_CHECKING:
    from gateway.errors import (
        ArgumentError,
        ConfigError,
        CredentialError,
        GatewayError,
        LimitError,
        RequestError,
        RestError,
        ToolError,
    )
    from gateway.gateway import Gateway
    from gateway.limits import Limits
    from gateway.mcp.admission import Admission
    from gateway.mcp.endpoint import McpEndpoint
    from gateway.mcp.http import StreamableHttpApp
    from gateway.mcp.prompts import Prompt, PromptArgument
    from gateway.mcp.security import TransportSecurity
    from gateway.mcp.stdio import run_stdio
    from gateway.mcp.tasks import TaskConfig
    from gateway.mcp.toolspec import EmbeddedResource, ImageContent, TextContent, ToolResult, ToolSpec
    from gateway.options import GatewayConfig
    from gateway.policy import Access, Caller, Credentials
    from gateway.requests import Peer, RequestInfo, RestContext
    from gateway.rest.credentials import AuthFunc, CredentialRefusal, bearer_passthrough, bearer_to_headers
    from gateway.rest.fetching import fetch_document
    from gateway.tools.research import DataSource, ResearchConfig
    from gateway.tools.scripts import ScriptConfig

__all__ = [
    "Access",
    "Admission",
    "ArgumentError",
    "AuthFunc",
    "Caller",
    "ConfigError",
    "CredentialError",
    "CredentialRefusal",
    "Credentials",
    "DataSource",
    "EmbeddedResource",
    "Gateway",
    "GatewayConfig",
    "GatewayError",
    "ImageContent",
    "LimitError",
    "Limits",
    "McpEndpoint",
    "Peer",
    "Prompt",
    "PromptArgument",
    "RequestError",
    "RequestInfo",
    "ResearchConfig",
    "RestContext",
    "RestError",
    "ScriptConfig",
    "StreamableHttpApp",
    "TaskConfig",
    "TextContent",
    "ToolError",
    "ToolResult",
    "ToolSpec",
    "TransportSecurity",
    "bearer_passthrough",
    "bearer_to_headers",
    "fetch_document",
    "run_stdio",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "gateway.mcp.admission": ("Admission",),
        "gateway.gateway": ("Gateway",),
        "gateway.requests": ("Peer", "RequestInfo", "RestContext"),
        "gateway.options": ("GatewayConfig",),
        "gateway.rest.credentials": ("AuthFunc", "CredentialRefusal", "bearer_passthrough", "bearer_to_headers"),
        "gateway.errors": (
            "ArgumentError",
            "ConfigError",
            "CredentialError",
            "GatewayError",
            "LimitError",
            "RequestError",
            "RestError",
            "ToolError",
        ),
        "gateway.rest.fetching": ("fetch_document",),
        "gateway.limits": ("Limits",),
        "gateway.policy": ("Access", "Caller", "Credentials"),
        "gateway.mcp.prompts": ("Prompt", "PromptArgument"),
        "gateway.tools.research": ("DataSource", "ResearchConfig"),
        "gateway.tools.scripts": ("ScriptConfig",),
        "gateway.mcp.endpoint": ("McpEndpoint",),
        "gateway.mcp.stdio": ("run_stdio",),
        "gateway.mcp.http": ("StreamableHttpApp",),
        "gateway.mcp.security": ("TransportSecurity",),
        "gateway.mcp.tasks": ("TaskConfig",),
        "gateway.mcp.toolspec": ("EmbeddedResource", "ImageContent", "TextContent", "ToolResult", "ToolSpec"),
    },
    globals(),
)
