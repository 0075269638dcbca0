"""The one module that touches the MCP SDK's internals: its request kernel and its transports' own entries.

The HTTP transport serves most requests with the SDK's single-exchange kernel (`serve_one` over a born-ready
`Connection`), hands 2026-07-28 requests to the SDK's private single-exchange entry, and everything else to a
per-request `StreamableHTTPSessionManager`. None of that is the SDK's documented API, so it lives here alone,
pinned to the SDK versions it was checked against (`SUPPORTED_SDK`; tests/gateway/test_sdk.py fails with a
clear message outside that range). The lean `tools/call` paths mirror the SDK: `gateway.mcp.wire.call_result` its
per-version result sieve, `serve_modern_call` its 2026-07-28 entry's inbound ladder and writer; the
byte-for-byte tests in tests/gateway/test_streamable_http.py hold each pair together.
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
import mcp_types as types
from mcp.server.connection import Connection
from mcp.server.lowlevel import Server
from mcp.server.runner import ServerRunner, serve_one
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.dispatcher import CallOptions
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import ErrorData, JSONRPCError, JSONRPCResponse, RequestId
from pydantic import ValidationError
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from gateway.mcp.toolspec import ToolResult
from gateway.mcp.wire import call_result

__all__ = [
    "SUBSCRIPTION_ID",
    "SUPPORTED_SDK",
    "PerRequestInstructions",
    "error_answer",
    "lean_calls_allowed",
    "modern_entry",
    "sdk_supported",
    "sdk_version",
    "send_listen_acknowledged",
    "send_task_notification",
    "send_task_status",
    "serve_modern_call",
    "serve_notification",
    "serve_request",
    "serve_with_manager",
    "served_methods",
    "warn_if_unsupported",
]

logger = logging.getLogger("gateway.mcp.http")

SUPPORTED_SDK: Final = ((2, 3), (2, 4))
"""The `mcp` releases this module was checked against: from 2.3 (inclusive) to 2.4 (exclusive)."""


class PerRequestInstructions(Server[Any]):
    """The SDK's low-level server with instructions chosen per request: its initialize and server/discover answers
    read the `instructions` attribute when they are built (checked against `SUPPORTED_SDK`), and here that
    attribute asks `choose()` (e.g. for the caller of the request being served)."""

    def __init__(self, *args: Any, choose: Callable[[], str | None], **kwargs: Any) -> None:
        self._choose = choose
        super().__init__(*args, **kwargs)

    @property
    def instructions(self) -> str | None:
        return self._choose()

    @instructions.setter
    def instructions(self, value: str | None) -> None:
        """The SDK's constructor sets the attribute; `choose` has the say."""


_ModernEntry = Callable[[Any, Any, bool, Any, Scope, Receive, Send], Awaitable[None]]
_handle_modern_request: _ModernEntry | None
try:  # The SDK's own 2026-era entry; private, so a future SDK without it falls back to the session manager.
    from mcp.server._streamable_http_modern import _write as _write_modern
    from mcp.server._streamable_http_modern import handle_modern_request as _handle_modern_request
    from mcp.server.runner import modern_error_data
    from mcp.server.streamable_http import check_accept_headers
    from mcp.shared.inbound import (
        MCP_PARAM_HEADER_PREFIX,
        InboundLadderRejection,
        classify_inbound_request,
        find_duplicated_routing_header,
        validate_mcp_param_headers,
    )
    from mcp_types import methods as _methods
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    _PARAM_PREFIX: Final = MCP_PARAM_HEADER_PREFIX.lower()  # ASGI header names are lowercase
except ImportError:  # pragma: no cover - depends on the SDK version
    _handle_modern_request = None

try:  # The SDK's default server middleware; the lean path may skip it only while it records nothing.
    from mcp.server._otel import OpenTelemetryMiddleware as _OtelMiddleware
    from opentelemetry import trace as _trace
except ImportError:  # pragma: no cover - depends on the SDK version
    _OtelMiddleware = None  # type: ignore[assignment, misc]
    _trace = None  # type: ignore[assignment]


def sdk_version() -> str:
    """The installed `mcp` distribution's version."""
    return importlib.metadata.version("mcp")


