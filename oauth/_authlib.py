"""The one module that touches authlib: PKCE, client and server metadata validation, URL and scope helpers, and
the client side of the identity-provider login (its OAuth client, and ID tokens checked with joserfc).

authlib's server classes are synchronous and built around framework request objects; the endpoints here are
async Starlette handlers over an async store, so they use authlib for the protocol rules themselves (the
RFC 7636 transformation and syntax, the RFC 7591 and RFC 8414 metadata checks) and keep the flow their own.
"""

from __future__ import annotations

import hmac
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from authlib.common.urls import add_params_to_uri, is_valid_url
from authlib.oauth2.rfc6749.util import list_to_scope, scope_to_list
from authlib.oauth2.rfc7591 import ClientMetadataClaims
from authlib.oauth2.rfc7636.challenge import CODE_VERIFIER_PATTERN, create_s256_code_challenge
from authlib.oauth2.rfc8414 import AuthorizationServerMetadata
from joserfc import jws, jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from oauth.errors import ConfigError, ProtocolError

__all__ = [
    "IdTokenError",
    "OAuthClientError",
    "UnknownKeyError",
    "add_query",
    "is_absolute_url",
    "is_code_challenge",
    "key_set",
    "oauth_client",
    "pkce_verifier_matches",
    "s256_challenge",
    "scope_list",
    "scope_string",
    "validate_client_metadata",
    "validate_server_metadata",
    "verify_id_token",
]

_S256_CHALLENGE: Final = re.compile(r"[A-Za-z0-9_-]{43}")


def s256_challenge(verifier: str) -> str:
    """The S256 `code_challenge` of a `code_verifier` (RFC 7636 §4.2)."""
    return str(create_s256_code_challenge(verifier))  # type: ignore[no-untyped-call]  # untyped in types-authlib


def is_code_challenge(challenge: str) -> bool:
    """Whether `challenge` has the syntax of an S256 code challenge (RFC 7636 §4.2): a SHA-256 digest in
    unpadded base64url, always 43 characters."""
    return _S256_CHALLENGE.fullmatch(challenge) is not None


def pkce_verifier_matches(verifier: str, challenge: str) -> bool:
    """Whether `verifier` is well-formed (RFC 7636 §4.1) and transforms to `challenge` under S256 (§4.6)."""
    if CODE_VERIFIER_PATTERN.fullmatch(verifier) is None:
        return False
    return hmac.compare_digest(s256_challenge(verifier), challenge)


def add_query(uri: str, params: Sequence[tuple[str, str]]) -> str:
    """`uri` with `params` appended to its query, keeping the query it already has (RFC 6749 §3.1.2)."""
    return str(add_params_to_uri(uri, list(params)))


def is_absolute_url(url: str) -> bool:
    """Whether `url` has a scheme and a host, no user info (which can disguise the host) and no fragment."""
    return bool(is_valid_url(url, fragments_allowed=False))


def scope_list(scope: str | None) -> list[str]:
    """The scope tokens of a space-separated `scope` parameter (RFC 6749 §3.3), in order, without repeats."""
    return list(dict.fromkeys(scope_to_list(scope) or []))


def scope_string(scopes: Sequence[str]) -> str:
    """The `scope` parameter for a list of scope tokens."""
    return str(list_to_scope(list(scopes)))


