"""`serve --oauth`: the command line composes the oauth package with the gateway (the gateway itself never imports
oauth): the flags, and the authorization server whose login checks each API key with the gateway's whoami."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from gateway.errors import ConfigError as GatewayConfigError
from gateway.errors import UnavailableError
from gateway.extras import require
from gateway.flags import cli

if TYPE_CHECKING:
    from catalog.model import Catalog
    from gateway.gateway import Gateway

__all__ = ["OAuthFlags", "OAuthSetup", "oauth_server"]


_AuthMethod = Literal["client_secret_basic", "client_secret_post"]


def _auth_method(text: str) -> _AuthMethod:
    if text == "client_secret_basic":
        return "client_secret_basic"
    if text == "client_secret_post":
        return "client_secret_post"
    raise ValueError(f"{text!r} is not client_secret_basic or client_secret_post")


@dataclass(frozen=True, kw_only=True)
class OAuthFlags:
    """OAuth, for claude.ai and ChatGPT connectors (needs MCP_GATEWAY_OAUTH_SECRET)."""

    oauth: bool = field(
        default=False,
        metadata=cli(
            "guard the MCP endpoint with OAuth 2.1 (the 'oauth' extra); people log in with the API key they use with "
            "the REST API",
            where="serve",
        ),
    )
    public_url: str | None = field(
        default=None,
        metadata=cli(
            "the https base URL clients reach the gateway at (behind a proxy); default http://HOST:PORT",
            metavar="URL",
            where="serve",
        ),
    )
    oauth_store: str = field(
        default=".mcp-gateway/oauth.sqlite3",
        metadata=cli(
            "where logins and tokens live: a SQLite file (default .mcp-gateway/oauth.sqlite3) or redis://host:port/db "
            "(the 'redis' extra)",
            metavar="PATH|URL",
            where="serve",
        ),
    )
    oauth_clients: tuple[str, ...] = field(
        default=(),
        metadata=cli(
            "pre-register a public client with one redirect URI",
            name="oauth-client",
            metavar="ID=REDIRECT_URI",
            where="serve",
        ),
    )
    no_dcr: bool = field(
        default=False,
        metadata=cli(
            "turn dynamic client registration (/register) off: clients identify with a Client ID Metadata "
            "Document URL or are pre-registered",
            where="serve",
        ),
    )
    oauth_upstream: str | None = field(
        default=None,
        metadata=cli(
            "log people in at the API's OpenID Connect provider (its issuer URL) instead of asking for an API key; "
            "the API is called with the provider's access token",
            metavar="ISSUER",
            where="serve",
        ),
    )
    oauth_upstream_client_id: str | None = field(
        default=None,
        metadata=cli(
            "this gateway's client id at the provider (its secret: MCP_GATEWAY_OAUTH_UPSTREAM_CLIENT_SECRET); "
            "register the redirect URI PUBLIC_URL/authorize/callback there",
            metavar="ID",
            where="serve",
        ),
    )
    oauth_upstream_secret: str | None = field(
        default=None,
        metadata=cli(
            "this gateway's client secret at the provider",
            env="OAUTH_UPSTREAM_CLIENT_SECRET",
            flag=False,
            where="serve",
        ),
    )
    oauth_upstream_auth_method: _AuthMethod = field(
        default="client_secret_basic",
        metadata=cli(
            "how this gateway authenticates at the provider's token endpoint: client_secret_basic (default) or "
            "client_secret_post (Auth0's default)",
            metavar="METHOD",
            parse=_auth_method,
            where="serve",
        ),
    )
    oauth_upstream_scopes: tuple[str, ...] = field(
        default=(),
        metadata=cli(
            "an API scope to ask the provider for, besides openid profile email offline_access",
            name="oauth-upstream-scope",
            metavar="SCOPE",
            where="serve",
        ),
    )
    oauth_upstream_audience: str | None = field(
        default=None,
        metadata=cli(
            "the identifier the API expects in its tokens' aud (sent as resource and audience)",
            metavar="URI",
            where="serve",
        ),
    )
    oauth_upstream_audience_params: tuple[str, ...] = field(
        default=("resource",),
        metadata=cli(
            "the authorization request's parameter that carries the audience (default resource, RFC 8707; Auth0: "
            "audience; none for Keycloak and Entra ID, which take it from the scopes)",
            name="oauth-upstream-audience-param",
            metavar="NAME|none",
            where="serve",
        ),
    )
    oauth_token_exchange: bool = field(
        default=False,
        metadata=cli(
            "exchange each person's token at the provider (RFC 8693) for one whose audience is the API",
            where="serve",
        ),
    )


class OAuthSetup:
    """The OAuth server of `serve --oauth`, made once the gateway's catalog is known (`start`): with an identity
    provider, the scopes it knows are the document's. Its login checks keys through the gateway appended to
    `gateways`; `auth` is the gateway's auth function, bound before the server exists."""

    def __init__(self, make: Callable[[Catalog], Any], allowed_hosts: list[str], gateways: list[Gateway]) -> None:
        self._make = make
        self.server: Any = None
        self.allowed_hosts = allowed_hosts
        self.gateways = gateways

    def start(self, catalog: Catalog) -> Any:
        """Make the OAuth server for `catalog`'s functions; the server."""
        self.server = self._make(catalog)
        return self.server

    async def auth(self, token: str | None) -> Mapping[str, str]:
        """The server's `auth`; the gateway is given this one before the server is made."""
        if self.server is None:
            raise UnavailableError("the OAuth server has not started yet; retry shortly", retry_after=1)
        headers: Mapping[str, str] = await self.server.auth(token)
        return headers


