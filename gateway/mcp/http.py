"""The MCP streamable HTTP transport of an `McpEndpoint` as a plain ASGI app: stateless, JSON, POST only.

Every POST is served on its own, with no session and no server-wide task group, so the app needs no lifespan
and runs behind any load balancer. Mount it in a Starlette or FastAPI app with one line:

    app.router.routes.append(Route("/mcp", endpoint.http_app()))   # answers at /mcp exactly

`app.mount("/mcp", ...)` works too, but Starlette then redirects every POST to /mcp/ with a 307, so give
clients the URL with the slash. Alone, `uvicorn.run(endpoint.http_app())` answers on every path. Before the
MCP SDK sees a request, the app checks, in order: the Host header (421), the Origin header (403), the method
(405 unless POST), and the credentials via the endpoint's `authenticate` hook (401 with `WWW-Authenticate`).
CORS preflights are the host app's business (Starlette's `CORSMiddleware` answers them before they get here).
"""

from __future__ import annotations

import json
import logging
from collections import deque
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol

import pydantic_core
from mcp_types import DEFAULT_NEGOTIATED_VERSION, JSONRPCError, JSONRPCResponse, RequestId
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.types import Message, Receive, Scope, Send

from gateway.errors import ConfigError, CredentialError, UnavailableError
from gateway.limits import option_name
from gateway.mcp import _sdk
from gateway.mcp.capabilities import client_supports_ui, declared_in_session, ui_session, ui_session_id
from gateway.mcp.jsonrpc import BATCH_VERSIONS, Envelope, batch_refusal, envelope_of, invalid_request, too_large
from gateway.mcp.security import LOOPBACK_HOSTS, LOOPBACK_ORIGINS, TransportSecurity
from gateway.mcp.wire import call_result
from gateway.policy import CallerPolicy, Policy, serving
from gateway.requests import Peer, RequestInfo

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

    from gateway.mcp.toolspec import ToolResult
    from gateway.types import Authenticator

__all__ = [
    "LOOPBACK_HOSTS",
    "LOOPBACK_ORIGINS",
    "Endpoint",
    "StreamableHttpApp",
    "TransportSecurity",
    "caller_policy",
    "request_info",
]

logger = logging.getLogger(__name__)

_REQUEST_INFO: Final = "gateway.request_info"
_CALLER: Final = "gateway.caller_policy"
#: JSON-RPC 2.0 §5.1: the range -32000 to -32099 is for implementation-defined server errors; this one is a
#: store or service the server needs that cannot answer now.
_SERVER_ERROR: Final = -32000


class Endpoint(Protocol):
    """What the transport needs of the endpoint it serves (`gateway.mcp.McpEndpoint` is one)."""

    authenticate: Authenticator | None
    policy: Policy
    #: Whether MCP Apps views are served.
    apps: bool

    @property
    def server(self) -> Server[Any]:
        """The SDK's low-level server."""

    def serves(self, name: str) -> bool:
        """Whether `name` is one of the endpoint's tools."""

    def renders_apps(self, capabilities: object) -> bool:
        """Whether a client of `capabilities` is served MCP Apps."""

    def param_headers(self, name: str) -> bool:
        """Whether tool `name` takes 2026-07-28 `Mcp-Param-*` headers."""

    async def answer_call(
        self, name: str, arguments: Mapping[str, Any], caller: CallerPolicy, *, ui: bool = False
    ) -> ToolResult:
        """What a tools/call of `name` answers `caller`, whose client renders MCP Apps when `ui`."""


def _headers(scope: Scope) -> dict[str, str]:
    """The request headers, names lower-cased, repeated fields joined with ", " (RFC 9110 §5.3)."""
    headers: dict[str, str] = {}
    for raw_name, raw_value in scope["headers"]:
        name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return headers


def _is_json(content_type: str) -> bool:
    # Exactly the SDK transport's Content-Type test, so the two paths take the same requests.
    return any(part.strip() == "application/json" for part in content_type.split(";")[0].split(","))


