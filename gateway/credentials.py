"""Turn the bearer token of an MCP request into the headers the REST API authenticates with."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from gateway.errors import ConfigError, CredentialError

__all__ = ["AuthFunc", "bearer_passthrough", "bearer_to_headers"]

AuthFunc = Callable[[str | None], Awaitable[Mapping[str, str]]]
"""Maps the MCP request's bearer token (None without a well-formed one) to REST headers.

Raise `gateway.errors.CredentialError` to refuse the token: the client gets 401 with `WWW-Authenticate`.
"""


def bearer_passthrough() -> AuthFunc:
    """Forward the bearer token unchanged as `Authorization: Bearer <token>`; no token, no headers. The default."""

    async def auth(token: str | None) -> Mapping[str, str]:
        return {"authorization": f"Bearer {token}"} if token else {}

    return auth


def bearer_to_headers(key_header: str, secret_header: str) -> AuthFunc:
    """Split a `key:secret` bearer token at the first ':' into two headers; a token without ':' is refused."""
    for header in (key_header, secret_header):
        if not header or any(char in header for char in ": \r\n"):
            raise ConfigError(f"bearer_to_headers needs two header names, got {header!r}")

    async def auth(token: str | None) -> Mapping[str, str]:
        if not token:
            return {}
        key, separator, secret = token.partition(":")
        if not separator or not key or not secret:
            raise CredentialError(
                f"the bearer token must be 'key:secret' for this API ({key_header} and {secret_header})",
                www_authenticate='Bearer error="invalid_token", error_description="expected key:secret"',
            )
        return {key_header: key, secret_header: secret}

    return auth
