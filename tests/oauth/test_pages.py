"""What a person reads before allowing access: plain words about what the app may do, not scope names."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx2
import pytest
from starlette.requests import Request

from gateway.rest.lifespan import app_lifespan
from oauth import SessionLogin
from tests.oauth.conftest import Browser, build_site
from tests.oauth.test_attacks import BASE, authorize_url, client_id, new_verifier

pytestmark = pytest.mark.anyio


async def test_the_consent_page_says_the_app_acts_as_the_user_with_their_api_key_not_the_scope_name() -> None:
    site = build_site(BASE)
    async with (
        app_lifespan(site.app),
        httpx2.AsyncClient(transport=httpx2.ASGITransport(site.app), base_url=BASE) as web,
    ):
        consent = await Browser(web).login(authorize_url(await client_id(web), new_verifier()))
    await site.server.aclose()
    assert consent.status_code == 200
    assert (
        "It can use Demo shop on your behalf, as <strong>Alice Martin</strong>, with your API key: it can read and "
        "change your data as you could yourself." in consent.text
    )
    assert "mcp" not in consent.text.replace("mcp-oauth", "")
    assert "permissions" not in consent.text


async def test_with_the_apps_own_login_the_consent_page_speaks_of_the_account() -> None:
    async def authenticate(request: Request) -> Any:
        return {"id": 7, "name": "Grace Hopper"}

    async def credentials(user: Any) -> Mapping[str, str]:
        return {"authorization": "Bearer whatever"}

    site = build_site(BASE, login=SessionLogin(authenticate, credentials))
    async with (
        app_lifespan(site.app),
        httpx2.AsyncClient(transport=httpx2.ASGITransport(site.app), base_url=BASE) as web,
    ):
        consent = await web.get(authorize_url(await client_id(web), new_verifier()))
    await site.server.aclose()
    assert "as <strong>Grace Hopper</strong>, with your account: it can read and change your data" in consent.text
