"""`Caller`: who is asking, as every rule of the caller policy sees it: the identity its REST credentials name and
the OAuth grant (client and scopes) it holds."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Literal

from gateway.requests import RequestInfo

__all__ = ["Caller", "Credentials"]


class Credentials(dict[str, str]):
    """REST headers an auth function returned, with the OAuth grant of the token: its `scopes` (None when the
    credentials carry none) and the `client_id` it was issued to (None when unknown)."""

    scopes: frozenset[str] | None
    client_id: str | None

    def __init__(
        self, headers: Mapping[str, str], scopes: Collection[str] | None = None, client_id: str | None = None
    ) -> None:
        super().__init__(headers)
        self.scopes = frozenset(scopes) if scopes is not None else None
        self.client_id = client_id

    @classmethod
    def of(cls, headers: Mapping[str, str]) -> Credentials:
        """`headers` with the grant they carry: `scopes` (any collection of strings) and `client_id` attributes,
        as `oauth.ScopedHeaders` has them, or none."""
        scopes = getattr(headers, "scopes", None)
        if isinstance(scopes, str) or not isinstance(scopes, Collection):
            scopes = None
        client_id = getattr(headers, "client_id", None)
        return cls(
            dict(headers),
            [str(scope) for scope in scopes] if scopes is not None else None,
            client_id if isinstance(client_id, str) else None,
        )


@dataclass(frozen=True, kw_only=True)
class Caller:
    """Who is asking: the transport, the REST headers its calls carry (empty over stdio until the operator gives
    some) and its grant (the OAuth `client_id` and `scopes`, None when the credentials carry none). `request` is
    the MCP request itself (its HTTP headers, principal and peer)."""

    transport: Literal["http", "stdio", "in-process"]
    credentials: Mapping[str, str]
    scopes: frozenset[str] | None
    client_id: str | None = None
    request: RequestInfo = field(repr=False, compare=False)

    @classmethod
    def of(cls, request: RequestInfo) -> Caller:
        """The caller of an MCP request."""
        principal = request.principal
        credentials = principal if isinstance(principal, Credentials) else None
        return cls(
            transport=request.transport,
            credentials=dict(principal) if isinstance(principal, Mapping) else {},
            scopes=credentials.scopes if credentials is not None else None,
            client_id=credentials.client_id if credentials is not None else None,
            request=request,
        )

    @classmethod
    def anonymous(cls, request: RequestInfo) -> Caller:
        """A caller without credentials whose auth function refused it: its grant is empty, so scopes reach
        nothing of the catalog for it."""
        return cls(transport=request.transport, credentials={}, scopes=frozenset(), request=request)

    @functools.cached_property
    def owner(self) -> str:
        """Whose state this caller leaves on the server (tasks, streams): a hash of its identity and its grant, so
        a narrower token of the same person owns none of a broader one's state."""
        material = json.dumps(
            [
                self.transport,
                sorted(self.credentials.items()),
                self.client_id,
                sorted(self.scopes) if self.scopes is not None else None,
            ]
        )
        return hashlib.sha256(material.encode()).hexdigest()[:32]
