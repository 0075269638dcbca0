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
from typing import Any

from oauth import _authlib
from oauth._crypto import Sealer, new_token, token_hash
from oauth.clients import Client
from oauth.config import OAuthConfig
from oauth.errors import ProtocolError, StoreError
from oauth.store import Clock, TokenStore

__all__ = ["AccessGrant", "Grants", "Principal", "TokenResponse"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class Principal:
    """The user who logged in: a stable `subject`, a `name` to show, and the REST headers that act as them."""

    subject: str
    name: str
    credentials: Mapping[str, str]


@dataclass(frozen=True, kw_only=True)
class AccessGrant:
    """What a valid access token stands for: the client, the user, the scopes and the REST headers."""

    client_id: str
    subject: str
    scopes: tuple[str, ...]
    credentials: Mapping[str, str]


TokenResponse = dict[str, Any]
"""An RFC 6749 §5.1 access token response."""


def same_resource(a: str, b: str) -> bool:
    """Whether two resource URIs name the same resource (RFC 8707 §2; a trailing '/' makes no difference)."""
    return a.rstrip("/") == b.rstrip("/")


class Grants:
    """Issues, exchanges, rotates, checks and revokes codes and tokens; every secret is stored hashed."""

    def __init__(self, config: OAuthConfig, store: TokenStore, sealer: Sealer, *, clock: Clock | None = None) -> None:
        self.config = config
        self.store = store
        self.sealer = sealer
        self._clock = clock or time.time

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
        grant = {
            "client_id": client.client_id,
            "subject": principal.subject,
            "scopes": list(scopes),
            "resource": resource,
            "credentials": self.sealer.seal(principal.credentials),
        }
        expires_at = now + self.config.code_ttl
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
        """New tokens for a refresh token, which is used up (OAuth 2.1 §4.3.1: rotation).

        A refresh token presented twice revokes every token of its grant: one of the two presenters is not
        the client it was issued to (OAuth 2.1 §4.3.1, refresh token protection).
        """
        key = token_hash(refresh_token)
        record = await self.store.get("refresh", key)
        grant = await self.store.get("grant", record["grant_id"]) if record is not None else None
        if record is None or grant is None:
            raise ProtocolError("invalid_grant", "the refresh token is unknown, expired or revoked; authorize again")
        if grant["client_id"] != client.client_id:
            raise ProtocolError("invalid_grant", "the refresh token was issued to another client")
        if resource is not None and not same_resource(resource, grant["resource"]):
            raise ProtocolError("invalid_target", f"resource {resource!r} is not the one this token was issued for")
        # RFC 6749 §6: a narrower scope may be asked for; scopes never granted are dropped, not refused.
        granted = list(grant["scopes"])
        scopes = [name for name in _authlib.scope_list(scope) if name in granted] or granted
        _, first = await self.store.claim("refresh", key)
        if not first:
            await self.store.delete("grant", record["grant_id"])
            logger.warning("refresh token reused by client %r; its grant is revoked", client.client_id)
            raise ProtocolError(
                "invalid_grant", "the refresh token was already used; every token of this login is revoked"
            )
        return await self._issue(record["grant_id"], scopes)

    async def _issue(self, grant_id: str, scopes: Sequence[str]) -> TokenResponse:
        now = self._clock()
        access, refresh = new_token(), new_token()
        refresh_expires = now + self.config.refresh_token_ttl
        access_expires = min(now + self.config.access_token_ttl, refresh_expires)
        # The grant lives as long as its newest refresh token; a grant revoked since it was read stays revoked.
        if not await self.store.extend("grant", grant_id, expires_at=refresh_expires):
            raise ProtocolError("invalid_grant", "the authorization was revoked; authorize again")
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
            credentials = self.sealer.unseal(grant["credentials"])
        except StoreError:
            logger.warning("the credentials of a grant cannot be unsealed (was the secret key changed?)")
            return None
        return AccessGrant(
            client_id=grant["client_id"],
            subject=grant["subject"],
            scopes=tuple(record["scopes"]),
            credentials=credentials,
        )

    async def revoke(self, token: str, client: Client) -> None:
        """Revoke the grant of an access or refresh token (RFC 7009 §2.1); unknown tokens are ignored (§2.2)."""
        key = token_hash(token)
        for kind in ("refresh", "access"):
            record = await self.store.get(kind, key)
            if record is None:
                continue
            grant = await self.store.get("grant", record["grant_id"])
            if grant is None:
                return
            if grant["client_id"] != client.client_id:
                raise ProtocolError("unauthorized_client", "the token was issued to another client")
            await self.store.delete("grant", record["grant_id"])
            return
