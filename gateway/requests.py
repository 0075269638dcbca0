"""Who is calling and from where: the MCP request's headers, principal and network peer, and what its REST calls
carry (`RestContext`)."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal

from gateway.errors import ConfigError

__all__ = ["LOCAL_PEER", "Peer", "RequestInfo", "RestContext", "TrustedProxies"]


@dataclass(frozen=True, kw_only=True)
class Peer:
    """The network side of an MCP request, which its in-process REST calls present to the app as their own.

    `client` is the address the server saw (after its own proxy-header handling), `scheme` and `server` as in
    the ASGI scope, `host` the Host header. `state` is the server's lifespan state for the request (ASGI
    lifespan spec 2.0), passed on when the gateway does not run the app's lifespan itself.
    """

    client: tuple[str, int] | None
    scheme: str = "http"
    server: tuple[str, int | None] | None = None
    host: str = "localhost"
    state: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_scope(cls, scope: Mapping[str, Any], host: str | None) -> Peer:
        """The peer of an ASGI HTTP scope and its Host header."""
        client = scope.get("client")
        server = scope.get("server")
        state = scope.get("state")
        return cls(
            client=(str(client[0]), int(client[1])) if client else None,
            scheme=str(scope.get("scheme") or "http"),
            server=(str(server[0]), server[1]) if server else None,
            host=host or (f"{server[0]}" if server else "localhost"),
            state=state if isinstance(state, Mapping) else None,
        )


LOCAL_PEER: Final = Peer(client=("127.0.0.1", 0), scheme="http", server=("localhost", None), host="localhost")
"""The peer of calls that come from this machine without a network request: stdio, and the Python API."""


@dataclass(frozen=True)
class TrustedProxies:
    """The proxies whose `X-Forwarded-For` the gateway keeps: addresses and networks (`10.0.0.0/8`), or `*`."""

    networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()
    everyone: bool = False

    @classmethod
    def parse(cls, entries: Sequence[str]) -> TrustedProxies:
        """From addresses, networks and `*`; ConfigError naming an entry that is none of them."""
        if isinstance(entries, str):
            raise ConfigError("trusted_proxies is a list of addresses or networks, not one string")
        networks = []
        everyone = False
        for entry in entries:
            text = entry.strip()
            if text == "*":
                everyone = True
                continue
            try:
                networks.append(ipaddress.ip_network(text, strict=False))
            except ValueError:
                raise ConfigError(
                    f"trusted proxy {entry!r} is not an IP address, a network such as 10.0.0.0/8, or '*'"
                ) from None
        return cls(tuple(networks), everyone)

    def origin(self, peer: str, forwarded_for: str | None) -> str:
        """The address a request comes from: `peer`, or, when the peer is one of these proxies, the nearest address
        in `X-Forwarded-For` that is not (each proxy appends the address it was connected from, so what stands
        left of the first untrusted entry is only what the client claimed)."""
        if peer not in self:
            return peer
        hops = [hop.strip() for hop in (forwarded_for or "").split(",") if hop.strip()]
        for hop in reversed(hops):
            if hop not in self:
                return hop
        return hops[0] if hops else peer

    def __contains__(self, address: object) -> bool:
        if self.everyone:
            return True
        if not isinstance(address, str) or not self.networks:
            return False
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in self.networks)


def _frozen_headers(headers: Mapping[str, str] | None) -> Mapping[str, str] | None:
    if headers is None:
        return None
    return MappingProxyType({name.lower(): value for name, value in headers.items()})


@dataclass(frozen=True, kw_only=True)
class RequestInfo:
    """Who is calling: the HTTP headers of the MCP request (names lower-cased), or none over stdio.

    `principal` is what the endpoint's `authenticate` hook returned for these headers (None without a hook,
    and always None over stdio). `peer` is where the request came from (None over stdio and in-process).
    """

    transport: Literal["http", "stdio", "in-process"]
    headers: Mapping[str, str] | None = None
    principal: object = None
    peer: Peer | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "headers", _frozen_headers(self.headers))

    @property
    def bearer_token(self) -> str | None:
        """The token of a well-formed `Authorization: Bearer <token>` header, else None (RFC 6750 §2.1)."""
        value = (self.headers or {}).get("authorization", "")
        scheme, _, token = value.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return None
        return token

    @property
    def forwarded_for(self) -> str | None:
        """The `X-Forwarded-For` header the caller sent (the gateway rebuilds it for the REST API)."""
        return (self.headers or {}).get("x-forwarded-for")

    @property
    def request_id(self) -> str | None:
        """The `X-Request-Id` header, passed on to the REST API unchanged."""
        return (self.headers or {}).get("x-request-id")


#: The statuses that refuse the credentials a call carried; without any, also those that refuse a missing key.
_REFUSALS: Final = frozenset({401})
_REFUSALS_WITHOUT_CREDENTIALS: Final = frozenset({401, 403, 407})


@dataclass(frozen=True, kw_only=True)
class RestContext:
    """What every REST call made for one caller carries: headers (credentials last) and the caller's peer.

    `credential_hint` says where this caller's credentials come from, for the answer to a refusal ('' for the
    general wording); `credentials_given` is False when the caller has none to send (see `refusal_hint`).
    """

    headers: tuple[tuple[str, str], ...] = ()
    peer: Peer = LOCAL_PEER
    credential_hint: str = ""
    credentials_given: bool = True

    def refusal_hint(self, status: int) -> str:
        """`credential_hint` for an answer with `status` that refuses the credentials, else ''.

        A 401 refuses them (RFC 9110 §15.5.2). Without any credentials, a 403 (many APIs answer a missing key so)
        and a 407 (a proxy's) are refusals too.
        """
        refusals = _REFUSALS if self.credentials_given else _REFUSALS_WITHOUT_CREDENTIALS
        return self.credential_hint if status in refusals else ""

    @classmethod
    def of(cls, headers: Mapping[str, str] | Sequence[tuple[str, str]], peer: Peer = LOCAL_PEER) -> RestContext:
        """A context from headers given as a mapping or as pairs."""
        pairs = headers.items() if isinstance(headers, Mapping) else headers
        return cls(headers=tuple((str(name), str(value)) for name, value in pairs), peer=peer)
