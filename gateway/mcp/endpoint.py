"""`McpEndpoint`: a fixed set of tools served by the MCP SDK's low-level server, for any transport.

The endpoint owns the protocol side of a tool call: tools/list shows the `ToolSpec`s with every annotation,
tools/call validates the arguments against the tool's input schema, runs the handler, and turns its
`ToolResult` (or its failure) into MCP content. The SDK negotiates every protocol version it knows, from the
2024-11-05 initialize handshake to the 2026-07-28 per-request envelope (`server/discover`). The SDK is imported
when the endpoint is first served (`server`), not when it is built: building and snapshotting a gateway
(`snapshot check`) never import it.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import jsonschema

from catalog.errors import shown
from catalog.model import Catalog
from gateway._quick_check import quick_check
from gateway.arguments import ArgumentProblems, argument_problems, oversized
from gateway.errors import ConfigError, ToolError, UnavailableError
from gateway.mcp.capabilities import client_supports_ui, renders_ui
from gateway.mcp.progress import reporting
from gateway.mcp.prompts import PromptSet
from gateway.mcp.resources import ResourceSet
from gateway.mcp.security import TransportSecurity
from gateway.mcp.toolspec import EmbeddedResource, ImageContent, TextContent, ToolResult, ToolSpec
from gateway.observability import Observer
from gateway.policy import CallerPolicy, Policy, serving
from gateway.requests import RequestInfo
from gateway.types import Authenticator, ErrorHook, ToolHandler
from gateway.validators import validator_for

if TYPE_CHECKING:
    import mcp_types as types
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server

    from gateway.mcp.http import StreamableHttpApp

__all__ = ["McpEndpoint"]

logger = logging.getLogger(__name__)

_STDIO: Final = RequestInfo(transport="stdio")
#: JSON-RPC 2.0 §5.1, an implementation-defined server error: a store the server needs cannot answer now.
_SERVER_ERROR: Final = -32000
#: The catalog of an endpoint that serves no catalog (its policy then governs tools and budgets alone).
_NO_CATALOG: Final = Catalog(title="", version="", description="", modules=(), terms=())


class McpEndpoint:
    """An MCP server with a fixed list of tools; serve it with `http_app()` or `gateway.mcp.stdio.run_stdio`.

    `handle(name, args, caller)` runs every call, after the arguments were checked against the tool's
    input schema (unless `validate_arguments` is False, or the tool is one of `handler_validates`, whose
    handler checks them itself in the same words). A `ToolError` it raises becomes a failed result
    carrying its message; any other exception is logged, passed to `on_error`, and answered with a generic
    internal error, and the server goes on serving. `authenticate`, when given, checks each HTTP request's
    headers before the MCP layer sees it (see `gateway.types.Authenticator`). `policy` answers, for each request's
    caller, which tools it is offered, the instructions it gets and what it may start (by default: everything,
    with the default limits); the handlers get that `CallerPolicy`. `resources` and `prompts`, when
    given, are served too (with completion/complete for their template variables and arguments). `observer` logs,
    counts and traces each call (see `gateway.observability`; by default, a log line on `gateway.calls`). `apps`:
    the server serves MCP Apps views, so a client that declares the extension is served as one that renders them
    (`renders_apps`); without it every client gets the plain answers.

    Construction validates everything and raises `ConfigError` saying what to fix.
    """

    def __init__(
        self,
        *,
        name: str,
        version: str,
        instructions: str | None,
        tools: Sequence[ToolSpec],
        handle: ToolHandler,
        authenticate: Authenticator | None = None,
        on_error: ErrorHook | None = None,
        validate_arguments: bool = True,
        handler_validates: Collection[str] = (),
        policy: Policy | None = None,
        progress_interval: float = 5.0,
        resources: ResourceSet | None = None,
        prompts: PromptSet | None = None,
        observer: Observer | None = None,
        apps: bool = False,
    ) -> None:
        if not name.strip():
            raise ConfigError("the server name must not be empty; clients show it to people")
        if not version.strip():
            raise ConfigError(f"server {name!r}: version must not be empty, e.g. '1.0.0'")
        specs: dict[str, ToolSpec] = {}
        for spec in tools:
            if not isinstance(spec, ToolSpec):
                raise ConfigError(f"server {name!r}: tools must be ToolSpec values, got {spec!r}")
            if spec.name in specs:
                raise ConfigError(f"server {name!r}: tool name {spec.name!r} is given twice; tool names are unique")
            specs[spec.name] = spec
        self.name = name
        self.version = version
        self.instructions = instructions or None
        self.authenticate = authenticate
        self._handle = handle
        #: The caller policy every request of this endpoint is answered under.
        self.policy = policy if policy is not None else Policy(_NO_CATALOG)
        #: The one caller of a stdio process, and of the SDK's requests without an HTTP request.
        self._stdio = self.policy.of(_STDIO)
        #: Seconds between the "still working" progress notifications of a call whose client asked for progress.
        self.progress_interval = progress_interval
        self._on_error = on_error
        self._observer = observer or Observer()
        self._specs = specs
        self._validators: dict[str, jsonschema.protocols.Validator] | None = (
            {
                spec.name: validator_for(spec.input_schema)(spec.input_schema)
                for spec in specs.values()
                if spec.name not in handler_validates
            }
            if validate_arguments
            else None
        )
        #: Quick yeses for the common simple schemas; a "not sure" goes to the validator above.
        self._quick = {name: quick_check(specs[name].input_schema) for name in self._validators or {}}
        #: The resources and prompts served besides the tools (None: not served, the capability not declared).
        self.resources = resources
        self.prompts = prompts
        #: Whether this server serves MCP Apps views: without them no client is served as one that renders them.
        self.apps = apps

    @functools.cached_property
    def server(self) -> Server[Any]:
        """The SDK's low-level server, for transports this package does not wrap; built (and the SDK imported)
        on first use."""
        from mcp.server.lowlevel import Server

        from gateway.mcp import _sdk
        from gateway.mcp.wire import resource_prompt_handlers

        _sdk.warn_if_unsupported()

        server_class: Any = Server
        extra: dict[str, Any] = {}
        if self.policy.visibility.active:
            server_class, extra = _sdk.PerRequestInstructions, {"choose": self._instructions_now}
        handlers = {
            "on_list_tools": self._on_list_tools,
            "on_call_tool": self._on_call_tool,
            **resource_prompt_handlers(self.resources, self.prompts, self.caller_of),
        }
        return server_class(  # type: ignore[no-any-return]
            self.name,
            version=self.version,
            instructions=self.instructions,
            # Lets the 2026-07-28 Mcp-Param-* header check find a schema without running tools/list per call.
            get_tool_input_schema=self._input_schema,
            **{name: _declaring(handler, self.renders_apps) for name, handler in handlers.items()},
            **extra,
        )

    def _instructions_now(self) -> str | None:
        """The instructions for the request being served (over stdio, the one caller of the process): the caller's
        own modules under a per-caller view."""
        caller = serving.get() or self._stdio
        return caller.instructions or None

    def caller_of(self, ctx: ServerRequestContext[Any]) -> CallerPolicy:
        """The caller policy of an SDK request: the one the HTTP transport built for it, else stdio's."""
        from gateway.mcp.http import caller_policy

        if ctx.request is None:
            return self._stdio
        return caller_policy(ctx.request, self.policy)

    @functools.cached_property
    def _wire_tools(self) -> list[types.Tool]:
        from gateway.mcp.wire import wire_tool

        return [wire_tool(spec) for spec in self._specs.values()]

    @functools.cached_property
    def _wire_app_tools(self) -> list[types.Tool]:
        """The tools as a client that renders MCP Apps views sees them: with each one's `_meta.ui`."""
        from gateway.mcp.wire import wire_tool

        return [wire_tool(spec, apps=True) for spec in self._specs.values()]

    def tools(self) -> tuple[ToolSpec, ...]:
        """The tools in the order tools/list shows them."""
        return tuple(self._specs.values())

    def serves(self, name: str) -> bool:
        """Whether `name` is one of this endpoint's tools."""
        return name in self._specs

    def param_headers(self, name: str) -> bool:
        """Whether tool `name`'s input schema marks any property `x-mcp-header` (2026-07-28 `Mcp-Param-*`)."""
        return name in self._annotated

    @functools.cached_property
    def _annotated(self) -> frozenset[str]:
        return frozenset(name for name, spec in self._specs.items() if "x-mcp-header" in json.dumps(spec.input_schema))

    def http_app(
        self, *, security: TransportSecurity | None = None, max_body_bytes: int = 4 * 1024 * 1024
    ) -> StreamableHttpApp:
        """The streamable HTTP transport of this endpoint as an ASGI app; see `StreamableHttpApp`."""
        from gateway.mcp.http import StreamableHttpApp

        return StreamableHttpApp(self, security=security or TransportSecurity(), max_body_bytes=max_body_bytes)

    async def call_tool(
        self, name: str, args: Mapping[str, Any], caller: CallerPolicy, *, ui: bool = False
    ) -> ToolResult:
        """Run one tool as the transports do and return what a client gets; `ToolError` for an unknown name.

        Use it to offer the same tools to an agent embedded in the host: the arguments are validated, a
        handler failure becomes a failed result, and the result is checked against the tool's contract. `ui`:
        the client renders MCP Apps (see `gateway.mcp.capabilities`).
        """
        spec = self._specs.get(name) if await self._offers(name, caller, ui) else None
        if spec is None:
            hidden = await caller.hidden_tools()
            shown_tools = [
                tool for tool, found in self._specs.items() if tool not in hidden and (ui or not found.app_only)
            ]
            raise ToolError(f"unknown tool {shown(name)}; the tools are {', '.join(shown_tools) or 'none'}")
        token = renders_ui.set(ui)
        try:
            return await self._run(spec, args, caller)
        finally:
            renders_ui.reset(token)

    def renders_apps(self, capabilities: object) -> bool:
        """Whether a client of `capabilities` is served MCP Apps: it declares the extension
        (`gateway.mcp.capabilities.client_supports_ui`) and this server serves views (`apps`)."""
        return self.apps and client_supports_ui(capabilities)

    async def offers(self, name: str, caller: CallerPolicy) -> bool:
        """Whether `caller` is offered tool `name` (it exists and is not hidden from it)."""
        return await self._offers(name, caller, renders_ui.get())

    async def _offers(self, name: str, caller: CallerPolicy, ui: bool) -> bool:
        """Whether `caller`, whose client renders MCP Apps when `ui`, is offered tool `name`: an app-only tool is
        offered to such clients alone."""
        spec = self._specs.get(name)
        return spec is not None and (ui or not spec.app_only) and not await caller.hides_tool(name)

    async def _run(self, spec: ToolSpec, args: Mapping[str, Any], caller: CallerPolicy) -> ToolResult:
        with self._observer.tool_call(spec.name, caller.request) as observed:
            result = await self._call_tool(spec, args, caller)
            observed.result(result.is_error)
            return result

    async def _call_tool(self, spec: ToolSpec, args: Mapping[str, Any], caller: CallerPolicy) -> ToolResult:
        name = spec.name
        arguments = dict(args)
        too_big = oversized(arguments, self.policy.limits)
        if too_big is not None:
            return ToolResult.error(f"Invalid arguments for {name}: {too_big}.")
        try:
            problems = self._argument_problems(name, arguments)
            if problems:
                listing = problems.text()
                return ToolResult.error(f"Invalid arguments for {name}: {listing}. Fix them and call {name} again.")
            result = await self._handle(name, arguments, caller)
        except ToolError as error:
            return ToolResult.error(str(error))
        except UnavailableError:
            raise  # the server's trouble (a store that cannot answer), answered as a JSON-RPC error
        except Exception as error:
            # Boundary: a failing tool must not take the server down; the agent gets a generic error.
            logger.exception("tool %r failed", name)
            await self._report(name, error)
            return ToolResult.error(f"Internal error in {name}; the server logged it. Retry later or report it.")
        contract = _contract_violation(spec, result)
        if contract is not None:
            logger.error("tool %r broke its contract: %s", name, contract)
            await self._report(name, TypeError(contract))
            return ToolResult.error(f"Internal error in {name}; the server logged it. Retry later or report it.")
        return result

    async def _report(self, name: str, error: Exception) -> None:
        if self._on_error is None:
            return
        try:
            await self._on_error(name, error)
        except Exception:
            logger.exception("the on_error hook failed for tool %r", name)

    def _argument_problems(self, name: str, args: dict[str, Any]) -> ArgumentProblems:
        validator = self._validators.get(name) if self._validators is not None else None
        if validator is None:
            return ArgumentProblems()
        quick = self._quick.get(name)
        if quick is not None and quick(args):
            return ArgumentProblems()
        return argument_problems(validator, args)

    def _input_schema(self, name: str) -> Mapping[str, Any] | None:
        spec = self._specs.get(name)
        return spec.input_schema if spec is not None else None

    async def _on_list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        import mcp_types as types

        ui = self.renders_apps(ctx.session.client_capabilities)
        tools = self._wire_app_tools if ui else self._wire_tools
        hidden: frozenset[str] = frozenset()
        if self.policy.varies:
            hidden = await self.caller_of(ctx).hidden_tools()
        if not ui:
            hidden |= self._app_only
        if hidden:
            return types.ListToolsResult(tools=[tool for tool in tools if tool.name not in hidden])
        return types.ListToolsResult(tools=tools)

    @functools.cached_property
    def _app_only(self) -> frozenset[str]:
        """The tools only an app calls, listed to clients that render MCP Apps alone."""
        return frozenset(name for name, spec in self._specs.items() if spec.app_only)

    async def _on_call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        from gateway.mcp.wire import wire_result

        caller = self.caller_of(ctx)
        ui = self.renders_apps(ctx.session.client_capabilities)
        meta = ctx.meta or {}
        if meta.get("progress_token", meta.get("progressToken")) is None:
            return wire_result(await self.answer_call(params.name, params.arguments or {}, caller, ui=ui))
        # The client asked for progress: the SDK's reporter sends it against the request's token.
        async with reporting(ctx.session.report_progress, interval=self.progress_interval, what=params.name):
            result = await self.answer_call(params.name, params.arguments or {}, caller, ui=ui)
        return wire_result(result)

    async def answer_call(
        self, name: str, arguments: Mapping[str, Any], caller: CallerPolicy, *, ui: bool = False
    ) -> ToolResult:
        """What a `tools/call` answers on every path (the SDK's handler and the HTTP transport's lean path):
        `MCPError` (-32602) for an unknown tool, or one hidden from this caller (an app-only tool, unless `ui`: the
        client renders MCP Apps), else the tool's result; `MCPError` (-32000) when a store it needs cannot answer."""
        spec = self._specs.get(name)
        if spec is None or (spec.app_only and not ui) or (self.policy.varies and await caller.hides_tool(name)):
            # MCP 2025-11-25 server/tools, error handling: an unknown tool is a protocol error (-32602). A tool
            # hidden from this caller is unknown to it, in the same words.
            import mcp_types as types
            from mcp.shared.exceptions import MCPError

            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"Unknown tool {shown(name)}; call tools/list for the tools this server has",
            )
        # Set only when it changes: a call from a client that renders no MCP Apps finds it unset already.
        token = renders_ui.set(ui) if renders_ui.get() != ui else None
        try:
            return await self._run(spec, arguments, caller)
        except UnavailableError as error:
            from mcp.shared.exceptions import MCPError

            # The server's trouble, said as the task store says it: JSON-RPC 2.0 §5.1 server error, with a retry.
            raise MCPError(code=_SERVER_ERROR, message=str(error), data={"retryAfter": error.retry_after}) from error
        finally:
            if token is not None:
                renders_ui.reset(token)