def _declared_size(headers: Mapping[str, str]) -> int:
    """The Content-Length header's value (0 when absent or malformed: the body is then measured as it comes)."""
    value = headers.get("content-length", "")
    return int(value) if value.isdigit() else 0


def _accepts_json(headers: Mapping[str, str]) -> bool:
    # As `mcp.server.streamable_http.check_accept_headers` reads Accept (RFC 9110 §12.5.1 wildcards); otherwise
    # the SDK answers 406 in its own words.
    accepted = [part.split(";", 1)[0].strip().lower() for part in headers.get("accept", "").split(",")]
    return any(media in ("application/json", "application/*", "*/*") for media in accepted)


def request_info(request: object) -> RequestInfo:
    """The `RequestInfo` the transport attached to an SDK request context's HTTP request."""
    if isinstance(request, Request):
        info = request.scope.get(_REQUEST_INFO)
        if isinstance(info, RequestInfo):
            return info
        headers = _headers(request.scope)
        return RequestInfo(transport="http", headers=headers, peer=Peer.from_scope(request.scope, headers.get("host")))
    return RequestInfo(transport="stdio")


def caller_policy(request: object, policy: Policy) -> CallerPolicy:
    """The caller policy the transport built for an SDK request context's HTTP request (built now from the
    request when the transport did not)."""
    if isinstance(request, Request):
        found = request.scope.get(_CALLER)
        if isinstance(found, CallerPolicy) and found.policy is policy:
            return found
    return policy.of(request_info(request))


