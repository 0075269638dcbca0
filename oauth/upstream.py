"""`ProviderLogin`: people log in at the API's own identity provider (OpenID Connect), and the API is called with
the access token the provider gave them.

The flow, from the MCP client's `/authorize` to its code: this server sends the browser to the provider (OpenID
Connect discovery; authorization code with PKCE, `state` and `nonce`), takes the code back at its callback
(`<issuer>/authorize/callback`, to register at the provider), exchanges it with the client secret, checks the ID
token (signature from the provider's keys, issuer, audience, nonce, lifetime), and keeps the provider's tokens in
the grant, sealed. Each MCP call then carries `Authorization: Bearer <the provider's access token>` to the API;
the MCP tokens never reach it. The provider's refresh token renews the access token before it expires; a
provider that refuses the refresh ends the grant (the person logs in again). Revoking the grant revokes the
provider's refresh token where the provider has a revocation endpoint.

With `token_exchange`, the person's access token is exchanged (RFC 8693) for one whose audience is the API.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import anyio
import httpx2

from oauth import _authlib
from oauth._log import loggable
from oauth.config import check_base_url
from oauth.errors import ConfigError, LoginError, ProviderRefusedError, ProviderUnavailableError
from oauth.grants import Principal, Renewal
from oauth.store import Clock

__all__ = ["IdentityProvider", "ProviderLogin"]

logger = logging.getLogger(__name__)

#: How long discovery metadata and keys are trusted before they are fetched again.
_METADATA_TTL: Final = 3600.0
#: The least time between two fetches of the keys when a token names a key not known yet (rotation).
_KEYS_REFETCH: Final = 60.0
_TOKEN_EXCHANGE: Final = "urn:ietf:params:oauth:grant-type:token-exchange"  # noqa: S105 - a grant type's name
_ACCESS_TOKEN_TYPE: Final = "urn:ietf:params:oauth:token-type:access_token"  # noqa: S105 - RFC 8693 §3


@dataclass(frozen=True, kw_only=True)
class IdentityProvider:
    """The API's OpenID Connect provider and this server's client there.

    `issuer` is the provider's issuer, exactly as its discovery document (`<issuer>/.well-known/openid-configuration`)
    names it (Auth0's ends with '/').
    Register a confidential client at the provider whose redirect URI is `<this server's issuer>/authorize/callback`
    and give its `client_id` and `client_secret` (`auth_method` says how it authenticates at the token endpoint).
    `scopes` are asked for at login: `openid` always; `offline_access` where the provider needs it to give a refresh
    token; and the API's own scopes. `audience` is the identifier the API expects in its tokens' `aud`, and the
    audience of an exchanged token when `token_exchange` is on. `audience_params` names the authorization request's
    parameters that carry it: RFC 8707's `resource` by default; Auth0 wants `audience`; Keycloak and Entra ID take
    the audience from the scopes and refuse or ignore both (give `()`). `renew_before` is how many seconds before
    the access token expires it is renewed.
    """

    issuer: str
    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    scopes: tuple[str, ...] = ("openid", "profile", "email", "offline_access")
    audience: str | None = None
    audience_params: tuple[str, ...] = ("resource",)
    token_exchange: bool = False
    auth_method: Literal["client_secret_basic", "client_secret_post", "none"] = "client_secret_basic"
    timeout: float = 10.0
    renew_before: float = 60.0

    def __post_init__(self) -> None:
        check_base_url("the identity provider's issuer", self.issuer)
        if not self.client_id:
            raise ConfigError("the identity provider's client_id is empty: give the id of this server's client there")
        if self.auth_method != "none" and not self.client_secret:
            raise ConfigError(
                f"the identity provider's client {self.client_id!r} authenticates with {self.auth_method} but no "
                "client_secret was given (MCP_GATEWAY_OAUTH_UPSTREAM_CLIENT_SECRET)"
            )
        if isinstance(self.scopes, str) or "openid" not in self.scopes:
            raise ConfigError(f"the identity provider's scopes must be a tuple holding 'openid', got {self.scopes!r}")
        if self.token_exchange and not self.audience:
            raise ConfigError("token_exchange needs the API's audience: the exchanged token is for it")
        if self.timeout <= 0 or self.renew_before < 0:
            raise ConfigError("timeout must be positive and renew_before at least 0 seconds")


@dataclass
class _Metadata:
    document: dict[str, Any]
    keys: Any
    fetched_at: float
    keys_fetched_at: float


class ProviderLogin:
    """A `Login` that sends the browser to the identity provider (see the module's docstring).

    `callback` is this server's redirect URI at the provider. The `Authorization` flow calls `begin` to send the
    browser away, `complete` when it comes back; `Grants` calls `renew` when the kept access token is about to
    expire and `revoke` when a grant is revoked.
    """

    def __init__(
        self, provider: IdentityProvider, *, callback: str = "", clock: Clock | None = None, http: Any = None
    ) -> None:
        self.provider = provider
        self.callback = callback
        self._clock = clock or time.time
        self._http = http or _authlib.oauth_client(
            provider.client_id,
            provider.client_secret,
            auth_method=provider.auth_method,
            timeout=provider.timeout,
        )
        self._metadata: _Metadata | None = None
        self._lock = anyio.Lock()

    def bound(self, *, callback: str) -> ProviderLogin:
        """This login with its redirect URI at the provider (`OAuthServer` binds `<issuer>/authorize/callback`)."""
        if self.callback == callback:
            return self
        return ProviderLogin(self.provider, callback=callback, clock=self._clock, http=self._http)

    # The Login protocol: this login never shows the key page.

    async def current(self, request: Any) -> None:
        """None: the browser is sent to the provider by `begin` instead."""
        return None

    async def check_key(self, key: str) -> Principal:
        """LoginError: people log in at the identity provider, not with a key."""
        raise LoginError("This server logs you in at the identity provider, not with a key.")

    # The flow

    async def begin(self, scopes: Sequence[str] = ()) -> tuple[str, dict[str, str]]:
        """Where to send the browser, and the secrets to keep with the pending login for `complete`. The provider is
        asked for the configured scopes and `scopes` (the API scopes the MCP client asked for)."""
        metadata = await self._document()
        asked = tuple(dict.fromkeys((*self.provider.scopes, *scopes)))
        state, nonce = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        verifier = secrets.token_urlsafe(64)
        params = [
            ("response_type", "code"),
            ("client_id", self.provider.client_id),
            ("redirect_uri", self.callback),
            ("scope", _authlib.scope_string(asked)),
            ("state", state),
            ("nonce", nonce),
            ("code_challenge", _authlib.s256_challenge(verifier)),
            ("code_challenge_method", "S256"),
        ]
        if self.provider.audience:
            params += [(name, self.provider.audience) for name in self.provider.audience_params]
        url = _authlib.add_query(str(metadata["authorization_endpoint"]), params)
        return url, {"state": state, "nonce": nonce, "verifier": verifier, "scope": _authlib.scope_string(asked)}

    async def complete(self, params: Mapping[str, str], kept: Mapping[str, str]) -> Principal:
        """The person the provider's answer at the callback (`params`) names, with what renews their credentials
        (`Principal.upstream`); LoginError (shown on a page) when the provider refused or its answer does not hold,
        ProviderUnavailableError when it cannot be reached."""
        if "error" in params:
            said = params.get("error_description") or params["error"]
            logger.warning("the identity provider refused a login: %s", loggable(params["error"]))
            raise LoginError(f"The identity provider did not log you in: {said}.")
        code = params.get("code")
        if not code:
            raise LoginError("The identity provider sent you back without a code; start again from the app.")
        if params.get("iss") not in (None, self.provider.issuer):
            # RFC 9207: the answer came from another authorization server (a mix-up attack).
            logger.warning("refused a login answer from issuer %r", params.get("iss"))
            raise LoginError("The answer came from another identity provider; start again from the app.")
        metadata = await self._document()
        token = await self._token(
            metadata,
            grant_type="authorization_code",
            code=code,
            redirect_uri=self.callback,
            code_verifier=kept["verifier"],
            refusal="the identity provider refused the login code",
            **self._resource(),
        )
        id_token = token.get("id_token")
        if not isinstance(id_token, str):
            raise LoginError("The identity provider sent no ID token; the operator must ask for the openid scope.")
        claims = await self._id_claims(id_token, nonce=kept["nonce"])
        subject = str(claims["sub"])
        name = next(
            (str(claims[key]) for key in ("name", "preferred_username", "email") if isinstance(claims.get(key), str)),
            subject,
        )
        try:
            renewal = await self._renewal(metadata, token, previous_refresh=None)
        except ProviderRefusedError as error:  # logged where it was found
            raise LoginError(f"The identity provider's answer cannot be used: {error}.") from None
        # RFC 6749 §5.1: a response without `scope` granted what was asked.
        granted = token.get("scope")
        return Principal(
            subject=f"{self.provider.issuer}#{subject}",
            name=name,
            credentials=renewal.credentials,
            upstream=renewal.kept,
            scopes=tuple(_authlib.scope_list(granted)) if isinstance(granted, str) else None,
        )

    async def renew(self, kept: Mapping[str, str]) -> Renewal:
        """Fresh credentials from the kept refresh token; ProviderRefusedError when the provider refuses it
        (the grant ends), ProviderUnavailableError when it cannot be reached."""
        refresh_token = kept.get("refresh_token")
        if not refresh_token:
            raise ProviderRefusedError("the identity provider gave no refresh token, so the login cannot be renewed")
        metadata = await self._document()
        try:
            token = await self._token(
                metadata,
                grant_type="refresh_token",
                refresh_token=refresh_token,
                refusal="the identity provider refused to renew the login",
                **self._resource(),
            )
            return await self._renewal(metadata, token, previous_refresh=refresh_token)
        except LoginError as error:
            raise ProviderRefusedError(str(error)) from None

    def expires_at(self, kept: Mapping[str, str]) -> float | None:
        """When the kept access token expires (seconds since the epoch), or None when the provider did not say."""
        value = kept.get("expires_at")
        return float(value) if value else None

    def due(self, kept: Mapping[str, str]) -> bool:
        """Whether the kept access token expires within `renew_before` seconds."""
        expires_at = self.expires_at(kept)
        return expires_at is not None and expires_at - self._clock() <= self.provider.renew_before

    async def revoke(self, kept: Mapping[str, str]) -> None:
        """Revoke the kept refresh token at the provider (RFC 7009), where it has a revocation endpoint; a failure
        is logged, never raised: the grant here ends either way."""
        token = kept.get("refresh_token")
        if not token:
            return
        try:
            metadata = await self._document()
            endpoint = metadata.get("revocation_endpoint")
            if not isinstance(endpoint, str):
                return
            await self._http.revoke_token(endpoint, token=token, token_type_hint="refresh_token")  # noqa: S106
        except Exception as error:
            # Boundary: the provider's revocation is best effort; the MCP grant is gone already.
            logger.warning("the identity provider did not confirm a revocation: %s", _said(error))

    async def aclose(self) -> None:
        """Close the connections to the provider."""
        await self._http.aclose()

    # Internals

    def _resource(self) -> dict[str, str]:
        """RFC 8707 §2.2: the token requests name the resource too, so the tokens are for the API."""
        if self.provider.audience and "resource" in self.provider.audience_params:
            return {"resource": self.provider.audience}
        return {}

    async def _renewal(
        self, metadata: Mapping[str, Any], token: Mapping[str, Any], *, previous_refresh: str | None
    ) -> Renewal:
        access = token.get("access_token")
        if not isinstance(access, str) or str(token.get("token_type", "bearer")).lower() != "bearer":
            logger.warning("the identity provider's answer holds no bearer access token")
            raise ProviderRefusedError("the identity provider's answer holds no bearer access token")
        kept: dict[str, str] = {}
        refresh = token.get("refresh_token") or previous_refresh
        if isinstance(refresh, str):
            kept["refresh_token"] = refresh
        expires_in = token.get("expires_in")
        if isinstance(expires_in, int | float) and not isinstance(expires_in, bool):
            kept["expires_at"] = repr(self._clock() + float(expires_in))
        if isinstance(token.get("scope"), str):
            kept["scope"] = str(token["scope"])
        if self.provider.token_exchange:
            exchanged = await self._token(
                metadata,
                grant_type=_TOKEN_EXCHANGE,
                subject_token=access,
                subject_token_type=_ACCESS_TOKEN_TYPE,
                requested_token_type=_ACCESS_TOKEN_TYPE,
                audience=str(self.provider.audience),
                refusal="the identity provider refused to exchange the token for one for the API",
                **self._resource(),
            )
            access = exchanged.get("access_token")
            if not isinstance(access, str):
                logger.warning("the identity provider's token exchange gave no access token")
                raise ProviderRefusedError("the identity provider's token exchange gave no access token")
            exchanged_in = exchanged.get("expires_in")
            if isinstance(exchanged_in, int | float) and not isinstance(exchanged_in, bool):
                ends = self._clock() + float(exchanged_in)
                kept["expires_at"] = repr(min(ends, float(kept.get("expires_at", ends))))
        self._check_audience(access)
        return Renewal(credentials={"authorization": f"Bearer {access}"}, kept=kept)

    def _check_audience(self, access: str) -> None:
        """ProviderRefusedError when the access token is a JWT for another audience than the API's (a provider
        whose settings for the API are wrong): the API would refuse every call. Opaque tokens are the API's to
        judge."""
        audiences = _authlib.token_audiences(access)
        if self.provider.audience and audiences is not None and self.provider.audience not in audiences:
            message = (
                f"the identity provider issued an access token for {', '.join(map(repr, audiences))}, not for the "
                f"API ({self.provider.audience!r}); check the API's identifier at the provider and "
                "--oauth-upstream-audience"
            )
            logger.warning("%s", message)
            raise ProviderRefusedError(message)

    async def _token(self, metadata: Mapping[str, Any], *, refusal: str, **form: str) -> dict[str, Any]:
        """A token endpoint answer; LoginError (`refusal` and the provider's words) when it refuses,
        ProviderUnavailableError when it cannot be reached or fails."""
        endpoint = str(metadata["token_endpoint"])
        try:
            answer = await self._http.fetch_token(endpoint, **form)
        except _authlib.OAuthClientError as error:
            logger.warning("%s: %s", refusal, _said(error))
            raise LoginError(f"{refusal[0].upper()}{refusal[1:]} ({error.error}).") from None
        except (httpx2.HTTPError, ValueError) as error:
            raise ProviderUnavailableError(f"the identity provider's token endpoint failed: {_said(error)}") from None
        return dict(answer)

    async def _id_claims(self, id_token: str, *, nonce: str) -> dict[str, Any]:
        metadata = await self._current()
        for fetched_again in (False, True):
            try:
                return _authlib.verify_id_token(
                    id_token,
                    metadata.keys,
                    issuer=self.provider.issuer,
                    client_id=self.provider.client_id,
                    nonce=nonce,
                    now=self._clock(),
                )
            except _authlib.IdTokenError as error:
                if isinstance(error, _authlib.UnknownKeyError) and not fetched_again:
                    # The provider may have rotated its keys since they were fetched: fetch them once more.
                    metadata = await self._current(new_keys=True)
                    continue
                logger.warning("refused an ID token: %s", error)
                break
        raise LoginError("The identity provider's answer could not be verified; start again from the app.")

    async def _document(self) -> dict[str, Any]:
        return (await self._current()).document

    async def _current(self, *, new_keys: bool = False) -> _Metadata:
        """The provider's discovery document and keys, fetched when missing, stale or (for `new_keys`) when a key
        is unknown and the keys were not fetched within `_KEYS_REFETCH` seconds."""
        now = self._clock()
        metadata = self._metadata
        if (
            metadata is not None
            and now - metadata.fetched_at < _METADATA_TTL
            and not (new_keys and now - metadata.keys_fetched_at >= _KEYS_REFETCH)
        ):
            return metadata
        async with self._lock:
            metadata = self._metadata
            if metadata is None or now - metadata.fetched_at >= _METADATA_TTL:
                document = await self._fetch_json(
                    f"{self.provider.issuer.rstrip('/')}/.well-known/openid-configuration"
                )
                _check_discovery(document, self.provider.issuer)
                keys = await self._keys(str(document["jwks_uri"]))
                self._metadata = _Metadata(document, keys, now, now)
            elif new_keys and now - metadata.keys_fetched_at >= _KEYS_REFETCH:
                keys = await self._keys(str(metadata.document["jwks_uri"]))
                self._metadata = _Metadata(metadata.document, keys, metadata.fetched_at, now)
            current = self._metadata
        if current is None:  # pragma: no cover - set above on every path
            raise ProviderUnavailableError(f"the discovery document of {self.provider.issuer} could not be read")
        return current

    async def _keys(self, url: str) -> Any:
        try:
            return _authlib.key_set(await self._fetch_json(url))
        except ValueError as error:
            raise ProviderUnavailableError(f"{url}: {error}") from None

    async def _fetch_json(self, url: str) -> dict[str, Any]:
        try:
            answer = await self._http.request("GET", url, headers={"accept": "application/json"}, withhold_token=True)
            answer.raise_for_status()
            value = answer.json()
        except (httpx2.HTTPError, ValueError) as error:
            raise ProviderUnavailableError(f"fetching {url} failed: {_said(error)}") from None
        if not isinstance(value, dict):
            raise ProviderUnavailableError(f"{url} is not a JSON object")
        return value


def _check_discovery(document: Mapping[str, Any], issuer: str) -> None:
    """OpenID Connect Discovery §4.3: the document's issuer is exactly the one asked for, and the endpoints the
    flow needs are there."""
    if document.get("issuer") != issuer:
        raise ProviderUnavailableError(
            f"the discovery document of {issuer} names the issuer {document.get('issuer')!r}; the issuer configured "
            "must be exactly the provider's"
        )
    missing = [name for name in ("authorization_endpoint", "token_endpoint", "jwks_uri") if not document.get(name)]
    if missing:
        raise ProviderUnavailableError(f"the discovery document of {issuer} has no {', '.join(missing)}")


def _said(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
