"""Every callable shape the gateway's pieces hand each other, defined once."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from gateway.mcp.toolspec import ToolResult
from gateway.policy import CallerPolicy
from gateway.requests import RequestInfo, RestContext

if TYPE_CHECKING:
    from catalog.model import Catalog
    from gateway.mcp.prompts import PromptSet
    from gateway.mcp.resources import ResourceSet
    from gateway.mcp.toolspec import ToolSpec

__all__ = ["Authenticator", "ErrorHook", "RestContextFor", "Served", "ToolHandler", "ToolRunner"]

ErrorHook: TypeAlias = Callable[[str, Exception], Awaitable[None]]
"""Receives the tool name and the exception of a tool call that failed unexpectedly (traceback attached)."""

RestContextFor: TypeAlias = Callable[[RequestInfo], Awaitable[RestContext]]
"""What the REST calls of a request carry: the caller's credentials, rebuilt forwarded headers, its peer."""

ToolRunner: TypeAlias = Callable[[dict[str, Any], CallerPolicy], Awaitable[ToolResult]]
"""Runs one tool of the gateway with validated arguments, for the caller its policy answers for."""


class ToolHandler(Protocol):
    """Runs one tool call for `caller`; `args` has been validated against the tool's input schema."""

    def __call__(self, name: str, args: dict[str, Any], caller: CallerPolicy, /) -> Awaitable[ToolResult]: ...


class Authenticator(Protocol):
    """Checks the credentials of an HTTP MCP request before the MCP layer sees it.

    Returns the principal that `RequestInfo.principal` carries to the tools, or raises
    `gateway.errors.CredentialError`, which the transport answers with 401 and its `WWW-Authenticate`.
    """

    def __call__(self, headers: Mapping[str, str], /) -> Awaitable[object]: ...


class Served(Protocol):
    """What a gateway serves every caller, as the reference page and the surface snapshot show it: the server's
    name, version and instructions, its tools, resources and prompts, and the catalog (`Gateway` is one)."""

    name: str
    version: str
    instructions: str
    catalog: Catalog
    resources: ResourceSet
    prompts: PromptSet

    def tools(self) -> tuple[ToolSpec, ...]:
        """The tools in the order tools/list shows them."""
