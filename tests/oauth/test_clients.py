"""Clients at the token endpoint and the registration endpoint: each authenticates the one way it registered,
and registration refuses what it cannot keep, saying why (the error code and its description).

In-process (httpx2.ASGITransport) against the demo shop at https://gw.example, as in test_attacks."""

from __future__ import annotations

import base64
import logging
import re
from dataclasses import replace
from typing import Any
from urllib.parse import quote_plus

import httpx2
import pytest

from oauth import ConfigError, OAuthConfig, PreregisteredClient
from oauth._authlib import validate_client_metadata, validate_server_metadata
from oauth.clients import AUTH_METHODS, Client, redirect_uri_problem
from oauth.errors import ProtocolError
from tests.oauth.conftest import REDIRECT_URI, SECRET, Browser, Site, page_form, query
from tests.oauth.test_attacks import BASE, authorize_url, new_verifier, register, site_and_web
from tests.oauth.test_authorize import page

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
    assert both.json()["error_description"] == (
        "the request authenticates the client twice (HTTP Basic and client_secret in the body); use one method "
        "only, the one the client registered"
    )
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


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
async def test_a_confidential_client_with_a_wrong_secret_is_refused_and_its_code_still_works(method: str) -> None:
    async with site_and_web() as (_, web):
        client, secret, code, verifier = await confidential(web, method)
        if method == "client_secret_basic":
            wrong = await token(web, code, verifier, headers=basic(client, secret + "x"))
            right = await token(web, code, verifier, headers=basic(client, secret))
        else:
            wrong = await token(web, code, verifier, client_id=client, client_secret=secret + "x")
            right = await token(web, code, verifier, client_id=client, client_secret=secret)
    assert (wrong.status_code, wrong.json()) == (
        401,
        {"error": "invalid_client", "error_description": f"client {client!r} must authenticate with its client_secret"},
    )
    assert right.status_code == 200, right.text


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


async def test_a_configured_client_with_a_secret_that_sends_none_is_told_how_to_send_it() -> None:
    configured = PreregisteredClient(
        client_id="connector", redirect_uris=(REDIRECT_URI,), client_secret="a-configured-secret-0123"
    )
    async with site_and_web(clients=(configured,)) as (_, web):
        verifier = new_verifier()
        code = query(await Browser(web).authorize(authorize_url("connector", verifier)))["code"]
        nothing = await token(web, code, verifier, client_id="connector")
    assert (nothing.status_code, nothing.json()["error"]) == (401, "invalid_client")
    assert nothing.json()["error_description"] == (
        "client 'connector' has a client secret: send it with the client's id in the Authorization header "
        "(HTTP Basic) or as client_secret in the body"
    )


SPACED = PreregisteredClient(client_id="my+connector", redirect_uris=(REDIRECT_URI,), client_secret="s3cret: with+plus")


def raw_basic(credentials: str) -> dict[str, str]:
    return {"authorization": "Basic " + base64.b64encode(credentials.encode()).decode()}


@pytest.mark.parametrize(
    "credentials",
    [
        # RFC 6749 §2.3.1: id and secret form-urlencoded, then joined by the first colon.
        f"{quote_plus(SPACED.client_id)}:{quote_plus(SPACED.client_secret or '')}",
        "my%2Bconnector:s3cret: with%2Bplus",
    ],
    ids=["form-urlencoded", "colon in the secret"],
)
async def test_basic_credentials_are_form_decoded_and_split_at_the_first_colon(credentials: str) -> None:
    async with site_and_web(clients=(SPACED,)) as (_, web):
        verifier = new_verifier()
        code = query(await Browser(web).authorize(authorize_url(SPACED.client_id, verifier)))["code"]
        answer = await token(web, code, verifier, headers=raw_basic(credentials))
    assert answer.status_code == 200, answer.text


async def test_a_plus_in_basic_credentials_is_a_space_as_form_encoding_has_it() -> None:
    async with site_and_web(clients=(SPACED,)) as (_, web):
        verifier = new_verifier()
        code = query(await Browser(web).authorize(authorize_url(SPACED.client_id, verifier)))["code"]
        plus_id = await token(web, code, verifier, headers=raw_basic("my+connector:s3cret%3A+with%2Bplus"))
        plus_secret = await token(web, code, verifier, headers=raw_basic("my%2Bconnector:s3cret: with+plus"))
    assert (plus_id.status_code, plus_id.json()["error_description"]) == (
        401,
        "unknown client_id 'my connector'; register the client again at the registration endpoint",
    )
    assert (plus_secret.status_code, plus_secret.json()["error"]) == (401, "invalid_client")


