"""Serve a catalog as one MCP server with a small, fixed tool set, dispatching calls to the REST API.

Mount it next to a FastAPI or Starlette app in three lines::

    from gateway import Gateway

    gateway = Gateway(app=app, whoami="users.get_current_user")
    gateway.mount(app, "/mcp")

Options come in groups (`Access`, `Effects`, `Limits`, `Security`, `Output`, `Observability`, `Additions`), the way
httpx takes `Timeout` and `Limits`. The names below are imported on first use (PEP 562), so that `import
gateway.cli` and the catalog commands do not pay for the MCP SDK, uvicorn or the web framework.
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
        MissingExtraError,
        RequestError,
        RestError,
        ToolError,
    )
    from gateway.gateway import Gateway
    from gateway.limits import Limits
    from gateway.mcp.endpoint import McpEndpoint
    from gateway.mcp.http import StreamableHttpApp
    from gateway.mcp.prompts import Prompt, PromptArgument
    from gateway.mcp.security import TransportSecurity
    from gateway.mcp.stdio import run_stdio
    from gateway.mcp.tasks import TaskConfig
    from gateway.mcp.toolspec import EmbeddedResource, ImageContent, TextContent, ToolResult, ToolSpec
    from gateway.options import Additions, Effects, GatewayConfig, Observability, Output, Security
    from gateway.policy import Access, Caller, CallerPolicy
    from gateway.requests import Peer, RequestInfo, RestContext
    from gateway.rest.credentials import (
        AuthFunc,
        CredentialRefusal,
        Credentials,
        bearer_passthrough,
        bearer_to_headers,
        header_templates,
    )
    from gateway.rest.fetching import fetch_document
    from gateway.tools.research import DataSource, ResearchConfig
    from gateway.tools.scripts import ScriptConfig

__all__ = [
    "Access",
    "Additions",
    "ArgumentError",
    "AuthFunc",
    "Caller",
    "CallerPolicy",
    "ConfigError",
    "CredentialError",
    "CredentialRefusal",
    "Credentials",
    "DataSource",
    "Effects",
    "EmbeddedResource",
    "Gateway",
    "GatewayConfig",
    "GatewayError",
    "ImageContent",
    "LimitError",
    "Limits",
    "McpEndpoint",
    "MissingExtraError",
    "Observability",
    "Output",
    "Peer",
    "Prompt",
    "PromptArgument",
    "RequestError",
    "RequestInfo",
    "ResearchConfig",
    "RestContext",
    "RestError",
    "ScriptConfig",
    "Security",
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
    "header_templates",
    "run_stdio",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "gateway.errors": (
            "ArgumentError",
            "ConfigError",
            "CredentialError",
            "GatewayError",
            "LimitError",
            "MissingExtraError",
            "RequestError",
            "RestError",
            "ToolError",
        ),
        "gateway.gateway": ("Gateway",),
        "gateway.limits": ("Limits",),
        "gateway.mcp.endpoint": ("McpEndpoint",),
        "gateway.mcp.http": ("StreamableHttpApp",),
        "gateway.mcp.prompts": (
            "Prompt",
            "PromptArgument",
        ),
        "gateway.mcp.security": ("TransportSecurity",),
        "gateway.mcp.stdio": ("run_stdio",),
        "gateway.mcp.tasks": ("TaskConfig",),
        "gateway.mcp.toolspec": (
            "EmbeddedResource",
            "ImageContent",
            "TextContent",
            "ToolResult",
            "ToolSpec",
        ),
        "gateway.options": (
            "Additions",
            "Effects",
            "GatewayConfig",
            "Observability",
            "Output",
            "Security",
        ),
        "gateway.policy": (
            "Access",
            "Caller",
            "CallerPolicy",
        ),
        "gateway.requests": (
            "Peer",
            "RequestInfo",
            "RestContext",
        ),
        "gateway.rest.credentials": (
            "AuthFunc",
            "CredentialRefusal",
            "Credentials",
            "bearer_passthrough",
            "bearer_to_headers",
            "header_templates",
        ),
        "gateway.rest.fetching": ("fetch_document",),
        "gateway.tools.research": (
            "DataSource",
            "ResearchConfig",
        ),
        "gateway.tools.scripts": ("ScriptConfig",),
    },
    globals(),
)
