"""Serve a catalog as one MCP server with a small, fixed tool set, dispatching calls to the REST API.

Mount it next to a FastAPI or Starlette app in three lines::

    from gateway import Gateway

    gateway = Gateway(app=app, whoami="users.get_current_user")
    gateway.mount(app, "/mcp")
"""

from __future__ import annotations

from gateway.app import Gateway
from gateway.caller import Peer, RequestInfo, RestContext
from gateway.config import GatewayConfig
from gateway.credentials import AuthFunc, CredentialRefusal, bearer_passthrough, bearer_to_headers
from gateway.errors import (
    ArgumentError,
    ConfigError,
    CredentialError,
    GatewayError,
    RequestError,
    RestError,
    ToolError,
)
from gateway.prompts import Prompt, PromptArgument
from gateway.research import DataSource, ResearchConfig
from gateway.scripting import ScriptConfig
from gateway.server import McpEndpoint
from gateway.stdio import run_stdio
from gateway.streamable_http import StreamableHttpApp, TransportSecurity
from gateway.tasks import TaskConfig
from gateway.toolspec import EmbeddedResource, ImageContent, TextContent, ToolResult, ToolSpec
from gateway.visibility import Caller

__all__ = [
    "ArgumentError",
    "AuthFunc",
    "Caller",
    "ConfigError",
    "CredentialError",
    "CredentialRefusal",
    "DataSource",
    "EmbeddedResource",
    "Gateway",
    "GatewayConfig",
    "GatewayError",
    "ImageContent",
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
    "run_stdio",
]
