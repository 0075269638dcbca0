"""`Caller`: who is asking, as every rule of the caller policy sees it: the identity its REST credentials name and
the OAuth grant (client and scopes) it holds."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from gateway.requests import RequestInfo

__all__ = ["Caller"]


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
        """The caller of an MCP request: its principal's headers, and the `scopes` and `client_id` it carries
        (`gateway.rest.credentials.Credentials` does)."""
        principal = request.principal
        scopes = getattr(principal, "scopes", None)
        client_id = getattr(principal, "client_id", None)
        return cls(
            transport=request.transport,
            credentials=dict(principal) if isinstance(principal, Mapping) else {},
            scopes=frozenset(scopes) if isinstance(scopes, frozenset | set | tuple | list) else None,
            client_id=client_id if isinstance(client_id, str) else None,
            request=request,
        )

    @classmethod
    def anonymous(cls, request: RequestInfo) -> Caller:
        """A caller without credentials whose auth function refused it: its grant is empty, so scopes reach
        nothing of the catalog for it."""
        return cls(transport=request.transport, credentials={}, scopes=frozenset(), request=request)

    @property
    def identified(self) -> bool:
        """Whether the gateway can tell this caller from others: by its credentials, or by its transport (stdio
        and in-process serve one caller). Over HTTP without credentials it cannot: a header such as
        `Mcp-Session-Id` is the client's to choose, so every caller without credentials is one caller."""
        return self.transport != "http" or bool(self.credentials)

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
