"""The in-process transport: each call is one ASGI request to the wrapped app, with no HTTP in between."""

from __future__ import annotations

import logging
from typing import Any, Final
from urllib.parse import unquote

import httpx2

from gateway.requests import RestContext
from gateway.rest._asgi import asgi_exchange
from gateway.rest.request import HttpResponse, RestRequest, encoded_body, request_target
from gateway.rest.transports.base import outgoing_headers

__all__ = ["AsgiTransport"]

logger = logging.getLogger("gateway.calls")

_USER_AGENT: Final = b"mcp-gateway"
_BODY_METHODS: Final = frozenset({"POST", "PUT", "PATCH"})
#: What a debug error page shows; such a body never reaches the agent.
_TRACEBACK: Final = b"Traceback (most recent call last)"
_GENERIC_500: Final = b"Internal Server Error"


class AsgiTransport:
    """Calls the wrapped ASGI app in-process: the whole app (middleware, dependencies, auth, validation,
    exception handlers) sees each call as a REST request from the MCP caller's own peer.

    The request carries the caller's client address, scheme and Host (see `Peer`), `prefix` before each
    documented path, no Accept-Encoding (bodies come back uncompressed), and the lifespan `state`: the one the
    gateway started the app with, else the server's for the MCP request. An exception the app raises is the
    API's failure, not the gateway's: it is logged with its traceback, and the call answers what the app's
    own error handling sent (Starlette answers 500 before re-raising), or a bare 500 when it sent nothing.
    """

    def __init__(self, app: Any, *, prefix: str = "") -> None:
        self.app = app
        self.prefix = prefix
        #: Lifespan state of the wrapped app (ASGI lifespan spec 2.0) when the gateway runs its lifespan.
        self.state: dict[str, Any] | None = None

    @property
    def where(self) -> str:
        return "the app in-process"

    async def send(self, request: RestRequest, context: RestContext) -> HttpResponse:
        body, content_type = encoded_body(request)
        peer = context.peer
        headers: list[tuple[bytes, bytes]] = [(b"host", peer.host.encode("latin-1"))]
        present: set[bytes] = set()
        for name, value in outgoing_headers(request, context, content_type):
            raw = name.encode("latin-1")
            if raw == b"host":
                continue
            headers.append((raw, value.encode("latin-1")))
            present.add(raw)
        if b"accept" not in present:
            headers.append((b"accept", b"*/*"))
        if b"user-agent" not in present:
            headers.append((b"user-agent", _USER_AGENT))
        if body or request.method in _BODY_METHODS:
            headers.append((b"content-length", str(len(body)).encode()))
        path, _, query = request_target(request, self.prefix).partition(b"?")
        state = self.state if self.state is not None else peer.state
        scope: dict[str, Any] = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": request.method,
            "scheme": peer.scheme,
            "path": unquote(path.decode("ascii")),
            "raw_path": path,
            "query_string": query,
            "root_path": "",
            "headers": headers,
            "client": peer.client,
            "server": peer.server,
        }
        if state is not None:
            scope["state"] = dict(state)
        answer = await asgi_exchange(self.app, scope, body, head=request.method == "HEAD")
        status, content = answer.status, answer.body
        raised = answer.error is not None or not answer.complete
        if answer.error is not None:
            logger.error("the app raised while answering %s %s", request.method, scope["path"], exc_info=answer.error)
        elif not answer.complete:
            logger.error("the app returned without a complete answer to %s %s", request.method, scope["path"])
        if status is None or not answer.complete:
            return _bare_500()
        folded: dict[str, str] = {}
        for raw_name, raw_value in answer.headers:
            name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
            folded[name] = f"{folded[name]}, {value}" if name in folded else value
        if raised and _TRACEBACK in content:
            # A debug error page: what the app would show a browser, not an agent.
            content = _GENERIC_500
            folded["content-type"] = "text/plain; charset=utf-8"
        return HttpResponse(
            status=status,
            reason=httpx2.codes.get_reason_phrase(status),
            headers=folded,
            body=content,
            raised=raised,
        )

    async def aclose(self) -> None:
        return None


def _bare_500() -> HttpResponse:
    """What an ASGI server answers when the app fails before it starts answering."""
    return HttpResponse(
        status=500,
        reason="Internal Server Error",
        headers={"content-type": "text/plain; charset=utf-8"},
        body=_GENERIC_500,
        raised=True,
    )