def warn_if_unsupported() -> None:
    """Log a warning, once, when the installed SDK is outside `SUPPORTED_SDK` (pip was told otherwise, or a
    dependency forced another release): what it is, what was checked, and what to do."""
    if _warned or sdk_supported():
        return
    _warned.append(True)
    low, high = (".".join(map(str, bound)) for bound in SUPPORTED_SDK)
    logging.getLogger("gateway").warning(
        "mcp %s is installed, but the gateway was checked against mcp >= %s, < %s and uses the SDK's internals: "
        "calls may fail. Install a supported release: pip install 'mcp>=%s,<%s'",
        sdk_version(),
        low,
        high,
        low,
        high,
    )


_warned: list[bool] = []


def sdk_supported(version: str | None = None) -> bool:
    """Whether `version` (the installed SDK's by default) is within `SUPPORTED_SDK`."""
    text = version if version is not None else sdk_version()
    parts: list[int] = []
    for piece in text.split(".")[:2]:
        digits = "".join(ch for ch in piece if ch.isdigit()) if piece[:1].isdigit() else ""
        if not digits:
            return False
        parts.append(int(digits))
    low, high = SUPPORTED_SDK
    return low <= tuple(parts) < high


def served_methods(server: Server[Any]) -> frozenset[str]:
    """Every JSON-RPC request method `server` answers: the SDK's built-in ones and those added to it."""
    return frozenset(server._request_handlers)


@dataclass(eq=False)
class _SingleExchange:
    """The SDK `DispatchContext` of one stateless JSON request: no back-channel, nothing sent before the answer.

    What the SDK's legacy stateless transport offers a handler too: its back-channel cannot deliver requests
    (`can_send_request=False`), and in JSON-response mode notifications scoped to the request have no wire.
    """

    transport: TransportContext
    request_id: RequestId | None
    message_metadata: ServerMessageMetadata
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)
    can_send_request: bool = False

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        raise NoBackChannelError(method)

    async def notify(self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None) -> None:
        return None

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        return None


def _exchange(request_id: RequestId | None, http_request: Request) -> _SingleExchange:
    return _SingleExchange(
        transport=TransportContext(kind="streamable-http", can_send_request=False),
        request_id=request_id,
        message_metadata=ServerMessageMetadata(request_context=http_request),
    )


async def serve_request(
    server: Any,
    request_id: RequestId,
    method: str,
    params: Mapping[str, Any] | None,
    version: str,
    http_request: Request,
) -> JSONRPCResponse | JSONRPCError:
    """One handshake-era request through the SDK's kernel, as its stateless JSON transport serves it."""
    # As the SDK's legacy stateless transport does: a born-ready connection at the header's version.
    connection = Connection.from_envelope(version, None, None)
    try:
        # `lifespan_state={}`: McpEndpoint's server keeps the SDK's default lifespan, which yields {}.
        result = await serve_one(
            server, _exchange(request_id, http_request), method, params, connection=connection, lifespan_state={}
        )
    except Exception as error:
        return error_answer(request_id, method, error)
    return JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result)


def error_answer(request_id: RequestId, method: str, error: Exception) -> JSONRPCError:
    """A handler's exception as the SDK's JSON-RPC dispatcher maps it (code 0 is its legacy catch-all)."""
    data = handler_exception_to_error_data(error)
    if data is None:
        logger.exception("handler for %r raised", method)
        data = ErrorData(code=0, message=str(error))
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=data)


async def serve_notification(
    server: Any, method: str, params: Mapping[str, Any] | None, version: str, http_request: Request
) -> None:
    """One handshake-era notification through the SDK's kernel (which logs and drops what it cannot use)."""
    connection = Connection.from_envelope(version, None, None)
    runner: ServerRunner[Any] = ServerRunner(server, connection, {})
    await runner.on_notify(_exchange(None, http_request), method, params)


def lean_calls_allowed(server: Any) -> bool:
    """Whether a `tools/call` may skip the SDK's kernel: no middleware but the SDK's own OpenTelemetry one while
    no tracer is configured (it then records nothing), and no cache hint for tools/call."""
    middleware = server.middleware
    if middleware:
        if _OtelMiddleware is None or len(middleware) != 1 or type(middleware[0]) is not _OtelMiddleware:
            return False
        provider = _trace.get_tracer_provider()
        if not isinstance(provider, _trace.ProxyTracerProvider | _trace.NoOpTracerProvider):
            return False
    return "tools/call" not in server.cache_hints


