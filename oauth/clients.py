"""Clients: registered dynamically (RFC 7591), named by a Client ID Metadata Document URL, or configured.

`ClientRegistry.find` looks a client_id up in that order: configured clients, then (for an https URL) the
metadata document it names, then the store of registered clients. A registration costs nothing to send, so
the store is guarded: registrations per address are limited, a new client is kept only until
`unused_client_ttl` unless it gets tokens, and at most `max_unused_clients` such clients are kept at once.

Redirect URIs are checked the same way for all three: https anywhere, plain http on loopback only,
private-use schemes for native apps, and never `javascript:`, `data:` or the like.
"""

from __future__ import annotations

import base64
import hmac
import logging
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, cast
from urllib.parse import unquote, urlsplit

from oauth import _authlib
from oauth._crypto import new_token, token_hash
from oauth._limits import Limit, spend
from oauth.cimd import ClientDocuments, is_client_id_url
from oauth.config import LOOPBACK_NAMES, OAuthConfig
from oauth.errors import ProtocolError
from oauth.store import Clock, TokenStore

__all__ = ["AUTH_METHODS", "Client", "ClientRegistry", "TokenAuthMethod", "redirect_uri_problem"]

logger = logging.getLogger(__name__)

TokenAuthMethod = Literal["none", "client_secret_basic", "client_secret_post"]
AUTH_METHODS: Final[tuple[TokenAuthMethod, ...]] = ("none", "client_secret_basic", "client_secret_post")
"""`token_endpoint_auth_methods_supported`: public clients (PKCE alone) and the two client-secret methods."""

ClientSource = Literal["registered", "document", "configured"]

# Schemes a browser must never be sent to as a redirect (they run code, read files or leave the web).
_FORBIDDEN_SCHEMES: Final = frozenset(
    {"javascript", "data", "vbscript", "file", "blob", "about", "filesystem", "ftp", "ws", "wss", "mailto", "tel"}
)
_SCHEME: Final = re.compile(r"[a-z][a-z0-9+.-]*")
#: How long a registered client that has had tokens is kept after it last had some.
_REGISTRATION_TTL: Final = 365 * 24 * 3600.0
_REGISTRATION_WINDOW: Final = 3600.0
_MAX_REDIRECT_URIS: Final = 20
#: As long as a redirect URI may be: a registered client_id is 43 characters, a metadata document's URL rarely 200.
_MAX_CLIENT_ID: Final = 2000


def redirect_uri_problem(uri: object) -> str | None:
    """Why `uri` cannot be a redirect URI, or None when it can (OAuth 2.1 §2.3.1, RFC 8252 §7).

    Allowed: https with a host; http on a loopback host; a private-use scheme of a native app, with a host
    (`cursor://anysphere.cursor-retrieval/cb`) or without (`com.example.app:/oauth2redirect`). Never a fragment,
    user info, whitespace or control characters (which URL parsers drop, so `java\tscript:` would pass a
    check of the raw scheme), nor a scheme that runs code or leaves the web.
    """
    if not isinstance(uri, str) or not uri:
        return f"redirect URI {uri!r} is not a non-empty string"
    if len(uri) > 2000:
        return "a redirect URI is longer than 2000 characters"
    if any(character <= " " or character == "\x7f" for character in uri) or not uri.isascii():
        return f"redirect URI {uri!r} holds whitespace, control or non-ASCII characters; percent-encode them"
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if not _SCHEME.fullmatch(scheme):
        return f"redirect URI {uri!r} has no scheme; give an absolute URL"
    if scheme in _FORBIDDEN_SCHEMES:
        return f"redirect URI {uri!r} uses the {scheme!r} scheme, which is never allowed"
    if "#" in uri:
        return f"redirect URI {uri!r} has a fragment, which a redirect URI must not have"
    if parts.username is not None or parts.password is not None:
        return f"redirect URI {uri!r} holds user info, which a redirect URI must not have"
    try:
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in range
    except ValueError:
        return f"redirect URI {uri!r} has a port that is not a number from 0 to 65535"
    if scheme in ("http", "https"):
        if not _authlib.is_absolute_url(uri) or not parts.hostname:
            return f"redirect URI {uri!r} must be an absolute URL with a host"
        if scheme == "http" and parts.hostname not in LOOPBACK_NAMES:
            return f"redirect URI {uri!r} uses plain http on a host other than localhost; use https"
        return None
    if not parts.netloc and not parts.path.startswith("/"):
        return f"redirect URI {uri!r}: a native app's URI is scheme:/path (RFC 8252 §7.1), like com.example.app:/cb"
    return None


