"""The MCP endpoint's side of OAuth: a refused token is oauth's own `TokenError`, which the gateway answers."""

from __future__ import annotations

import httpx2
import pytest

from gateway.errors import GatewayError
from gateway.rest.lifespan import app_lifespan
from oauth import TokenError
from oauth.resource import ScopedHeaders
from tests.gateway.grants import oauth_server, oauth_token
from tests.oauth.conftest import build_site

pytestmark = pytest.mark.anyio

BASE = "https://gw.example"
METADATA = f'resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp", scope="mcp"'


async def test_a_refused_token_is_oauths_own_error_carrying_the_challenge() -> None:
    site = build_site(BASE)
    with pytest.raises(TokenError) as missing:
        await site.server.auth(None)
    with pytest.raises(TokenError) as forged:
        await site.server.auth("never-issued")
    await site.server.aclose()
    assert not isinstance(missing.value, GatewayError)
    assert missing.value.status == 401
    assert missing.value.www_authenticate == f"Bearer {METADATA}"
    assert forged.value.www_authenticate == (
        f'Bearer {METADATA}, error="invalid_token", error_description="the access token is not valid for this resource"'
    )
    assert "refresh it or authorize again" in str(forged.value)


async def test_the_gateway_answers_oauths_refusal_with_401_and_its_challenge() -> None:
    site = build_site(BASE)
    async with (
        app_lifespan(site.app),
        httpx2.AsyncClient(transport=httpx2.ASGITransport(site.app), base_url=BASE) as web,
    ):
        response = await web.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"authorization": "Bearer never-issued", "accept": "application/json, text/event-stream"},
        )
    await site.server.aclose()
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith(f'Bearer {METADATA}, error="invalid_token"')
    assert "refresh it or authorize again" in response.text


# Scope step-up: a 403 that asks for more scopes


def test_scoped_headers_without_a_challenge_ask_for_the_scopes_held_and_those_needed_once_each() -> None:
    headers = ScopedHeaders({"authorization": "Bearer k"}, ("b", "a"), "cli")
    assert headers.insufficient_scope(["a", "c"]) == 'Bearer error="insufficient_scope", scope="b a c"'


async def test_the_headers_of_a_token_ask_for_more_scopes_with_the_servers_own_challenge() -> None:
    server = oauth_server(scopes=("orders:read", "customers:read", "admin"))
    token = await oauth_token(server, ["orders:read"])
    headers = await server.auth(token)
    await server.aclose()
    assert isinstance(headers, ScopedHeaders)
    assert headers.insufficient_scope(["customers:read", "orders:read"]) == (
        'Bearer resource_metadata="http://localhost/.well-known/oauth-protected-resource/mcp", '
        'scope="orders:read customers:read", error="insufficient_scope", '
        'error_description="the call needs more scopes than the token holds"'
    )


async def test_the_first_challenge_asks_for_the_default_scopes_and_a_given_challenge_for_those_given() -> None:
    site = build_site(BASE, scopes=("mcp", "orders:read", "admin"), default_scopes=("orders:read", "mcp"))
    with pytest.raises(TokenError) as missing:
        await site.server.auth(None)
    await site.server.aclose()
    metadata = f'resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp"'
    assert missing.value.www_authenticate == f'Bearer {metadata}, scope="orders:read mcp"'
    assert site.server.guard.challenge(scopes=["admin"]) == f'Bearer {metadata}, scope="admin"'
