"""What operators see of agents' calls: a log line per tool call, Prometheus metrics, OpenTelemetry spans.

The call path reports through three hooks, each close to free when nothing listens:

- `Observer.tool_call(name, request)` around every tool call (`McpEndpoint.call_tool`);
- `observe_function(function)` around every catalog function call (`Dispatcher.call`): it finds the tool call it
  belongs to through a context variable, and `FunctionCall.context` adds the W3C `traceparent` of its span to
  the REST request, for the app in-process and the upstream alike;
- `observe_script(result)` when a run_script run ends (`ScriptTool`).

Log lines go to the `gateway.calls` logger at INFO as key=value pairs (the same fields are on the record as
`call`, for JSON formatters): `event=tool` once per tool call, and `event=function` for each call a script
makes. The caller is an HMAC of the caller's credentials under a key (random per process unless given), so the
lines of one caller match without showing what they presented. Arguments, results and credentials are never
logged, counted or put on spans; every label value comes from the tool list, the catalog or a closed set.
"""

from __future__ import annotations

import functools
import hmac
import logging
import secrets
import time
import typing
from collections.abc import Mapping
from contextvars import ContextVar, Token
from dataclasses import replace
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from catalog.model import Function
from gateway.errors import ArgumentError, ConfigError
from gateway.requests import RequestInfo, RestContext, TrustedProxies
from gateway.rest.request import HttpResponse

if TYPE_CHECKING:
    from sandbox import ScriptResult

__all__ = [
    "LOGGER_NAME",
    "FunctionCall",
    "Metrics",
    "MetricsPage",
    "OAuthCounters",
    "Observer",
    "ToolCall",
    "observe_function",
    "observe_script",
]

LOGGER_NAME: Final = "gateway.calls"
"""The logger of the call lines (and of the in-process app's failures, at ERROR)."""

logger = logging.getLogger(LOGGER_NAME)

#: The tool whose function calls each get a line and a span of their own (a script makes many).
_SCRIPT_TOOL: Final = "run_script"
#: How a script run can end: its result, or a failure kind (sandbox.FailureKind), or refused before it ran.
_SCRIPT_OUTCOMES: Final = frozenset(
    {"ok", "error", "syntax", "result", "timeout", "memory", "stalled", "crashed", "refused"}
)
#: The failures that stop a script from outside it: a limit, or a worker that died.
_KILLS: Final = frozenset({"result", "timeout", "memory", "stalled", "crashed"})
_LOGIN_OUTCOMES: Final = frozenset({"accepted", "refused", "limited", "allowed", "denied"})
_OAUTH_ENDPOINTS: Final = frozenset({"authorize", "token", "revoke", "register", "resource"})
#: The stores whose outages are counted (`oauth.outage.Outage` names them).
_STORES: Final = frozenset({"token store", "task store", "approval store"})


@functools.cache
def _oauth_errors() -> frozenset[str]:
    """oauth.errors.ErrorCode, and the resource side's invalid_token and no_token (read when OAuth first reports,
    so that serving without OAuth never imports it)."""
    from oauth.errors import ErrorCode

    return frozenset({*typing.get_args(ErrorCode), "invalid_token", "no_token"})


_MISSING_PROMETHEUS: Final = (
    "metrics_path needs the prometheus-client package: pip install 'openapi-mcp-gateway[metrics]' "
    "(or pip install prometheus-client), or leave metrics_path unset"
)

_CURRENT: ContextVar[ToolCall | None] = ContextVar("gateway_tool_call", default=None)