def _declaring(
    handler: Callable[[Any, Any], Awaitable[Any]], renders_apps: Callable[[object], bool]
) -> Callable[[Any, Any], Awaitable[Any]]:
    """`handler` (an SDK request handler) run knowing whether its client is served MCP Apps (`renders_ui`), as its
    connection declared (over stdio in the initialize handshake, at 2026-07-28 in the request's own envelope) and
    `renders_apps` (the endpoint's) decides."""

    @functools.wraps(handler)
    async def handle(ctx: Any, params: Any) -> Any:
        token = renders_ui.set(renders_apps(ctx.session.client_capabilities))
        try:
            return await handler(ctx, params)
        finally:
            renders_ui.reset(token)

    return handle


def _contract_violation(spec: ToolSpec, result: object) -> str | None:
    if not isinstance(result, ToolResult):
        return f"the handler returned {type(result).__name__}, not a ToolResult"
    for block in result.content:
        if not isinstance(block, TextContent | ImageContent | EmbeddedResource):
            return f"content block {block!r} is not TextContent, ImageContent or EmbeddedResource"
    if spec.output_schema is not None and not result.is_error and result.structured is None:
        # MCP 2025-06-18 server/tools: with an output schema, servers MUST provide structured results.
        return "the tool declares an output schema but the result has no structured content"
    return None