_REQUEST_KEYS: Final = frozenset({"jsonrpc", "id", "method", "params"})
_MODERN_CALL_PARAMS: Final = frozenset({"name", "arguments", "_meta"})


async def serve_modern_call(
    server: Any,
    serves: Callable[[str], bool],
    annotated: Callable[[str], bool],
    answer: Callable[[str, Mapping[str, Any], object], Awaitable[ToolResult]],
    scope: Scope,
    receive: Receive,
    send: Send,
    body: bytes,
) -> bool:
    """Answer a 2026-07-28 `tools/call` of a known tool in JSON without the SDK's kernel, as its single-exchange
    entry (`handle_modern_request`) would; `annotated(name)` says whether the tool's input schema marks any
    property `x-mcp-header`; `answer` gets the request's client capabilities too. False, having sent nothing, for
    any request that entry would treat otherwise (a rejection, an unusual envelope, middleware that records) — the
    SDK's entry then serves it.

    The same inbound ladder runs (routing-header duplicates, the per-request envelope's classification, the
    `Mcp-Param-*` header check, the method's params surface), then `answer` (what the SDK's handler runs), the
    SDK's result sieve and `serverInfo` stamp, and its writer, so status, headers and body are the entry's own.
    """
    if _handle_modern_request is None or not lean_calls_allowed(server):
        return False
    request = Request(scope, receive)
    if not check_accept_headers(request)[0]:
        return False
    try:
        decoded = json.loads(body)
    except (ValueError, RecursionError):
        return False
    if type(decoded) is not dict or decoded.keys() != _REQUEST_KEYS:
        return False
    request_id, params = decoded["id"], decoded["params"]
    if decoded["jsonrpc"] != "2.0" or decoded["method"] != "tools/call" or type(request_id) not in (int, str):
        return False
    if type(params) is not dict or not params.keys() <= _MODERN_CALL_PARAMS:
        return False
    name, arguments = params.get("name"), params.get("arguments")
    if type(name) is not str or not serves(name) or (arguments is not None and type(arguments) is not dict):
        return False
    headers = request.headers
    if find_duplicated_routing_header(headers.items()) is not None:
        return False
    verdict = classify_inbound_request(decoded, headers=dict(headers))
    if isinstance(verdict, InboundLadderRejection):
        return False
    # The header check compares annotated (`x-mcp-header`) properties only: a schema without any passes them all.
    if annotated(name) and (arguments or any(key.startswith(_PARAM_PREFIX) for key in headers)):
        schema = server.get_tool_input_schema(name) if server.get_tool_input_schema is not None else None
        if schema is None or validate_mcp_param_headers(schema, arguments or {}, headers) is not None:
            return False
    version = verdict.protocol_version
    try:
        _methods.validate_client_request("tools/call", version, params)
    except (ValidationError, KeyError):
        return False
    try:
        result = await answer(name, arguments or {}, verdict.client_capabilities)
        wire = modern_call_result(server, result, version)
    except Exception as error:  # boundary: as the entry maps whatever the kernel raises
        failure = JSONRPCError(jsonrpc="2.0", id=request_id, error=modern_error_data(error))
        await _write_modern(failure, scope, receive, send)
        return True
    # What the entry's writer sends for a result (its model dump of the envelope is this dict, the sieve having
    # made the result JSON-safe), without building and dumping the envelope's model.
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": wire}, separators=(",", ":")).encode()
    framing = [(b"content-length", str(len(body)).encode()), (b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": 200, "headers": framing})
    await send({"type": "http.response.body", "body": body})
    return True


def modern_call_result(server: Any, result: ToolResult, version: str) -> dict[str, Any]:
    """The wire `CallToolResult` at a 2026-era `version`, as the SDK's kernel shapes a handler's result: dumped,
    sieved for the version, `resultType` and the `serverInfo` `_meta` stamp added."""
    dumped = call_result(result)
    dumped["resultType"] = "complete"  # the SDK's `CallToolResult` model's default, which its dump carries
    # The sieve validates and re-dumps: its output (keys, order, values) does not depend on the input's order.
    dumped = _methods.serialize_server_result("tools/call", version, dumped)
    if version in MODERN_PROTOCOL_VERSIONS and dumped.get("resultType") is None:
        dumped["resultType"] = "complete"
    meta = dumped.get("_meta")
    if meta is None:
        dumped["_meta"] = {types.SERVER_INFO_META_KEY: server.server_info_stamp}
    elif isinstance(meta, dict) and meta.get(types.SERVER_INFO_META_KEY) is None:
        dumped["_meta"] = {**meta, types.SERVER_INFO_META_KEY: server.server_info_stamp}
    return dumped


async def send_task_status(session: Any, task: Mapping[str, Any]) -> None:
    """Send `notifications/tasks/status` (MCP 2025-11-25 tasks) for `task`, a wire `Task`, on the session's own
    channel. The SDK types the notification but leaves it out of its `ServerNotification` union, so it is passed
    through the untyped door; the session only dumps and sends it."""
    params = types.TaskStatusNotificationParams.model_validate(dict(task))
    notification: Any = types.TaskStatusNotification(params=params)
    await session.send_notification(notification)


#: The `_meta` key of every frame on a `subscriptions/listen` stream: the listen request's id (2026-07-28).
SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"


class _Notification:
    """A notification the SDK's session only dumps and sends: for methods its `ServerNotification` union lacks
    (the tasks extension's `notifications/tasks`) and filters with extension keys (`taskIds`)."""

    def __init__(self, method: str, params: dict[str, Any]) -> None:
        self._wire = {"method": method, "params": params}

    def model_dump(self, **_: Any) -> dict[str, Any]:
        return self._wire


async def send_listen_acknowledged(
    session: Any, honored: Mapping[str, Any], meta: Mapping[str, Any], request_id: RequestId
) -> None:
    """Send `notifications/subscriptions/acknowledged` with the `honored` filter (wire keys) on the listen
    request's stream: the stream's first frame."""
    params = {"notifications": dict(honored), "_meta": dict(meta)}
    await session.send_notification(
        _Notification("notifications/subscriptions/acknowledged", params), related_request_id=request_id
    )


async def send_task_notification(
    session: Any, task: Mapping[str, Any], meta: Mapping[str, Any], request_id: RequestId
) -> None:
    """Send `notifications/tasks` (the 2026-07-28 tasks extension) with `task`, a wire `DetailedTask`, on the
    listen request's stream."""
    params = {**task, "_meta": dict(meta)}
    await session.send_notification(_Notification("notifications/tasks", params), related_request_id=request_id)


def modern_entry(
    server: Any, *, json_response: bool = True
) -> Callable[[Scope, Receive, Send], Awaitable[None]] | None:
    """The SDK's own single-exchange entry for 2026-07-28 requests (JSON answers, or with `json_response` False an
    SSE answer once the handler sends a notification; no SDK security settings, the default lifespan's state), or
    None when this SDK has none (then the session manager serves them)."""
    if _handle_modern_request is None:  # pragma: no cover - depends on the SDK version
        return None
    return functools.partial(_handle_modern_request, server, None, json_response, {})


_PER_REQUEST_MANAGER: ContextVar[bool] = ContextVar("gateway_per_request_manager", default=False)


class _QuietManager(logging.Filter):
    """Drops the SDK's INFO lines (manager started, session terminated, shutting down) of a per-request manager.

    Installed on the SDK's transport loggers; it drops only records logged inside `serve_with_manager`, so
    another server in the process keeps its lines, and warnings and errors always pass.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno > logging.INFO or not _PER_REQUEST_MANAGER.get()


for _name in ("mcp.server.streamable_http_manager", "mcp.server.streamable_http"):
    logging.getLogger(_name).addFilter(_QuietManager())


async def serve_with_manager(
    server: Any, max_body_bytes: int, scope: Scope, receive: Receive, send: Send, *, json_response: bool = True
) -> None:
    """Serve one HTTP request with a per-request stateless `StreamableHTTPSessionManager` (JSON answers, or an
    SSE stream with `json_response=False`, which carries notifications before the answer).

    Its task group then lives exactly as long as the request, so mounting needs no lifespan. Host and Origin
    are the caller's to check, so the SDK's own check stays off.
    """
    manager = StreamableHTTPSessionManager(
        server,
        json_response=json_response,
        stateless=True,
        security_settings=None,
        max_request_body_size=max_body_bytes,
    )
    quiet = _PER_REQUEST_MANAGER.set(True)
    try:
        async with manager.run():
            await manager.handle_request(scope, receive, send)
    finally:
        _PER_REQUEST_MANAGER.reset(quiet)
