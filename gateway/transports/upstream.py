"""The upstream transport: each call is an HTTP request to the API's base URL, over one pooled client."""

from __future__ import annotations

import re
from typing import Final

import httpx2

from gateway.caller import RestContext
from gateway.errors import ToolError
from gateway.rest import HttpResponse, RestRequest, encoded_body, request_target
from gateway.transports.base import outgoing_headers

__all__ = ["UpstreamTransport", "shown_url"]

#: The userinfo of a URL inside a message (`//user:password@`), which is never shown.
_USERINFO: Final = re.compile(r"//[^/@\s]*@")


def shown_url(url: str | httpx2.URL) -> str:
    """A URL fit for messages and logs: scheme, host, port and path, never userinfo or a query."""
    parsed = httpx2.URL(str(url))
    port = f":{parsed.port}" if parsed.port else ""
    return f"{parsed.scheme}://{parsed.host}{port}{parsed.path}".rstrip("/")


class UpstreamTransport:
    """Calls a remote REST API at `base_url` (its base path kept); redirects are answered, never followed.

    A function with a server of its own (`RestRequest.base`) is called there instead.
    """

    def __init__(self, base_url: str, *, timeout: float) -> None:
        self.base = httpx2.URL(base_url.rstrip("/"))
        self._client = httpx2.AsyncClient(
            transport=httpx2.AsyncHTTPTransport(retries=0), timeout=timeout, follow_redirects=False
        )

    @property
    def where(self) -> str:
        return shown_url(self.base)

    async def send(self, request: RestRequest, context: RestContext) -> HttpResponse:
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
