"""`Grants`: authorization codes, access and refresh tokens, and the grants they belong to.

A grant is one user's consent to one client: it holds the user's REST credentials (sealed) and lives as long
as its newest refresh token. Codes and tokens point at their grant, so deleting the grant revokes the whole
family at once: that is what a reused code or refresh token, and a revocation request, do.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import anyio

from oauth import _authlib
from oauth._crypto import RefreshTokens, Sealer, new_token, token_hash
from oauth.clients import Client
from oauth.config import OAuthConfig
from oauth.errors import (
    ProtocolError,
    ProviderRefusedError,
    ProviderUnavailableError,
    StoreError,
    StoreUnavailableError,
)
from oauth.store import Clock, TokenStore

__all__ = ["AccessGrant", "Grants", "Principal", "Renewal", "Renewer", "TokenResponse"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class Principal:
    """The user who logged in: a stable `subject`, a `name` to show, and the REST headers that act as them; with
    an identity-provider login, `upstream` is what renews those headers (the provider's refresh token, when the
    access token expires), kept sealed beside the grant."""

    subject: str
    name: str
    credentials: Mapping[str, str]
    upstream: Mapping[str, str] | None = None
    #: The scopes the identity provider granted, when it said (None: those asked for).
    scopes: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Renewal:
    """What renewing an identity-provider login gives: the REST headers to call the API with now, and what to keep
    for the next renewal."""

    credentials: dict[str, str]
    kept: dict[str, str]


class Renewer(Protocol):
    """Renews and revokes the provider's tokens of a grant (`oauth.upstream.ProviderLogin`)."""

    def due(self, kept: Mapping[str, str]) -> bool:
        """Whether the kept access token is about to expire."""

    def expires_at(self, kept: Mapping[str, str]) -> float | None:
        """When the kept access token expires, if the provider said."""

    async def renew(self, kept: Mapping[str, str]) -> Renewal:
        """Fresh credentials; ProviderRefusedError when the provider refuses, ProviderUnavailableError when it
        cannot be reached."""

    async def revoke(self, kept: Mapping[str, str]) -> None:
        """Revoke the kept tokens at the provider (best effort, never raises)."""


@dataclass(frozen=True, kw_only=True)
class AccessGrant:
    """What a valid access token stands for: the client, the user, the scopes and the REST headers, and the `login`
    it belongs to (an opaque name of its grant: the same for every token of one login, through refreshes and the
    provider's renewals of the headers)."""

    client_id: str
    subject: str
    scopes: tuple[str, ...]
    credentials: Mapping[str, str]
    login: str


TokenResponse = dict[str, Any]
"""An RFC 6749 §5.1 access token response."""


def same_resource(a: str, b: str) -> bool:
    """Whether two resource URIs name the same resource (RFC 8707 §2; a trailing '/' makes no difference)."""
    return a.rstrip("/") == b.rstrip("/")


#: Seconds in which a grant is refreshed at most `OAuthConfig.refreshes_per_grant` times.
_REFRESH_WINDOW = 60.0

#: Seconds a renewal counts as under way (then another request may try), and a request waits for one.
_RENEWAL_WINDOW = 30.0
_RENEWAL_WAIT = 10.0