class Metrics:
    """The Prometheus metrics of one gateway, in a registry of its own; ConfigError without prometheus-client."""

    def __init__(self) -> None:
        try:
            import prometheus_client
        except ImportError:
            raise ConfigError(_MISSING_PROMETHEUS) from None
        from prometheus_client import Counter, Gauge, Histogram

        self._generate = prometheus_client.generate_latest
        self.content_type: str = prometheus_client.CONTENT_TYPE_LATEST
        self.registry = prometheus_client.CollectorRegistry()
        registry = self.registry
        self.tool_calls = Counter(
            "mcp_gateway_tool_calls",
            "Tool calls by tool, the catalog function they called ('' for none) and outcome (ok or error).",
            ["tool", "function", "outcome"],
            registry=registry,
        )
        self.tool_seconds = Histogram(
            "mcp_gateway_tool_call_duration_seconds",
            "How long tool calls took, by tool and catalog function.",
            ["tool", "function"],
            registry=registry,
        )
        self.function_calls = Counter(
            "mcp_gateway_function_calls",
            "Catalog function calls by the tool that made them, function and HTTP status (or invalid, timeout, "
            "error when the API gave no answer, ok for a composite).",
            ["tool", "function", "status"],
            registry=registry,
        )
        self.function_seconds = Histogram(
            "mcp_gateway_function_call_duration_seconds",
            "How long catalog function calls took, by tool and function.",
            ["tool", "function"],
            registry=registry,
        )
        self.script_runs = Counter(
            "mcp_gateway_script_runs",
            "run_script runs by outcome: ok, error, syntax, result, timeout, memory, stalled, crashed, refused.",
            ["outcome"],
            registry=registry,
        )
        self.script_kills = Counter(
            "mcp_gateway_script_kills",
            "run_script runs stopped by a limit or a failed worker, by reason (result, timeout, memory, stalled, "
            "crashed).",
            ["reason"],
            registry=registry,
        )
        self.oauth_logins = Counter(
            "mcp_gateway_oauth_logins",
            "OAuth login steps by outcome: accepted or refused (the key), limited (too many tries), allowed or "
            "denied (consent).",
            ["outcome"],
            registry=registry,
        )
        self.oauth_refusals = Counter(
            "mcp_gateway_oauth_refusals",
            "OAuth requests refused, by endpoint and OAuth error code (no_token for an MCP request without one).",
            ["endpoint", "error"],
            registry=registry,
        )
        self.store_failures = Counter(
            "mcp_gateway_store_failures",
            "Operations of a state store that failed because it could not answer, by store (token, task).",
            ["store"],
            registry=registry,
        )
        self.store_up = Gauge(
            "mcp_gateway_store_up",
            "1 while a state store answers, 0 from its first failure until it answers again, by store (token, task).",
            ["store"],
            registry=registry,
        )

    def exposition(self) -> bytes:
        """The metrics in the Prometheus text format."""
        return bytes(self._generate(self.registry))


