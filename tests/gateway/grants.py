"""OAuth access tokens for the demo's users, issued by a real `OAuthServer` as its authorization endpoint would:
the same person can hold a broad token and a narrow one."""

from __future__ import annotations

from typing import Any

from demo import ADMIN_KEY
from oauth import OAuthConfig, OAuthServer, PreregisteredClient, Principal
from oauth._authlib import s256_challenge
from oauth.login import ApiKeyLogin

BASE = "http://localhost"
SECRET = b"a-test-secret-of-at-least-32-bytes!!"
REDIRECT = "http://127.0.0.1:9999/callback"
SCOPES = ("orders:read", "customers:read", "shop:all")


def oauth_server(scopes: tuple[str, ...] = SCOPES) -> OAuthServer:
    """An authorization server for the demo at `BASE`, with one preregistered client, `cli`."""

    async def whoami(headers: Any) -> Any:
        return {"id": "x"}

    config = OAuthConfig(
        issuer=BASE,
        resource=f"{BASE}/mcp",
        secret_key=SECRET,
        scopes=scopes,
        clients=(PreregisteredClient(client_id="cli", redirect_uris=(REDIRECT,)),),
    )
    return OAuthServer(config, login=ApiKeyLogin(whoami))


async def oauth_token(server: OAuthServer, scopes: list[str], key: str = ADMIN_KEY) -> str:
    """An access token for the user of `key`, granted `scopes`, issued as the authorization endpoint would."""
    return str((await oauth_tokens(server, scopes, key))["access_token"])


async def oauth_tokens(server: OAuthServer, scopes: list[str], key: str = ADMIN_KEY) -> dict[str, Any]:
    """The token response of a new login of the user of `key`, granted `scopes` (its access and refresh tokens)."""
    client = await server.clients.find("cli", address="127.0.0.1")
    assert client is not None
    verifier = "v" * 64
    code = await server.grants.issue_code(
        client=client,
        redirect_uri=REDIRECT,
        redirect_uri_given=True,
        code_challenge=s256_challenge(verifier),
        scopes=scopes,
        resource=f"{BASE}/mcp",
        principal=Principal(subject=key, name=key, credentials={"authorization": f"Bearer {key}"}),
    )
    return await server.grants.exchange_code(
        code=code, client=client, redirect_uri=REDIRECT, code_verifier=verifier, resource=None
    )


async def refreshed(server: OAuthServer, refresh_token: str, scopes: list[str]) -> dict[str, Any]:
    """The token response of a refresh of the same login asking for `scopes` (a narrower token, when fewer)."""
    client = await server.clients.find("cli", address="127.0.0.1")
    assert client is not None
    return await server.grants.refresh(
        refresh_token=refresh_token, client=client, scope=" ".join(scopes), resource=None
    )
