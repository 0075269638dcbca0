"""`Caller`: who is asking, as every rule of the caller policy sees it: the identity its REST credentials name, the
login and person an OAuth grant names, and the grant (client and scopes) it holds."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from gateway.requests import RequestInfo

__all__ = ["Caller"]


@dataclass(frozen=True, kw_only=True)
class Caller:
    """Who is asking: the transport, the REST headers its calls carry (empty over stdio until the operator gives
    some) and its grant (the OAuth `client_id` and `scopes`, None when the credentials carry none; the `subject`
    who logged in and the `login`, a stable name of the grant, None when the credentials name none). `request`
    is the MCP request itself (its HTTP headers, principal and peer)."""

    transport: Literal["http", "stdio", "in-process"]
    credentials: Mapping[str, str]
    scopes: frozenset[str] | None
    client_id: str | None = None
    subject: str | None = None
    login: str | None = None
    request: RequestInfo = field(repr=False, compare=False)

    @classmethod
    def of(cls, request: RequestInfo) -> Caller:
        """The caller of an MCP request: its principal's headers, and the `scopes`, `client_id`, `subject` and
        `login` it carries (`gateway.rest.credentials.Credentials` does; a value that is not text is none)."""
        principal = request.principal
        scopes = getattr(principal, "scopes", None)
        return cls(
            transport=request.transport,
            credentials=dict(principal) if isinstance(principal, Mapping) else {},
            scopes=frozenset(scopes) if isinstance(scopes, frozenset | set | tuple | list) else None,
            client_id=_text(principal, "client_id"),
            subject=_text(principal, "subject"),
            login=_text(principal, "login"),
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
        """Whose state this caller leaves on the server (tasks, streams, calls waiting for approval): a hash of its
        login (its credentials when it has none) and its grant, so every token of one login with the same scopes
        owns the same state, through refreshes and the identity provider's renewals of the credentials, while a
        narrower token of the same person owns none of a broader one's."""
        identity = ["login", self.login] if self.login is not None else sorted(self.credentials.items())
        return _digest(
            self.transport, identity, self.client_id, sorted(self.scopes) if self.scopes is not None else None
        )

    @functools.cached_property
    def person(self) -> str:
        """Whom the per-caller budgets count this caller as: a hash of the person who logged in (its subject), or
        of its login or credentials when they name none, and never of its client or scopes, so that narrower
        tokens, refreshes and other registered clients of one person share one set of budgets."""
        if self.subject is not None:
            identity: Sequence[object] = ["subject", self.subject]
        elif self.login is not None:
            identity = ["login", self.login]
        else:
            identity = sorted(self.credentials.items())
        return _digest(self.transport, identity)


def _digest(*parts: object) -> str:
    # A list of [name, value] pairs (credentials) never reads as ["login", ...] or ["subject", ...].
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:32]


def _text(principal: object, name: str) -> str | None:
    """The attribute `name` of `principal` when it is non-empty text; None otherwise."""
    value = getattr(principal, name, None)
    return value if isinstance(value, str) and value else None
