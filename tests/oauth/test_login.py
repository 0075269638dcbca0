"""The login hook for apps with their own session: no key page, the app's user goes straight to consent."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import httpx2
import pytest
from starlette.requests import Request
from starlette.responses import RedirectResponse

from demo import ADMIN_KEY
from gateway.rest.lifespan import app_lifespan
from oauth import ApiKeyLogin, SessionLogin
from tests.oauth.conftest import SECRET, Browser, build_site, page_form, query
from tests.oauth.test_attacks import BASE, authorize_url, client_id, exchange, mcp_status, new_verifier

pytestmark = pytest.mark.anyio

SESSIONS = {"s3cret-session": {"id": 1, "name": "Alice Martin"}}


async def authenticate(request: Request) -> Any:
    user = SESSIONS.get(request.cookies.get("app-session", ""))
    return user if user is not None else RedirectResponse(f"/login?next={request.url.path}?{request.url.query}")


async def credentials(user: Any) -> Mapping[str, str]:
    return {"authorization": f"Bearer {ADMIN_KEY}"}


async def test_a_session_login_sends_strangers_to_the_app_login_and_users_straight_to_consent() -> None:
    site = build_site(BASE, login=SessionLogin(authenticate, credentials))
    async with (
        app_lifespan(site.app),
        httpx2.AsyncClient(transport=httpx2.ASGITransport(site.app), base_url=BASE) as web,
    ):
        client, verifier = await client_id(web), new_verifier()
        stranger = await web.get(authorize_url(client, verifier))
        web.cookies.set("app-session", "s3cret-session", domain="gw.example")
        consent = await web.get(authorize_url(client, verifier))
        key_post = await web.post("/authorize/login", data={**page_form(consent)[1], "api_key": "anything"})
        action, fields = page_form(consent)
        answer = await web.post(action, data={**fields, "decision": "allow"})
        tokens = await exchange(web, client, query(answer.headers["location"])["code"], verifier)
        assert await mcp_status(web, tokens.json()["access_token"]) == 200
    await site.server.aclose()
    assert stranger.status_code == 307 and stranger.headers["location"].startswith("/login?next=/authorize?")
    assert "Alice Martin" in consent.text and "api_key" not in consent.text
    assert key_post.status_code == 200 and "Allow access" in key_post.text


async def nameless(headers: Mapping[str, str]) -> Any:
    """A "who am I" operation that accepts the key but names no id (some APIs answer only a display name)."""
    return {"display_name": "Someone"}


async def subject_for(key: str, secret: bytes) -> str:
    """The subject a grant records for a person who logs in with `key`, on a server with `secret`."""
    site = build_site(BASE, login=ApiKeyLogin(nameless), secret=secret)
    async with (
        app_lifespan(site.app),
        httpx2.AsyncClient(transport=httpx2.ASGITransport(site.app), base_url=BASE) as web,
    ):
        client, verifier = await client_id(web), new_verifier()
        code = query(await Browser(web, key=key).authorize(authorize_url(client, verifier)))["code"]
        tokens = (await exchange(web, client, code, verifier)).json()
        grant = await site.server.grants.check_access_token(tokens["access_token"])
    await site.server.aclose()
    assert grant is not None
    return grant.subject


async def test_a_user_without_an_id_is_named_by_a_keyed_hash_of_the_key_never_a_bare_one() -> None:
    key = "sk-live-0123456789"
    subject = await subject_for(key, SECRET)
    assert subject.startswith("key-")
    assert hashlib.sha256(key.encode()).hexdigest()[:16] not in subject
    assert subject == await subject_for(key, SECRET)  # stable across restarts with the same secret
    assert subject != await subject_for(key, b"another-secret-of-at-least-32-bytes!")
    assert subject != await subject_for("sk-live-other", SECRET)