class Grants:
    """Issues, exchanges, rotates, checks and revokes codes and tokens; every secret is stored hashed."""

    def __init__(
        self,
        config: OAuthConfig,
        store: TokenStore,
        sealer: Sealer,
        *,
        clock: Clock | None = None,
        renewer: Renewer | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.sealer = sealer
        self.renewer = renewer
        self._clock = clock or time.time
        self._refresh_tokens = RefreshTokens(config.secret_key)

    async def issue_code(
        self,
        *,
        client: Client,
        redirect_uri: str,
        redirect_uri_given: bool,
        code_challenge: str,
        scopes: Sequence[str],
        resource: str,
        principal: Principal,
    ) -> str:
        """A new single-use authorization code, and the grant it will start (kept only as long as the code)."""
        now = self._clock()
        grant_id = new_token()
        grant: dict[str, Any] = {
            "client_id": client.client_id,
            "subject": principal.subject,
            "scopes": list(scopes),
            "resource": resource,
            "credentials": self.sealer.seal({} if principal.upstream is not None else principal.credentials),
        }
        expires_at = now + self.config.code_ttl
        if principal.upstream is not None:
            # The provider's tokens live beside the grant, renewed without rewriting it (a revocation wins).
            grant["upstream"] = True
            await self._keep_upstream(grant_id, Renewal(dict(principal.credentials), dict(principal.upstream)), 0)
        await self.store.put("grant", grant_id, grant, expires_at=expires_at)
        code = new_token()
        record = {
            "grant_id": grant_id,
            "client_id": client.client_id,
            "redirect_uri": redirect_uri,
            "redirect_uri_given": redirect_uri_given,
            "code_challenge": code_challenge,
        }
        await self.store.put("code", token_hash(code), record, expires_at=expires_at)
        return code

    async def exchange_code(
        self, *, code: str, client: Client, redirect_uri: str | None, code_verifier: str | None, resource: str | None
    ) -> TokenResponse:
        """Tokens for an authorization code (OAuth 2.1 §4.1.3); ProtocolError `invalid_grant` otherwise.

        Every check runs before the code is used, so a request that fails one changes nothing. A code used a
        second time revokes the tokens issued for it (OAuth 2.1 §4.1.3: the code may have been stolen).
        """
        key = token_hash(code)
        record = await self.store.get("code", key)
        if record is None:
            raise ProtocolError("invalid_grant", "the authorization code is unknown or expired; authorize again")
        if record["client_id"] != client.client_id:
            raise ProtocolError("invalid_grant", "the authorization code was issued to another client")
        expected_uri = record["redirect_uri"] if record["redirect_uri_given"] else None
        if redirect_uri != expected_uri and not (expected_uri is None and redirect_uri == record["redirect_uri"]):
            # OAuth 2.1 §4.1.3: redirect_uri must be identical to the one in the authorization request.
            raise ProtocolError("invalid_grant", "redirect_uri differs from the one in the authorization request")
        if not code_verifier:
            raise ProtocolError("invalid_grant", "code_verifier is missing; send the PKCE verifier of this code")
        if not _authlib.pkce_verifier_matches(code_verifier, record["code_challenge"]):
            raise ProtocolError("invalid_grant", "code_verifier does not match the code_challenge (PKCE S256)")
        grant = await self.store.get("grant", record["grant_id"])
        if resource is not None and grant is not None and not same_resource(resource, grant["resource"]):
            raise ProtocolError("invalid_target", f"resource {resource!r} is not the one this code was issued for")
        _, first = await self.store.claim("code", key)
        if not first:
            await self.store.delete("grant", record["grant_id"])
            logger.warning("authorization code reused by client %r; its tokens are revoked", client.client_id)
            raise ProtocolError(
                "invalid_grant", "the authorization code was already used; the tokens issued for it are revoked"
            )
        if grant is None:
            raise ProtocolError("invalid_grant", "the authorization was revoked; authorize again")
        return await self._issue(record["grant_id"], grant["scopes"])

    async def refresh(
        self, *, refresh_token: str, client: Client, scope: str | None, resource: str | None
    ) -> TokenResponse:
        """New tokens for a refresh token, which is used up (OAuth 2.1 §4.3.1: rotation); ProtocolError
        `temporarily_unavailable` (429) when its grant was refreshed `refreshes_per_grant` times this minute, the
        token then unused.

        A refresh token presented twice revokes every token of its grant: one of the two presenters is not
        the client it was issued to (OAuth 2.1 §4.3.1, refresh token protection). The store keeps the grant's
        newest refresh token only: an earlier one names its grant by its signature (`RefreshTokens`), so it is
        recognised without a record. A token issued before that scheme (a record of its own) refreshes once, its
        record kept used until it expires, and the grant goes on with tokens of the new scheme.
        """
        key = token_hash(refresh_token)
        named = self._refresh_tokens.grant_id(refresh_token)
        record = await self.store.get("refresh", key)
        grant_id = named if named is not None else record["grant_id"] if record is not None else None
        grant = await self.store.get("grant", grant_id) if grant_id is not None else None
        if grant_id is not None and grant is None:
            ended = await self.store.get("ended", grant_id)
            if ended is not None:
                raise ProtocolError("invalid_grant", f"{ended['reason']}; log in again")
        if grant_id is None or grant is None:
            raise ProtocolError("invalid_grant", "the refresh token is unknown, expired or revoked; authorize again")
        if grant["client_id"] != client.client_id:
            raise ProtocolError("invalid_grant", "the refresh token was issued to another client")
        if resource is not None and not same_resource(resource, grant["resource"]):
            raise ProtocolError("invalid_target", f"resource {resource!r} is not the one this token was issued for")
        # RFC 6749 §6: a narrower scope may be asked for; scopes never granted are dropped, not refused.
        granted = list(grant["scopes"])
        scopes = [name for name in _authlib.scope_list(scope) if name in granted] or granted
        # A signed token of a live grant without a record was rotated already; a claim that is not the first
        # is a reuse, or a race with the same token.
        first = False
        if record is not None:
            await self._count_refresh(grant_id, client)
            _, first = await self.store.claim("refresh", key)
        if not first:
            await self.store.delete("grant", grant_id)
            logger.warning("refresh token reused by client %r; its grant is revoked", client.client_id)
            raise ProtocolError(
                "invalid_grant", "the refresh token was already used; every token of this login is revoked"
            )
        tokens = await self._issue(grant_id, scopes)
        if named is not None:
            await self._forget_rotated(key)
        return tokens

    async def _count_refresh(self, grant_id: str, client: Client) -> None:
        """Count a refresh of the grant, before its token is used: over the limit, the token stays as it was."""
        limit = self.config.refreshes_per_grant
        made = await self.store.count(f"refresh:{grant_id}", window=_REFRESH_WINDOW)
        if made > limit:
            if made == limit + 1:
                logger.warning(
                    "refused refreshes of a login of client %r: more than %d in a minute", client.client_id, limit
                )
            raise ProtocolError(
                "temporarily_unavailable",
                f"this login was refreshed {limit} times within a minute, the most allowed; keep the refresh token "
                "you sent (it was not used) and try again in a minute",
                status=429,
                retry_after=int(_REFRESH_WINDOW),
            )

    async def _forget_rotated(self, key: str) -> None:
        """Remove a used refresh token's record: its signature still names its grant, should it come back. Tokens
        are issued already, so a store that fails here only leaves the used record until it expires."""
        try:
            await self.store.delete("refresh", key)
        except StoreUnavailableError:
            logger.warning("a used refresh token's record stays until it expires: the token store failed")

    async def _issue(self, grant_id: str, scopes: Sequence[str]) -> TokenResponse:
        now = self._clock()
        access, refresh = new_token(), self._refresh_tokens.new(grant_id)
        refresh_expires = now + self.config.refresh_token_ttl
        access_expires = min(now + self.config.access_token_ttl, refresh_expires)
        # The grant lives as long as its newest refresh token; a grant revoked since it was read stays revoked.
        if not await self.store.extend("grant", grant_id, expires_at=refresh_expires):
            raise ProtocolError("invalid_grant", "the authorization was revoked; authorize again")
        await self.store.extend("upstream", grant_id, expires_at=refresh_expires)
        await self.store.put(
            "access", token_hash(access), {"grant_id": grant_id, "scopes": list(scopes)}, expires_at=access_expires
        )
        await self.store.put("refresh", token_hash(refresh), {"grant_id": grant_id}, expires_at=refresh_expires)
        return {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": int(access_expires - now),
            "refresh_token": refresh,
            "scope": _authlib.scope_string(scopes),
        }

    async def check_access_token(self, token: str) -> AccessGrant | None:
        """What a valid access token for this resource stands for; None for an unknown, expired, revoked or
        foreign token (RFC 8707: its audience must be this server's resource)."""
        record = await self.store.get("access", token_hash(token))
        if record is None:
            return None
        grant = await self.store.get("grant", record["grant_id"])
        if grant is None or not same_resource(grant["resource"], self.config.resource):
            return None
        try:
            if grant.get("upstream"):
                upstream = await self._upstream_credentials(record["grant_id"])
                if upstream is None:
                    return None
                credentials = upstream
            else:
                credentials = self.sealer.unseal(grant["credentials"])
        except StoreError:
            logger.warning("the credentials of a grant cannot be unsealed (was the secret key changed?)")
            return None
        return AccessGrant(
            client_id=grant["client_id"],
            subject=grant["subject"],
            scopes=tuple(record["scopes"]),
            credentials=credentials,
            login=token_hash(f"login:{record['grant_id']}"),
        )

    async def revoke(self, token: str, client: Client) -> None:
        """Revoke the grant of an access or refresh token (RFC 7009 §2.1), a rotated refresh token's too; unknown
        tokens are ignored (§2.2)."""
        key = token_hash(token)
        grant_id = self._refresh_tokens.grant_id(token)
        for kind in ("refresh", "access"):
            if grant_id is not None:
                break
            record = await self.store.get(kind, key)
            grant_id = record["grant_id"] if record is not None else None
        if grant_id is None:
            return
        grant = await self.store.get("grant", grant_id)
        if grant is None:
            return
        if grant["client_id"] != client.client_id:
            raise ProtocolError("unauthorized_client", "the token was issued to another client")
        await self.store.delete("grant", grant_id)
        await self._end_upstream(grant_id, revoke=True)

    # The identity provider's tokens of a grant

    async def _keep_upstream(self, grant_id: str, renewal: Renewal, generation: int) -> None:
        record = {
            "credentials": self.sealer.seal(renewal.credentials),
            "kept": self.sealer.seal(renewal.kept),
            "generation": generation,
        }
        expires_at = self._clock() + self.config.refresh_token_ttl
        await self.store.put("upstream", grant_id, record, expires_at=expires_at)

    async def _end_upstream(self, grant_id: str, *, revoke: bool) -> None:
        stored = await self.store.get("upstream", grant_id)
        await self.store.delete("upstream", grant_id)
        if revoke and stored is not None and self.renewer is not None:
            await self.renewer.revoke(self.sealer.unseal(stored["kept"]))

    async def _upstream_credentials(self, grant_id: str) -> dict[str, str] | None:
        """The REST headers of an identity-provider grant, renewed first when they are about to expire; None when
        the provider refused to renew them (the grant has ended)."""
        stored = await self.store.get("upstream", grant_id)
        if stored is None:
            return None
        credentials, kept = self.sealer.unseal(stored["credentials"]), self.sealer.unseal(stored["kept"])
        renewer = self.renewer
        if renewer is None or not renewer.due(kept):
            return credentials
        generation = int(stored["generation"])
        # One renewal per grant and generation, across instances: the first to count renews, the others keep
        # using the token until it expires (it is renewed ahead of that), then wait for the renewal.
        if await self.store.count(f"renew:{grant_id}:{generation}", window=_RENEWAL_WINDOW) == 1:
            return await self._renew(grant_id, generation, credentials, kept, renewer)
        expires_at = renewer.expires_at(kept)
        if expires_at is not None and expires_at > self._clock():
            return credentials
        with anyio.move_on_after(_RENEWAL_WAIT):
            while True:
                await anyio.sleep(0.1)
                again = await self.store.get("upstream", grant_id)
                if again is None:
                    return None
                if int(again["generation"]) != generation:
                    return self.sealer.unseal(again["credentials"])
        raise ProviderUnavailableError("another request has been renewing this login for too long")

    async def _renew(
        self, grant_id: str, generation: int, credentials: dict[str, str], kept: dict[str, str], renewer: Renewer
    ) -> dict[str, str] | None:
        try:
            renewal = await renewer.renew(kept)
        except ProviderRefusedError as error:
            logger.info("the identity provider ended a login: %s", error)
            await self.store.delete("grant", grant_id)
            await self._end_upstream(grant_id, revoke=False)
            reason = "the identity provider ended this login (it refused to renew it)"
            until = self._clock() + self.config.refresh_token_ttl
            await self.store.put("ended", grant_id, {"reason": reason}, expires_at=until)
            return None
        except ProviderUnavailableError:
            await self.store.delete("attempts", f"renew:{grant_id}:{generation}")  # the next request tries again
            expires_at = renewer.expires_at(kept)
            if expires_at is not None and expires_at > self._clock():
                return credentials  # still good for a while; the next call tries again
            raise
        if await self.store.get("grant", grant_id) is None:
            await renewer.revoke(renewal.kept)  # revoked meanwhile: the new tokens go too
            return None
        await self._keep_upstream(grant_id, renewal, generation + 1)
        return renewal.credentials
