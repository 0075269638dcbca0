"""The upstream transport: each call is an HTTP request to the API's base URL, over one pooled client."""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Final
from urllib.parse import urlsplit

import httpx2

from gateway.errors import ToolError
from gateway.requests import RestContext
from gateway.rest.request import HttpResponse, RestRequest, encoded_body, request_target
from gateway.rest.transports.base import outgoing_headers

__all__ = ["UpstreamTransport", "plain_http_away", "shown_url", "url_host"]

#: Hosts that plain http reaches without leaving the machine.
_LOOPBACK: Final = frozenset({"127.0.0.1", "localhost", "::1"})
#: The userinfo of a URL inside a message (`//user:password@`), which is never shown.
_USERINFO: Final = re.compile(r"//[^/@\s]*@")


def shown_url(url: str | httpx2.URL) -> str:
    """A URL fit for messages and logs: scheme, host, port and path, never userinfo or a query."""
    parts = urlsplit(str(url))
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path}".rstrip("/")


def plain_http_away(url: str) -> bool:
    """True when `url` is not https and names a host other than this machine: what it carries crosses a network
    in the clear."""
    parts = urlsplit(url)
    return parts.scheme != "https" and parts.hostname not in _LOOPBACK


def url_host(url: str) -> str:
    """The host of a URL as an operator names it: lower-case `name` or `name:port`, without userinfo."""
    return urlsplit(url).netloc.rpartition("@")[2].lower()


class UpstreamTransport:
    """Calls a remote REST API at `base_url` (its base path kept); redirects are answered, never followed.

    A function with a server of its own (`RestRequest.base`: uploads.github.com beside api.github.com) is
    called there only when the operator allows that host (`other_hosts`) and over https (or to this machine):
    every call carries the caller's credentials, and a document (perhaps fetched from a URL) must not send
    them elsewhere.
    """

    def __init__(self, base_url: str, *, timeout: float, other_hosts: Collection[str] = ()) -> None:
        self.base = httpx2.URL(base_url)
        self.other_hosts = frozenset(host.lower() for host in other_hosts)
        self._client = httpx2.AsyncClient(
            transport=httpx2.AsyncHTTPTransport(retries=0), timeout=timeout, follow_redirects=False
        )

    @property
    def where(self) -> str:
        return shown_url(self.base)

    def refusal(self, base: str) -> str | None:
        """Why calls to a function's own server `base` are not sent, or None when they may be."""
        host = url_host(base)
        if host not in self.other_hosts:
            return (
                f"it is served at {host}, another host than the API's, which this gateway does not call with "
                f"callers' credentials; the operator can allow it with other_hosts=[{host!r}] (--other-host {host})"
            )
        if plain_http_away(base):
            return f"it is served at {shown_url(base)}, and credentials go to other hosts over https only"
        return None

    async def send(self, request: RestRequest, context: RestContext) -> HttpResponse:
        if request.base:
            refused = self.refusal(request.base)
            if refused is not None:
                raise ToolError(f"This function cannot be called: {refused}.")
        base = httpx2.URL(request.base) if request.base else self.base
        url = base.copy_with(raw_path=request_target(request, base.raw_path.decode()))
        body, content_type = encoded_body(request)
        try:
            response = await self._client.request(
                request.method,
                url,
                headers=outgoing_headers(request, context, content_type),
                content=body or None,
            )
        except httpx2.TimeoutException:
            raise ToolError(
                f"the API at {shown_url(base)} did not answer in time; retry later or ask for less"
            ) from None
        except httpx2.TransportError as error:
            # Not the API's answer: the gateway could not reach it (wrong upstream or servers, API down).
            reason = _USERINFO.sub("//", str(error)) or type(error).__name__
            raise ToolError(
                f"could not reach the API at {shown_url(base)} ({reason}); retry later, and if it persists the "
                "gateway's upstream URL may be wrong"
            ) from None
        return HttpResponse(
            status=response.status_code,
            reason=response.reason_phrase,
            headers={k.lower(): v for k, v in response.headers.items()},
            body=response.content,
        )

    async def aclose(self) -> None:
        await self._client.aclose()