@pytest.mark.parametrize(
    "header",
    [
        "Basic !!not-base64!!",
        # Characters outside the base64 alphabet are refused, not skipped over.
        "Basic "
        + base64.b64encode(b"connector:a-configured-secret-0123").decode()[:8]
        + "*"
        + base64.b64encode(b"connector:a-configured-secret-0123").decode()[8:],
        "Basic " + base64.b64encode(b"\xff\xfe:secret").decode(),
    ],
    ids=["not base64", "outside the alphabet", "not UTF-8"],
)
async def test_a_basic_header_that_is_not_base64_of_utf8_is_an_invalid_client(header: str) -> None:
    configured = PreregisteredClient(
        client_id="connector", redirect_uris=(REDIRECT_URI,), client_secret="a-configured-secret-0123"
    )
    async with site_and_web(clients=(configured,)) as (_, web):
        verifier = new_verifier()
        code = query(await Browser(web).authorize(authorize_url("connector", verifier)))["code"]
        refused = await token(web, code, verifier, headers={"authorization": header})
    assert (refused.status_code, refused.json()) == (
        401,
        {"error": "invalid_client", "error_description": "the Basic authorization header is not base64 of id:secret"},
    )


async def test_a_body_client_id_beside_basic_credentials_must_be_the_same_client() -> None:
    async with site_and_web() as (_, web):
        client, secret, code, verifier = await confidential(web, "client_secret_basic")
        other = await token(web, code, verifier, client_id="someone-else", headers=basic(client, secret))
        same = await token(web, code, verifier, client_id=client, headers=basic(client, secret))
    assert (other.status_code, other.json()) == (
        401,
        {"error": "invalid_client", "error_description": "client_id in the body differs from the Basic credentials"},
    )
    assert same.status_code == 200, same.text


@pytest.mark.parametrize("sent", [None, ""], ids=["no client_id", "empty client_id"])
async def test_a_token_request_that_names_no_client_is_told_to_send_client_id(sent: str | None) -> None:
    async with site_and_web() as (_, web):
        client, verifier = (await register(web)).json()["client_id"], new_verifier()
        code = query(await Browser(web).authorize(authorize_url(client, verifier)))["code"]
        nameless = (
            await token(web, code, verifier) if sent is None else await token(web, code, verifier, client_id=sent)
        )
        named = await token(web, code, verifier, client_id=client)
    assert (nameless.status_code, nameless.json()) == (
        401,
        {"error": "invalid_client", "error_description": "the request names no client: send client_id"},
    )
    assert named.status_code == 200, named.text


async def test_an_authorization_header_that_is_not_basic_is_no_client_authentication() -> None:
    async with site_and_web() as (_, web):
        client, verifier = (await register(web)).json()["client_id"], new_verifier()
        code = query(await Browser(web).authorize(authorize_url(client, verifier)))["code"]
        bearer = await token(web, code, verifier, client_id=client, headers={"authorization": "Bearer abcdef"})
    assert bearer.status_code == 200, bearer.text


# Registration cannot fill the store


def web_from(site: Site, address: str) -> httpx2.AsyncClient:
    """A second browser or client of the same site, connecting from `address`."""
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(site.app, client=(address, 4711)), base_url=BASE)


async def test_one_address_registers_sixty_clients_an_hour_and_no_more(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="oauth.clients")
    async with site_and_web() as (site, web):
        statuses = [(await register(web)).status_code for _ in range(60)]
        refused = await register(web)
        warned_at_the_first_refusal = [record.getMessage() for record in caplog.records]
        for _ in range(2):
            await register(web)
        async with web_from(site, "203.0.113.9") as elsewhere:
            other = await register(elsewhere)
        site.clock.advance(3600)
        later = await register(web)
    assert statuses == [201] * 60
    assert (refused.status_code, refused.json()["error"]) == (429, "temporarily_unavailable")
    assert refused.json()["error_description"] == (
        "this address registered 60 clients within the hour, the most allowed; reuse a client_id registered "
        "already, or try again in an hour"
    )
    assert refused.headers["retry-after"] == "3600"
    assert "client_id" not in refused.json()
    assert (other.status_code, later.status_code) == (201, 201)
    # The operator hears of it once, when the address first goes over.
    warning = "refused registrations from 127.0.0.1: more than 60 in an hour"
    assert warned_at_the_first_refusal == [record.getMessage() for record in caplog.records] == [warning]


