"""End to end: the official `mcp` client's OAuth support (discovery, registration, PKCE, refresh) against the
demo shop on real uvicorn, with the test as the person who pastes an API key and allows access."""

from __future__ import annotations

import httpx2
import pytest

from demo import MEMBER_KEY
from gateway.observability import Observer
from tests.oauth.clients import MemoryStorage, connect, handlers, provider, whoami
from tests.oauth.conftest import REDIRECT_URI, Browser, query, serve_site

pytestmark = pytest.mark.anyio


async def test_an_mcp_client_discovers_registers_logs_in_and_calls_as_the_user_who_pasted_the_key() -> None:
    async with serve_site() as site, httpx2.AsyncClient() as web:
        browser, storage = Browser(web, key=MEMBER_KEY), MemoryStorage()
        async with connect(site, provider(site, storage, *handlers(browser))) as client:
            result = await client.call_tool("call_function", {"name": "users.get_current_user", "args": {}})
            assert not result.is_error, result
            # The REST API accepts only its own API keys, so this proves the MCP token was swapped for Bob's key.
            assert whoami(result)["name"] == "Bob Okafor"
        assert len(browser.landed) == 1
        landed = query(browser.landed[0])
        assert browser.landed[0].startswith(REDIRECT_URI + "?")
        assert landed["iss"] == site.base
        assert storage.client is not None and storage.client.client_name == "Claude"
        assert storage.tokens is not None and storage.tokens.refresh_token
        assert storage.tokens.scope == "mcp"


async def test_logins_and_refusals_are_counted_for_the_operator_and_never_show_the_key() -> None:
    observer = Observer(metrics=True)
    async with serve_site() as site, httpx2.AsyncClient() as web:
        site.server.observe(observer.oauth)
        browser, storage = Browser(web, key=MEMBER_KEY), MemoryStorage()
        async with connect(site, provider(site, storage, *handlers(browser))) as client:
            await client.call_tool("whoami", {})
        refused = await web.post(f"{site.base}/token", data={"grant_type": "refresh_token", "refresh_token": "x"})
        assert refused.status_code == 401
    assert observer.metrics is not None
    text = observer.metrics.exposition().decode()
    assert 'mcp_gateway_oauth_logins_total{outcome="accepted"} 1.0' in text
    assert 'mcp_gateway_oauth_logins_total{outcome="allowed"} 1.0' in text
    assert 'mcp_gateway_oauth_refusals_total{endpoint="resource",error="no_token"} 1.0' in text
    assert 'mcp_gateway_oauth_refusals_total{endpoint="token",error="invalid_client"} 1.0' in text
    assert MEMBER_KEY not in text


async def test_the_client_refreshes_rotating_the_refresh_token_and_an_old_one_revokes_the_login() -> None:
    async with serve_site() as site, httpx2.AsyncClient() as web:
        browser, storage = Browser(web), MemoryStorage()
        auth = provider(site, storage, *handlers(browser))
        async with connect(site, auth) as client:
            for _ in range(2):
                # The SDK refreshes when its own clock says the access token expired; make it say so.
                auth.context.token_expiry_time = 1.0
                result = await client.call_tool("call_function", {"name": "users.get_current_user", "args": {}})
                assert whoami(result)["id"] == 1
        refresh_tokens = [tokens.refresh_token for tokens in storage.history]
        assert len(refresh_tokens) >= 3 and len(set(refresh_tokens)) == len(refresh_tokens)
        assert len(browser.landed) == 1
        assert storage.client is not None and storage.tokens is not None
        token_url = f"{site.base}/token"
        replay = await web.post(
            token_url,
            data={
                "grant_type": "refresh_token",
                "refresh_token": refresh_tokens[0],
                "client_id": storage.client.client_id,
            },
        )
        assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
        # The replay revoked the whole family: the newest tokens are dead too.
        latest = await web.post(
            token_url,
            data={
                "grant_type": "refresh_token",
                "refresh_token": storage.tokens.refresh_token,
                "client_id": storage.client.client_id,
            },
        )
        assert latest.status_code == 400 and latest.json()["error"] == "invalid_grant"
        refused = await web.post(
            site.mcp_url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"authorization": f"Bearer {storage.tokens.access_token}", "accept": "application/json"},
        )
        assert refused.status_code == 401
        assert 'error="invalid_token"' in refused.headers["www-authenticate"]


async def test_an_mcp_request_without_a_token_gets_401_with_the_resource_metadata_and_scope() -> None:
    async with serve_site() as site, httpx2.AsyncClient() as web:
        response = await web.post(site.mcp_url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert response.status_code == 401
        challenge = response.headers["www-authenticate"]
        metadata_url = f"{site.base}/.well-known/oauth-protected-resource/mcp"
        assert challenge == f'Bearer resource_metadata="{metadata_url}", scope="mcp"'
        metadata = (await web.get(metadata_url)).json()
        assert metadata["resource"] == site.mcp_url
        assert metadata["authorization_servers"] == [site.base]
