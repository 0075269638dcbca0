"""`RestContexts`: what the REST calls made for one MCP request carry: the headers the gateway passes on or
rebuilds as the callers' proxy, then the caller's credentials, and the caller's network peer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from gateway.requests import LOCAL_PEER, RequestInfo, RestContext, TrustedProxies

__all__ = ["RestContexts"]

#: The MCP request's headers that its REST calls carry as they are.
_PASSED_ON: Final = ("x-request-id", "traceparent", "tracestate")


class RestContexts:
    """Makes each request's `RestContext`: forwarded headers believed only from `proxies`, credentials last.

    Over stdio there are no per-request credentials: `stdio_headers` are the REST headers every stdio call
    carries, and `stdio_hint` tells the agent, when the API refuses them, where they come from and how to fix them.
    """

    def __init__(self, proxies: TrustedProxies | None = None) -> None:
        self.proxies = proxies or TrustedProxies()
        self.stdio_headers: tuple[tuple[str, str], ...] = ()
        self.stdio_hint = ""
        self.stdio_given = True

    def use_stdio_credentials(self, headers: Mapping[str, str], *, hint: str = "", given: bool = True) -> None:
        """The REST headers every stdio call carries, what to tell the agent when the API refuses them, and whether
        the server was given credentials at all."""
        self.stdio_headers = tuple(headers.items())
        self.stdio_hint = hint
        self.stdio_given = given

    async def __call__(self, request: RequestInfo) -> RestContext:
        """What the REST calls of `request` carry."""
        source = request.headers or {}
        headers: list[tuple[str, str]] = []
        # Passed on unchanged, so the API's work joins the caller's request and trace (W3C Trace Context);
        # with OpenTelemetry on, each call's own span replaces the traceparent (gateway.observability).
        headers.extend((name, source[name]) for name in _PASSED_ON if name in source)
        peer = request.peer or LOCAL_PEER
        if request.peer is not None and peer.client is not None:
            # The gateway is the proxy of these calls: it appends the peer it saw, and keeps what came before
            # only from a proxy the operator trusts (so a caller cannot claim another address).
            address = peer.client[0]
            trusted = address in self.proxies
            chain = source.get("x-forwarded-for", "").strip() if trusted else ""
            headers.append(("x-forwarded-for", f"{chain}, {address}" if chain else address))
            proto = source.get("x-forwarded-proto", "").strip() if trusted else ""
            headers.append(("x-forwarded-proto", proto or peer.scheme))
        principal = request.principal
        if isinstance(principal, Mapping):
            headers.extend((str(k), str(v)) for k, v in principal.items())
        elif request.transport == "stdio":
            headers.extend(self.stdio_headers)
            return RestContext(
                headers=tuple(headers), peer=peer, credential_hint=self.stdio_hint, credentials_given=self.stdio_given
            )
        return RestContext(headers=tuple(headers), peer=peer)
