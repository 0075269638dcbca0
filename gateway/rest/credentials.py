"""Turn the bearer token of an MCP request into the headers the REST API authenticates with."""

from __future__ import annotations

import base64
import logging
import re
import string
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import Protocol, runtime_checkable

from gateway.errors import ConfigError, CredentialError, UnavailableError

logger = logging.getLogger("gateway")

__all__ = [
    "AuthFunc",
    "Authentication",
    "CredentialRefusal",
    "Credentials",
    "Unavailability",
    "bearer_passthrough",
    "bearer_to_headers",
    "header_templates",
    "refusal",
]

AuthFunc = Callable[[str | None], Awaitable[Mapping[str, str]]]
"""Maps the MCP request's bearer token (None without a well-formed one) to REST headers.

Raise `gateway.errors.CredentialError`, or any `CredentialRefusal`, to refuse the token: the client gets 401
with `WWW-Authenticate`. Raise `gateway.errors.UnavailableError`, or any `Unavailability`, when the token cannot
be checked now (a store is down): the client gets 503 with Retry-After and keeps its token. Any other exception
is a fault of the server's: 500, logged.
"""


@runtime_checkable
class CredentialRefusal(Protocol):
    """An exception that refuses a token and says how to get a good one: a `www_authenticate` challenge (RFC
    6750 §3). Auth functions from packages that know nothing of the gateway raise these (e.g.
    `oauth.errors.TokenError`); the gateway answers them exactly as a `CredentialError`."""

    www_authenticate: str


@runtime_checkable
class Unavailability(Protocol):
    """An exception that says the token cannot be checked now, through no fault of the caller's (e.g.
    `oauth.errors.StoreUnavailableError`, a token store that does not answer): try again after `retry_after`
    seconds. The gateway answers it exactly as an `UnavailableError`."""

    retry_after: int


class Credentials(dict[str, str]):
    """REST headers an auth function returned, with the OAuth grant of the token: its `scopes` (None when the
    credentials carry none), the `client_id` it was issued to, the `subject` (the person who logged in) and the
    `login` (a stable name of the grant, the same for every token of one login; None when unknown). The caller
    policy reads the grant; the REST calls carry the headers."""

    scopes: frozenset[str] | None
    client_id: str | None
    subject: str | None
    login: str | None

    def __init__(
        self,
        headers: Mapping[str, str],
        scopes: Collection[str] | None = None,
        client_id: str | None = None,
        *,
        subject: str | None = None,
        login: str | None = None,
        step_up: Callable[[Sequence[str]], str] | None = None,
    ) -> None:
        super().__init__(headers)
        self.scopes = frozenset(scopes) if scopes is not None else None
        self.client_id = client_id
        self.subject = subject
        self.login = login
        self._step_up = step_up

    @classmethod
    def of(cls, headers: Mapping[str, str]) -> Credentials:
        """`headers` with the grant they carry: `scopes` (any collection of strings), `client_id`, `subject` and
        `login` attributes, and an `insufficient_scope(needed)` method giving the challenge that asks for more, as
        `oauth.ScopedHeaders` has them, or none (a value that is not text is none)."""
        scopes = getattr(headers, "scopes", None)
        if isinstance(scopes, str) or not isinstance(scopes, Collection):
            scopes = None
        step_up = getattr(headers, "insufficient_scope", None)
        return cls(
            dict(headers),
            [str(scope) for scope in scopes] if scopes is not None else None,
            _text(headers, "client_id"),
            subject=_text(headers, "subject"),
            login=_text(headers, "login"),
            step_up=step_up if callable(step_up) else None,
        )

    def insufficient_scope(self, needed: Sequence[str]) -> str:
        """The WWW-Authenticate value of a 403 that asks for `needed` scopes on top of those granted (RFC 6750
        §3.1; MCP authorization, scope step-up)."""
        if self._step_up is not None:
            return str(self._step_up(needed))
        scopes = " ".join(dict.fromkeys((*sorted(self.scopes or ()), *needed)))
        return f'Bearer error="insufficient_scope", scope="{scopes}"'


