"""Request parsing and JSON responses shared by the token, revocation and registration endpoints."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, Final
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import JSONResponse

from oauth.addresses import parsed_address
from oauth.config import Network
from oauth.errors import ProtocolError

__all__ = [
    "NO_STORE",
    "client_address",
    "error_response",
    "json_response",
    "read_form",
    "read_json",
    "single_values",
]

NO_STORE: Final = {"Cache-Control": "no-store", "Pragma": "no-cache"}
"""RFC 6749 §5.1: responses carrying tokens or credentials are never cached."""
MAX_BODY: Final = 16 * 1024


def single_values(items: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The parameters as a dict; ProtocolError when one is given twice (RFC 6749 §3.1 and §3.2)."""
    values: dict[str, str] = {}
    for name, value in items:
        if name in values:
            raise ProtocolError("invalid_request", f"the parameter {name!r} is given more than once")
        values[name] = value
    return values


async def _body(request: Request) -> bytes:
    declared = request.headers.get("content-length", "0")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise ProtocolError("invalid_request", f"the request body is larger than {MAX_BODY} bytes")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise ProtocolError("invalid_request", f"the request body is larger than {MAX_BODY} bytes")
    return body


async def read_form(request: Request) -> dict[str, str]:
    """The application/x-www-form-urlencoded body of a POST (RFC 6749 §3.2), each parameter once."""
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/x-www-form-urlencoded":
        raise ProtocolError(
            "invalid_request", f"send the parameters as application/x-www-form-urlencoded, not {content_type!r}"
        )
    try:
        text = (await _body(request)).decode()
        return single_values(parse_qsl(text, keep_blank_values=True, strict_parsing=False))
    except UnicodeDecodeError:
        raise ProtocolError("invalid_request", "the request body is not UTF-8") from None


async def read_json(request: Request) -> Any:
    """The JSON body of a POST (RFC 7591 §3.1)."""
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/json":
        raise ProtocolError("invalid_client_metadata", f"send the metadata as application/json, not {content_type!r}")
    try:
        return json.loads(await _body(request))
    except ValueError:
        raise ProtocolError("invalid_client_metadata", "the request body is not valid JSON") from None


def json_response(body: Any, *, status: int = 200) -> JSONResponse:
    """A JSON response that no cache keeps."""
    return JSONResponse(body, status_code=status, headers=NO_STORE)


def error_response(error: ProtocolError, *, basic_challenge: bool = False) -> JSONResponse:
    """The JSON error response of RFC 6749 §5.2; a 401 asks for Basic credentials when the client used them."""
    response = json_response(error.body(), status=error.status)
    if error.status == 401 and basic_challenge:
        response.headers["WWW-Authenticate"] = 'Basic realm="oauth"'
    if error.retry_after is not None:
        response.headers["Retry-After"] = str(error.retry_after)
    return response


def client_address(request: Request, trusted_proxies: Sequence[Network]) -> str:
    """The address a request comes from, for rate limits: the connection's peer, or, when the peer is one of
    `trusted_proxies`, the nearest address in `X-Forwarded-For` that is not a trusted proxy.

    Each proxy appends the address it was connected from, so the entries right of the client are the proxies'
    own; anything left of the first untrusted entry is what the client claimed and is never read.
    """
    peer = request.client.host if request.client else "unknown"
    address = parsed_address(peer)
    if address is None or not any(address in network for network in trusted_proxies):
        return peer
    hops = [hop.strip() for value in request.headers.getlist("x-forwarded-for") for hop in value.split(",")]
    hops = [hop for hop in hops if hop]
    for hop in reversed(hops):
        forwarded = parsed_address(hop)
        if forwarded is None or not any(forwarded in network for network in trusted_proxies):
            return str(forwarded) if forwarded is not None else hop
    # Every hop is a trusted address: the first of them is where the request started.
    return hops[0] if hops else peer
