"""The token endpoint over HTTP (in-process): what each grant type passes on to the grants (resource, scope),
and the error code and description of every request it refuses before that."""

from __future__ import annotations

import pytest

from tests.oauth.test_attacks import client_id, code_for, exchange, new_verifier, site_and_web

pytestmark = pytest.mark.anyio


async def test_a_token_request_without_a_grant_type_says_which_to_send() -> None:
    async with site_and_web() as (_, web):
        response = await web.post("/token", data={"client_id": await client_id(web)})
    assert response.status_code == 400
    assert response.json() == {
        "error": "invalid_request",
        "error_description": "the token request has no grant_type; send authorization_code",
    }


@pytest.mark.parametrize("grant_type", ["client_credentials", "password", "urn:ietf:params:oauth:grant-type:jwt"])
async def test_a_grant_type_this_server_does_not_issue_is_unsupported_naming_the_ones_it_does(grant_type: str) -> None:
    async with site_and_web() as (_, web):
        response = await web.post("/token", data={"client_id": await client_id(web), "grant_type": grant_type})
    assert response.status_code == 400
    assert response.json() == {
        "error": "unsupported_grant_type",
        "error_description": f"grant_type {grant_type!r} is not supported; use authorization_code or refresh_token",
    }


async def test_the_resource_of_a_code_exchange_and_of_a_refresh_reaches_the_grant_check() -> None:
    async with site_and_web() as (site, web):
        client, verifier = await client_id(web), new_verifier()
        code = await code_for(web, client, verifier)
        elsewhere = "https://elsewhere.example/mcp"
        wrong_code = await exchange(web, client, code, verifier, resource=elsewhere)
        tokens = (await exchange(web, client, code, verifier, resource=site.mcp_url)).json()
        refresh = {"grant_type": "refresh_token", "client_id": client, "refresh_token": tokens["refresh_token"]}
        wrong_refresh = await web.post("/token", data={**refresh, "resource": elsewhere})
        right_refresh = await web.post("/token", data={**refresh, "resource": site.mcp_url, "scope": "mcp"})
    assert (wrong_code.status_code, wrong_code.json()["error"]) == (400, "invalid_target")
    assert (wrong_refresh.status_code, wrong_refresh.json()["error"]) == (400, "invalid_target")
    assert elsewhere in wrong_refresh.json()["error_description"]
    assert (right_refresh.status_code, right_refresh.json()["scope"]) == (200, "mcp")


async def test_a_refresh_passes_the_narrower_scope_it_asks_for() -> None:
    async with site_and_web(scopes=("mcp", "orders")) as (_, web):
        client, verifier = await client_id(web), new_verifier()
        code = await code_for(web, client, verifier, scope="mcp orders")
        tokens = (await exchange(web, client, code, verifier)).json()
        refresh = {"grant_type": "refresh_token", "client_id": client, "refresh_token": tokens["refresh_token"]}
        narrowed = await web.post("/token", data={**refresh, "scope": "orders"})
    assert tokens["scope"] == "mcp orders"
    assert (narrowed.status_code, narrowed.json()["scope"]) == (200, "orders")


async def test_a_login_refreshed_too_often_gets_429_temporarily_unavailable_with_retry_after() -> None:
    async with site_and_web(refreshes_per_grant=2) as (site, web):
        client, verifier = await client_id(web), new_verifier()
        tokens = (await exchange(web, client, await code_for(web, client, verifier), verifier)).json()
        answers = []
        for _ in range(3):
            refresh = {"grant_type": "refresh_token", "client_id": client, "refresh_token": tokens["refresh_token"]}
            answers.append(await web.post("/token", data=refresh))
            if answers[-1].status_code == 200:
                tokens = answers[-1].json()
        site.clock.advance(60)
        later = await web.post("/token", data=refresh)
    assert [answer.status_code for answer in answers] == [200, 200, 429]
    assert answers[2].json() == {
        "error": "temporarily_unavailable",
        "error_description": "this login was refreshed 2 times within a minute, the most allowed; keep the refresh "
        "token you sent (it was not used) and try again in a minute",
    }
    assert (answers[2].headers["retry-after"], answers[2].headers["cache-control"]) == ("60", "no-store")
    assert later.status_code == 200