def document_scopes(catalog: Catalog) -> tuple[str, ...]:
    """Every OAuth scope the document's security requirements name, in order of first use."""
    return tuple(
        dict.fromkeys(scope for function in catalog.functions() for needed in function.oauth_scopes for scope in needed)
    )


def oauth_server(
    options: argparse.Namespace, flags: OAuthFlags, *, host: str, port: int, path: str, demo: bool
) -> OAuthSetup:
    """The authorization server `flags` describe for the gateway `options` describe, served at `host`:`port`,
    its MCP endpoint at `path` (made by `OAuthSetup.start`; the flags are checked here)."""
    import secrets
    from urllib.parse import urlsplit

    from oauth.redis_client import URL_SCHEMES as REDIS_URL_SCHEMES

    require("oauth", "--oauth")
    if flags.oauth_store.startswith(REDIS_URL_SCHEMES):
        require("redis", "a Redis token store (--oauth-store redis://...)")
    from oauth import ApiKeyLogin, OAuthConfig, OAuthServer, PreregisteredClient, open_store
    from oauth.errors import OAuthError
    from oauth.upstream import IdentityProvider, ProviderLogin

    whoami = options.whoami or ("users.get_current_user" if demo else None)
    if not whoami and not flags.oauth_upstream:
        raise GatewayConfigError(
            "--oauth needs --whoami FUNCTION (the login page checks each API key with it) or --oauth-upstream ISSUER "
            "(people log in at the API's identity provider)"
        )
    secret = os.environ.get("MCP_GATEWAY_OAUTH_SECRET", "")
    if not secret:
        secret = secrets.token_urlsafe(32)
        print(
            "mcp-gateway: MCP_GATEWAY_OAUTH_SECRET is not set; using a random one, so every login ends when the "
            "gateway stops. Set it to 32 or more random characters to keep logins.",
            file=sys.stderr,
        )
    base = (flags.public_url or f"http://{host}:{port}").rstrip("/")
    clients = []
    for entry in flags.oauth_clients:
        client_id, separator, redirect_uri = entry.partition("=")
        if not separator:
            raise GatewayConfigError(f"--oauth-client takes ID=REDIRECT_URI, not {entry!r}")
        clients.append(PreregisteredClient(client_id=client_id, redirect_uris=(redirect_uri,)))
    gateways: list[Gateway] = []

    async def check(headers: Any) -> Any:
        return await gateways[0].call(headers, str(whoami), {})

    def make(catalog: Catalog) -> Any:
        try:
            return server_for(catalog)
        except OAuthError as error:
            raise GatewayConfigError(f"--oauth: {error}") from error

    def server_for(catalog: Catalog) -> Any:
        scopes: tuple[str, ...] = ("mcp",)
        initial: tuple[str, ...] | None = None
        login: Any = ApiKeyLogin(check)
        if flags.oauth_upstream:
            # The scopes clients may ask for are the document's (and those the operator names, asked at login).
            scopes = tuple(dict.fromkeys((*document_scopes(catalog), *flags.oauth_upstream_scopes))) or scopes
            initial = tuple(flags.oauth_upstream_scopes) or None
            login = ProviderLogin(
                IdentityProvider(
                    issuer=flags.oauth_upstream,
                    client_id=flags.oauth_upstream_client_id or "",
                    client_secret=flags.oauth_upstream_secret,
                    auth_method=flags.oauth_upstream_auth_method if flags.oauth_upstream_secret else "none",
                    audience=flags.oauth_upstream_audience,
                    audience_params=tuple(name for name in flags.oauth_upstream_audience_params if name != "none"),
                    token_exchange=flags.oauth_token_exchange,
                )
            )
        config = OAuthConfig(
            issuer=base,
            resource=f"{base}{path}",
            secret_key=secret.encode(),
            scopes=scopes,
            default_scopes=initial,
            resource_name=options.output__name or ("Demo shop" if demo else "MCP server"),
            clients=tuple(clients),
            dynamic_registration=not flags.no_dcr,
        )
        return OAuthServer(config, login=login, store=open_store(flags.oauth_store))

    return OAuthSetup(make, [urlsplit(base).netloc], gateways)
