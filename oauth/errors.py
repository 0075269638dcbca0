"""Errors of the oauth package.

OAuthError
├── ConfigError        the server was configured with something it cannot serve (says what to fix)
├── StoreError         the token store failed or holds a record this version cannot read
│   └── StoreUnavailableError  the store cannot answer now (server down, file gone, disk full): the server's
│                              trouble, never the caller's token; answered 503 with Retry-After
├── ProtocolError      a request broke OAuth; answered with the RFC 6749 §5.2 error `code` and `description`
│   └── ClientDocumentError   a Client ID Metadata Document could not be fetched, is not acceptable, or a fetch
│                             budget refused to fetch it now (`refused_by`)
├── LoginError         the person at the login page could not be logged in (shown on the page)
├── ProviderUnavailableError  the identity provider cannot be reached or fails: answered 503 with Retry-After
├── ProviderRefusedError      the identity provider refused to renew a login: the grant ends
└── TokenError         an MCP request's access token is missing or not valid (answered 401 with `www_authenticate`)
"""

from __future__ import annotations

from typing import Literal

__all__ = [
    "ClientDocumentError",
    "ConfigError",
    "ErrorCode",
    "FetchBudget",
    "LoginError",
    "OAuthError",
    "ProtocolError",
    "ProviderRefusedError",
    "ProviderUnavailableError",
    "StoreError",
    "StoreUnavailableError",
    "TokenError",
]

ErrorCode = Literal[
    "invalid_request",
    "invalid_client",
    "invalid_grant",
    "unauthorized_client",
    "unsupported_grant_type",
    "unsupported_response_type",
    "unsupported_token_type",
    "invalid_scope",
    "invalid_target",
    "access_denied",
    "invalid_redirect_uri",
    "invalid_client_metadata",
    "server_error",
    "temporarily_unavailable",
]
"""The error codes of RFC 6749 §4.1.2.1 and §5.2, RFC 7009 §2.2.1, RFC 7591 §3.2.2 and RFC 8707 §2."""

FetchBudget = Literal["host", "address", "network", "overall"]
"""The budgets of metadata-document fetches (`oauth.cimd.FetchBudgets`): one requesting address's documents from one
host, that address's fetches, its network's, and the whole server's."""

_STATUS: dict[str, int] = {"invalid_client": 401, "server_error": 500, "temporarily_unavailable": 503}


class OAuthError(Exception):
    """Root of every error the oauth package raises."""


class ConfigError(OAuthError):
    """The OAuth server was configured with something it cannot serve."""


class StoreError(OAuthError):
    """The token store failed, or holds a record this version cannot read."""


class StoreUnavailableError(StoreError):
    """The token store cannot answer now: its server does not answer, its file is gone, its disk is full.

    The message is the one clients see ("the token store is unavailable; retry shortly"); `detail` says, for the
    operator's log, which store and what failed. `unreachable` is True when the store could not be reached at
    all (the server or the file), so that further attempts wait a moment (`oauth.outage.Outage`); False when one
    operation failed (a write to a full disk) and others may still work. `retry_after` is in seconds.
    """

    def __init__(self, detail: str, *, unreachable: bool, retry_after: int = 5) -> None:
        super().__init__("the token store is unavailable; retry shortly")
        self.detail = detail
        self.unreachable = unreachable
        self.retry_after = retry_after


class ProtocolError(OAuthError):
    """A request broke the protocol; `code` is the spec's error code, the message its `error_description`.

    `status` is the HTTP status of a JSON error response: 401 for `invalid_client` (RFC 6749 §5.2: then the
    client registers again), 500 for `server_error`, 503 for `temporarily_unavailable` (429 when the caller
    sent too many requests), 400 otherwise. `retry_after` (seconds) becomes a Retry-After header.
    """

    def __init__(
        self, code: ErrorCode, description: str, *, status: int | None = None, retry_after: int | None = None
    ) -> None:
        super().__init__(description)
        self.code: ErrorCode = code
        self.description = description
        self.status = status if status is not None else _STATUS.get(code, 400)
        self.retry_after = retry_after

    def body(self) -> dict[str, str]:
        """The JSON error response body (RFC 6749 §5.2)."""
        return {"error": self.code, "error_description": self.description}


class ClientDocumentError(ProtocolError):
    """A Client ID Metadata Document could not be fetched, or does not describe the client that names it.

    `invalid_client`, unless `refused_by` names the fetch budget that is spent: then the client is not at fault
    and may try again after `retry_after` seconds, so the error is `temporarily_unavailable` with status 429.
    """

    def __init__(self, description: str, *, refused_by: FetchBudget | None = None, retry_after: int = 60) -> None:
        if refused_by is None:
            super().__init__("invalid_client", description)
        else:
            super().__init__("temporarily_unavailable", description, status=429, retry_after=retry_after)
        self.refused_by = refused_by


class LoginError(OAuthError):
    """The login failed; the message is shown on the login page and says what to do."""


class ProviderUnavailableError(OAuthError):
    """The identity provider cannot be reached or answers with a server error: the server's trouble, not the
    person's. `detail` is for the operator's log; `retry_after` seconds, answered as a 503 to an MCP request (an
    exception with `retry_after` is the gateway's `Unavailability`)."""

    def __init__(self, detail: str, *, retry_after: int = 5) -> None:
        super().__init__("the identity provider is unavailable; retry shortly")
        self.detail = detail
        self.retry_after = retry_after


class ProviderRefusedError(OAuthError):
    """The identity provider refused to renew a login (the person's session there ended, or access was revoked):
    the grant ends and the person logs in again."""


class TokenError(OAuthError):
    """The access token of an MCP request is missing, or not one this server issued for this resource.

    Answered with HTTP 401 and `www_authenticate`, the RFC 6750 §3 challenge that tells the client where to
    log in. Whatever serves the MCP endpoint turns it into its own refusal (the gateway takes any exception
    with a `www_authenticate` string as one), so this package needs nothing from the gateway.
    """

    status = 401

    def __init__(self, message: str, *, www_authenticate: str) -> None:
        super().__init__(message)
        self.www_authenticate = www_authenticate