def application_type_problem(uri: str, application_type: str) -> str | None:
    """Why `uri` cannot be a redirect URI of a client of `application_type` (OpenID Connect Dynamic Client
    Registration §2), or None: a `web` client's are https on a host that is not this machine; a `native` app's are
    loopback http, a private-use scheme, or https (RFC 8252 §7)."""
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if application_type == "web" and (scheme != "https" or parts.hostname in LOOPBACK_NAMES):
        return f"redirect URI {uri!r}: a web application's redirect URIs are https on a public host; register as native"
    if application_type == "native" and scheme == "http" and parts.hostname not in LOOPBACK_NAMES:
        return f"redirect URI {uri!r}: a native app's http redirect URI must be on a loopback host"
    return None


def _loopback_key(uri: str) -> tuple[str, str, str, str] | None:
    """An http loopback URI without its port, for RFC 8252 §7.3 matching; None for any other URI."""
    if redirect_uri_problem(uri) is not None:
        return None
    parts = urlsplit(uri)
    if parts.scheme != "http" or parts.hostname not in LOOPBACK_NAMES:
        return None
    return parts.scheme, parts.hostname or "", parts.path, parts.query


_STRING_FIELDS: Final = (
    "client_name",
    "client_uri",
    "logo_uri",
    "tos_uri",
    "policy_uri",
    "jwks_uri",
    "software_id",
    "software_version",
    "token_endpoint_auth_method",
    "scope",
)
_LIST_FIELDS: Final = ("redirect_uris", "grant_types", "response_types", "contacts")


def _metadata_type_problem(metadata: Mapping[str, Any]) -> tuple[str, str] | None:
    """The field of RFC 7591 client metadata whose value has the wrong JSON type, and why; None when all fit."""
    for name in _STRING_FIELDS:
        if name in metadata and not isinstance(metadata[name], str):
            return name, f"{name} must be a string, not {type(metadata[name]).__name__}"
    for name in _LIST_FIELDS:
        value = metadata.get(name)
        if name in metadata and (not isinstance(value, list) or not all(isinstance(item, str) for item in value)):
            return name, f"{name} must be a list of strings"
    jwks = metadata.get("jwks")
    if "jwks" in metadata and not (isinstance(jwks, dict) and isinstance(jwks.get("keys"), list)):
        return "jwks", 'jwks must be a JSON Web Key Set: an object with a "keys" list'
    return None


