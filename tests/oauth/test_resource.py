"""The MCP endpoint's side of OAuth: a refused token is oauth's own `TokenError`, which the gateway answers."""

from __future__ import annotations

import httpx2
import pytest

from gateway.errors import GatewayError
from gateway.rest.lifespan import app_lifespan
from oauth import TokenError
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