async def _reject(
    send: Send, status: int, message: str, headers: Mapping[str, str] | None = None, *, code: int = -32600
) -> None:
    body = b""
    if message:
        error = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
        body = json.dumps(error).encode()
    raw_headers = [(b"content-length", str(len(body)).encode())]
    if body:
        raw_headers.append((b"content-type", b"application/json"))
    raw_headers += [
        (name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in (headers or {}).items()
    ]
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": body})


async def _answer(send: Send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _encoded(message: JSONRPCResponse | JSONRPCError) -> bytes:
    # As the SDK's transport encodes its answers.
    return message.model_dump_json(by_alias=True, exclude_unset=True).encode()


async def _read_body(receive: Receive, limit: int) -> tuple[list[Message], bytes | None, bool]:
    """The ASGI messages read, the whole body (None when incomplete or over `limit`), and whether it was over."""
    messages: list[Message] = []
    size = 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return messages, None, False
        size += len(message.get("body", b""))
        if size > limit:
            return messages, None, True
        if not message.get("more_body", False):
            return messages, b"".join(m.get("body", b"") for m in messages), False


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """A `receive` that yields `messages` again, then reads on."""
    pending = deque(messages)

    async def replayed() -> Message:
        return pending.popleft() if pending else await receive()

    return replayed


async def _disconnected() -> Message:
    return {"type": "http.disconnect"}


def _wants_progress(envelope: Envelope, headers: Mapping[str, str]) -> bool:
    """Whether a tools/call carries a progress token and its client takes an SSE answer (MCP 2025-11-25
    transports: a POST may be answered with an SSE stream carrying the request's notifications)."""
    meta = (envelope.params or {}).get("_meta")
    if envelope.method != "tools/call" or not isinstance(meta, dict) or meta.get("progressToken") is None:
        return False
    accepted = [part.split(";", 1)[0].strip().lower() for part in headers.get("accept", "").split(",")]
    return "text/event-stream" in accepted


def _modern_wants_progress(body: bytes, headers: Mapping[str, str]) -> bool:
    """`_wants_progress` for a 2026-07-28 body, which the SDK parses again (only bodies naming a token get here)."""
    try:
        raw = pydantic_core.from_json(body)
    except ValueError:
        return False
    envelope = envelope_of(raw) if isinstance(raw, dict) else None
    return isinstance(envelope, Envelope) and _wants_progress(envelope, headers)


async def _serve_lifespan(receive: Receive, send: Send) -> None:
    # Nothing to start: every request is served on its own. Answering lets uvicorn run the app bare.
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


#: Methods the single-exchange path serves: the ones an agent sends again and again.
_SINGLE_EXCHANGE_METHODS: Final = frozenset({"tools/call", "tools/list"})


class StreamableHttpApp:
    """ASGI app serving one `McpEndpoint` over MCP streamable HTTP; build it with `McpEndpoint.http_app()`.

    Stateless, answers application/json (never SSE), POST only: GET and DELETE get 405, as MCP 2025-11-25 allows a
    server that offers no SSE stream and no session. The one `Mcp-Session-Id` it gives, to an initialize that
    declares MCP Apps, records nothing on the server: the id itself says so (gateway.mcp.capabilities). Every
    protocol version the SDK
    knows is served: a request whose `MCP-Protocol-Version` header names 2026-07-28 takes the SDK's
    single-exchange entry, any other the initialize-handshake path.

    The transport answers these itself, whatever the version: a body over `max_body_bytes` gets 413 with a
    JSON-RPC error naming the limit; a message that is not JSON-RPC 2.0 gets 400 with a -32600 error that
    says why (never a validator's dump); a JSON-RPC batch is answered as a batch at 2025-03-26 and 2024-11-05
    (a request without `MCP-Protocol-Version` is 2025-03-26, as the spec says) and refused with -32600 from
    2025-06-18 on, which removed batches.

    With `single_exchange` (the default), a handshake-era `tools/call` or `tools/list` request that the SDK's
    stateless transport would accept as is runs through the SDK's single-exchange kernel (`serve_one`: the
    same validation, middleware, per-version result sieve and error mapping) without the per-request session
    manager, streams and task group, which cost more than the tool call itself. A plain `tools/call` of a
    known tool (params `name` and `arguments` only, while the SDK's middleware would record nothing) goes
    straight to `McpEndpoint.answer_call`, what the kernel's handler runs. A 2026-07-28 `tools/call` of a known
    tool answered in JSON (`_sdk.serve_modern_call`) runs the SDK entry's own inbound checks, then
    `answer_call`, the SDK's result sieve and writer, without its kernel. Either way the answer is what the
    SDK's transport sends, byte for byte. Every other request goes to the SDK's session manager or entry.
    """

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        security: TransportSecurity,
        max_body_bytes: int = 4 * 1024 * 1024,
        single_exchange: bool = True,
    ) -> None:
        if max_body_bytes <= 0:
            raise ConfigError(f"max_body_bytes must be a positive number of bytes, got {max_body_bytes!r}")
        self.endpoint = endpoint
        self.security = security
        self.max_body_bytes = max_body_bytes
        self.single_exchange = single_exchange

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one ASGI connection: HTTP requests as MCP, lifespan as a no-op, websockets refused."""
        if scope["type"] == "lifespan":
            await _serve_lifespan(receive, send)
            return
        if scope["type"] == "websocket":
            # Refuse the handshake (ASGI websocket spec: close before accept is an HTTP 403).
            await receive()
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http":
            return
        headers = _headers(scope)
        host = headers.get("host")
        if not self.security.host_allowed(host):
            # Misdirected Request (RFC 9110 §15.5.20): this server does not answer for that host.
            logger.warning("refused a request for Host %r", host)
            await _reject(send, 421, f"Host {host!r} is not served here; the operator can add it to allowed_hosts")
            return
        origin = headers.get("origin")
        if not self.security.origin_allowed(origin, host):
            # MCP 2025-11-25 transports: an invalid Origin MUST get 403 Forbidden.
            logger.warning("refused a request from Origin %r", origin)
            await _reject(send, 403, f"Origin {origin!r} is not allowed; the operator can add it to allowed_origins")
            return
        if scope["method"] != "POST":
            # MCP 2025-11-25 transports: no SSE stream on GET and no session to DELETE, so 405 (RFC 9110 §15.5.6).
            await _reject(send, 405, "", {"Allow": "POST"})
            return
        principal: object = None
        if self.endpoint.authenticate is not None:
            try:
                principal = await self.endpoint.authenticate(headers)
            except CredentialError as error:
                # RFC 6750 §3: a rejected bearer token is 401 with a WWW-Authenticate challenge.
                await _reject(send, 401, str(error), {"WWW-Authenticate": error.www_authenticate})
                return
            except UnavailableError as error:
                # The server's trouble, not the token's: no challenge, so the client keeps its token and retries.
                await _reject(send, 503, str(error), {"Retry-After": str(error.retry_after)}, code=_SERVER_ERROR)
                return
            except Exception:
                # Boundary: a failing hook is a server fault, not the caller's; answer 500 and keep serving.
                logger.exception("the authenticate hook failed")
                await _reject(send, 500, "internal error while checking credentials; the server logged it")
                return
        info = RequestInfo(transport="http", headers=headers, principal=principal, peer=Peer.from_scope(scope, host))
        # The caller policy, built once for the request: every path of it asks this one.
        caller = self.endpoint.policy.of(info)
        token = serving.set(caller)
        # What the client declared at initialize, said again by the session id it was given (gateway.mcp.capabilities);
        # set only when it changes (a request without such an id finds it unset already).
        in_session = ui_session(headers.get("mcp-session-id"))
        declared = declared_in_session.set(in_session) if declared_in_session.get() != in_session else None
        try:
            await self._serve_mcp({**scope, _REQUEST_INFO: info, _CALLER: caller}, receive, send, headers)
        finally:
            if declared is not None:
                declared_in_session.reset(declared)
            serving.reset(token)

    async def _serve_mcp(self, scope: Scope, receive: Receive, send: Send, headers: Mapping[str, str]) -> None:
        declared = _declared_size(headers)
        if declared > self.max_body_bytes:
            await _answer(send, 413, _encoded(too_large(self.max_body_bytes, declared)))
            return
        messages, body, over = await _read_body(receive, self.max_body_bytes)
        if over:
            await _answer(send, 413, _encoded(too_large(self.max_body_bytes, None)))
            return
        if body is None:  # the client left before sending the whole body: nobody to answer
            return
        if self.endpoint.policy.visibility.access.document_scopes:
            needed = _scopes_needed(body, scope[_CALLER])
            if needed is not None:
                # MCP authorization, scope step-up: 403 naming the scopes, so the client asks the person for them.
                info: RequestInfo = scope[_REQUEST_INFO]
                step_up = getattr(info.principal, "insufficient_scope", None)  # the credentials' own challenge
                challenge = (
                    str(step_up(needed))
                    if callable(step_up)
                    else f'Bearer error="insufficient_scope", scope="{" ".join(needed)}"'
                )
                message = f"the call needs the scope {' '.join(needed)}, which the token lacks; authorize again with it"
                await _reject(send, 403, message, {"WWW-Authenticate": challenge})
                return
        version = headers.get("mcp-protocol-version")
        receive = _replay(messages, receive)
        if (
            (version is None or version in HANDSHAKE_PROTOCOL_VERSIONS)
            and _is_json(headers.get("content-type", ""))
            and _accepts_json(headers)
        ):
            try:
                raw = pydantic_core.from_json(body)
            except ValueError:
                raw = _UNPARSED
            if raw is not _UNPARSED:
                negotiated = version or DEFAULT_NEGOTIATED_VERSION
                if isinstance(raw, list):
                    await self._serve_batch(raw, negotiated, scope, send)
                    return
                envelope = envelope_of(raw)
                if isinstance(envelope, JSONRPCError):
                    await _answer(send, 400, _encoded(envelope))
                    return
                if envelope.method == "initialize" and self.endpoint.apps and _declares_ui(envelope):
                    send = _with_session(send, ui_session_id())
                if self.single_exchange and _wants_progress(envelope, headers):
                    # A progress token asks for notifications before the answer: only an SSE response carries
                    # them, so the SDK's manager answers this one as a stream.
                    await _sdk.serve_with_manager(
                        self.endpoint.server, self.max_body_bytes, scope, receive, send, json_response=False
                    )
                    return
                if self.single_exchange and envelope.kind == "request" and envelope.method in _SINGLE_EXCHANGE_METHODS:
                    answer = await self._serve_request(envelope, negotiated, scope)
                    await _answer(send, 200, answer)
                    return
        # MCP 2026-07-28 transports: a request's notifications (progress) travel on its SSE answer.
        stream = version in MODERN_PROTOCOL_VERSIONS and b"progressToken" in body
        stream = stream and _modern_wants_progress(body, headers)
        if self.single_exchange and not stream and version in MODERN_PROTOCOL_VERSIONS and b"tools/call" in body:
            caller: CallerPolicy = scope[_CALLER]

            async def call(name: str, arguments: Mapping[str, Any], capabilities: object) -> ToolResult:
                return await self.endpoint.answer_call(
                    name, arguments, caller, ui=self.endpoint.renders_apps(capabilities)
                )

            if await _sdk.serve_modern_call(
                self.endpoint.server,
                self.endpoint.serves,
                self.endpoint.param_headers,
                call,
                scope,
                receive,
                send,
                body,
            ):
                return
        await self._serve_sdk(scope, receive, send, stream=stream)

    async def _serve_sdk(self, scope: Scope, receive: Receive, send: Send, *, stream: bool = False) -> None:
        """Hand a request to the SDK's own transport: its 2026-07-28 entry (an SSE answer when `stream`), else a
        per-request session manager."""
        info: RequestInfo = scope[_REQUEST_INFO]
        if self.single_exchange and (info.headers or {}).get("mcp-protocol-version") in MODERN_PROTOCOL_VERSIONS:
            # What the manager would do with a 2026-era request (already one exchange, no task group), minus the
            # manager. Host and Origin were checked above, so the SDK's own check stays off.
            entry = _sdk.modern_entry(self.endpoint.server, json_response=not stream)
            if entry is not None:
                await entry(scope, receive, send)
                return
        await _sdk.serve_with_manager(self.endpoint.server, self.max_body_bytes, scope, receive, send)

    async def _serve_request(self, envelope: Envelope, version: str, scope: Scope) -> bytes:
        """One request's encoded answer: the lean `tools/call`, else the SDK's kernel."""
        request_id: RequestId = envelope.id if envelope.id is not None else ""
        params = envelope.params
        if (
            envelope.method == "tools/call"
            and params is not None
            and params.keys() <= _LEAN_PARAMS
            and isinstance(name := params.get("name"), str)
            and isinstance(arguments := params.get("arguments", {}), dict | None)
            and self.endpoint.serves(name)
            and _sdk.lean_calls_allowed(self.endpoint.server)
        ):
            try:
                result = await self.endpoint.answer_call(
                    name, arguments or {}, scope[_CALLER], ui=self.endpoint.renders_apps(None)
                )
            except Exception as error:  # boundary: as the SDK's kernel maps a handler's failure
                return _encoded(_sdk.error_answer(request_id, envelope.method, error))
            # The SDK encodes with pydantic, which writes NaN and infinities as null.
            wire = {"jsonrpc": "2.0", "id": request_id, "result": call_result(result)}
            return pydantic_core.to_json(wire, inf_nan_mode="null")
        request = Request(scope, _disconnected)
        answer = await _sdk.serve_request(self.endpoint.server, request_id, envelope.method, params, version, request)
        return _encoded(answer)

    async def _serve_batch(self, batch: list[Any], version: str, scope: Scope, send: Send) -> None:
        """A JSON-RPC batch (JSON-RPC 2.0 §6): its requests answered in order, in one array; 202 with none."""
        if version not in BATCH_VERSIONS:
            await _answer(send, 400, _encoded(batch_refusal(version)))
            return
        if not batch:
            await _answer(send, 400, _encoded(invalid_request("an empty batch holds no message to answer")))
            return
        limits = self.endpoint.policy.limits
        if len(batch) > limits.batch_elements:
            # Refused whole, before any of it runs: one POST must not start an unbounded number of calls.
            refusal = invalid_request(
                f"the batch holds {len(batch)} messages, over the limit of {limits.batch_elements} "
                f"({option_name('batch_elements')}); send at most {limits.batch_elements} per batch, or one "
                "message per POST"
            )
            await _answer(send, 400, _encoded(refusal))
            return
        answers: list[bytes] = []
        size = 0
        request = Request(scope, _disconnected)
        for raw in batch:
            envelope = envelope_of(raw)
            if (
                size > limits.batch_answer_bytes
                and not isinstance(envelope, JSONRPCError)
                and envelope.kind == "request"
            ):
                # The answers so far fill the budget: the rest are not run, each told to come again on its own.
                refusal = invalid_request(
                    f"not run: the batch's answers reached the {limits.batch_answer_bytes}-byte limit "
                    f"({option_name('batch_answer_bytes')}); send this request again on its own",
                    envelope.id,
                )
                answers.append(_encoded(refusal))
                continue
            if isinstance(envelope, JSONRPCError):
                answers.append(_encoded(envelope))
            elif envelope.kind == "notification":
                await _sdk.serve_notification(self.endpoint.server, envelope.method, envelope.params, version, request)
            elif envelope.kind == "request" and envelope.method == "initialize":
                # MCP 2025-03-26 lifecycle: the initialize request MUST NOT be part of a JSON-RPC batch.
                refusal = invalid_request("initialize must be sent on its own, not in a batch", envelope.id)
                answers.append(_encoded(refusal))
            elif envelope.kind == "request":
                answers.append(await self._serve_request(envelope, version, scope))
                size += len(answers[-1])
            # A response answers a server request; this server sends none, so there is nothing to match it to.
        if not answers:
            # Streamable HTTP 2025-03-26: input of only notifications or responses is accepted with 202.
            await send({"type": "http.response.start", "status": 202, "headers": [(b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
            return
        await _answer(send, 200, b"[" + b",".join(answers) + b"]")


def _scopes_needed(body: bytes, caller: CallerPolicy) -> tuple[str, ...] | None:
    """The scopes a single tools/call in `body` needs beyond the caller's grant (see `CallerPolicy.scopes_for_call`),
    or None."""
    if b"tools/call" not in body:
        return None
    try:
        message = pydantic_core.from_json(body)
    except ValueError:
        return None
    params = message.get("params") if isinstance(message, dict) and message.get("method") == "tools/call" else None
    if not isinstance(params, dict) or not isinstance(name := params.get("name"), str):
        return None
    arguments = params.get("arguments")
    return caller.scopes_for_call(name, arguments if isinstance(arguments, dict) else {})


def _declares_ui(envelope: Envelope) -> bool:
    """Whether an initialize request's capabilities declare MCP Apps."""
    params = envelope.params or {}
    return isinstance(params, Mapping) and client_supports_ui(params.get("capabilities"))


def _with_session(send: Send, session_id: str) -> Send:
    """`send` that adds `Mcp-Session-Id: session_id` to the response (MCP 2025-11-25 transports: a server MAY
    assign a session id in the response that carries the InitializeResult; the client sends it back each time)."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = [*message.get("headers", ()), (b"mcp-session-id", session_id.encode("ascii"))]
            message = {**message, "headers": headers}
        await send(message)

    return sending


_UNPARSED: Final = object()
_LEAN_PARAMS: Final = frozenset({"name", "arguments"})