#: Who may read the metrics page by default: this machine and private networks (where scrapers run), never
#: the public internet, since the page names every function called, hidden ones included.
METRICS_READERS: Final = ("127.0.0.0/8", "::1/128", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7")


class MetricsPage:
    """The metrics as an ASGI app answering GET and HEAD, for the operator's scraper: served to requests from
    `readers` (addresses and networks), the address read through `proxies` the operator trusts; 403 to others."""

    def __init__(
        self, metrics: Metrics, *, readers: TrustedProxies | None = None, proxies: TrustedProxies | None = None
    ) -> None:
        self.metrics = metrics
        self.readers = readers if readers is not None else TrustedProxies.parse(METRICS_READERS)
        self.proxies = proxies if proxies is not None else TrustedProxies()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        client = scope.get("client")
        headers = {name.lower(): value for name, value in scope.get("headers", ())}
        forwarded = headers.get(b"x-forwarded-for", b"").decode("latin-1") or None
        origin = self.proxies.origin(str(client[0]), forwarded) if client else ""
        if origin not in self.readers:
            logger.warning("refused the metrics page to %s, which metrics_from does not list", origin or "unknown")
            response = Response(
                "the metrics page is served to the operator's scraper only; add its address or network to "
                "metrics_from (--metrics-from)\n",
                status_code=403,
            )
        elif scope["method"] not in ("GET", "HEAD"):
            response = Response("use GET\n", status_code=405, headers={"Allow": "GET, HEAD"})
        else:
            response = Response(
                self.metrics.exposition(),
                media_type=self.metrics.content_type,
                headers={"Cache-Control": "no-store"},
            )
        await response(scope, receive, send)


class _Tracing:
    """OpenTelemetry, when installed: a tracer from `provider` (default: the global one, once an SDK sets it)."""

    def __init__(self, provider: Any) -> None:
        from opentelemetry import context, propagate, trace

        self.context = context
        self.propagate = propagate
        self.trace = trace
        self.provider = provider
        self.tracer = trace.get_tracer("gateway", tracer_provider=provider)
        self._inert = (trace.ProxyTracerProvider, trace.NoOpTracerProvider)

    @property
    def active(self) -> bool:
        """False while no SDK is configured: then spans would record nothing, so none are made."""
        return self.provider is not None or not isinstance(self.trace.get_tracer_provider(), self._inert)


def _tracing(provider: Any) -> _Tracing | None:
    try:
        return _Tracing(provider)
    except ImportError:
        if provider is not None:
            raise ConfigError(
                "tracer_provider needs OpenTelemetry: pip install 'openapi-mcp-gateway[otel]' opentelemetry-sdk"
            ) from None
        return None


class Observer:
    """Where the call path reports, for one gateway: log lines always (when `gateway.calls` logs INFO), metrics
    when `metrics` (see `Metrics`), spans when OpenTelemetry is installed and configured (or `tracer_provider`
    is given). `caller_key` keys the caller hash; give the same one to every instance to match their lines."""

    def __init__(
        self, *, metrics: bool = False, tracer_provider: Any = None, caller_key: bytes | str | None = None
    ) -> None:
        self.metrics = Metrics() if metrics else None
        self.tracing = _tracing(tracer_provider)
        if isinstance(caller_key, str):
            caller_key = caller_key.encode()
        self._key = caller_key or secrets.token_bytes(32)
        self.oauth = OAuthCounters(self)
        self.stores = StoreCounters(self)

    def tool_call(self, tool: str, request: RequestInfo) -> ToolCall | _Unobserved:
        """The scope of one call of the known tool `tool`; report its result with `result(...)`."""
        tracing = self.tracing if self.tracing is not None and self.tracing.active else None
        if self.metrics is None and tracing is None and not logger.isEnabledFor(logging.INFO):
            return _UNOBSERVED
        return ToolCall(self, tool, request, tracing)

    def caller(self, request: RequestInfo) -> str:
        """A keyed hash of what identifies the caller (its REST credentials, else its bearer token), or '-'."""
        principal = request.principal
        if isinstance(principal, Mapping) and principal:
            material = "\n".join(f"{str(k).lower()}:{v}" for k, v in sorted(principal.items(), key=str))
        else:
            token = request.bearer_token
            if token is None:
                return "-"
            material = token
        return hmac.new(self._key, material.encode("utf-8", "replace"), "sha256").hexdigest()[:16]


class _Unobserved:
    """The tool call scope when nothing listens."""

    def __enter__(self) -> _Unobserved:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def result(self, is_error: bool) -> None:
        return None


_UNOBSERVED: Final = _Unobserved()


class ToolCall:
    """One tool call being observed: its span, and what its function calls reported (function, status)."""

    def __init__(self, observer: Observer, tool: str, request: RequestInfo, tracing: _Tracing | None) -> None:
        self.observer = observer
        self.tool = tool
        self.request = request
        self.tracing = tracing
        self.caller = observer.caller(request)
        self.fans_out = tool == _SCRIPT_TOOL
        self.function = ""
        self.status = ""
        self.script: str | None = None
        self.script_calls = 0
        self.is_error = False
        self._span: Any = None
        self._attached: Any = None
        self._token: Token[ToolCall | None] | None = None
        self._started = 0.0

    def __enter__(self) -> ToolCall:
        if self.tracing is not None:
            tracing = self.tracing
            parent = tracing.propagate.extract(dict(self.request.headers or {}))
            # MCP semantic conventions: `tools/call {tool}`, a server span under the caller's traceparent.
            self._span = tracing.tracer.start_span(
                f"tools/call {self.tool}",
                context=parent,
                kind=tracing.trace.SpanKind.SERVER,
                attributes={
                    "mcp.method.name": "tools/call",
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": self.tool,
                    "mcp_gateway.caller": self.caller,
                },
            )
            self._attached = tracing.context.attach(tracing.trace.set_span_in_context(self._span, parent))
        self._token = _CURRENT.set(self)
        self._started = time.perf_counter()
        return self

    def result(self, is_error: bool) -> None:
        """The tool's result was an error (or not)."""
        self.is_error = is_error

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        seconds = time.perf_counter() - self._started
        if self._token is not None:
            _CURRENT.reset(self._token)
        outcome = "error" if self.is_error or kind is not None else "ok"
        if self.fans_out and self.script is None:
            self.script = "refused"  # the run never started: not allowed, busy, refused source, whoami failed
        metrics = self.observer.metrics
        if metrics is not None:
            metrics.tool_calls.labels(self.tool, self.function, outcome).inc()
            metrics.tool_seconds.labels(self.tool, self.function).observe(seconds)
            if self.script is not None:
                metrics.script_runs.labels(self.script).inc()
                if self.script in _KILLS:
                    metrics.script_kills.labels(self.script).inc()
        if self._span is not None and self.tracing is not None:
            span = self._span
            if self.function:
                span.set_attribute("mcp_gateway.function", self.function)
            if self.script is not None:
                span.set_attribute("mcp_gateway.script.outcome", self.script)
            if outcome == "error":
                span.set_status(self.tracing.trace.Status(self.tracing.trace.StatusCode.ERROR))
            span.end()
            self.tracing.context.detach(self._attached)
        if logger.isEnabledFor(logging.INFO):
            fields: dict[str, object] = {
                "event": "tool",
                "tool": self.tool,
                "function": self.function or "-",
                "status": self.status or "-",
                "outcome": outcome,
                "duration_ms": round(seconds * 1000, 1),
                "caller": self.caller,
            }
            if self.script is not None:
                fields["script"] = self.script
                fields["calls"] = self.script_calls
            _log(fields)


class FunctionCall:
    """One catalog function call inside an observed tool call: its span, timing and status."""

    def __init__(self, call: ToolCall, function: Function) -> None:
        self.call = call
        self.function = function
        # The tool's own function is the first one called (a composite's inner calls are its parts), except for
        # run_script, whose every call is a function call of its own.
        self.own = not call.fans_out and not call.function
        if self.own:
            call.function = function.name
        self.status = "ok"
        self._span: Any = None
        self._attached: Any = None
        self._started = 0.0

    def __enter__(self) -> FunctionCall:
        tracing = self.call.tracing
        if tracing is not None:
            function = self.function
            name = f"{function.method} {function.path}" if function.method else function.name
            self._span = tracing.tracer.start_span(
                name,
                kind=tracing.trace.SpanKind.CLIENT,
                attributes={
                    "http.request.method": function.method or "_OTHER",
                    "url.template": function.path,
                    "mcp_gateway.function": function.name,
                },
            )
            self._attached = tracing.context.attach(tracing.trace.set_span_in_context(self._span))
        self._started = time.perf_counter()
        return self

    def context(self, context: RestContext) -> RestContext:
        """`context` with this call's W3C trace context (`traceparent`, `tracestate`) when it has a span."""
        tracing = self.call.tracing
        if self._span is None or tracing is None:
            return context
        carrier: dict[str, str] = {}
        tracing.propagate.inject(carrier)
        if not carrier:
            return context
        names = {name.lower() for name in carrier}
        kept = tuple((name, value) for name, value in context.headers if name.lower() not in names)
        return replace(context, headers=(*kept, *carrier.items()))

    def answered(self, response: HttpResponse | None) -> None:
        """The API's answer (None for a composite's value)."""
        if response is not None:
            status = response.status
            self.status = str(status) if 100 <= status <= 599 else "error"

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        seconds = time.perf_counter() - self._started
        if kind is not None:
            if isinstance(error, ArgumentError):
                self.status = "invalid"
            elif isinstance(error, TimeoutError) or isinstance(getattr(error, "__context__", None), TimeoutError):
                # The dispatcher's timeout surfaces as a ToolError raised from the TimeoutError.
                self.status = "timeout"
            else:
                self.status = "error"
        call = self.call
        name = self.function.name
        if self.own:
            call.status = self.status
        if call.fans_out:
            call.script_calls += 1
        metrics = call.observer.metrics
        if metrics is not None:
            metrics.function_calls.labels(call.tool, name, self.status).inc()
            metrics.function_seconds.labels(call.tool, name).observe(seconds)
        if self._span is not None and call.tracing is not None:
            trace = call.tracing.trace
            span = self._span
            if self.status.isdigit():
                span.set_attribute("http.response.status_code", int(self.status))
                failed = int(self.status) >= 400
            else:
                span.set_attribute("error.type", self.status)
                failed = self.status != "ok"
            if failed:
                span.set_status(trace.Status(trace.StatusCode.ERROR))
            span.end()
            call.tracing.context.detach(self._attached)
        if call.fans_out and logger.isEnabledFor(logging.INFO):
            _log(
                {
                    "event": "function",
                    "tool": call.tool,
                    "function": name,
                    "status": self.status,
                    "duration_ms": round(seconds * 1000, 1),
                    "caller": call.caller,
                }
            )


def observe_function(function: Function) -> FunctionCall | None:
    """The scope of one call of `function`, or None outside an observed tool call."""
    call = _CURRENT.get()
    if call is None:
        return None
    return FunctionCall(call, function)


def observe_script(result: ScriptResult) -> None:
    """Report how a run_script run ended (its failure kind, or ok) to the tool call it belongs to."""
    call = _CURRENT.get()
    if call is None:
        return
    kind = result.failure.kind if result.failure is not None else "ok"
    call.script = kind if kind in _SCRIPT_OUTCOMES else "error"


class OAuthCounters:
    """What the OAuth server reports (`oauth.events.OAuthEvents`): logins and refusals, counted and logged."""

    def __init__(self, observer: Observer) -> None:
        self._observer = observer

    def login(self, outcome: str) -> None:
        """A login step ended: accepted, refused, limited, allowed or denied."""
        outcome = outcome if outcome in _LOGIN_OUTCOMES else "other"
        metrics = self._observer.metrics
        if metrics is not None:
            metrics.oauth_logins.labels(outcome).inc()
        if logger.isEnabledFor(logging.INFO):
            _log({"event": "login", "outcome": outcome})

    def refusal(self, endpoint: str, error: str) -> None:
        """An OAuth request was refused at `endpoint` with the OAuth error code `error`."""
        endpoint = endpoint if endpoint in _OAUTH_ENDPOINTS else "other"
        error = error if error in _oauth_errors() else "other"
        metrics = self._observer.metrics
        if metrics is not None:
            metrics.oauth_refusals.labels(endpoint, error).inc()
        if logger.isEnabledFor(logging.INFO):
            _log({"event": "refusal", "endpoint": endpoint, "error": error})

    def store_failure(self, store: str) -> None:
        """See `StoreCounters.store_failure`."""
        self._observer.stores.store_failure(store)

    def store_state(self, store: str, up: bool) -> None:
        """See `StoreCounters.store_state`."""
        self._observer.stores.store_state(store, up)


class StoreCounters:
    """What the state stores report (`oauth.outage.OutageListener`): failed operations and outages, counted.

    The outage itself is logged once by the store's `Outage`, not here."""

    def __init__(self, observer: Observer) -> None:
        self._observer = observer

    def store_failure(self, store: str) -> None:
        """An operation of `store` failed because the store could not answer."""
        metrics = self._observer.metrics
        if metrics is not None:
            metrics.store_failures.labels(_store_label(store)).inc()

    def store_state(self, store: str, up: bool) -> None:
        """`store` went down or came back."""
        metrics = self._observer.metrics
        if metrics is not None:
            metrics.store_up.labels(_store_label(store)).set(1 if up else 0)


def _store_label(store: str) -> str:
    return store.removesuffix(" store") if store in _STORES else "other"


def _log(fields: dict[str, object]) -> None:
    logger.info(" ".join(f"{key}={value}" for key, value in fields.items()), extra={"call": fields})
