"""End to end: the official `mcp` client's OAuth support (discovery, registration, PKCE, refresh) against the
demo shop on real uvicorn, with the test as the person who pastes an API key and allows access."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from demo import MEMBER_KEY
from gateway.observability import Observer
from tests.oauth.conftest import REDIRECT_URI, Browser, Site, query, serve_site

pytestmark = pytest.mark.anyio


class MemoryStorage:
    """The client's token storage (the SDK's `TokenStorage`), kept in memory and inspectable."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None
        self.history: list[OAuthToken] = []

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens
        self.history.append(tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


RedirectHandler = Callable[[str], Awaitable[None]]
CallbackHandler = Callable[[], Awaitable[AuthorizationCodeResult]]


def handlers(browser: Browser) -> tuple[RedirectHandler, CallbackHandler]:
    """The SDK's redirect and callback handlers, with `browser` as the person who logs in and allows."""
    callbacks: list[str] = []

    async def redirect(url: str) -> None:
        callbacks.append(await browser.authorize(url))

    async def callback() -> AuthorizationCodeResult:
        params = query(callbacks.pop())
        return AuthorizationCodeResult(code=params["code"], state=params.get("state"), iss=params.get("iss"))

    return redirect, callback


def provider(
    site: Site,
    storage: MemoryStorage,
    redirect: RedirectHandler,
    callback: CallbackHandler,
    *,
    redirect_uri: str = REDIRECT_URI,
) -> OAuthClientProvider:
    """The SDK's OAuth provider for the site, registering as "Claude" with `redirect_uri`."""
    metadata = OAuthClientMetadata(
        redirect_uris=[redirect_uri],  # type: ignore[list-item]  # pydantic parses the string
        client_name="Claude",
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    return OAuthClientProvider(
        server_url=site.mcp_url,
        client_metadata=metadata,
        storage=storage,
        redirect_handler=redirect,
        callback_handler=callback,
    )


@asynccontextmanager
async def connect(site: Site, auth: OAuthClientProvider) -> AsyncIterator[Client]:
    """The official MCP client connected to the site's MCP endpoint through `auth`."""
    async with (
        httpx2.AsyncClient(auth=auth, timeout=10) as http,
        Client(streamable_http_client(site.mcp_url, http_client=http)) as client,
    ):
        yield client


def whoami(result: types.CallToolResult) -> dict[str, object]:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    value = json.loads(block.text)
    assert isinstance(value, dict)
    return value


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
