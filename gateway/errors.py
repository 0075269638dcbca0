"""Errors of the gateway package.

GatewayError
├── ConfigError        construction was given something it cannot serve (says what to fix)
│   └── MissingExtraError  a feature was configured without the extra it needs (names the pip command)
├── CredentialError    the caller's bearer token was rejected (answered as HTTP 401)
├── UnavailableError   what checks the caller's credentials cannot answer now, through no fault of the caller's
│                      (a token store that is down): answered as HTTP 503 with Retry-After, never a challenge
├── ToolError          a tool call failed in a way the agent can correct (isError result)
│   ├── ArgumentError  arguments do not fit the function's input schema
│   └── RestError      the REST API answered with an error status
├── RequestError       a resources/*, prompts/* or completion/complete request names what does not exist
│                      (answered as JSON-RPC -32602 with the message and `data`)
└── LimitError         a budget of the caller policy is spent: names the limit and what to do
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "ArgumentError",
    "ConfigError",
    "CredentialError",
    "GatewayError",
    "LimitError",
    "MissingExtraError",
    "RequestError",
    "RestError",
    "ToolError",
    "UnavailableError",
]


class GatewayError(Exception):
    """Root of every error the gateway raises."""


class ConfigError(GatewayError):
    """The gateway was configured with something it cannot serve."""


class MissingExtraError(ConfigError):
    """A feature was configured without the extra it needs (see gateway.extras); `extra` names it."""

    def __init__(self, message: str, *, extra: str) -> None:
        super().__init__(message)
        self.extra = extra


class CredentialError(GatewayError):
    """The MCP request's credentials are not accepted; the transport answers 401 with WWW-Authenticate."""

    def __init__(self, message: str = "invalid or missing credentials", *, www_authenticate: str = "Bearer") -> None:
        super().__init__(message)
        self.www_authenticate = www_authenticate


class UnavailableError(GatewayError):
    """The credentials cannot be checked now (a store is down): the server's trouble, not the caller's token.

    The transport answers 503 with `Retry-After: retry_after` and the message, without a Bearer challenge, so a
    client keeps its token and tries again instead of sending the person through a new login.
    """

    def __init__(self, message: str, *, retry_after: int = 5) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ToolError(GatewayError):
    """A tool call failed; the message is written for the agent and says what to do next."""


class ArgumentError(ToolError):
    """The arguments of a call do not fit; `args` names the arguments at fault that the message lists."""

    def __init__(self, message: str, *, args: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.arg_names = tuple(args)


class RestError(ToolError):
    """The REST API answered with an error status; `status` and `body` are what it said."""

    def __init__(self, message: str, *, status: int, body: object) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


class RequestError(GatewayError):
    """A resource, prompt or completion request the endpoint cannot answer; `data` goes in the JSON-RPC error.

    The message is written for the agent: what is unknown or missing, the closest names, and what to call.
    """

    def __init__(self, message: str, *, data: dict[str, object] | None = None) -> None:
        super().__init__(message)
        self.data = dict(data or {})


class LimitError(GatewayError):
    """A budget is spent (tasks running, batch elements, streams open): `limit` names the `Limits` field and
    `value` its setting; the message says what to do."""

    def __init__(self, message: str, *, limit: str, value: int) -> None:
        super().__init__(message)
        self.limit = limit
        self.value = value
