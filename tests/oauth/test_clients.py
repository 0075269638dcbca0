"""Clients at the token endpoint and the registration endpoint: each authenticates the one way it registered,
and registration refuses what it cannot keep, saying why (the error code and its description).

In-process (httpx2.ASGITransport) against the demo shop at https://gw.example, as in test_attacks."""

from __future__ import annotations

import base64

import httpx2
import pytest

from oauth import PreregisteredClient
from tests.oauth.conftest import REDIRECT_URI, Browser, query
from tests.oauth.test_attacks import authorize_url, new_verifier, register, site_and_web

pytestmark = pytest.mark.anyio


def basic(client: str, secret: str) -> dict[str, str]:
    return {"authorization": "Basic " + base64.b64encode(f"{client}:{secret}".encode()).decode()}


async def confidential(web: httpx2.AsyncClient, method: str) -> tuple[str, str, str, str]:
    """A client registered with `method`, and a fresh code for it: (client_id, secret, code, verifier)."""
    registered = await register(web, token_endpoint_auth_method=method)
    assert registered.status_code == 201, registered.text
    client, secret = registered.json()["client_id"], registered.json()["client_secret"]
    verifier = new_verifier()
    landed = await Browser(web).authorize(authorize_url(client, verifier))
    return client, secret, query(landed)["code"], verifier


async def token(
    web: httpx2.AsyncClient, code: str, verifier: str, *, headers: dict[str, str] | None = None, **form: str
) -> httpx2.Response:
    body = {"grant_type": "authorization_code", "code": code, "code_verifier": verifier, "redirect_uri": REDIRECT_URI}
    return await web.post("/token", data={**body, **form}, headers=headers)


# Client authentication at the token endpoint


@pytest.mark.parametrize("body_secret", ["right", "wrong-secret-of-some-length"])
async def test_a_client_authenticating_with_basic_and_a_body_secret_is_refused_and_nothing_is_issued(
    body_secret: str,
) -> None:
    async with site_and_web() as (_, web):
        client, secret, code, verifier = await confidential(web, "client_secret_basic")
        both = await token(
            web,
            code,
            verifier,
            headers=basic(client, secret),
            client_secret=secret if body_secret == "right" else body_secret,
        )
        # Nothing was used up: the same code still works with one method.
        alone = await token(web, code, verifier, headers=basic(client, secret))
    assert (both.status_code, both.json()["error"]) == (400, "invalid_request")
    assert "authenticates the client twice" in both.json()["error_description"]
    assert "access_token" not in both.json()
    assert alone.status_code == 200, alone.text


async def test_a_revocation_authenticating_the_client_twice_is_refused() -> None:
    async with site_and_web() as (_, web):
        client, secret, code, verifier = await confidential(web, "client_secret_basic")
        tokens = (await token(web, code, verifier, headers=basic(client, secret))).json()
        both = await web.post(
            "/revoke", data={"token": tokens["access_token"], "client_secret": "x"}, headers=basic(client, secret)
        )
    assert (both.status_code, both.json()["error"]) == (400, "invalid_request")


async def test_a_basic_client_must_send_its_secret_in_the_authorization_header() -> None:
    async with site_and_web() as (_, web):
        client, secret, code, verifier = await confidential(web, "client_secret_basic")
        in_body = await token(web, code, verifier, client_id=client, client_secret=secret)
        in_header = await token(web, code, verifier, headers=basic(client, secret))
    assert (in_body.status_code, in_body.json()["error"]) == (401, "invalid_client")
    assert in_body.json()["error_description"] == (
        f"client {client!r} registered token_endpoint_auth_method 'client_secret_basic': send its id and secret in "
        "the Authorization header (HTTP Basic), not in the body"
    )
    assert in_header.status_code == 200


async def test_a_post_client_must_send_its_secret_in_the_body() -> None:
    async with site_and_web() as (_, web):
        client, secret, code, verifier = await confidential(web, "client_secret_post")
        in_header = await token(web, code, verifier, headers=basic(client, secret))
        in_body = await token(web, code, verifier, client_id=client, client_secret=secret)
    assert (in_header.status_code, in_header.json()["error"]) == (401, "invalid_client")
    assert "registered token_endpoint_auth_method 'client_secret_post'" in in_header.json()["error_description"]
    assert in_header.headers["www-authenticate"] == 'Basic realm="oauth"'
    assert in_body.status_code == 200


async def test_a_confidential_client_without_its_secret_is_refused() -> None:
    async with site_and_web() as (_, web):
        client, _, code, verifier = await confidential(web, "client_secret_post")
        nothing = await token(web, code, verifier, client_id=client)
    assert (nothing.status_code, nothing.json()["error"]) == (401, "invalid_client")
    assert "registered token_endpoint_auth_method 'client_secret_post'" in nothing.json()["error_description"]


async def test_a_public_client_that_sends_a_secret_is_refused() -> None:
    async with site_and_web() as (_, web):
        registered = await register(web)
        client, verifier = registered.json()["client_id"], new_verifier()
        code = query(await Browser(web).authorize(authorize_url(client, verifier)))["code"]
        with_secret = await token(web, code, verifier, client_id=client, client_secret="made-up-secret")
        with_basic = await token(web, code, verifier, headers=basic(client, "made-up-secret"))
        plain = await token(web, code, verifier, client_id=client)
    for refused in (with_secret, with_basic):
        assert (refused.status_code, refused.json()["error"]) == (401, "invalid_client")
        assert refused.json()["error_description"] == (
            f"client {client!r} is a public client (token_endpoint_auth_method 'none'); send no secret"
        )
    assert plain.status_code == 200


async def test_a_configured_client_with_a_secret_may_send_it_either_way() -> None:
    configured = PreregisteredClient(
        client_id="connector", redirect_uris=(REDIRECT_URI,), client_secret="a-configured-secret-0123"
    )
    async with site_and_web(clients=(configured,)) as (_, web):
        answers = []
        for how in ("basic", "post"):
            verifier = new_verifier()
            code = query(await Browser(web).authorize(authorize_url("connector", verifier)))["code"]
            if how == "basic":
                answers.append(
                    await token(web, code, verifier, headers=basic("connector", configured.client_secret or ""))
                )
            else:
                answers.append(
                    await token(
                        web, code, verifier, client_id="connector", client_secret=configured.client_secret or ""
                    )
                )
    assert [answer.status_code for answer in answers] == [200, 200]