class Authentication:
    """The auth function applied to requests: an MCP request's bearer token becomes its `Credentials`, a
    `CredentialError` (answered 401 with the challenge) or an `UnavailableError` (503, Retry-After)."""

    def __init__(self, auth: AuthFunc) -> None:
        self.auth = auth

    async def __call__(self, headers: Mapping[str, str]) -> Credentials:
        """The credentials of a request with `headers` (names lower-cased); a refusal (`CredentialError`, or any
        exception with a `www_authenticate` challenge) raised as a `CredentialError`."""
        value = headers.get("authorization", "")
        scheme, _, token = value.partition(" ")
        # RFC 6750 §2.1: only a well-formed `Bearer <token>` names a token.
        return await self.of_token(token.strip() if scheme.lower() == "bearer" and token.strip() else None)

    async def of_token(self, token: str | None) -> Credentials:
        """The credentials of `token` (None: no token was sent); CredentialError when the auth function refuses,
        UnavailableError when it cannot check the token now; any other exception of the auth function as it is
        (the server's fault, not the caller's)."""
        try:
            return Credentials.of(await self.auth(token))
        except Exception as error:
            refused = refusal(error)
            if refused is error:
                raise
            if refused is not None:
                raise refused from None
            if isinstance(error, UnavailableError):
                raise
            if isinstance(error, Unavailability) and isinstance(error.retry_after, int):
                raise UnavailableError(str(error), retry_after=error.retry_after) from error
            raise


def _text(headers: Mapping[str, str], name: str) -> str | None:
    """The attribute `name` of `headers` when it is non-empty text; None otherwise."""
    value = getattr(headers, name, None)
    return value if isinstance(value, str) and value else None


def refusal(error: BaseException) -> CredentialError | None:
    """The `CredentialError` an auth function's exception stands for, or None when it is not a refusal."""
    if isinstance(error, CredentialError):
        return error
    if isinstance(error, CredentialRefusal) and isinstance(error.www_authenticate, str):
        return CredentialError(str(error), www_authenticate=error.www_authenticate)
    return None


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


#: The placeholders a header template may use.
_PLACEHOLDERS = frozenset({"token", "key", "secret", "basic"})
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # an RFC 9110 §5.6.2 token


def header_templates(templates: Sequence[str]) -> AuthFunc:
    """Headers built from the bearer token by templates such as `X-API-Key: {token}`, `Authorization: Basic
    {basic}` (the token, e.g. `user:password`, base64-encoded as RFC 7617 wants) or `X-Key: {key}` with
    `X-Secret: {secret}` (the token split at its first ':'); no token, no headers.

    ConfigError for a template that is not `Name: value` or uses another placeholder; a token without ':'
    is refused (401) when a template needs `{key}` or `{secret}`.
    """
    if isinstance(templates, str):
        raise ConfigError("header templates are a list, e.g. ['X-API-Key: {token}'], not one string")
    parsed: list[tuple[str, str]] = []
    for template in templates:
        name, separator, value = template.partition(":")
        name, value = name.strip(), value.strip()
        if not separator or not _HEADER_NAME.match(name) or not value:
            raise ConfigError(f"header template {template!r} must be 'Name: value', e.g. 'X-API-Key: {{token}}'")
        try:
            fields = {field for _, field, _, _ in string.Formatter().parse(value) if field is not None}
        except ValueError as error:
            raise ConfigError(f"header template {template!r}: {error}") from None
        unknown = fields - _PLACEHOLDERS
        if unknown:
            raise ConfigError(
                f"header template {template!r} uses {', '.join(sorted(map(repr, unknown)))}; the placeholders are "
                "{token}, {key}, {secret} and {basic}"
            )
        parsed.append((name, value))
    if not parsed:
        raise ConfigError("give at least one header template, e.g. 'X-API-Key: {token}'")
    split = any("{key}" in value or "{secret}" in value for _, value in parsed)

    async def auth(token: str | None) -> Mapping[str, str]:
        if not token:
            return {}
        key, separator, secret = token.partition(":")
        if split and (not separator or not key or not secret):
            raise CredentialError(
                "the bearer token must be 'key:secret' for this API",
                www_authenticate='Bearer error="invalid_token", error_description="expected key:secret"',
            )
        values = {"token": token, "key": key, "secret": secret, "basic": base64.b64encode(token.encode()).decode()}
        headers = {name: value.format(**values) for name, value in parsed}
        if any(_CONTROL.search(value) for value in headers.values()):
            raise CredentialError("the bearer token holds characters no header can carry")
        return headers

    return auth


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
