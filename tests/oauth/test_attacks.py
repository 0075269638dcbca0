"""Each attack on the authorization server is refused, and leaves nothing behind that helps the attacker.

In-process (httpx2.ASGITransport) against the demo shop at https://gw.example, so cookies are `__Host-`."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlencode

import anyio
import httpx2
import pytest

from demo import ADMIN_KEY
from gateway.rest.lifespan import app_lifespan
from oauth import PreregisteredClient
from oauth._authlib import (
    add_query,
    is_absolute_url,
    is_code_challenge,
    pkce_verifier_matches,
    s256_challenge,
    scope_list,
    scope_string,
)
from oauth.clients import redirect_uri_problem
from oauth.store_sqlite import SqliteStore
from tests.oauth.conftest import REDIRECT_URI, Browser, FakeClock, Site, build_site, page_form, query

pytestmark = pytest.mark.anyio

BASE = "https://gw.example"
CHATGPT_REDIRECT = "https://chatgpt.com/connector/oauth/AbC123xyz"
#: A client the operator configured: errors in its requests go back to it at once (a registered one's through a page).
CONFIGURED = PreregisteredClient(client_id="connector", redirect_uris=(REDIRECT_URI,))


@asynccontextmanager
async def site_and_web(*, base: str = BASE, **options: Any) -> AsyncIterator[tuple[Site, httpx2.AsyncClient]]:
    site = build_site(base, **options)
    async with (
        app_lifespan(site.app),
        httpx2.AsyncClient(transport=httpx2.ASGITransport(site.app), base_url=base) as web,
    ):
        try:
            yield site, web
        finally:
            await site.server.aclose()


async def register(
    web: httpx2.AsyncClient, *redirect_uris: str, headers: dict[str, str] | None = None, **extra: Any
) -> httpx2.Response:
    body = {"redirect_uris": list(redirect_uris or [REDIRECT_URI]), "client_name": "Claude", **extra}
    body.setdefault("token_endpoint_auth_method", "none")
    return await web.post("/register", json=body, headers=headers)


async def client_id(web: httpx2.AsyncClient, *redirect_uris: str) -> str:
    registered = await register(web, *redirect_uris)
    assert registered.status_code == 201, registered.text
    return str(registered.json()["client_id"])


def authorize_url(client: str, verifier: str, **params: str) -> str:
    query_params = {
        "response_type": "code",
        "client_id": client,
        "redirect_uri": REDIRECT_URI,
        "state": "the-state",
        "code_challenge": s256_challenge(verifier),
        "code_challenge_method": "S256",
        "scope": "mcp",
        **params,
    }
    return f"/authorize?{urlencode({k: v for k, v in query_params.items() if v != ''})}"


async def code_for(web: httpx2.AsyncClient, client: str, verifier: str, **params: str) -> str:
    landed = await Browser(web).authorize(authorize_url(client, verifier, **params))
    return query(landed)["code"]


async def exchange(
    web: httpx2.AsyncClient, client: str, code: str, verifier: str | None, **extra: str
) -> httpx2.Response:
    form = {"grant_type": "authorization_code", "code": code, "client_id": client, "redirect_uri": REDIRECT_URI}
    if verifier is not None:
        form["code_verifier"] = verifier
    return await web.post("/token", data={**form, **extra})


async def mcp_status(web: httpx2.AsyncClient, access_token: str) -> int:
    response = await web.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"authorization": f"Bearer {access_token}", "accept": "application/json, text/event-stream"},
    )
    return response.status_code


def new_verifier() -> str:
    return secrets.token_urlsafe(48)


# PKCE


async def test_a_wrong_pkce_verifier_is_refused_and_the_code_still_works_with_the_right_one() -> None:
    async with site_and_web() as (_, web):
        client, verifier = await client_id(web), new_verifier()
        code = await code_for(web, client, verifier)
        wrong = await exchange(web, client, code, new_verifier())
        missing = await exchange(web, client, code, None)
        right = await exchange(web, client, code, verifier)
    assert (wrong.status_code, wrong.json()["error"]) == (400, "invalid_grant")
    assert (missing.status_code, missing.json()["error"]) == (400, "invalid_grant")
    assert right.status_code == 200
    assert right.headers["cache-control"] == "no-store"


async def test_a_verifier_or_challenge_with_a_trailing_line_break_or_the_wrong_length_is_refused() -> None:
    async with site_and_web(clients=(CONFIGURED,)) as (_, web):
        client, verifier = CONFIGURED.client_id, new_verifier()
        code = await code_for(web, client, verifier)
        broken = await exchange(web, client, code, verifier + "\n")
        long_challenge = await web.get(authorize_url(client, new_verifier(), code_challenge="A" * 44))
    assert (broken.status_code, broken.json()["error"]) == (400, "invalid_grant")
    assert query(long_challenge.headers["location"])["error"] == "invalid_request"


@pytest.mark.parametrize(
    ("form", "missing"),
    [
        ({}, "grant_type"),
        ({"grant_type": "authorization_code"}, "code"),
        ({"grant_type": "refresh_token"}, "refresh_token"),
    ],
)
async def test_a_token_request_missing_a_parameter_is_an_invalid_request(form: dict[str, str], missing: str) -> None:
    async with site_and_web() as (_, web):
        client = await client_id(web)
        response = await web.post("/token", data={"client_id": client, **form})
    assert (response.status_code, response.json()["error"]) == (400, "invalid_request")
    assert missing in response.json()["error_description"]


@pytest.mark.parametrize("method", ["plain", ""])
async def test_an_authorization_request_without_s256_goes_back_with_invalid_request(method: str) -> None:
    async with site_and_web(clients=(CONFIGURED,)) as (_, web):
        response = await web.get(authorize_url(CONFIGURED.client_id, new_verifier(), code_challenge_method=method))
    assert response.status_code == 302
    location = response.headers["location"]
    assert location.startswith(REDIRECT_URI + "?")
    assert query(location) | {"error_description": ""} == {
        "error": "invalid_request",
        "error_description": "",
        "state": "the-state",
        "iss": BASE,
    }


async def test_a_reused_code_is_refused_and_revokes_the_tokens_it_issued() -> None:
    async with site_and_web() as (_, web):
        client, verifier = await client_id(web), new_verifier()
        code = await code_for(web, client, verifier)
        first = await exchange(web, client, code, verifier)
        assert first.status_code == 200 and await mcp_status(web, first.json()["access_token"]) == 200
        again = await exchange(web, client, code, verifier)
        assert (again.status_code, again.json()["error"]) == (400, "invalid_grant")
        assert await mcp_status(web, first.json()["access_token"]) == 401
        refreshed = await web.post(
            "/token",
            data={"grant_type": "refresh_token", "refresh_token": first.json()["refresh_token"], "client_id": client},
        )
    assert refreshed.json()["error"] == "invalid_grant"


class RevokedMeanwhile(SqliteStore):
    """A real store in which a grant is revoked just after its code or refresh token is claimed: the moment a
    concurrent /revoke (or a second use of the code) lands between reading a grant and issuing its tokens."""

    def __init__(self, kind: str) -> None:
        super().__init__(":memory:")
        self.kind = kind

    async def claim(self, kind: Any, key: str) -> tuple[dict[str, Any] | None, bool]:
        record, first = await super().claim(kind, key)
        if kind == self.kind and record is not None:
            await self.delete("grant", record["grant_id"])
        return record, first


async def test_a_code_exchanged_while_its_grant_is_revoked_gives_no_token() -> None:
    async with site_and_web(store=RevokedMeanwhile("code")) as (_, web):
        client, verifier = await client_id(web), new_verifier()
        exchanged = await exchange(web, client, await code_for(web, client, verifier), verifier)
    assert (exchanged.status_code, exchanged.json()["error"]) == (400, "invalid_grant")
    assert "access_token" not in exchanged.json()


async def test_a_refresh_racing_a_revocation_gives_no_working_token() -> None:
    async with site_and_web(store=RevokedMeanwhile("refresh")) as (_, web):
        client, verifier = await client_id(web), new_verifier()
        first = await exchange(web, client, await code_for(web, client, verifier), verifier)
        assert first.status_code == 200
        refresh = {"grant_type": "refresh_token", "refresh_token": first.json()["refresh_token"], "client_id": client}
        refreshed = await web.post("/token", data=refresh)
        assert (refreshed.status_code, refreshed.json()["error"]) == (400, "invalid_grant")
        assert await mcp_status(web, first.json()["access_token"]) == 401


async def test_a_code_is_refused_to_another_client_and_after_it_expires() -> None:
    async with site_and_web() as (site, web):
        client, other, verifier = await client_id(web), await client_id(web), new_verifier()
        code = await code_for(web, client, verifier)
        stolen = await exchange(web, other, code, verifier)
        site.clock.advance(61)
        late = await exchange(web, client, code, verifier)
    assert stolen.json()["error"] == "invalid_grant"
    assert late.json()["error"] == "invalid_grant"


# Redirect URIs and open redirects


@pytest.mark.parametrize(
    "redirect_uri",
    [
        "https://evil.example/callback",
        REDIRECT_URI + "/../../evil",
        REDIRECT_URI + "x",
        REDIRECT_URI + "?next=https://evil.example",
        "https://claude.ai/api/mcp",
    ],
)
async def test_an_unregistered_or_prefix_matching_redirect_uri_gets_an_error_page_not_a_redirect(
    redirect_uri: str,
) -> None:
    async with site_and_web() as (_, web):
        client = await client_id(web)
        response = await web.get(authorize_url(client, new_verifier(), redirect_uri=redirect_uri))
    assert response.status_code == 400
    assert "location" not in response.headers
    assert "redirect address is not registered" in response.text


@pytest.mark.parametrize(
    "redirect_uri",
    [
        "http://127.0.0.1:5000/callback#fragment",
        "http://user:pw@127.0.0.1:5000/callback",
        "http://127.0.0.1:notaport/callback",
        "http://127.0.0.1:5000/Callback",
    ],
)
async def test_a_loopback_redirect_uri_may_differ_only_in_its_port(redirect_uri: str) -> None:
    async with site_and_web() as (_, web):
        client = await client_id(web, "http://127.0.0.1/callback")
        response = await web.get(authorize_url(client, new_verifier(), redirect_uri=redirect_uri))
        other_port = await web.get(authorize_url(client, new_verifier(), redirect_uri="http://127.0.0.1:5000/callback"))
    assert response.status_code == 400
    assert "location" not in response.headers
    assert other_port.status_code == 200


@pytest.mark.parametrize(
    ("metadata", "error"),
    [
        ({"redirect_uris": [1]}, "invalid_redirect_uri"),
        ({"redirect_uris": "https://claude.ai/api/mcp/auth_callback"}, "invalid_redirect_uri"),
        ({"jwks": "x"}, "invalid_client_metadata"),
        ({"jwks_uri": 5}, "invalid_client_metadata"),
        ({"tos_uri": ["a"]}, "invalid_client_metadata"),
        ({"token_endpoint_auth_method": ["none"]}, "invalid_client_metadata"),
        ({"scope": 123}, "invalid_client_metadata"),
        ({"grant_types": "authorization_code"}, "invalid_client_metadata"),
    ],
)
async def test_registration_metadata_of_the_wrong_type_is_refused_with_400(
    metadata: dict[str, Any], error: str
) -> None:
    async with site_and_web() as (_, web):
        body = {"redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none", **metadata}
        response = await web.post("/register", json=body)
    assert (response.status_code, response.json()["error"]) == (400, error)


async def test_an_unknown_client_gets_an_error_page_whatever_redirect_uri_it_names() -> None:
    async with site_and_web() as (_, web):
        response = await web.get(
            authorize_url(
                "no-such-client", new_verifier(), redirect_uri="https://evil.example/x", response_type="token"
            )
        )
    assert response.status_code == 400
    assert "location" not in response.headers


async def test_errors_after_a_configured_client_is_known_go_only_to_its_registered_redirect_uri() -> None:
    async with site_and_web(clients=(CONFIGURED,)) as (_, web):
        token = await web.get(authorize_url("connector", new_verifier(), response_type="token"))
        target = await web.get(authorize_url("connector", new_verifier(), resource="https://other.example/mcp"))
    assert query(token.headers["location"])["error"] == "unsupported_response_type"
    assert query(target.headers["location"])["error"] == "invalid_target"
    assert token.headers["location"].startswith(REDIRECT_URI + "?")


@pytest.mark.parametrize("target", ["https://evil.example/phish", "search-ms:/query=invoice"])
async def test_anyone_who_registers_a_client_cannot_use_authorize_to_redirect_people_to_it(target: str) -> None:
    async with site_and_web() as (_, web):
        client = await client_id(web, target)
        # Nothing valid but the client and its redirect URI: no PKCE, no response_type the server serves.
        answer = await web.get("/authorize", params={"client_id": client, "redirect_uri": target, "response_type": "x"})
    assert answer.status_code == 400
    assert "location" not in answer.headers
    assert "unsupported_response_type" in answer.text


@pytest.mark.parametrize(
    ("redirect_uri", "error"),
    [
        ("javascript:alert(document.cookie)", "invalid_redirect_uri"),
        ("data:text/html,<script>alert(1)</script>", "invalid_redirect_uri"),
        ("http://evil.example/callback", "invalid_redirect_uri"),
        ("https://claude.ai/api/mcp/auth_callback#fragment", "invalid_redirect_uri"),
        ("https://user@evil.example/callback", "invalid_redirect_uri"),
        # URL parsers drop tabs and line breaks, so each of these would read as javascript: later.
        ("java\tscript://x/%0aalert(document.domain)//", "invalid_redirect_uri"),
        ("javascript\n://x/%0aalert(1)", "invalid_redirect_uri"),
        (" javascript:alert(1)", "invalid_redirect_uri"),
        ("intent://evil/#Intent;scheme=https;end", "invalid_redirect_uri"),
        ("http://127.0.0.1:notaport/callback", "invalid_redirect_uri"),
        ("myapp:callback", "invalid_redirect_uri"),
    ],
)
async def test_registrations_with_dangerous_redirect_uris_are_refused(redirect_uri: str, error: str) -> None:
    async with site_and_web() as (_, web):
        response = await register(web, redirect_uri)
    assert response.status_code == 400
    assert response.json() == {"error": error, "error_description": redirect_uri_problem(redirect_uri)}


async def test_registrations_accept_claude_chatgpt_loopback_and_native_app_redirect_uris() -> None:
    uris = [
        REDIRECT_URI,
        "https://claude.com/api/mcp/auth_callback",
        CHATGPT_REDIRECT,
        "http://127.0.0.1:33418/callback",
        "http://localhost:6274/oauth/callback",
        "cursor://anysphere.cursor-retrieval/oauth/user-demo/callback",
        "com.example.app:/oauth2redirect",
    ]
    async with site_and_web() as (_, web):
        response = await register(web, *uris)
    assert response.status_code == 201, response.text
    assert response.json()["redirect_uris"] == uris
    assert "client_secret" not in response.json()


async def test_chatgpt_connects_with_a_confidential_client_and_its_connector_redirect_uri() -> None:
    async with site_and_web() as (_, web):
        registered = await register(web, CHATGPT_REDIRECT, token_endpoint_auth_method="client_secret_post")
        client, secret = registered.json()["client_id"], registered.json()["client_secret"]
        verifier = new_verifier()
        landed = await Browser(web).authorize(authorize_url(client, verifier, redirect_uri=CHATGPT_REDIRECT))
        code = query(landed)["code"]
        form = {"redirect_uri": CHATGPT_REDIRECT, "client_secret": "wrong-secret-of-some-length"}
        wrong = await exchange(web, client, code, verifier, **form)
        right = await exchange(web, client, code, verifier, **{**form, "client_secret": secret})
    assert landed.startswith(CHATGPT_REDIRECT + "?")
    assert (wrong.status_code, wrong.json()["error"]) == (401, "invalid_client")
    assert right.status_code == 200


async def test_an_unknown_client_at_the_token_endpoint_gets_401_invalid_client() -> None:
    async with site_and_web() as (_, web):
        response = await exchange(web, "forgotten-client", "some-code", new_verifier())
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_client"


# CSRF and the pages


async def test_the_consent_form_refuses_a_post_without_this_browsers_cookie_or_token() -> None:
    async with site_and_web() as (site, web):
        client, verifier = await client_id(web), new_verifier()
        consent = await Browser(web).login(authorize_url(client, verifier))
        action, fields = page_form(consent)
        cookie_name = site.server.authorization.cookie_name
        cookie = web.cookies[cookie_name]
        attacker = httpx2.AsyncClient(transport=httpx2.ASGITransport(site.app), base_url=BASE)
        async with attacker:
            no_cookie = await attacker.post(action, data={**fields, "decision": "allow"})
            attacker.cookies.set(cookie_name, "attackers-own-cookie", domain="gw.example")
            other_cookie = await attacker.post(action, data={**fields, "decision": "allow"})
        forged = await web.post(action, data={**fields, "csrf": "forged", "decision": "allow"})
        cross_site = await web.post(
            action, data={**fields, "decision": "allow"}, headers={"origin": "https://evil.example"}
        )
        assert web.cookies[cookie_name] == cookie
        # Nothing was used up: the person's own submission still goes through.
        allowed = await web.post(action, data={**fields, "decision": "allow"})
    for refused in (no_cookie, other_cookie, forged, cross_site):
        assert refused.status_code == 403
        assert "location" not in refused.headers
    assert allowed.status_code == 303
    assert "code" in query(allowed.headers["location"])


async def test_pages_refuse_framing_and_caching_and_the_cookie_is_host_only_secure_and_lax() -> None:
    async with site_and_web() as (_, web):
        client = await client_id(web)
        page = await web.get(authorize_url(client, new_verifier()))
    assert page.status_code == 200
    assert page.headers["x-frame-options"] == "DENY"
    policy = page.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy and "default-src 'none'" in policy
    assert page.headers["cache-control"] == "no-store"
    assert page.headers["referrer-policy"] == "same-origin"
    cookie = page.headers["set-cookie"]
    assert cookie.startswith("__Host-mcp-oauth=")
    for attribute in ("HttpOnly", "Path=/", "SameSite=lax", "Secure"):
        assert attribute in cookie
    assert "Domain=" not in cookie
    assert '<meta name="viewport"' in page.text


async def test_a_wrong_api_key_shows_the_login_page_again_and_five_end_the_attempt() -> None:
    async with site_and_web() as (_, web):
        client = await client_id(web)
        page = await web.get(authorize_url(client, new_verifier()))
        action, fields = page_form(page)
        answers = [await web.post(action, data={**fields, "api_key": f"guess-{n}"}) for n in range(5)]
        late = await web.post(action, data={**fields, "api_key": ADMIN_KEY})
    assert [answer.status_code for answer in answers[:4]] == [400] * 4
    assert "did not accept" in answers[0].text
    assert "Too many attempts" in answers[4].text
    assert late.status_code == 400 and "expired" in late.text


class CountingLogin:
    """The API-key login with a tally of the keys it was asked to check."""

    def __init__(self, login: Any) -> None:
        self.login = login
        self.checked = 0

    async def current(self, request: Any) -> Any:
        return await self.login.current(request)

    async def check_key(self, key: str) -> Any:
        self.checked += 1
        return await self.login.check_key(key)


async def test_keys_sent_at_once_to_one_login_are_checked_five_times_at_most() -> None:
    async with site_and_web() as (site, web):
        counting = CountingLogin(site.server.authorization.login)
        site.server.authorization.login = counting
        client = await client_id(web)
        page = await web.get(authorize_url(client, new_verifier()))
        action, fields = page_form(page)

        async def guess(n: int) -> None:
            await web.post(action, data={**fields, "api_key": f"guess-{n}"})

        async with anyio.create_task_group() as tg:
            for n in range(20):
                tg.start_soon(guess, n)
        late = await web.post(action, data={**fields, "api_key": ADMIN_KEY})
    assert counting.checked <= 5
    assert late.status_code == 400 and "consent" not in late.text.lower()


async def test_one_address_gets_thirty_keys_checked_in_fifteen_minutes_whatever_the_logins() -> None:
    async with site_and_web() as (site, web):
        client = await client_id(web)
        statuses = []
        for _ in range(8):
            action, fields = page_form(await web.get(authorize_url(client, new_verifier())))
            statuses.extend(
                [(await web.post(action, data={**fields, "api_key": f"k{n}"})).status_code for n in range(4)]
            )
        assert statuses[:30] == [400] * 30
        assert statuses[30:] == [429, 429]
        site.clock.advance(900)
        action, fields = page_form(await web.get(authorize_url(client, new_verifier())))
        allowed = await web.post(action, data={**fields, "api_key": ADMIN_KEY})
    assert allowed.status_code == 200 and "Allow" in allowed.text


async def test_denying_sends_access_denied_with_state_and_iss() -> None:
    async with site_and_web() as (_, web):
        client = await client_id(web)
        landed = await Browser(web, decision="deny").authorize(authorize_url(client, new_verifier()))
    assert query(landed) | {"error_description": ""} == {
        "error": "access_denied",
        "error_description": "",
        "state": "the-state",
        "iss": BASE,
    }


# Scopes and resources


@pytest.mark.parametrize("scope", ["mcp offline_access admin:everything", "nonsense", ""])
async def test_unknown_scopes_are_ignored_rather_than_failing_the_login(scope: str) -> None:
    async with site_and_web() as (_, web):
        client, verifier = await client_id(web), new_verifier()
        code = await code_for(web, client, verifier, scope=scope)
        tokens = await exchange(web, client, code, verifier)
    assert tokens.json()["scope"] == "mcp"


async def test_a_client_that_omits_resource_gets_a_token_for_the_mcp_endpoint() -> None:
    async with site_and_web() as (_, web):
        client, verifier = await client_id(web), new_verifier()
        code = await code_for(web, client, verifier, resource="")
        tokens = await exchange(web, client, code, verifier)
        assert await mcp_status(web, tokens.json()["access_token"]) == 200


# Access tokens at the MCP endpoint


async def test_expired_forged_and_revoked_access_tokens_are_refused() -> None:
    async with site_and_web() as (site, web):
        client, verifier = await client_id(web), new_verifier()
        tokens = (await exchange(web, client, await code_for(web, client, verifier), verifier)).json()
        assert await mcp_status(web, "forged-" + tokens["access_token"][7:]) == 401
        site.clock.advance(3601)
        assert await mcp_status(web, tokens["access_token"]) == 401
        refreshed = await web.post(
            "/token",
            data={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": client},
        )
        fresh = refreshed.json()
        assert await mcp_status(web, fresh["access_token"]) == 200
        revoked = await web.post("/revoke", data={"token": fresh["refresh_token"], "client_id": client})
        unknown = await web.post("/revoke", data={"token": "never-issued", "client_id": client})
        assert await mcp_status(web, fresh["access_token"]) == 401
    assert (revoked.status_code, unknown.status_code) == (200, 200)


async def test_a_token_issued_for_another_resource_is_refused() -> None:
    store, clock = SqliteStore(":memory:"), FakeClock()
    other = build_site("https://other.example", store=store, clock=clock)
    async with site_and_web(store=store, clock=clock) as (_, web):
        client, verifier = await client_id(web), new_verifier()
        tokens = (await exchange(web, client, await code_for(web, client, verifier), verifier)).json()
        async with (
            app_lifespan(other.app),
            httpx2.AsyncClient(transport=httpx2.ASGITransport(other.app), base_url="https://other.example") as there,
        ):
            assert await mcp_status(there, tokens["access_token"]) == 401
        assert await mcp_status(web, tokens["access_token"]) == 200


async def test_a_configured_client_logs_in_without_registering() -> None:
    configured = PreregisteredClient(client_id="connector", redirect_uris=(REDIRECT_URI,), name="Our connector")
    async with site_and_web(clients=(configured,), dynamic_registration=False) as (_, web):
        verifier = new_verifier()
        tokens = await exchange(web, "connector", await code_for(web, "connector", verifier), verifier)
        registration = await register(web)
        metadata = (await web.get("/.well-known/oauth-authorization-server")).json()
    assert tokens.status_code == 200
    assert registration.status_code in (404, 405)
    assert "registration_endpoint" not in metadata


# Several instances


async def test_two_gateway_instances_sharing_redis_serve_one_login_and_one_rotation(redis_url: str) -> None:
    from oauth.store_redis import RedisStore

    clock, prefix = FakeClock(), f"two-instances-{secrets.token_hex(4)}:"
    first = RedisStore.from_url(redis_url, prefix=prefix, clock=clock)
    async with site_and_web(store=first, clock=clock) as (_, web):
        client, verifier = await client_id(web), new_verifier()
        tokens = (await exchange(web, client, await code_for(web, client, verifier), verifier)).json()
        second = RedisStore.from_url(redis_url, prefix=prefix, clock=clock)
        async with site_and_web(store=second, clock=clock) as (_, other):
            assert await mcp_status(other, tokens["access_token"]) == 200
            rotated = await other.post(
                "/token",
                data={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": client},
            )
            assert rotated.status_code == 200
        replayed = await web.post(
            "/token",
            data={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": client},
        )
        assert replayed.json()["error"] == "invalid_grant"
        assert await mcp_status(web, rotated.json()["access_token"]) == 401


# PKCE and the URL checks under every flow (RFC 7636, RFC 6749 §3.1.2)

RFC_7636_VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
RFC_7636_CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"


def test_the_s256_challenge_is_the_one_rfc_7636_appendix_b_gives() -> None:
    assert s256_challenge(RFC_7636_VERIFIER) == RFC_7636_CHALLENGE
    assert pkce_verifier_matches(RFC_7636_VERIFIER, RFC_7636_CHALLENGE)
    assert not pkce_verifier_matches(RFC_7636_VERIFIER[:-1] + "x", RFC_7636_CHALLENGE)


@pytest.mark.parametrize(("length", "matches"), [(42, False), (43, True), (128, True), (129, False)])
def test_a_verifier_matches_only_when_it_is_43_to_128_characters(length: int, matches: bool) -> None:
    # RFC 7636 §4.1: even a verifier whose digest is the challenge is refused outside that length.
    verifier = ("a" * length)[:length]
    assert pkce_verifier_matches(verifier, s256_challenge(verifier)) is matches


def test_a_verifier_with_characters_outside_the_unreserved_set_never_matches() -> None:
    verifier = "a" * 42 + "+"
    assert not pkce_verifier_matches(verifier, s256_challenge(verifier))


@pytest.mark.parametrize(
    ("challenge", "valid"),
    [
        (RFC_7636_CHALLENGE, True),
        (RFC_7636_CHALLENGE[:-1], False),
        (RFC_7636_CHALLENGE + "A", False),
        (RFC_7636_CHALLENGE[:-1] + "=", False),
        ("plain-verifier-" * 3, False),
    ],
)
def test_a_code_challenge_must_be_43_characters_of_unpadded_base64url(challenge: str, valid: bool) -> None:
    assert is_code_challenge(challenge) is valid


def test_a_redirect_keeps_the_query_the_client_registered() -> None:
    assert add_query("https://a.example/cb?tenant=7", [("code", "c 1"), ("state", "s")]) == (
        "https://a.example/cb?tenant=7&code=c+1&state=s"
    )


@pytest.mark.parametrize(
    ("url", "absolute"),
    [
        ("https://a.example/x", True),
        ("https://a.example/x#frag", False),
        ("https://user:pw@a.example/x", False),
        ("/relative", False),
    ],
)
def test_only_absolute_urls_without_userinfo_or_fragment_pass(url: str, absolute: bool) -> None:
    assert is_absolute_url(url) is absolute


def test_scopes_are_read_in_order_once_each_and_written_space_separated() -> None:
    assert scope_list("b a b c") == ["b", "a", "c"]
    assert scope_list(None) == [] and scope_list("") == []
    assert scope_string(["a", "b"]) == "a b"
