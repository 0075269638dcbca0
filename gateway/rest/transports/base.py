"""The one interface both transports implement, and the headers every REST call is sent with."""

from __future__ import annotations

from typing import Protocol

from gateway.requests import RestContext
from gateway.rest.request import HttpResponse, RestRequest

__all__ = ["Transport", "outgoing_headers"]


class Transport(Protocol):
    """Sends the REST requests of function calls to one place, with each caller's context."""

    @property
    def where(self) -> str:
        """Where calls go, for messages: 'the app in-process' or the upstream's URL (never with credentials)."""
        ...

    async def send(self, request: RestRequest, context: RestContext) -> HttpResponse:
        """Send `request` with the context's headers and peer; the answer, whatever its status.

        Raises `ToolError` when there is no answer to give (the upstream cannot be reached or is too slow).
        """
        ...

    async def aclose(self) -> None:
        """Release pooled connections."""
        ...


def outgoing_headers(request: RestRequest, context: RestContext, content_type: str | None) -> list[tuple[str, str]]:
    """The argument headers, then the context's (credentials last, so an argument never overrides them), then
    the body's Content-Type; names lower-cased, each name once."""
    headers: dict[str, str] = {}
    for name, value in request.headers:
        headers[name.lower()] = value
    for name, value in context.headers:
        headers[name.lower()] = value
    if content_type is not None:
        headers["content-type"] = content_type
    return list(headers.items())
