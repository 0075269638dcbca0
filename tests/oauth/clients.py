"""The official `mcp` client's OAuth support, set up for tests: token storage in memory, the person at the browser
as its redirect and callback handlers, and a connection to a site's MCP endpoint."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Protocol

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from tests.oauth.conftest import REDIRECT_URI, query


class Served(Protocol):
    """A site serving an MCP endpoint (`tests.oauth.conftest.Site`, or another test's)."""

    @property
    def mcp_url(self) -> str: ...


class Person(Protocol):
    """Someone at a browser who logs in and allows (`tests.oauth.conftest.Browser`, or one who logs in at an
    identity provider): `authorize(url)` is where the browser ends up, at the client's redirect URI."""

    async def authorize(self, url: str) -> str: ...


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


def handlers(browser: Person) -> tuple[RedirectHandler, CallbackHandler]:
    """The SDK's redirect and callback handlers, with `browser` as the person who logs in and allows."""
    callbacks: list[str] = []

    async def redirect(url: str) -> None:
        callbacks.append(await browser.authorize(url))

    async def callback() -> AuthorizationCodeResult:
        params = query(callbacks.pop())
        return AuthorizationCodeResult(code=params["code"], state=params.get("state"), iss=params.get("iss"))

    return redirect, callback


def provider(
    site: Served,
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
async def connect(site: Served, auth: OAuthClientProvider) -> AsyncIterator[Client]:
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
