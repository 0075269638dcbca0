"""`OAuthConfig`: where the authorization server lives, what it protects, and how long its tokens last."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import urlsplit

from oauth.errors import ConfigError

__all__ = [
    "LOOPBACK_NAMES",
    "Network",
    "OAuthConfig",
    "PreregisteredClient",
    "check_base_url",
    "is_loopback_url",
]

LOOPBACK_NAMES: Final = frozenset({"localhost", "127.0.0.1", "::1"})
"""Host names that only reach this machine: the one place plain `http:` is allowed (OAuth 2.1 §1.5, RFC 8252 §7.3)."""

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
_SCOPE_TOKEN = re.compile(r"^[\x21\x23-\x5b\x5d-\x7e]+$")


def is_loopback_url(url: str) -> bool:
    """Whether `url` names a loopback host (localhost, 127.0.0.1 or [::1])."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return False
    return host in LOOPBACK_NAMES


def check_base_url(name: str, url: str) -> None:
    """ConfigError unless `url` is an absolute https URL (http for loopback hosts) with no query or fragment."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a malformed port
    except ValueError as error:
        raise ConfigError(f"{name} {url!r} is not a URL: {error}") from None
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise ConfigError(f"{name} must be an absolute https:// URL, got {url!r}")
    if parts.scheme == "http" and parts.hostname not in LOOPBACK_NAMES:
        # OAuth 2.1 §1.5: every endpoint but a loopback one is served over TLS.
        raise ConfigError(f"{name} {url!r} must use https:// (plain http:// is for localhost only)")
    if parts.query or parts.fragment:
        raise ConfigError(f"{name} {url!r} must have no query and no fragment")


@dataclass(frozen=True, kw_only=True)
class PreregisteredClient:
    """A client registered by configuration, e.g. for a connector whose client_id an admin types in.

    Without `client_secret` it is a public client (PKCE only, `token_endpoint_auth_method: none`); with one it
    authenticates at the token endpoint with `client_secret_basic` or `client_secret_post`.
    """

    client_id: str
    redirect_uris: tuple[str, ...]
    name: str = ""
    client_secret: str | None = None

    def __post_init__(self) -> None:
        if not self.client_id or any(ch.isspace() for ch in self.client_id):
            raise ConfigError(f"client_id must be a non-empty string without spaces, got {self.client_id!r}")
        if isinstance(self.redirect_uris, str) or not self.redirect_uris:
            raise ConfigError(f"client {self.client_id!r}: redirect_uris must be a non-empty tuple of URLs")
        if self.client_secret is not None and len(self.client_secret) < 16:
            raise ConfigError(f"client {self.client_id!r}: client_secret must have at least 16 characters")


def _check_growing(smaller: str, larger: str, config: OAuthConfig, *, below: bool = True) -> None:
    """ConfigError unless the limit `smaller` is below (or, `below` False, at most) the limit `larger`: a
    network's limit must stay below everyone's, so that one network cannot spend it."""
    low, high = getattr(config, smaller), getattr(config, larger)
    if low < high or (not below and low == high):
        return
    must = "below" if below else "at most"
    raise ConfigError(
        f"{smaller} ({low}) must be {must} {larger} ({high}), so that one network cannot use up what everyone "
        f"shares; lower {smaller} or raise {larger}"
    )


@dataclass(frozen=True, kw_only=True)
class OAuthConfig:
    """The authorization server's configuration; vary it with `dataclasses.replace`.

    `issuer` is the public base URL of the authorization server (RFC 8414 §2: https, no query or fragment; a
    path is allowed). Its endpoints are `<issuer>/authorize`, `/token`, `/register` and `/revoke`. `resource`
    is the public URL of the MCP endpoint the tokens are for (RFC 8707 audience, RFC 9728 `resource`). Behind
    a proxy, give the URLs clients see. `secret_key` (at least 32 bytes, keep it stable across restarts and
    equal on every instance) seals the users' REST credentials at rest and signs the login forms.

    Lifetimes are seconds. `scopes` are the scopes the server knows (RFC 6749 §3.3); a request for others is
    trimmed to these, never refused. `default_scopes` (all of `scopes` when None) are what a request that names
    none is given, and what the 401 challenge asks for; a client asks for more when a call needs them (scope
    step-up). `login` names the login page: `api_key` asks for the key the user has
    for the REST API; `session` uses the host app's own login (see `oauth.login.SessionLogin`).

    Limits per client address (an IPv6 address by its /64) keep one address from filling the store, and limits
    per network (an IPv4 /24, an IPv6 /48) keep the many addresses of one holder from doing it together: each is
    below the overall one, so no network can close a door for everyone. `registrations_per_address` dynamic
    registrations an hour, and `registrations_per_network` within `unused_client_ttl`; a registered client that
    gets no token within `unused_client_ttl` is forgotten, and at most `max_unused_clients` such clients are kept
    at once. `pending_logins_per_address`, `pending_logins_per_network` and `pending_logins` (everyone's) logins
    started per `login_ttl`. `key_checks_per_address` and `key_checks_per_network` API keys checked (with the
    REST API's whoami) per 15 minutes. The address is the connection's peer as the ASGI server reports it; behind
    a reverse proxy, name the proxy in `trusted_proxies` (addresses or networks, e.g. "10.0.0.0/8") so that its
    `X-Forwarded-For` is read. Without it forwarded headers are never trusted, and every client behind the proxy
    shares its limits. (A server that already takes the address from trusted proxies, as
    `mcp-gateway serve --trusted-proxy` has uvicorn do, needs nothing here.)

    `refreshes_per_grant` limits how often one login's tokens are refreshed: that many times a minute. A client
    refreshes when its access token expires (`access_token_ttl`, an hour) or is refused, so six leave room for
    retries and scope changes; a client refreshing in a loop gets 8,640 a day instead of hundreds a second, and
    holds about `refreshes_per_grant` * 60 unexpired hour-long access tokens of one login at most.
    """

    issuer: str
    resource: str
    secret_key: bytes = field(repr=False)
    scopes: tuple[str, ...] = ("mcp",)
    default_scopes: tuple[str, ...] | None = None
    resource_name: str = "MCP server"
    access_token_ttl: float = 3600.0
    refresh_token_ttl: float = 30 * 24 * 3600.0
    code_ttl: float = 60.0
    login_ttl: float = 900.0
    clients: tuple[PreregisteredClient, ...] = ()
    dynamic_registration: bool = True
    client_metadata_documents: bool = True
    trusted_proxies: tuple[str, ...] = ()
    registrations_per_address: int = 60
    registrations_per_network: int = 1_000
    pending_logins_per_address: int = 100
    pending_logins_per_network: int = 1_000
    pending_logins: int = 10_000
    key_checks_per_address: int = 30
    key_checks_per_network: int = 300
    refreshes_per_grant: int = 6
    max_unused_clients: int = 10_000
    unused_client_ttl: float = 24 * 3600.0

    def __post_init__(self) -> None:
        check_base_url("issuer", self.issuer)
        check_base_url("resource", self.resource)
        if self.issuer.endswith("/"):
            raise ConfigError(f"issuer {self.issuer!r} must not end with '/': clients compare it as a string")
        if not isinstance(self.secret_key, bytes) or len(self.secret_key) < 32:
            raise ConfigError("secret_key must be at least 32 random bytes, e.g. secrets.token_bytes(32)")
        if isinstance(self.scopes, str) or not self.scopes:
            raise ConfigError(f"scopes must be a non-empty tuple of scope names, got {self.scopes!r}")
        for scope in self.scopes:
            if not _SCOPE_TOKEN.match(scope):
                raise ConfigError(
                    f"scope {scope!r} is not an RFC 6749 scope token (printable ASCII, no space or quote)"
                )
        if self.default_scopes is not None and (
            isinstance(self.default_scopes, str) or not set(self.default_scopes) <= set(self.scopes)
        ):
            raise ConfigError(
                f"default_scopes must be a tuple of some of scopes {self.scopes!r}, got {self.default_scopes!r}"
            )
        for name in ("access_token_ttl", "refresh_token_ttl", "code_ttl", "login_ttl", "unused_client_ttl"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or value <= 0:
                raise ConfigError(f"{name} must be a positive number of seconds, got {value!r}")
        if self.code_ttl > 600:
            # RFC 6749 §4.1.2: a maximum authorization code lifetime of 10 minutes is RECOMMENDED.
            raise ConfigError(f"code_ttl must be at most 600 seconds, got {self.code_ttl!r}")
        for name in (
            "registrations_per_address",
            "registrations_per_network",
            "pending_logins_per_address",
            "pending_logins_per_network",
            "pending_logins",
            "key_checks_per_address",
            "key_checks_per_network",
            "refreshes_per_grant",
            "max_unused_clients",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{name} must be a whole number of at least 1, got {value!r}")
        _check_growing("registrations_per_network", "max_unused_clients", self)
        _check_growing("pending_logins_per_address", "pending_logins_per_network", self, below=False)
        _check_growing("pending_logins_per_network", "pending_logins", self)
        _check_growing("key_checks_per_address", "key_checks_per_network", self, below=False)
        if isinstance(self.trusted_proxies, str):
            raise ConfigError(f"trusted_proxies must be a tuple of addresses, got the string {self.trusted_proxies!r}")
        self.proxy_networks  # noqa: B018 - raises ConfigError for an entry that is not an address or network
        seen: set[str] = set()
        for client in self.clients:
            if client.client_id in seen:
                raise ConfigError(f"client_id {client.client_id!r} is configured twice; client ids are unique")
            seen.add(client.client_id)

    @property
    def proxy_networks(self) -> tuple[Network, ...]:
        """`trusted_proxies` as networks (an address is a network of one)."""
        networks = []
        for entry in self.trusted_proxies:
            try:
                networks.append(ipaddress.ip_network(entry.strip(), strict=False))
            except (ValueError, AttributeError):
                raise ConfigError(
                    f"trusted_proxies: {entry!r} is not an IP address or network; give e.g. 10.0.0.7 or 10.0.0.0/8"
                ) from None
        return tuple(networks)

    @property
    def initial_scopes(self) -> tuple[str, ...]:
        """What a client that names no scope is given, and what the 401 challenge asks for."""
        return self.default_scopes if self.default_scopes is not None else self.scopes

    @property
    def secure_cookies(self) -> bool:
        """Whether the login pages are served over https, so their cookies are `Secure` and `__Host-` prefixed."""
        return self.issuer.startswith("https://")

    def endpoint(self, name: str) -> str:
        """The public URL of one endpoint of the authorization server, e.g. `endpoint('token')`."""
        return f"{self.issuer}/{name}"

    @property
    def issuer_path(self) -> str:
        """The path part of the issuer ('' for a host-only issuer); the endpoints' routes live under it."""
        return urlsplit(self.issuer).path.rstrip("/")

    @property
    def resource_path(self) -> str:
        """The path part of the resource URL, e.g. '/mcp'."""
        return urlsplit(self.resource).path.rstrip("/")
