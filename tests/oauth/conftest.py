"""Shared by the oauth tests: the demo shop behind OAuth, a person at a browser (forms over httpx2), a clock
to move, and a real redis-server on a free port."""

from __future__ import annotations

import dataclasses
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import anyio
import httpx2
import pytest
import uvicorn
from fastapi import FastAPI

from demo import ADMIN_KEY, create_app
from gateway.gateway import Gateway
from gateway.options import Security
from oauth import ApiKeyLogin, ClientDocuments, Login, OAuthConfig, OAuthServer, TokenStore
from tests.gateway.conftest import _Uvicorn

SECRET = b"a-test-secret-of-at-least-32-bytes!!"
REDIRECT_URI = "https://claude.ai/api/mcp/auth_callback"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class FakeClock:
    """A clock that stands still until a test moves it."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Site:
    """The demo shop with its gateway and OAuth server, at `base` (in-process or on uvicorn)."""

    base: str
    app: FastAPI
    server: OAuthServer
    gateway: Gateway
    clock: FakeClock

    @property
    def mcp_url(self) -> str:
        return f"{self.base}/mcp"


def build_site(
    base: str,
    *,
    store: TokenStore | None = None,
    clock: FakeClock | None = None,
    documents: ClientDocuments | None = None,
    login: Login | None = None,
    secret: bytes = SECRET,
    **config: Any,
) -> Site:
    """The demo shop at `base`: the gateway at /mcp, guarded by an OAuth server with the API-key login."""
    app = create_app()
    gateways: list[Gateway] = []

    async def whoami(headers: Any) -> Any:
        return await gateways[0].call(headers, "users.get_current_user", {})

    clock = clock or FakeClock()
    settings = OAuthConfig(issuer=base, resource=f"{base}/mcp", secret_key=secret, resource_name="Demo shop", **config)
    login = login or ApiKeyLogin(whoami)
    server = OAuthServer(settings, login=login, store=store, documents=documents, clock=clock)
    host = urlsplit(base).hostname or ""
    gateway = Gateway(
        app=app, whoami="users.get_current_user", auth=server.auth, security=Security(allowed_hosts=[host])
    )
    gateways.append(gateway)
    gateway.mount(app, "/mcp")
    server.mount(app)
    return Site(base=base, app=app, server=server, gateway=gateway, clock=clock)


@asynccontextmanager
async def serve_site(**options: Any) -> AsyncIterator[Site]:
    """`build_site` on real uvicorn on 127.0.0.1, on a port chosen before the site (its URLs name the port)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    site = build_site(f"http://127.0.0.1:{sock.getsockname()[1]}", **options)
    config = uvicorn.Config(site.app, log_level="warning", lifespan="on", access_log=False)
    server = _Uvicorn(config)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve, [sock])
            with anyio.fail_after(10):
                await server.startup_done.wait()
            assert server.started, "uvicorn did not start; see its log above"
            try:
                yield site
            finally:
                server.should_exit = True
    finally:
        sock.close()
        await site.server.aclose()


class _Forms(HTMLParser):
    """Collects each form's action and its named fields (hidden, text, password; buttons by the test)."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "form":
            self.forms.append((values.get("action", ""), {}))
        elif tag == "input" and self.forms and values.get("type") == "hidden":
            self.forms[-1][1][values["name"]] = values.get("value", "")


def page_form(page: httpx2.Response) -> tuple[str, dict[str, str]]:
    """The action URL and hidden fields of the one form on a page."""
    parser = _Forms()
    parser.feed(page.text)
    assert len(parser.forms) == 1, page.text
    action, fields = parser.forms[0]
    return urljoin(str(page.url), action), fields


@dataclass
class Browser:
    """A person at a browser: opens the authorization URL, pastes `key`, then allows (or `decision`)."""

    http: httpx2.AsyncClient
    key: str = ADMIN_KEY
    decision: str = "allow"
    landed: list[str] = dataclasses.field(default_factory=list)

    async def login(self, url: str) -> httpx2.Response:
        """Open the authorization URL and submit the key; the consent page (or the login page again)."""
        page = await self.http.get(url)
        assert page.status_code == 200, page.text
        action, fields = page_form(page)
        return await self.http.post(action, data={**fields, "api_key": self.key})

    async def authorize(self, url: str) -> str:
        """Go through login and consent; the URL the browser is sent back to (the client's redirect)."""
        consent = await self.login(url)
        assert consent.status_code == 200, consent.text
        action, fields = page_form(consent)
        answer = await self.http.post(action, data={**fields, "decision": self.decision})
        assert answer.status_code == 303, answer.text
        location = answer.headers["location"]
        self.landed.append(location)
        return location


def query(url: str) -> dict[str, str]:
    """The query parameters of a URL, each once."""
    return {name: values[0] for name, values in parse_qs(urlsplit(url).query).items()}
