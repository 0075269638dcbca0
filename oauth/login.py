"""How a person logs in before a client gets tokens: the built-in API-key page, or the host app's own login.

A `Login` answers two questions. `current(request)`: is someone already logged in on this browser (the host
app's session), or must the page ask, or must the browser go elsewhere first (a Response, e.g. a redirect to
the app's login page)? `check_key(key)`: whose REST credentials is this pasted API key?
"""

from __future__ import annotations

import hmac
import logging
import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from starlette.requests import Request
from starlette.responses import Response

from oauth.errors import LoginError
from oauth.grants import Principal

__all__ = ["ApiKeyLogin", "Login", "ProviderRedirect", "SessionLogin", "WhoAmI", "bearer_headers"]

logger = logging.getLogger(__name__)

WhoAmI = Callable[[Mapping[str, str]], Awaitable[Any]]
"""Calls the REST API's "who am I" operation with these headers and returns the user it describes.

It raises `LoginError`, or any exception with a `status` of 401 or 403 (as the gateway's `RestError` has), when
the API refuses the credentials.
"""

_ID_FIELDS = ("id", "sub", "user_id", "username", "login", "email")
_NAME_FIELDS = ("name", "display_name", "full_name", "username", "login", "email")


def bearer_headers(key: str) -> Mapping[str, str]:
    """`Authorization: Bearer <key>`: how most REST APIs take an API key."""
    return {"authorization": f"Bearer {key}"}


def _field(user: Any, names: tuple[str, ...]) -> str | None:
    if isinstance(user, Mapping):
        for name in names:
            value = user.get(name)
            if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
                return str(value)
    for name in names:
        value = getattr(user, name, None)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
            return str(value)
    return None


class Login(Protocol):
    """The login step of the authorization flow."""

    async def current(self, request: Request) -> Principal | Response | None:
        """The person logged in on this browser; a Response to send instead (e.g. to a login page); or None
        to ask for an API key."""

    async def check_key(self, key: str) -> Principal:
        """The person an API key belongs to; LoginError (shown on the page) when it is not accepted."""


@runtime_checkable
class ProviderRedirect(Protocol):
    """A login that happens elsewhere (`oauth.upstream.ProviderLogin`): the browser is sent to an identity provider
    and comes back to `<issuer>/authorize/callback`."""

    async def begin(self, scopes: Sequence[str]) -> tuple[str, dict[str, str]]:
        """Where to send the browser to log in and grant `scopes` (the client's, as this server names them), and
        the secrets to keep with the pending login (`state` among them)."""

    async def complete(self, params: Mapping[str, str], kept: Mapping[str, str]) -> Principal:
        """The person the provider's answer (`params`, the callback's query) names; LoginError when it refused or
        its answer does not hold."""


class ApiKeyLogin:
    """The built-in login: the person pastes the API key they use with the REST API, and the server checks it
    with the API's "who am I" operation before issuing anything. `headers(key)` turns the key into REST
    headers (default `Authorization: Bearer <key>`); `key_label` names the key on the page.

    When the API's user has no id, the subject is derived from the key with HMAC-SHA256 under `subject_key`
    (never a bare hash, which would let anyone holding a leaked store test guesses at the key offline).
    `OAuthServer` supplies a key derived from its secret; without one, a random key per process is used.
    """

    def __init__(
        self,
        whoami: WhoAmI,
        *,
        headers: Callable[[str], Mapping[str, str]] = bearer_headers,
        key_label: str = "API key",
        subject_key: bytes | None = None,
    ) -> None:
        self._whoami = whoami
        self._headers = headers
        self.key_label = key_label
        self.keyed = subject_key is not None
        self._subject_key = subject_key if subject_key is not None else secrets.token_bytes(32)

    def with_subject_key(self, subject_key: bytes) -> ApiKeyLogin:
        """This login, deriving the subjects of users without an id with `subject_key`."""
        return ApiKeyLogin(self._whoami, headers=self._headers, key_label=self.key_label, subject_key=subject_key)

    async def current(self, request: Request) -> Principal | Response | None:
        """None: this login always asks for the key."""
        return None

    async def check_key(self, key: str) -> Principal:
        """See `Login.check_key`."""
        key = key.strip()
        if not key:
            raise LoginError(f"Paste your {self.key_label} to continue.")
        if len(key) > 4096 or any(ch in key for ch in "\r\n\x00"):
            raise LoginError(f"That does not look like an {self.key_label}; paste it again.")
        headers = dict(self._headers(key))
        try:
            user = await self._whoami(headers)
        except LoginError:
            raise
        except Exception as error:
            if getattr(error, "status", None) in (401, 403):
                raise LoginError(
                    f"The API did not accept this {self.key_label}. Check it and paste it again."
                ) from None
            # Boundary: the API failing is not the person's fault; say so and log the cause.
            logger.exception("checking an API key with the whoami operation failed")
            raise LoginError("The key could not be checked because the API failed. Try again in a minute.") from None
        subject = _field(user, _ID_FIELDS) or "key-" + hmac.digest(self._subject_key, key.encode(), "sha256").hex()[:32]
        return Principal(subject=subject, name=_field(user, _NAME_FIELDS) or subject, credentials=headers)


class SessionLogin:
    """Login through the host app's own session: `authenticate(request)` returns the logged-in user (any
    object; its `id`/`name` fields or attributes identify it) or a Response such as a redirect to the app's
    login page, which should send the browser back to `request.url` afterwards; `credentials(user)` returns
    the REST headers that act as that user."""

    def __init__(
        self,
        authenticate: Callable[[Request], Awaitable[Any]],
        credentials: Callable[[Any], Awaitable[Mapping[str, str]]],
    ) -> None:
        self._authenticate = authenticate
        self._credentials = credentials

    async def current(self, request: Request) -> Principal | Response | None:
        """See `Login.current`."""
        user = await self._authenticate(request)
        if isinstance(user, Response):
            return user
        if user is None:
            raise LoginError("The app's login did not return a user; the operator must fix its authenticate hook.")
        subject = _field(user, _ID_FIELDS)
        if subject is None:
            raise LoginError("The app's user has no id; the operator must give it an 'id' field.")
        headers = dict(await self._credentials(user))
        return Principal(subject=subject, name=_field(user, _NAME_FIELDS) or subject, credentials=headers)

    async def check_key(self, key: str) -> Principal:
        """LoginError: this server logs people in through the app's own page."""
        raise LoginError("This server logs you in through the app's own login page, not with a key.")
