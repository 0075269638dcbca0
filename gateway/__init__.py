"""Serve a catalog as one MCP server with a small, fixed tool set, dispatching calls to the REST API.

Mount it next to a FastAPI or Starlette app in three lines::

    from gateway import Gateway

    gateway = Gateway(app=app, whoami="users.get_current_user")
    gateway.mount(app, "/mcp")

The names below are imported on first use (PEP 562), so that `import gateway.cli` and the catalog commands do
not pay for the MCP SDK, uvicorn or the web framework.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gateway.admission import Admission
    from gateway.app import Gateway
    from gateway.caller import Peer, RequestInfo, RestContext
    from gateway.config import GatewayConfig
    from gateway.credentials import AuthFunc, CredentialRefusal, bearer_passthrough, bearer_to_headers
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
    from gateway.fetching import fetch_document
    from gateway.limits import Limits
    from gateway.policy import Access, Caller, Credentials
    from gateway.prompts import Prompt, PromptArgument
    from gateway.research import DataSource, ResearchConfig
    from gateway.scripting import ScriptConfig
    from gateway.server import McpEndpoint
    from gateway.stdio import run_stdio
    from gateway.streamable_http import StreamableHttpApp
    from gateway.tasks import TaskConfig
    from gateway.toolspec import EmbeddedResource, ImageContent, TextContent, ToolResult, ToolSpec
    from gateway.transport_security import TransportSecurity

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

_HOMES = {
    "gateway.admission": ("Admission",),
    "gateway.app": ("Gateway",),
    "gateway.caller": ("Peer", "RequestInfo", "RestContext"),
    "gateway.config": ("GatewayConfig",),
    "gateway.credentials": ("AuthFunc", "CredentialRefusal", "bearer_passthrough", "bearer_to_headers"),
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
    "gateway.fetching": ("fetch_document",),
    "gateway.limits": ("Limits",),
    "gateway.policy": ("Access", "Caller", "Credentials"),
    "gateway.prompts": ("Prompt", "PromptArgument"),
    "gateway.research": ("DataSource", "ResearchConfig"),
    "gateway.scripting": ("ScriptConfig",),
    "gateway.server": ("McpEndpoint",),
    "gateway.stdio": ("run_stdio",),
    "gateway.streamable_http": ("StreamableHttpApp",),
    "gateway.transport_security": ("TransportSecurity",),
    "gateway.tasks": ("TaskConfig",),
    "gateway.toolspec": ("EmbeddedResource", "ImageContent", "TextContent", "ToolResult", "ToolSpec"),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'gateway' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