def validate_client_metadata(metadata: Mapping[str, Any], server_metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The registered client metadata (RFC 7591 §2) of a registration request, checked against the server's.

    Raises ProtocolError `invalid_client_metadata` naming the field at fault.
    Scopes are not checked here: unknown scopes are trimmed at authorization time, never refused.
    """
    supported = {key: value for key, value in server_metadata.items() if key != "scopes_supported"}
    options = ClientMetadataClaims.get_claims_options(supported)
    # Redirect URIs are the caller's to check (`oauth.clients.redirect_uri_problem`): authlib wants a host in
    # each, which the native apps' `com.example.app:/callback` (RFC 8252 §7.1) does not have.
    redirect_uris = metadata.get("redirect_uris")
    claims = ClientMetadataClaims({**metadata, "redirect_uris": ["https://redirect.invalid/"]}, {}, options, supported)
    try:
        claims.validate()
    except JoseError as error:
        # The stand-in redirect URI always passes, so the field at fault is never redirect_uris.
        field = getattr(error, "claim", None) or "client metadata"
        raise ProtocolError(
            "invalid_client_metadata", f"the field {field!r} is not acceptable: {error.description}"
        ) from error
    except (TypeError, AttributeError, ValueError, KeyError) as error:
        # authlib assumes the JSON types RFC 7591 gives each field; the caller checks the known ones first.
        raise ProtocolError("invalid_client_metadata", "a field of the client metadata has the wrong type") from error
    checked = dict(claims.get_registered_claims())
    if redirect_uris is None:
        del checked["redirect_uris"]
    else:
        checked["redirect_uris"] = redirect_uris
    return checked


def validate_server_metadata(metadata: Mapping[str, Any]) -> None:
    """Check an RFC 8414 metadata document; ConfigError names the field to fix."""
    try:
        AuthorizationServerMetadata(dict(metadata)).validate()
    except ValueError as error:
        raise ConfigError(f"the authorization server metadata is not valid: {error}") from error


# The client side: this server as an OAuth client of an identity provider.

#: An identity provider's error answer at its token endpoint (`error` and `description` attributes).
from authlib.integrations.base_client import OAuthError as OAuthClientError  # noqa: E402

#: ID tokens are signed with a provider's private key: never "none", never a MAC keyed by our own secret.
_ID_TOKEN_ALGORITHMS: Final = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
#: Seconds of clock difference tolerated on exp, iat and nbf.
_LEEWAY: Final = 60


class IdTokenError(Exception):
    """An ID token that does not hold: bad signature, another issuer or audience, a wrong nonce, expired."""


class UnknownKeyError(IdTokenError):
    """An ID token signed with a key the provider's key set does not (yet) hold."""


def oauth_client(client_id: str, client_secret: str | None, *, auth_method: str, timeout: float) -> Any:
    """An async OAuth 2 client (authlib's, on httpx2) for this server's client at an identity provider."""
    from authlib.integrations.httpx_client import AsyncOAuth2Client

    return AsyncOAuth2Client(
        client_id=client_id,
        client_secret=client_secret,
        token_endpoint_auth_method=auth_method,
        revocation_endpoint_auth_method=auth_method,
        timeout=timeout,
    )


def key_set(document: Mapping[str, Any]) -> KeySet:
    """A provider's JWKS document (RFC 7517 §5) as a key set; ValueError when it is not one."""
    try:
        return KeySet.import_key_set(dict(document))  # type: ignore[arg-type]
    except (JoseError, KeyError, TypeError, ValueError) as error:
        raise ValueError(f"the provider's key set cannot be read: {error}") from error


def verify_id_token(token: str, keys: KeySet, *, issuer: str, client_id: str, nonce: str, now: float) -> dict[str, Any]:
    """The claims of an ID token whose signature `keys` verify and whose claims hold (OpenID Connect Core
    §3.1.3.7): `iss` is `issuer`, `aud` holds `client_id` (and `azp` is it when there are several audiences),
    `nonce` is the one sent, `exp` is to come, `sub` is there. IdTokenError otherwise (UnknownKeyError when no key
    of `keys` has the token's `kid`)."""
    try:
        decoded = jwt.decode(token, keys, algorithms=list(_ID_TOKEN_ALGORITHMS))
    except JoseError as error:
        if "kid" in str(error).lower() or error.error == "invalid_key_set":  # pragma: no cover - joserfc's wording
            raise UnknownKeyError(f"no key of the provider verifies the ID token: {error}") from error
        raise IdTokenError(f"the ID token's signature does not verify: {error}") from error
    except ValueError as error:
        if "kid" in str(error).lower() or "key" in str(error).lower():
            raise UnknownKeyError(f"no key of the provider verifies the ID token: {error}") from error
        raise IdTokenError(f"the ID token cannot be read: {error}") from error
    claims = dict(decoded.claims)
    registry = jwt.JWTClaimsRegistry(
        now=int(now),
        leeway=_LEEWAY,
        iss={"essential": True, "value": issuer},
        sub={"essential": True},
        aud={"essential": True, "value": client_id},
        exp={"essential": True},
        nonce={"essential": True, "value": nonce},
    )
    try:
        registry.validate(claims)
    except JoseError as error:
        raise IdTokenError(f"the ID token's claims do not hold: {error}") from error
    audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
    if len(audiences) > 1 and claims.get("azp") != client_id:
        raise IdTokenError("the ID token has several audiences and its azp is not this client")
    return claims


def token_audiences(token: str) -> tuple[str, ...] | None:
    """The `aud` of a JWT access token (RFC 9068 §2.2), read without checking its signature (the API checks it;
    this server has it from the provider's token endpoint); None for an opaque token or a JWT without `aud`."""
    try:
        claims = json.loads(jws.extract_compact(token.encode()).payload)
    except (JoseError, ValueError, TypeError):
        return None
    audience = claims.get("aud") if isinstance(claims, dict) else None
    if isinstance(audience, str):
        return (audience,)
    if isinstance(audience, list) and all(isinstance(item, str) for item in audience):
        return tuple(audience)
    return None
