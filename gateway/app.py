"""`Gateway`: one MCP server over one REST API, mounted beside the app or served on its own."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from catalog.builder import build_catalog
from catalog.composite import Composite, Concept
from catalog.errors import CatalogError
from catalog.loading import load_document
from catalog.model import Catalog
from catalog.schemas import DEFAULT_MAX_SCHEMA_NODES
from gateway.calls import Dispatcher, decode_body
from gateway.credentials import AuthFunc, bearer_passthrough
from gateway.dispatch import Transport
from gateway.errors import ConfigError, CredentialError
from gateway.lifespan import app_lifespan
from gateway.reference import ReferencePage, reference_page
from gateway.research import ResearchConfig, research_tools
from gateway.scripting import ScriptConfig, ScriptTool
from gateway.server import McpEndpoint
from gateway.streamable_http import StreamableHttpApp, TransportSecurity
from gateway.tooling import RequestInfo, ToolResult, ToolSpec
from gateway.tools import ToolRunner, ToolSet, instructions_for

__all__ = ["Gateway"]

logger = logging.getLogger("gateway")

ErrorHook = Callable[[str, Exception], Awaitable[None]]
_FORWARDED = ("x-forwarded-for", "x-request-id")


class Gateway:
    """An MCP server over a REST API's catalog, dispatching calls to the app in-process or to an upstream URL.

    Give `app` (an ASGI app, e.g. FastAPI; its own `openapi()` is the spec unless `spec` is given) or
    `upstream` (a base URL) with `spec`. Construction loads and checks everything and raises ConfigError
    (or the catalog's DocumentError) saying what to fix. `research` (True, or a `ResearchConfig`) adds ChatGPT's
    `search`/`fetch` pair for deep research and company knowledge after the fixed tools. `reference_path`
    (e.g. "/reference") serves the reference page for people there, from `mount()` and `standalone()`.
    `script` (a `ScriptConfig`) adds run_script right after the fixed tools; it needs `whoami`, which every run
    calls first with the caller's credentials.
    """

    def __init__(
        self,
        *,
        spec: Any = None,
        app: Any = None,
        upstream: str | None = None,
        catalog: Catalog | None = None,
        name: str | None = None,
        version: str | None = None,
        instructions: str = "",
        whoami: str | None = None,
        auth: AuthFunc | None = None,
        composites: Sequence[Composite] = (),
        concepts: Mapping[str, Concept] | None = None,
        tools: Sequence[str] = (),
        additive: Sequence[str] = (),
        max_output_bytes: int = 24_000,
        timeout: float = 30.0,
        on_error: ErrorHook | None = None,
        allowed_hosts: Sequence[str] = (),
        allowed_origins: Sequence[str] = (),
        max_schema_nodes: int = DEFAULT_MAX_SCHEMA_NODES,
        extra_tools: Sequence[tuple[ToolSpec, ToolRunner]] = (),
        research: bool | ResearchConfig = False,
        reference_path: str | None = None,
        script: ScriptConfig | None = None,
    ) -> None:
        if app is not None and upstream is not None:
            raise ConfigError("give app (in-process dispatch) or upstream (a base URL), not both")
        if max_output_bytes < 1000:
            raise ConfigError(f"max_output_bytes must be at least 1000, got {max_output_bytes!r}")
        if timeout <= 0:
            raise ConfigError(f"timeout must be a positive number of seconds, got {timeout!r}")
        if reference_path is not None and not reference_path.startswith("/"):
            raise ConfigError(
                f"reference_path must be a URL path starting with '/', e.g. '/reference', not {reference_path!r}"
            )
        if upstream is not None and not upstream.startswith(("http://", "https://")):
            raise ConfigError(f"upstream must be an http(s) base URL, got {upstream!r}")
        self.app = app
        #: Where `mount()` and `standalone()` serve the reference page (see `reference_app`); None: not served.
        self.reference_path = reference_path
        self._reference: ReferencePage | None = None
        self.catalog = (
            catalog if catalog is not None else self._build(spec, app, composites, concepts, max_schema_nodes)
        )
        if not self.catalog.functions():
            if app is not None and spec is None and catalog is None:
                logger.warning(
                    "the app's openapi() lists no operations, so agents will find no functions: create the Gateway "
                    "after the app's routes and include_router() calls"
                )
            else:
                logger.warning("the catalog has no functions")
        self.name = name or self.catalog.title
        self.version = version or self.catalog.version or "0"
        self.auth = auth or bearer_passthrough()
        if app is None and upstream is None:
            # A spec alone: call the API where the document says it lives (its first absolute server URL).
            upstream = next(
                (url for url in self.catalog.servers if url.startswith(("http://", "https://")) and "{" not in url),
                None,
            )
        #: Where calls go: the app in-process, or an upstream base URL (given, or the document's first server).
        self.upstream = upstream
        self.transport = Transport(app=app, upstream=upstream, timeout=timeout) if app or upstream else None
        self.dispatcher = Dispatcher(self.catalog, self.transport, timeout=timeout)
        #: The run_script tool when `script` is given; it owns the sandbox's worker processes (see lifespan()).
        self.scripts: ScriptTool | None = None
        if script is not None:
            if not isinstance(script, ScriptConfig):
                raise ConfigError(f"script must be a ScriptConfig, got {script!r}")
            if whoami is None:
                raise ConfigError(
                    "run_script needs whoami: name a function that fails without valid credentials "
                    "(e.g. whoami='users.get_current_user'); every script run calls it first"
                )
            self.scripts = ScriptTool(
                config=script,
                dispatcher=self.dispatcher,
                rest_headers=self._rest_headers,
                whoami=whoami,
                max_output_bytes=max_output_bytes,
                on_error=on_error,
            )
        script_extra = [(self.scripts.spec, self.scripts)] if self.scripts is not None else []
        # ChatGPT's search/fetch pair goes right after the fixed tools (see gateway.research).
        research_extra: list[tuple[ToolSpec, ToolRunner]] = []
        if research is not False:
            if not isinstance(research, ResearchConfig | bool):
                raise ConfigError(f"research must be True, False or a ResearchConfig, got {research!r}")
            config = research if isinstance(research, ResearchConfig) else ResearchConfig()
            research_extra = research_tools(
                self.catalog,
                self.dispatcher,
                self._rest_headers,
                config,
                max_output_bytes=max_output_bytes,
                reference_path=reference_path,
            )
        self.toolset = ToolSet(
            catalog=self.catalog,
            dispatcher=self.dispatcher,
            rest_headers=self._rest_headers,
            server_name=self.name,
            whoami=whoami,
            promoted=tools,
            additive=additive,
            max_output_bytes=max_output_bytes,
            extra=[*script_extra, *research_extra, *extra_tools],
        )
        self.instructions = instructions_for(self.catalog, instructions)
        self.endpoint = McpEndpoint(
            name=self.name,
            version=self.version,
            instructions=self.instructions,
            tools=self.toolset.specs,
            handle=self.toolset.handle,
            authenticate=self._authenticate,
            on_error=on_error,
        )
        self.security = (
            TransportSecurity(allowed_hosts=tuple(allowed_hosts), allowed_origins=tuple(allowed_origins))
            if (allowed_hosts or allowed_origins)
            else TransportSecurity()
        )

    @staticmethod
    def _build(
        spec: Any,
        app: Any,
        composites: Sequence[Composite],
        concepts: Mapping[str, Concept] | None,
        max_schema_nodes: int,
    ) -> Catalog:
        source = spec
        if source is None:
            if app is None or not callable(getattr(app, "openapi", None)):
                raise ConfigError(
                    "no spec: pass spec= (a path, URL, text or dict), or an app with its own openapi() such as FastAPI"
                )
            source = app
        try:
            document = load_document(source)
            return build_catalog(document, composites=composites, concepts=concepts, max_schema_nodes=max_schema_nodes)
        except CatalogError:
            raise
        except (TypeError, ValueError) as error:
            raise ConfigError(f"cannot load the spec: {error}") from error

    # Credentials

    async def _authenticate(self, headers: Mapping[str, str]) -> object:
        """The REST credential headers for an HTTP MCP request; CredentialError becomes a 401."""
        token = RequestInfo(transport="http", headers=headers).bearer_token
        try:
            return dict(await self.auth(token))
        except CredentialError:
            raise
        except Exception as error:
            logger.exception("the auth function failed")
            raise CredentialError("the credentials could not be checked") from error

    async def _rest_headers(self, request: RequestInfo) -> list[tuple[str, str]]:
        source = request.headers or {}
        headers = [(name, source[name]) for name in _FORWARDED if name in source]
        principal = request.principal
        if isinstance(principal, Mapping):
            headers.extend((str(k), str(v)) for k, v in principal.items())
        elif request.transport == "stdio":
            headers.extend(self._stdio_headers)
        return headers

    _stdio_headers: Sequence[tuple[str, str]] = ()

    def use_stdio_credentials(self, headers: Mapping[str, str]) -> None:
        """The REST headers every stdio call carries (stdio has no per-request credentials)."""
        self._stdio_headers = tuple(headers.items())

    # Python API

    def tools(self) -> tuple[ToolSpec, ...]:
        """Exactly the tools tools/list shows, in order."""
        return self.endpoint.tools()

    async def call_tool(self, headers: Mapping[str, str], name: str, args: Mapping[str, Any]) -> ToolResult:
        """Run one tool with the REST `headers` given, returning what an MCP client would get."""
        request = RequestInfo(transport="in-process", headers={}, principal=dict(headers))
        return await self.endpoint.call_tool(name, args, request)

    async def call(self, headers: Mapping[str, str], name: str, args: Mapping[str, Any]) -> Any:
        """Call a catalog function in-process with the REST `headers`; the decoded body, RestError on 4xx/5xx."""
        function = self.dispatcher.function(name)
        outcome = await self.dispatcher.call(function, args, list(headers.items()))
        if outcome.response is None:
            return outcome.value
        return decode_body(outcome.response, function=function)

    # Serving

    def asgi(self) -> StreamableHttpApp:
        """The MCP endpoint as an ASGI app (stateless streamable HTTP, JSON responses, POST only)."""
        return self.endpoint.http_app(security=self.security)

    def mount(self, app: Any, path: str = "/mcp") -> None:
        """Serve the MCP endpoint at exactly `path` of a Starlette/FastAPI `app` (no trailing-slash redirect),
        and the reference page at `reference_path` when one was given."""
        router = getattr(app, "router", app)
        router.routes.insert(0, Route(path, self.asgi(), methods=["GET", "POST", "DELETE"]))
        if self.reference_path is not None:
            router.routes.insert(0, Route(self.reference_path, self.reference_app(), methods=["GET", "HEAD"]))

    def reference_app(self) -> ReferencePage:
        """The reference page as an ASGI app (GET/HEAD), for mounting anywhere; rendered once, on first request."""
        if self._reference is None:
            self._reference = ReferencePage(lambda: reference_page(self))
        return self._reference

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        """Run the wrapped app's lifespan (when the gateway owns the app) and close connections at the end.

        With run_script, the sandbox's workers start here and are killed at the end.
        """
        try:
            if self.scripts is not None:
                await self.scripts.start()
            if self.app is not None:
                async with app_lifespan(self.app) as state:
                    if self.transport is not None:
                        self.transport.state = state
                    yield
            else:
                yield
        finally:
            if self.scripts is not None:
                await self.scripts.aclose()
            if self.transport is not None:
                await self.transport.aclose()

    def standalone(self, path: str = "/mcp") -> Starlette:
        """A Starlette app serving the MCP endpoint at `path`, running the wrapped app's lifespan; for uvicorn."""

        async def info(request: Request) -> JSONResponse:
            return JSONResponse(
                {"name": self.name, "version": self.version, "mcp": path, "reference": self.reference_path}
            )

        @asynccontextmanager
        async def lifespan(app: Starlette) -> AsyncIterator[None]:
            async with self.lifespan():
                yield

        routes = [Route(path, self.asgi(), methods=["GET", "POST", "DELETE"]), Route("/", info)]
        if self.reference_path is not None:
            routes.append(Route(self.reference_path, self.reference_app(), methods=["GET", "HEAD"]))
        return Starlette(routes=routes, lifespan=lifespan)
