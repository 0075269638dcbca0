"""`Gateway`: one MCP server over one REST API, mounted beside the app or served on its own."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Scope

from catalog.builder import build_catalog
from catalog.errors import CatalogError
from catalog.loading import load_document
from catalog.model import Catalog
from catalog.search import SearchIndex
from gateway.entrance import GatewayEntrance, install
from gateway.errors import ConfigError, CredentialError
from gateway.extras import announce
from gateway.limits import Limits
from gateway.mcp.admission import Admission, AdmissionGate
from gateway.mcp.endpoint import McpEndpoint
from gateway.mcp.security import TransportSecurity
from gateway.mcp.toolspec import ToolResult, ToolSpec
from gateway.observability import MetricsPage, Observer
from gateway.options import Additions, Effects, GatewayConfig, Observability, Output, Security, refuse_userinfo
from gateway.policy import Access, Caller, CallerPolicy, Policy
from gateway.readiness import Readiness
from gateway.reference import ReferencePage, reference_page
from gateway.requests import Peer, RequestInfo, RestContext
from gateway.rest.context import RestContexts
from gateway.rest.credentials import Authentication, AuthFunc, bearer_passthrough
from gateway.rest.dispatcher import Dispatcher, decode_body
from gateway.rest.document_upstream import document_upstream
from gateway.rest.fetching import fetch_document
from gateway.rest.lifespan import app_lifespan
from gateway.rest.routes import call_prefix, serves
from gateway.rest.transports import AsgiTransport, Transport, UpstreamTransport
from gateway.rest.transports.upstream import shown_url
from gateway.tools.catalog_resources import catalog_resources, gateway_prompts
from gateway.tools.confirmation import Confirmation
from gateway.tools.research import ResearchConfig, research_tools
from gateway.tools.scripts import ScriptConfig, ScriptTool
from gateway.tools.toolset import ToolSet, instructions_for
from gateway.types import ToolRunner

if TYPE_CHECKING:
    from gateway.mcp.tasks import TaskConfig, Tasks
    from gateway.tools.approvals import Approvals

__all__ = ["Gateway"]

logger = logging.getLogger("gateway")


class Gateway:
    """An MCP server over a REST API's catalog, dispatching calls to the app in-process or to an upstream URL.

    Give `app` (an ASGI app, e.g. FastAPI; its own `openapi()` is the spec unless `spec` is given) or `upstream`
    (a base URL) with `spec` (a path, URL, text or dict, or a built `Catalog`). In-process calls go to `prefix` +
    each documented path (default: the document's relative server URL, such as `/api`); the gateway checks at
    start-up that the paths route in the app. `whoami` names the function that says who the caller is; `auth`
    turns the MCP bearer token into the REST headers (default: passed through as `Authorization: Bearer`).
    `tools` promotes functions to tools of their own; `scripts` (a `ScriptConfig`) adds run_script, `tasks` (a
    `TaskConfig`) task-augmented calls, `research` (True, or a `ResearchConfig`) ChatGPT's search/fetch.

    The rest comes in groups (`gateway.options`): `access` (who sees which functions), `effects` (what functions
    do), `limits` (timeouts and budgets), `security` (hosts, origins, proxies), `output` (what agents and people
    are shown), `observability` (metrics, traces, error reports) and `additions` (hand-written composites,
    concepts, prompts and tools).

    Construction loads and checks everything and raises ConfigError (or the catalog's DocumentError) saying
    what to fix. Every option is kept in `config`, a `GatewayConfig`; `Gateway.from_config` takes one.
    """

    def __init__(
        self,
        *,
        app: Any = None,
        spec: Any = None,
        upstream: str | None = None,
        prefix: str | None = None,
        whoami: str | None = None,
        auth: AuthFunc | None = None,
        tools: Sequence[str] = (),
        scripts: ScriptConfig | None = None,
        tasks: TaskConfig | None = None,
        research: bool | ResearchConfig = False,
        access: Access | None = None,
        effects: Effects | None = None,
        limits: Limits | None = None,
        security: Security | None = None,
        output: Output | None = None,
        observability: Observability | None = None,
        additions: Additions | None = None,
    ) -> None:
        self._compose(
            GatewayConfig(
                app=app,
                spec=spec,
                upstream=upstream,
                prefix=prefix,
                whoami=whoami,
                auth=auth,
                tools=tuple(tools),
                scripts=scripts,
                tasks=tasks,
                research=research,
                access=access or Access(),
                effects=effects or Effects(),
                limits=limits or Limits(),
                security=security or Security(),
                output=output or Output(),
                observability=observability or Observability(),
                additions=additions or Additions(),
            )
        )

    @classmethod
    def from_config(cls, config: GatewayConfig) -> Gateway:
        """The gateway a `GatewayConfig` describes."""
        gateway = cls.__new__(cls)
        gateway._compose(config)
        return gateway

    def _compose(self, config: GatewayConfig) -> None:
        self.config = config
        output, observability = config.output, config.observability
        self.app = config.app
        #: Where `mount()` and `standalone()` serve the reference page (see `reference_app`); None: not served.
        self.reference_path = _reference_path(config)
        self._reference: ReferencePage | None = None
        self._snapshot: str | None = None
        #: Where tool calls are logged, counted and traced (see gateway.observability).
        self.observer = Observer(
            metrics=observability.metrics_path is not None,
            tracer_provider=observability.tracer_provider,
            caller_key=observability.caller_key,
        )
        self.metrics_path = observability.metrics_path
        self.catalog = config.spec if isinstance(config.spec, Catalog) else _build_catalog(config)
        _warn_about_document(config, self.catalog)
        self.name = output.name or self.catalog.title
        self.version = output.version or self.catalog.version or "0"
        #: The auth function applied to each HTTP MCP request's bearer token.
        self.authentication = Authentication(config.auth or bearer_passthrough())
        #: What each request's REST calls carry (forwarded headers, credentials); see `use_stdio_credentials`.
        self.rest_contexts = RestContexts(config.security.proxies)
        #: Where calls go: an upstream base URL (given, or the document's first absolute server), else None.
        self.upstream = config.upstream if config.app is None else None
        if config.app is None and self.upstream is None:
            self.upstream = document_upstream(self.catalog.servers, _document_url(config.spec))
        self.transport: Transport | None = _transport(config, self.catalog, self.upstream)
        self.dispatcher = Dispatcher(self.catalog, self.transport, timeout=config.limits.timeout)
        #: The run_script tool when `scripts` is given; it owns the sandbox's worker processes (see lifespan()).
        self.scripts: ScriptTool | None = None
        if config.scripts is not None and config.whoami is not None:
            self.scripts = ScriptTool(
                config=config.scripts,
                dispatcher=self.dispatcher,
                rest_context=self.rest_contexts,
                whoami=config.whoami,
                max_output_bytes=output.max_output_bytes,
                on_error=observability.on_error,
            )
        #: The caller policy: for each caller, which functions exist, what it may do and how much it may start.
        self.policy = Policy(
            self.catalog,
            access=config.access,
            limits=config.limits,
            instructions=lambda catalog: instructions_for(catalog, output.instructions),
            scripts=self.scripts.rules if self.scripts is not None else None,
            identify=self.scripts.identify if self.scripts is not None else None,
            approval=config.effects.approval,
        )
        #: The handles of calls waiting for a person's approval, when `effects.approval` is not "none".
        self.approvals = _approvals(config)
        extra: list[tuple[ToolSpec, ToolRunner]] = [(self.scripts.spec, self.scripts)] if self.scripts else []
        if config.research is not False:
            # ChatGPT's search/fetch pair goes right after the fixed tools (see gateway.tools.research).
            research = config.research if isinstance(config.research, ResearchConfig) else ResearchConfig()
            extra += research_tools(
                self.catalog,
                self.dispatcher,
                self.rest_contexts,
                research,
                max_output_bytes=output.max_output_bytes,
                reference_path=self.reference_path,
                ranking=output.ranking,
            )
        self.toolset = ToolSet(
            catalog=self.catalog,
            dispatcher=self.dispatcher,
            rest_context=self.rest_contexts,
            server_name=self.name,
            whoami=config.whoami,
            whoami_fields=output.whoami_fields,
            promoted=config.tools,
            additive=config.effects.additive,
            max_output_bytes=output.max_output_bytes,
            compact_results=output.compact_results,
            extra=[*extra, *config.additions.tools],
            scripts=self.scripts is not None,
            ranking=output.ranking,
            apps=output.apps,
            confirmation=Confirmation(self.approvals, self.dispatcher) if self.approvals is not None else None,
            needs_approval=self.policy.needs_approval,
        )
        # The semantic vectors are made in the background from now on; until they are ready search is lexical.
        if output.semantic_search:
            announce("semantic", "semantic search")
        SearchIndex(self.catalog, output.ranking).start_semantic()
        self.policy.promoted = self.toolset.promoted
        #: The operator's view of the instructions (every function); callers get their own from the policy.
        self.instructions = instructions_for(self.catalog, output.instructions)
        #: The catalog as MCP resources, and the built-in and operator prompts (gateway.tools.catalog_resources).
        self.resources = catalog_resources(
            self.catalog,
            name=self.name,
            max_output_bytes=output.max_output_bytes,
            reference=self._reference_text if self.reference_path is not None else None,
            # A document of the whole catalog, for CI: not served where callers see different functions.
            snapshot=self._snapshot_text if not self.policy.visibility.active else None,
            views=self.toolset.views,
        )
        self.prompts = gateway_prompts(
            self.catalog, name=self.name, scripts=self.scripts is not None, operator=config.additions.prompts
        )
        self.endpoint = McpEndpoint(
            name=self.name,
            version=self.version,
            instructions=self.instructions,
            tools=self.toolset.specs,
            handle=self.toolset.handle,
            authenticate=self.authentication,
            on_error=observability.on_error,
            handler_validates=self.toolset.self_validating,
            policy=self.policy,
            progress_interval=output.progress_interval,
            resources=self.resources,
            prompts=self.prompts,
            observer=self.observer,
            apps=output.apps,
        )
        #: Whether this instance can serve now (its state stores answer): `GET /ready` of `standalone()`; add the
        #: OAuth server's check with `readiness.add(server.ready)`.
        self.readiness = Readiness()
        if self.approvals is not None:
            self.approvals.outage.listeners.append(self.observer.stores)
            self.readiness.add(self.approvals.probe)
        #: Task-augmented tool calls (MCP 2025-11-25 tasks) when `tasks` is given.
        self.tasks: Tasks | None = None
        if config.tasks is not None:
            from gateway.mcp.tasks import Tasks  # the MCP SDK's task types: imported only when tasks are served

            self.tasks = Tasks(config.tasks, self.endpoint)
            self.tasks.install()
            self.tasks.outage.listeners.append(self.observer.stores)
            self.readiness.add(self.tasks.store.probe)
            self.dispatcher.timeout_hint = (
                f", or run it as a task, which may take {config.tasks.timeout:g} s: send the tools/call with "
                '"task": {} in its params (MCP 2025-11-25 tasks), then poll tasks/get and read tasks/result'
            )
        security = config.security
        self.security = TransportSecurity(
            allowed_hosts=tuple(security.allowed_hosts), allowed_origins=tuple(security.allowed_origins)
        )

    async def _reference_text(self, caller: CallerPolicy) -> str:
        return (await self.reference_app().rendered(caller)).body.decode("utf-8")

    async def _snapshot_text(self, caller: CallerPolicy) -> str:
        if self._snapshot is None:
            from catalog.snapshot import dump_snapshot
            from gateway.snapshot.check import gateway_snapshot

            self._snapshot = await anyio.to_thread.run_sync(lambda: dump_snapshot(gateway_snapshot(self)))
        return self._snapshot

    async def caller_of_scope(self, scope: Scope) -> CallerPolicy:
        """The caller policy of a plain HTTP request (the reference page): from its bearer token when it sends one
        (CredentialError when refused), else an anonymous caller, whose grant is empty when the auth function
        refuses a request without a token."""
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope.get("headers", ())}
        peer = Peer.from_scope(scope, headers.get("host"))
        request = RequestInfo(transport="http", headers=headers, peer=peer)
        if request.bearer_token is None:
            try:
                principal = await self.authentication.of_token(None)
            except CredentialError:
                return self.policy.of(request, Caller.anonymous(request))
        else:
            principal = await self.authentication(headers)
        return self.policy.of(RequestInfo(transport="http", headers=headers, principal=principal, peer=peer))

    def use_stdio_credentials(self, headers: Mapping[str, str], *, hint: str = "", given: bool = True) -> None:
        """The REST headers every stdio call carries (stdio has no per-request credentials).

        `hint` tells the agent, when the API refuses them, where those credentials come from and how to fix them;
        `given` is False when the server was started without any (see `RestContext.refusal_hint`).
        """
        self.rest_contexts.use_stdio_credentials(headers, hint=hint, given=given)

    # Python API

    def tools(self) -> tuple[ToolSpec, ...]:
        """Exactly the tools tools/list shows, in order."""
        return self.endpoint.tools()

    async def call_tool(self, headers: Mapping[str, str], name: str, args: Mapping[str, Any]) -> ToolResult:
        """Run one tool with the REST `headers` given (the credentials of the caller, which the caller policy
        reads, e.g. `Credentials(headers, scopes=[...])`), returning what an MCP client would get."""
        request = RequestInfo(transport="in-process", headers={}, principal=headers)
        return await self.endpoint.call_tool(name, args, self.policy.of(request))

    async def call(self, headers: Mapping[str, str], name: str, args: Mapping[str, Any]) -> Any:
        """Call a catalog function in-process with the REST `headers`; the decoded body, RestError on 4xx/5xx."""
        function = self.dispatcher.function(name)
        outcome = await self.dispatcher.call(function, args, RestContext.of(headers))
        if outcome.response is None:
            return outcome.value
        return decode_body(outcome.response, function=function)

    # Serving

    def asgi(self) -> ASGIApp:
        """The MCP endpoint as an ASGI app (stateless streamable HTTP, JSON responses, POST only), behind the
        admission gate unless `limits.max_running` is 0."""
        limits = self.config.limits
        endpoint = self.endpoint.http_app(security=self.security, max_body_bytes=limits.max_body_bytes)
        if not limits.max_running:
            return endpoint
        return AdmissionGate(endpoint, Admission(max_running=limits.max_running, lease=limits.admission_lease))

    def _routes(self, path: str) -> dict[str, ASGIApp]:
        routes: dict[str, ASGIApp] = {path: self.asgi()}
        if self.reference_path is not None:
            routes[self.reference_path] = self.reference_app()
        if self.metrics_path is not None:
            routes[self.metrics_path] = self.metrics_app()
        return routes

    def wrap(self, app: ASGIApp, path: str = "/mcp") -> GatewayEntrance:
        """`app` with the MCP endpoint at exactly `path` (and the reference page at `reference_path`), answered
        before `app` and its middleware see the request; for any ASGI app."""
        return GatewayEntrance(app, self._routes(path), on_startup=self._start, on_shutdown=self._close)

    def mount(self, app: Any, path: str = "/mcp") -> None:
        """Serve the MCP endpoint at exactly `path` of a Starlette or FastAPI `app` (no trailing-slash redirect),
        and the reference page at `reference_path` when one was given.

        The gateway's paths are answered outside the app's middleware, so an MCP request holds none of the
        app's per-request resources while its calls run through the whole app, middleware included. The
        app's middleware therefore does not see MCP requests themselves (its CORS, logging, rate limits
        apply to each call instead); `allowed_origins` says which browser origins the endpoint answers.
        """
        taken = [route for route in self._routes(path) if serves(app, route)]
        if taken:
            raise ConfigError(
                f"the app already serves {', '.join(taken)} itself, and the gateway would hide it: mount the gateway "
                "at another path, e.g. gateway.mount(app, '/gateway/mcp')"
            )
        if not install(app, lambda stack: self.wrap(stack, path)):
            raise ConfigError(
                f"mount() needs a Starlette or FastAPI app, not {type(app).__name__}; for any other ASGI app, "
                f"serve gateway.wrap(app, {path!r}) instead"
            )

    def reference_app(self) -> ReferencePage:
        """The reference page as an ASGI app (GET/HEAD), for mounting anywhere: each requester sees its own view
        (without credentials, an anonymous caller's), rendered once per view."""
        if self._reference is None:
            self._reference = ReferencePage(
                lambda caller, hidden: reference_page(self, caller, hidden), self.caller_of_scope
            )
        return self._reference

    def metrics_app(self) -> MetricsPage:
        """The Prometheus metrics as an ASGI app (GET/HEAD); ConfigError when metrics_path was not given."""
        if self.observer.metrics is None:
            raise ConfigError("this gateway keeps no metrics: give it metrics_path='/metrics' (--metrics-path)")
        return MetricsPage(
            self.observer.metrics,
            readers=self.config.observability.metrics_readers,
            proxies=self.config.security.proxies,
        )

    async def _start(self) -> None:
        if self.scripts is not None:
            await self.scripts.start()

    async def _close(self) -> None:
        if self.tasks is not None:
            await self.tasks.aclose()
        if self.approvals is not None:
            await self.approvals.aclose()
        if self.scripts is not None:
            await self.scripts.aclose()
        if self.transport is not None:
            await self.transport.aclose()

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        """Run the wrapped app's lifespan (when the gateway owns the app) and close connections at the end.

        With run_script, the sandbox's workers start here and are killed at the end.
        """
        try:
            await self._start()
            if self.app is not None:
                async with app_lifespan(self.app) as state:
                    if isinstance(self.transport, AsgiTransport):
                        self.transport.state = state
                    yield
            else:
                yield
        finally:
            await self._close()

    def standalone(self, path: str = "/mcp") -> Starlette:
        """A Starlette app serving the MCP endpoint at `path`, running the wrapped app's lifespan; for uvicorn.
        `GET /` answers while the process runs (liveness); `GET /ready` while it can serve (`readiness`)."""

        async def info(request: Request) -> JSONResponse:
            return JSONResponse(
                {"name": self.name, "version": self.version, "mcp": path, "reference": self.reference_path}
            )

        @asynccontextmanager
        async def lifespan(app: Starlette) -> AsyncIterator[None]:
            async with self.lifespan():
                yield

        routes = [
            Route(path, self.asgi(), methods=["GET", "POST", "DELETE"]),
            Route("/", info),
            Route("/ready", self.readiness, methods=["GET", "HEAD"]),
        ]
        if self.reference_path is not None:
            routes.append(Route(self.reference_path, self.reference_app(), methods=["GET", "HEAD"]))
        if self.metrics_path is not None:
            routes.append(Route(self.metrics_path, self.metrics_app(), methods=["GET", "HEAD"]))
        return Starlette(routes=routes, lifespan=lifespan)


def _approvals(config: GatewayConfig) -> Approvals | None:
    """The approval handles `config.effects` asks for: in `approval_store`, else beside the tasks (their store, or
    its URL opened again), else in this process's memory; None when no call waits for approval."""
    effects = config.effects
    if effects.approval == "none":
        return None
    from gateway.mcp.tasks.store import open_task_store  # the store machinery: imported only when approval is on
    from gateway.tools.approvals import Approvals

    store = effects.approval_store
    if store is None and config.tasks is not None:
        store = config.tasks.store
    if store is None or isinstance(store, str):
        opened = open_task_store(store, clock=effects.approval_clock)
        return Approvals(opened, ttl=effects.approval_ttl, clock=effects.approval_clock)
    return Approvals(store, ttl=effects.approval_ttl, clock=effects.approval_clock, owns_store=False)


def _build_catalog(config: GatewayConfig) -> Catalog:
    source = config.spec
    if source is None:
        if config.app is None or not callable(getattr(config.app, "openapi", None)):
            raise ConfigError(
                "no spec: pass spec= (a path, URL, text or dict), or an app with its own openapi() such as FastAPI"
            )
        source = config.app
    try:
        document = load_document(source, fetch=fetch_document)
        return build_catalog(
            document,
            composites=config.additions.composites,
            concepts=config.additions.concepts,
            max_schema_nodes=config.limits.max_schema_nodes,
            effects=config.effects.rules,
        )
    except CatalogError:
        raise
    except (TypeError, ValueError) as error:
        raise ConfigError(f"cannot load the spec: {error}") from error


def _warn_about_document(config: GatewayConfig, catalog: Catalog) -> None:
    if not catalog.functions():
        if config.app is not None and config.spec is None:
            # FastAPI before 0.137 keeps its first openapi() for good (app.openapi_schema): forget this empty one,
            # or the routes added later would never reach a later Gateway nor the app's own /openapi.json.
            if getattr(config.app, "openapi_schema", None) is not None:
                config.app.openapi_schema = None
            logger.warning(
                "the app's openapi() lists no operations, so agents will find no functions: create the Gateway "
                "after the app's routes and include_router() calls"
            )
        else:
            logger.warning("the catalog has no functions")
    if catalog.title == "FastAPI" and config.output.name is None:
        # FastAPI's default title: agents and people would see a server called "FastAPI".
        logger.warning(
            "the API's title is FastAPI's default 'FastAPI', which clients show as the server's name: set "
            "FastAPI(title=...) or give the gateway a name"
        )


def _document_url(spec: Any) -> str | None:
    """The URL the document was fetched from, when `spec` is one."""
    return spec if isinstance(spec, str) and spec.startswith(("http://", "https://")) else None


def _transport(config: GatewayConfig, catalog: Catalog, upstream: str | None) -> Transport | None:
    if config.app is not None:
        prefix = call_prefix(config.app, catalog, config.prefix)
        return AsgiTransport(config.app, prefix=prefix)
    if upstream is not None:
        refuse_userinfo(upstream, "the document's server URL" if config.upstream is None else "upstream")
        transport = UpstreamTransport(upstream, timeout=config.limits.timeout, other_hosts=config.security.other_hosts)
        for server, names in catalog.own_servers().items():
            refuse_userinfo(server, f"the server URL of {names[0]}")
            refused = transport.refusal(server)
            count = f"{len(names)} function{'s' if len(names) != 1 else ''}"
            if refused is None:
                logger.info("%s called at %s (an allowed other host)", count, shown_url(server))
            else:
                listed = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
                logger.warning("%s cannot be called (%s): %s", count, listed, refused)
        return transport
    return None


def _reference_path(config: GatewayConfig) -> str | None:
    """Where the reference page is served: as given ('' for nowhere), else at /reference when ChatGPT's catalog
    search/fetch are served without a reference_url of their own, so that their results carry a citable url."""
    path = config.output.reference_path
    if path is not None:
        return path or None
    research = config.research
    if research is True or (
        isinstance(research, ResearchConfig) and research.data is None and research.reference_url is None
    ):
        return "/reference"
    return None