async def test_a_client_that_never_gets_a_token_is_forgotten_after_a_day_and_one_that_did_is_kept() -> None:
    async with site_and_web() as (site, web):
        unused, used = (await register(web)).json()["client_id"], (await register(web)).json()["client_id"]
        verifier = new_verifier()
        code = query(await Browser(web).authorize(authorize_url(used, verifier)))["code"]
        tokens = (await token(web, code, verifier, client_id=used)).json()
        site.clock.advance(24 * 3600)
        forgotten = await web.get(authorize_url(unused, new_verifier()))
        kept = await web.get(authorize_url(used, new_verifier()))
        refreshed = await web.post(
            "/token", data={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": used}
        )
    assert forgotten.status_code == 400 and "Unknown app" in forgotten.text
    assert kept.status_code == 200
    assert refreshed.status_code == 200, refreshed.text


async def test_a_client_that_keeps_getting_tokens_is_kept_a_year_past_its_last_ones() -> None:
    async with site_and_web() as (site, web):
        client, year = (await register(web)).json()["client_id"], 365 * 24 * 3600

        async def tokens() -> int:
            verifier = new_verifier()
            code = query(await Browser(web).authorize(authorize_url(client, verifier)))["code"]
            return (await token(web, code, verifier, client_id=client)).status_code

        statuses = [await tokens()]
        site.clock.advance(year - 24 * 3600)
        statuses.append(await tokens())
        site.clock.advance(year - 24 * 3600)
        kept = await web.get(authorize_url(client, new_verifier()))
        site.clock.advance(2 * 24 * 3600)
        forgotten = await web.get(authorize_url(client, new_verifier()))
    assert statuses == [200, 200]
    assert kept.status_code == 200
    assert forgotten.status_code == 400 and "Unknown app" in forgotten.text


async def test_registration_closes_while_too_many_registered_clients_are_unused(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="oauth.clients")
    async with site_and_web(max_unused_clients=3, registrations_per_network=2) as (site, web):
        # From three networks, since one network may register fewer than max_unused_clients.
        first = (await register(web)).json()["client_id"]
        async with web_from(site, "203.0.113.9") as elsewhere, web_from(site, "198.51.100.7") as third:
            assert [(await register(elsewhere)).status_code for _ in range(2)] == [201, 201]
            closed = await register(web)
            # A client that gets tokens stops counting; one that expires unused too.
            verifier = new_verifier()
            code = query(await Browser(web).authorize(authorize_url(first, verifier)))["code"]
            assert (await token(web, code, verifier, client_id=first)).status_code == 200
            reopened = await register(third)
            closed_again = await register(third)
            site.clock.advance(24 * 3600)
            after_a_day = await register(elsewhere)
    assert (closed.status_code, closed.json()["error"]) == (503, "temporarily_unavailable")
    assert closed.json()["error_description"] == (
        "registration is closed for now: 3 registered clients have not been used yet; try again later"
    )
    assert closed.headers["retry-after"] == "3600"
    assert (reopened.status_code, closed_again.status_code, after_a_day.status_code) == (201, 503, 201)
    assert [record.getMessage() for record in caplog.records] == [
        "refused a registration: 3 registered clients have had no token yet"
    ] * 2


async def test_one_address_starts_a_bounded_number_of_logins_at_a_time() -> None:
    async with site_and_web(pending_logins_per_address=3) as (site, web):
        client = (await register(web)).json()["client_id"]
        started = [(await web.get(authorize_url(client, new_verifier()))).status_code for _ in range(3)]
        refused = await web.get(authorize_url(client, new_verifier()))
        async with web_from(site, "203.0.113.9") as elsewhere:
            other = await elsewhere.get(authorize_url(client, new_verifier()))
        site.clock.advance(900)
        later = await web.get(authorize_url(client, new_verifier()))
    assert started == [200] * 3
    assert refused.status_code == 429
    assert "Too many logins were started from this address. Wait 15 minutes." in refused.text
    assert "<form" not in refused.text
    assert (other.status_code, later.status_code) == (200, 200)


# The client address behind a proxy


async def register_via(site: Site, peer: str, forwarded_for: str) -> int:
    async with web_from(site, peer) as web:
        return (await register(web, headers={"x-forwarded-for": forwarded_for})).status_code


async def test_forwarded_headers_are_never_trusted_without_trusted_proxies() -> None:
    async with site_and_web(registrations_per_address=2) as (site, _):
        statuses = [await register_via(site, "127.0.0.1", f"198.51.100.{n}") for n in range(3)]
    assert statuses == [201, 201, 429]


async def test_behind_a_trusted_proxy_each_forwarded_client_address_has_its_own_limit() -> None:
    async with site_and_web(registrations_per_address=2, trusted_proxies=("127.0.0.1", "10.0.0.0/8")) as (site, _):
        spread = [await register_via(site, "127.0.0.1", f"198.51.100.{n}") for n in range(3)]
        # The proxies append what they saw; what the client claimed further left is never read.
        claimed = [await register_via(site, "10.0.0.2", f"192.0.2.{n}, 203.0.113.7, 10.0.0.1") for n in range(3)]
        # A peer that is not a trusted proxy is the client, whatever it forwards.
        direct = [await register_via(site, "203.0.113.50", f"198.51.100.{n + 10}") for n in range(3)]
    assert spread == [201, 201, 201]
    assert claimed == [201, 201, 429]
    assert direct == [201, 201, 429]


async def test_an_ipv6_client_is_counted_by_its_slash_64() -> None:
    async with site_and_web(registrations_per_address=2) as (site, _):
        same = [await register_via(site, f"2001:db8:1:2::{n}", "") for n in range(1, 4)]
        other = await register_via(site, "2001:db8:1:3::1", "")
    assert same == [201, 201, 429]
    assert other == 201


# Per network: the many addresses of one holder (an IPv6 /48 holds 65,536 /64s) share one budget, below everyone's


@pytest.mark.parametrize(
    ("address", "other_network"),
    [("2001:db8:aaaa:{n:x}::1", "2001:db8:bbbb::1"), ("198.51.100.{n}", "198.51.101.1")],
    ids=["IPv6 /64s of one /48", "IPv4 addresses of one /24"],
)
async def test_the_addresses_of_one_network_together_register_at_most_registrations_per_network(
    address: str, other_network: str
) -> None:
    async with site_and_web(registrations_per_address=2, registrations_per_network=5) as (site, _):
        walked = [await register_via(site, address.format(n=n // 2 + 1), "") for n in range(6)]
        async with web_from(site, address.format(n=9)) as web:
            refused = await register(web)
        other = await register_via(site, other_network, "")
        site.clock.advance(24 * 3600)
        next_day = await register_via(site, address.format(n=10), "")
    assert walked == [201] * 5 + [429]
    assert (refused.status_code, refused.json()["error"]) == (429, "temporarily_unavailable")
    assert refused.json()["error_description"] == (
        "this address's network registered 5 clients within 86400 s, the most allowed; reuse a client_id "
        "registered already, or try again later"
    )
    assert (other, next_day) == (201, 201)


async def test_the_addresses_of_one_network_start_a_bounded_number_of_logins_and_everyone_a_bounded_total(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    limits: dict[str, Any] = {"pending_logins_per_address": 2, "pending_logins_per_network": 3, "pending_logins": 5}
    async with site_and_web(**limits) as (site, web):
        client = (await register(web)).json()["client_id"]

        async def start(address: str) -> httpx2.Response:
            async with web_from(site, address) as browser:
                return await browser.get(authorize_url(client, new_verifier()))

        one_network = [(await start(f"2001:db8:aaaa:{n}::1")).status_code for n in (1, 1, 2)]
        network_spent = await start("2001:db8:aaaa:3::1")
        another = [(await start("2001:db8:bbbb::1")).status_code for _ in range(2)]
        all_spent = await start("203.0.113.9")
        site.clock.advance(900)
        later = await start("2001:db8:aaaa:4::1")
    assert (one_network, another) == ([200] * 3, [200] * 2)
    assert page(network_spent) == (
        429,
        "Too many logins",
        "Too many logins were started from this address's network. Wait 15 minutes.",
    )
    assert page(all_spent) == (429, "Too many logins", "Too many logins were started just now. Wait 15 minutes.")
    assert later.status_code == 200
    assert [record.getMessage() for record in caplog.records if record.getMessage().startswith("refused")] == [
        "refused logins from network 2001:db8:aaaa::/48: more than 3 in 900 s",
        "refused logins from all addresses: more than 5 in 900 s",
    ]


async def test_the_addresses_of_one_network_together_have_at_most_key_checks_per_network_keys_checked() -> None:
    async with site_and_web(key_checks_per_address=2, key_checks_per_network=3) as (site, web):
        client = (await register(web)).json()["client_id"]

        async def guess(address: str) -> httpx2.Response:
            async with web_from(site, address) as browser:
                action, fields = page_form(await browser.get(authorize_url(client, new_verifier())))
                return await browser.post(action, data={**fields, "api_key": "a-guess"})

        checked = [(await guess(f"2001:db8:aaaa:{n}::1")).status_code for n in (1, 1, 2)]
        refused = await guess("2001:db8:aaaa:3::1")
        elsewhere = await guess("2001:db8:bbbb::1")
    assert checked == [400, 400, 400]
    assert page(refused) == (
        429,
        "Too many attempts",
        "Too many keys came from this address's network. Wait 15 minutes.",
    )
    assert elsewhere.status_code == 400


@pytest.mark.parametrize(
    ("limits", "problem"),
    [
        (
            {"registrations_per_network": 10_000},
            "registrations_per_network (10000) must be below max_unused_clients (10000)",
        ),
        ({"pending_logins_per_network": 99}, "pending_logins_per_address (100) must be at most pending_logins_per_"),
        ({"pending_logins": 1_000}, "pending_logins_per_network (1000) must be below pending_logins (1000)"),
        ({"key_checks_per_network": 29}, "key_checks_per_address (30) must be at most key_checks_per_network (29)"),
        ({"pending_logins": 0}, "pending_logins must be a whole number of at least 1"),
    ],
)
def test_a_network_limit_at_or_above_everyones_is_refused_saying_what_to_change(
    limits: dict[str, Any], problem: str
) -> None:
    with pytest.raises(ConfigError, match=re.escape(problem)):
        OAuthConfig(issuer=BASE, resource=f"{BASE}/mcp", secret_key=SECRET, **limits)


@pytest.mark.parametrize(
    ("proxies", "problem"),
    [(("proxy.internal",), "not an IP address or network"), ("10.0.0.1", "a tuple of addresses")],
)
def test_trusted_proxies_that_are_not_addresses_say_what_to_give(proxies: Any, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        OAuthConfig(issuer=BASE, resource=f"{BASE}/mcp", secret_key=SECRET, trusted_proxies=proxies)


# Redirect URIs and metadata at registration and authorization (each refusal names its field)

SECOND_URI = "https://claude.com/api/mcp/auth_callback"


async def test_a_client_with_one_redirect_uri_may_leave_it_out_of_the_authorization_request() -> None:
    async with site_and_web() as (_, web):
        client, verifier = (await register(web)).json()["client_id"], new_verifier()
        landed = await Browser(web).authorize(authorize_url(client, verifier, redirect_uri=""))
        # The token request then leaves it out too, or names the one registered URI.
        body = {"grant_type": "authorization_code", "code": query(landed)["code"], "client_id": client}
        tokens = await web.post("/token", data={**body, "code_verifier": verifier})
        other = await Browser(web).authorize(authorize_url(client, verifier, redirect_uri=""))
        named = await token(web, query(other)["code"], verifier, client_id=client)
    assert landed.startswith(REDIRECT_URI + "?")
    assert tokens.status_code == 200, tokens.text
    assert named.status_code == 200, named.text


async def test_a_client_with_two_redirect_uris_must_name_one_in_the_authorization_request() -> None:
    async with site_and_web() as (_, web):
        client = (await register(web, REDIRECT_URI, SECOND_URI)).json()["client_id"]
        unnamed = await web.get(authorize_url(client, new_verifier(), redirect_uri=""))
        named = await web.get(authorize_url(client, new_verifier(), redirect_uri=SECOND_URI))
    status, title, message = page(unnamed)
    assert (status, title) == (400, "The app did not say where to return")
    assert message.startswith("The app registered 2 redirect addresses and sent no redirect_uri to choose one")
    assert named.status_code == 200


@pytest.mark.parametrize("body", [{"redirect_uris": []}, {}], ids=["empty list", "no field"])
async def test_a_registration_without_a_redirect_uri_is_refused(body: dict[str, Any]) -> None:
    async with site_and_web() as (_, web):
        response = await web.post("/register", json={"client_name": "Claude", **body})
    assert response.status_code == 400
    assert response.json() == {
        "error": "invalid_redirect_uri",
        "error_description": "redirect_uris must list at least one redirect URI",
    }


@pytest.mark.parametrize(
    ("metadata", "error", "description"),
    [
        ({"client_name": 5}, "invalid_client_metadata", "client_name must be a string, not int"),
        ({"contacts": "ops@example.com"}, "invalid_client_metadata", "contacts must be a list of strings"),
        ({"contacts": [7]}, "invalid_client_metadata", "contacts must be a list of strings"),
        ({"redirect_uris": REDIRECT_URI}, "invalid_redirect_uri", "redirect_uris must be a list of strings"),
        (
            {"jwks": {"key": "x"}},
            "invalid_client_metadata",
            'jwks must be a JSON Web Key Set: an object with a "keys" list',
        ),
    ],
)
async def test_registration_metadata_of_the_wrong_json_type_is_refused_naming_the_field(
    metadata: dict[str, Any], error: str, description: str
) -> None:
    async with site_and_web() as (_, web):
        refused = await web.post(
            "/register", json={"redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none", **metadata}
        )
    assert (refused.status_code, refused.json()) == (400, {"error": error, "error_description": description})


async def test_a_configured_client_is_shown_by_its_configured_name() -> None:
    configured = PreregisteredClient(client_id="connector", redirect_uris=(REDIRECT_URI,), name="Team Connector")
    async with site_and_web(clients=(configured,)) as (_, web):
        consent = await Browser(web).login(authorize_url("connector", new_verifier()))
    assert "<strong>Team Connector</strong>" in consent.text


async def test_a_registration_answers_the_client_information_of_rfc_7591() -> None:
    async with site_and_web() as (site, web):
        public = (await register(web)).json()
        confidential = (
            await register(web, token_endpoint_auth_method="client_secret_post", grant_types=["authorization_code"])
        ).json()
    issued = int(site.clock.now)
    assert public == {
        "client_id": public["client_id"],
        "client_id_issued_at": issued,
        "client_name": "Claude",
        "redirect_uris": [REDIRECT_URI],
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
    }
    assert confidential == {
        "client_id": confidential["client_id"],
        "client_id_issued_at": issued,
        "client_name": "Claude",
        "redirect_uris": [REDIRECT_URI],
        "token_endpoint_auth_method": "client_secret_post",
        "grant_types": ["authorization_code"],
        "response_types": ["code"],
        "client_secret": confidential["client_secret"],
        "client_secret_expires_at": 0,
    }
    assert len(public["client_id"]) >= 43 and len(confidential["client_secret"]) >= 43


@pytest.mark.parametrize("body", [f'["{REDIRECT_URI}"]', '"Claude"', "7", "null"])
async def test_a_registration_that_is_not_a_json_object_is_refused_saying_so(body: str) -> None:
    async with site_and_web() as (_, web):
        refused = await web.post("/register", content=body, headers={"content-type": "application/json"})
    assert (refused.status_code, refused.json()) == (
        400,
        {"error": "invalid_client_metadata", "error_description": "the registration request must be a JSON object"},
    )


@pytest.mark.parametrize(("name", "shown"), [("Claude Desktop", "Claude Desktop"), (None, "")])
async def test_the_consent_page_names_a_registered_client_by_its_name_or_else_its_id(
    name: str | None, shown: str
) -> None:
    async with site_and_web() as (_, web):
        body: dict[str, Any] = {"redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none"}
        if name is not None:
            body["client_name"] = name
        client = (await web.post("/register", json=body)).json()["client_id"]
        consent = await Browser(web).login(authorize_url(client, new_verifier()))
    assert f"<strong>{shown or client}</strong>" in consent.text


async def test_a_registration_lists_at_most_twenty_redirect_uris() -> None:
    uris = [f"{REDIRECT_URI}/{n}" for n in range(21)]
    async with site_and_web() as (_, web):
        twenty = await register(web, *uris[:20])
        twenty_one = await register(web, *uris)
    assert twenty.status_code == 201 and twenty.json()["redirect_uris"] == uris[:20]
    assert twenty_one.status_code == 400
    assert twenty_one.json() == {
        "error": "invalid_client_metadata",
        "error_description": "redirect_uris lists 21 URIs; at most 20 are allowed",
    }


async def test_a_client_name_is_at_most_two_hundred_characters() -> None:
    async with site_and_web() as (_, web):
        fits = await register(web, client_name="C" * 200)
        too_long = await register(web, client_name="C" * 201)
    assert fits.status_code == 201 and fits.json()["client_name"] == "C" * 200
    assert too_long.status_code == 400
    assert too_long.json() == {
        "error": "invalid_client_metadata",
        "error_description": "client_name must be a string of at most 200 characters",
    }


@pytest.mark.parametrize(
    ("metadata", "field"),
    [
        ({"response_types": ["token"]}, "response_types"),
        ({"grant_types": ["client_credentials"]}, "grant_types"),
        ({"client_uri": "not a url"}, "client_uri"),
        ({"jwks": {"keys": []}, "jwks_uri": "https://claude.ai/jwks.json"}, "jwks"),
        ({"token_endpoint_auth_method": "private_key_jwt"}, "token_endpoint_auth_method"),
    ],
)
async def test_registration_metadata_the_rfc_7591_rules_refuse_names_the_field(
    metadata: dict[str, Any], field: str
) -> None:
    async with site_and_web() as (_, web):
        response = await register(web, **metadata)
    assert (response.status_code, response.json()["error"]) == (400, "invalid_client_metadata")
    assert response.json()["error_description"].startswith(f"the field {field!r} is not acceptable: ")


# Which redirect URIs a client may register, and which one a request gets (OAuth 2.1 §2.3.1, RFC 8252 §7)


@pytest.mark.parametrize(
    "uri",
    [
        "https://claude.ai/api/mcp/auth_callback",
        "https://a.example:8443/cb?tenant=1",
        "http://localhost/cb",
        "http://127.0.0.1:33418/cb",
        "http://[::1]/cb",
        "cursor://anysphere.cursor-retrieval/oauth/callback",
        "com.example.app:/oauth2redirect",
    ],
)
def test_https_loopback_http_and_native_app_redirect_uris_are_allowed(uri: str) -> None:
    assert redirect_uri_problem(uri) is None


@pytest.mark.parametrize(
    ("uri", "problem"),
    [
        ("", "redirect URI '' is not a non-empty string"),
        (7, "redirect URI 7 is not a non-empty string"),
        ("https://a.example/" + "x" * 1983, "a redirect URI is longer than 2000 characters"),
        ("https://a.example/a b", "holds whitespace, control or non-ASCII characters; percent-encode them"),
        ("https://a.example/\x7f", "holds whitespace, control or non-ASCII characters"),
        ("https://a.example/é", "holds whitespace, control or non-ASCII characters"),
        ("/cb", "redirect URI '/cb' has no scheme; give an absolute URL"),
        ("JavaScript:alert(1)", "uses the 'javascript' scheme, which is never allowed"),
        ("wss://a.example/cb", "uses the 'wss' scheme, which is never allowed"),
        ("https://a.example/cb#x", "has a fragment, which a redirect URI must not have"),
        ("https://u@a.example/cb", "holds user info, which a redirect URI must not have"),
        ("https://:p@a.example/cb", "holds user info"),
        ("https://a.example:99999/cb", "has a port that is not a number from 0 to 65535"),
        ("https:///cb", "must be an absolute URL with a host"),
        ("http://a.example/cb", "uses plain http on a host other than localhost; use https"),
        ("com.example.app:cb", "a native app's URI is scheme:/path (RFC 8252 §7.1), like com.example.app:/cb"),
    ],
)
def test_a_redirect_uri_that_could_be_abused_is_refused_saying_why(uri: object, problem: str) -> None:
    found = redirect_uri_problem(uri)
    assert found is not None and problem in found


def test_a_2000_character_redirect_uri_is_the_longest_allowed() -> None:
    uri = "https://a.example/" + "x" * 1982
    assert len(uri) == 2000 and redirect_uri_problem(uri) is None
    assert redirect_uri_problem(uri + "x") == "a redirect URI is longer than 2000 characters"


TWO = Client(client_id="c", redirect_uris=("https://a.example/cb", "http://127.0.0.1:5000/cb?x=1"))


def test_a_request_gets_the_registered_uri_it_names_or_none() -> None:
    one = Client(client_id="c", redirect_uris=("https://a.example/cb",))
    assert (one.redirect_uri(None), TWO.redirect_uri(None)) == ("https://a.example/cb", None)
    assert TWO.redirect_uri("https://a.example/cb") == "https://a.example/cb"
    assert TWO.redirect_uri("https://a.example/cb/") is None
    assert TWO.redirect_uri("https://a.example:443/cb") is None


def test_a_loopback_redirect_uri_may_differ_only_in_its_port() -> None:
    # RFC 8252 §7.3: a native app listens on whatever port it got.
    assert TWO.redirect_uri("http://127.0.0.1:61000/cb?x=1") == "http://127.0.0.1:61000/cb?x=1"
    assert TWO.redirect_uri("http://127.0.0.1/cb?x=1") == "http://127.0.0.1/cb?x=1"
    assert TWO.redirect_uri("http://127.0.0.1:61000/cb?x=2") is None
    assert TWO.redirect_uri("http://127.0.0.1:61000/other?x=1") is None
    assert TWO.redirect_uri("http://localhost:5000/cb?x=1") is None
    assert TWO.redirect_uri("https://127.0.0.1:5000/cb?x=1") is None


def test_an_https_loopback_redirect_uri_must_match_with_its_port() -> None:
    # The port may differ only for plain http on loopback, where a native app listens on an ephemeral port.
    https = Client(client_id="c", redirect_uris=("https://localhost:8443/cb",))
    assert https.redirect_uri("https://localhost:8443/cb") == "https://localhost:8443/cb"
    assert https.redirect_uri("https://localhost:9443/cb") is None
    assert https.redirect_uri("http://localhost:8443/cb") is None


def test_a_client_is_shown_by_its_name_or_else_its_id() -> None:
    assert (TWO.display_name, replace(TWO, name="Claude").display_name) == ("c", "Claude")


def test_a_client_record_round_trips_and_old_records_get_the_defaults() -> None:
    client = Client(
        client_id="c",
        redirect_uris=("https://a/cb",),
        name="N",
        auth_method="client_secret_post",
        secret_hash="h",
        source="document",
    )
    assert Client.from_record(client.to_record()) == client
    old = Client.from_record({"client_id": "c", "redirect_uris": ["https://a/cb"]})
    assert (old.name, old.auth_method, old.secret_hash, old.source) == ("", "none", None, "registered")


def test_a_client_accepts_only_the_method_it_registered_and_a_configured_one_either_secret_method() -> None:
    basic_client = replace(TWO, auth_method="client_secret_basic", secret_hash="h")
    configured = replace(basic_client, source="configured")
    assert [basic_client.accepts(m) for m in AUTH_METHODS] == [False, True, False]
    assert [configured.accepts(m) for m in AUTH_METHODS] == [False, True, True]
    assert [replace(TWO, source="configured").accepts(m) for m in AUTH_METHODS] == [True, False, False]
    assert not TWO.secret_matches("anything") and not basic_client.secret_matches("")


@pytest.mark.parametrize("metadata", [{"tos_uri": 5}, {"logo_uri": ["https://claude.ai/logo.png"]}])
def test_metadata_of_a_type_the_rules_cannot_read_is_refused_as_the_wrong_type(metadata: dict[str, Any]) -> None:
    # The registration endpoint checks these types itself first; the adapter holds to its contract alone too.
    with pytest.raises(ProtocolError) as refused:
        validate_client_metadata({**metadata, "redirect_uris": [REDIRECT_URI]}, {"issuer": BASE})
    assert (refused.value.code, refused.value.description) == (
        "invalid_client_metadata",
        "a field of the client metadata has the wrong type",
    )


async def test_a_registration_asking_for_scopes_the_server_lacks_is_kept_and_trimmed_later() -> None:
    async with site_and_web() as (_, web):
        response = await register(web, scope="mcp admin:everything")
    assert response.status_code == 201, response.text


def test_server_metadata_that_breaks_rfc_8414_is_a_config_error_saying_what_is_wrong() -> None:
    with pytest.raises(ConfigError, match=r"^the authorization server metadata is not valid: .*issuer"):
        validate_server_metadata({"issuer": "http://gw.example?x=1", "response_types_supported": ["code"]})


# application_type (OpenID Connect Dynamic Client Registration §2)


@pytest.mark.parametrize(
    ("application_type", "redirect_uri"),
    [
        ("web", "https://claude.ai/api/mcp/auth_callback"),
        ("native", "http://127.0.0.1:33418/callback"),
        ("native", "http://localhost/callback"),
        ("native", "com.example.app:/oauth2redirect"),
        ("native", "https://app.example.com/callback"),
    ],
)
async def test_a_client_registers_the_redirect_uris_its_application_type_allows_and_is_told_its_type(
    application_type: str, redirect_uri: str
) -> None:
    async with site_and_web() as (_, web):
        registered = await register(web, redirect_uri, application_type=application_type)
    assert registered.status_code == 201, registered.text
    assert registered.json()["application_type"] == application_type


@pytest.mark.parametrize(
    ("application_type", "redirect_uri", "said"),
    [
        ("web", "http://127.0.0.1:33418/callback", "a web application's redirect URIs are https on a public host"),
        ("web", "https://localhost/callback", "a web application's redirect URIs are https on a public host"),
        ("web", "com.example.app:/oauth2redirect", "a web application's redirect URIs are https on a public host"),
    ],
)
async def test_a_redirect_uri_its_application_type_forbids_is_refused_saying_what_to_register_as(
    application_type: str, redirect_uri: str, said: str
) -> None:
    async with site_and_web() as (_, web):
        refused = await register(web, redirect_uri, application_type=application_type)
    assert refused.status_code == 400
    assert refused.json()["error"] == "invalid_redirect_uri"
    assert said in refused.json()["error_description"] and "register as native" in refused.json()["error_description"]


async def test_an_unknown_application_type_is_refused_and_none_given_leaves_the_uris_as_they_are() -> None:
    async with site_and_web() as (_, web):
        refused = await register(web, application_type="desktop")
        plain = await register(web, "http://127.0.0.1:33418/callback")
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_client_metadata"
    assert "application_type must be 'web' or 'native', not 'desktop'" in refused.json()["error_description"]
    assert plain.status_code == 201 and "application_type" not in plain.json()