@dataclass(frozen=True, kw_only=True)
class Client:
    """A client the server knows: who it is, where codes may be sent, and how it authenticates."""

    client_id: str
    redirect_uris: tuple[str, ...]
    name: str = ""
    auth_method: TokenAuthMethod = "none"
    secret_hash: str | None = None
    source: ClientSource = "registered"

    @property
    def display_name(self) -> str:
        """The name the consent page shows: the client's own name, or its client_id."""
        return self.name or self.client_id

    def redirect_uri(self, requested: str | None) -> str | None:
        """The registered redirect URI a request names, or None when it names none of them.

        Exact string match (OAuth 2.1 §4.1.1), except that an http loopback URI may differ in its port (RFC 8252
        §7.3: native apps listen on an ephemeral port). Without `requested`, the only registered URI.
        """
        if requested is None:
            return self.redirect_uris[0] if len(self.redirect_uris) == 1 else None
        if requested in self.redirect_uris:
            return requested
        key = _loopback_key(requested)
        if key is not None and any(_loopback_key(uri) == key for uri in self.redirect_uris):
            return requested
        return None

    def accepts(self, method: TokenAuthMethod) -> bool:
        """Whether the client may authenticate with `method`: the one it registered; a configured client with a
        secret may send it either way (`PreregisteredClient`)."""
        if self.source == "configured" and self.auth_method != "none":
            return method != "none"
        return method == self.auth_method

    def secret_matches(self, secret: str | None) -> bool:
        """Whether `secret` is this confidential client's secret; always False for a public client."""
        if self.secret_hash is None or not secret:
            return False
        return hmac.compare_digest(token_hash(secret), self.secret_hash)

    def to_record(self) -> dict[str, Any]:
        """The JSON record the store keeps."""
        return {
            "client_id": self.client_id,
            "redirect_uris": list(self.redirect_uris),
            "name": self.name,
            "auth_method": self.auth_method,
            "secret_hash": self.secret_hash,
            "source": self.source,
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Client:
        """The client a `to_record` record describes."""
        return cls(
            client_id=str(record["client_id"]),
            redirect_uris=tuple(record["redirect_uris"]),
            name=str(record.get("name", "")),
            auth_method=cast(TokenAuthMethod, record.get("auth_method", "none")),
            secret_hash=record.get("secret_hash"),
            source=cast(ClientSource, record.get("source", "registered")),
        )


class ClientRegistry:
    """Finds, registers and authenticates clients."""

    def __init__(
        self,
        config: OAuthConfig,
        store: TokenStore,
        *,
        documents: ClientDocuments | None = None,
        server_metadata: Mapping[str, Any],
        clock: Clock | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.documents = documents
        self.server_metadata = server_metadata
        self._clock = clock or time.time
        self._configured = {
            client.client_id: Client(
                client_id=client.client_id,
                redirect_uris=client.redirect_uris,
                name=client.name,
                auth_method="client_secret_basic" if client.client_secret else "none",
                secret_hash=token_hash(client.client_secret) if client.client_secret else None,
                source="configured",
            )
            for client in config.clients
        }

    async def find(self, client_id: str, *, address: str) -> Client | None:
        """The client with this client_id, or None; ClientDocumentError when its metadata document is unusable
        or may not be fetched now. `address` is where the request comes from: a metadata document fetched for it
        counts against that address's budgets (`oauth.cimd.FetchBudgets`). ProtocolError `invalid_client` for a
        client_id no client can have: with a control character (which would reach the operator's log) or longer
        than 2000 characters."""
        if not client_id.isprintable() or len(client_id) > _MAX_CLIENT_ID:
            raise ProtocolError(
                "invalid_client",
                f"the client_id holds control characters or is longer than {_MAX_CLIENT_ID} characters; send the "
                "client_id the registration endpoint returned, or the https URL of the client's metadata document",
            )
        configured = self._configured.get(client_id)
        if configured is not None:
            return configured
        if is_client_id_url(client_id):
            if self.documents is None or not self.config.client_metadata_documents:
                return None
            document = await self.documents.fetch(client_id, address=address)
            return self._document_client(client_id, document)
        key = token_hash(client_id)
        record = await self.store.get("client", key) or await self.store.get("new-client", key)
        return Client.from_record(record) if record is not None else None

    async def mark_used(self, client: Client) -> None:
        """Keep a registered client that has just had tokens for `_REGISTRATION_TTL` more: a new one stops
        counting against `max_unused_clients`."""
        if client.source != "registered":
            return
        key, expires_at = token_hash(client.client_id), self._clock() + _REGISTRATION_TTL
        if await self.store.extend("client", key, expires_at=expires_at):
            return
        record = await self.store.get("new-client", key)
        if record is not None:
            await self.store.put("client", key, record, expires_at=expires_at)
            await self.store.delete("new-client", key)

    def _document_client(self, url: str, document: Mapping[str, Any]) -> Client:
        # draft-ietf-oauth-client-id-metadata-document §4.1: the document's client_id is the URL it was fetched from.
        if document.get("client_id") != url:
            raise ProtocolError(
                "invalid_client",
                f"the client metadata document at {url!r} names client_id {document.get('client_id')!r}; "
                "it must name its own URL",
            )
        if "client_secret" in document or "client_secret_expires_at" in document:
            raise ProtocolError("invalid_client", f"the client metadata document at {url!r} must not hold a secret")
        method = document.get("token_endpoint_auth_method", "none")
        if method != "none":
            raise ProtocolError(
                "invalid_client",
                f"the client metadata document at {url!r} asks for token_endpoint_auth_method {method!r}; "
                "this server accepts documents of public clients ('none') only",
            )
        metadata = self._checked_metadata({**document, "token_endpoint_auth_method": "none"}, code="invalid_client")
        return Client(
            client_id=url,
            redirect_uris=tuple(metadata["redirect_uris"]),
            name=str(metadata.get("client_name") or ""),
            auth_method="none",
            source="document",
        )

    def _checked_metadata(
        self, metadata: Mapping[str, Any], *, code: Literal["invalid_client", "invalid_client_metadata"]
    ) -> dict[str, Any]:
        wrong = _metadata_type_problem(metadata)
        if wrong is not None:
            field, reason = wrong
            if code == "invalid_client_metadata" and field == "redirect_uris":
                raise ProtocolError("invalid_redirect_uri", reason)
            raise ProtocolError(code, reason)
        try:
            checked = _authlib.validate_client_metadata(metadata, self.server_metadata)
        except ProtocolError as error:
            raise ProtocolError(code if code == "invalid_client" else error.code, error.description) from None
        uris = checked.get("redirect_uris")
        if not isinstance(uris, list) or not uris:
            raise ProtocolError(
                "invalid_redirect_uri" if code == "invalid_client_metadata" else code,
                "redirect_uris must list at least one redirect URI",
            )
        if len(uris) > _MAX_REDIRECT_URIS:
            raise ProtocolError(code, f"redirect_uris lists {len(uris)} URIs; at most {_MAX_REDIRECT_URIS} are allowed")
        for uri in uris:
            problem = redirect_uri_problem(uri)
            if problem is not None:
                raise ProtocolError("invalid_redirect_uri" if code == "invalid_client_metadata" else code, problem)
        name = checked.get("client_name")
        if name is not None and (not isinstance(name, str) or len(name) > 200):
            raise ProtocolError(code, "client_name must be a string of at most 200 characters")
        application_type = metadata.get("application_type")
        if application_type is not None:
            if application_type not in ("web", "native"):
                raise ProtocolError(
                    code,
                    f"application_type must be 'web' or 'native', not {application_type!r} (OpenID Connect "
                    "Dynamic Client Registration §2)",
                )
            for uri in uris:
                problem = application_type_problem(uri, application_type)
                if problem is not None:
                    raise ProtocolError("invalid_redirect_uri" if code == "invalid_client_metadata" else code, problem)
            checked["application_type"] = application_type
        return checked

    async def register(self, metadata: Mapping[str, Any], *, address: str) -> dict[str, Any]:
        """Register a client (RFC 7591 §3.1) for a request from `address`; the client information (§3.2.1).

        A client that asks for `none` gets no secret; any other method gets one, returned once and stored hashed.
        ProtocolError `temporarily_unavailable`: 429 when `address` registered too many clients this hour, 503
        when too many clients were registered and never used.
        """
        config = self.config
        spent = await spend(
            self.store,
            "registrations",
            address,
            (
                Limit(scope="address", most=config.registrations_per_address, window=_REGISTRATION_WINDOW),
                Limit(scope="network", most=config.registrations_per_network, window=config.unused_client_ttl),
            ),
        )
        if spent is not None:
            whose = "this address" if spent.scope == "address" else "this address's network"
            within = "within the hour" if spent.window == _REGISTRATION_WINDOW else f"within {spent.window:g} s"
            raise ProtocolError(
                "temporarily_unavailable",
                f"{whose} registered {spent.most} clients {within}, the most allowed; reuse a client_id registered "
                f"already, or try again {'in an hour' if spent.window == _REGISTRATION_WINDOW else 'later'}",
                status=429,
                retry_after=int(min(spent.window, _REGISTRATION_WINDOW)),
            )
        if not isinstance(metadata, Mapping):
            raise ProtocolError("invalid_client_metadata", "the registration request must be a JSON object")
        checked = self._checked_metadata(metadata, code="invalid_client_metadata")
        method = cast(TokenAuthMethod, checked["token_endpoint_auth_method"])
        client_id = new_token()
        secret = new_token() if method != "none" else None
        client = Client(
            client_id=client_id,
            redirect_uris=tuple(checked["redirect_uris"]),
            name=str(checked.get("client_name") or ""),
            auth_method=method,
            secret_hash=token_hash(secret) if secret else None,
        )
        now, most = self._clock(), self.config.max_unused_clients
        expires_at = now + self.config.unused_client_ttl
        if not await self.store.put_capped(
            "new-client", token_hash(client_id), client.to_record(), expires_at=expires_at, limit=most
        ):
            logger.warning("refused a registration: %d registered clients have had no token yet", most)
            raise ProtocolError(
                "temporarily_unavailable",
                f"registration is closed for now: {most} registered clients have not been used yet; try again later",
                retry_after=int(min(self.config.unused_client_ttl, _REGISTRATION_WINDOW)),
            )
        response: dict[str, Any] = {
            **checked,
            "client_id": client_id,
            "client_id_issued_at": int(now),
            "grant_types": checked.get("grant_types") or ["authorization_code", "refresh_token"],
            "response_types": checked.get("response_types") or ["code"],
        }
        if secret is not None:
            response["client_secret"] = secret
            response["client_secret_expires_at"] = 0
        return response

    async def authenticate(self, form: Mapping[str, str], authorization: str | None, *, address: str) -> Client:
        """The client a token or revocation request from `address` comes from, authenticated (RFC 6749 §2.3,
        OAuth 2.1 §2.4) the one way it registered (`token_endpoint_auth_method`).

        ProtocolError `invalid_request` (400) when the request authenticates two ways at once (RFC 6749 §2.3:
        "MUST NOT use more than one authentication method in each request"); `invalid_client` (401) when the
        client is unknown, uses another method than its own or sends a wrong secret: an MCP client that gets
        it registers again. `temporarily_unavailable` (429) when its metadata document may not be fetched now:
        the client is not at fault, and tries again later.
        """
        client_id, secret = form.get("client_id"), form.get("client_secret")
        used: TokenAuthMethod = "client_secret_post" if secret else "none"
        basic = authorization is not None and authorization[:6].lower() == "basic "
        if basic and authorization is not None:
            if "client_secret" in form:
                raise ProtocolError(
                    "invalid_request",
                    "the request authenticates the client twice (HTTP Basic and client_secret in the body); "
                    "use one method only, the one the client registered",
                )
            try:
                decoded = base64.b64decode(authorization[6:].strip(), validate=True).decode()
                user, _, password = decoded.partition(":")
            except ValueError:
                raise ProtocolError(
                    "invalid_client", "the Basic authorization header is not base64 of id:secret"
                ) from None
            # RFC 6749 §2.3.1: the id and secret are form-urlencoded before Basic encoding.
            basic_id, secret = unquote(user.replace("+", " ")), unquote(password.replace("+", " "))
            if client_id is not None and client_id != basic_id:
                raise ProtocolError("invalid_client", "client_id in the body differs from the Basic credentials")
            client_id, used = basic_id, "client_secret_basic"
        if not client_id:
            raise ProtocolError("invalid_client", "the request names no client: send client_id")
        try:
            client = await self.find(client_id, address=address)
        except ProtocolError as error:
            if error.code == "temporarily_unavailable":
                raise
            raise ProtocolError("invalid_client", error.description) from None
        if client is None:
            raise ProtocolError(
                "invalid_client",
                f"unknown client_id {client_id!r}; register the client again at the registration endpoint",
            )
        if client.auth_method == "none":
            if secret:
                raise ProtocolError(
                    "invalid_client",
                    f"client {client_id!r} is a public client (token_endpoint_auth_method 'none'); send no secret",
                )
            return client
        if not client.accepts(used):
            how = _EITHER_WAY if client.source == "configured" else _HOW_TO_AUTHENTICATE[client.auth_method]
            raise ProtocolError("invalid_client", f"client {client_id!r} {how}")
        if not client.secret_matches(secret):
            raise ProtocolError("invalid_client", f"client {client_id!r} must authenticate with its client_secret")
        return client


_HOW_TO_AUTHENTICATE: Final[dict[TokenAuthMethod, str]] = {
    "none": "is a public client; send no secret",
    "client_secret_basic": (
        "registered token_endpoint_auth_method 'client_secret_basic': send its id and secret in the "
        "Authorization header (HTTP Basic), not in the body"
    ),
    "client_secret_post": (
        "registered token_endpoint_auth_method 'client_secret_post': send client_id and client_secret in the "
        "body, not in an Authorization header"
    ),
}
#: A configured client with a secret may send it either way (`Client.accepts`).
_EITHER_WAY: Final = (
    "has a client secret: send it with the client's id in the Authorization header (HTTP Basic) or as "
    "client_secret in the body"
)
