"""The authorization endpoint and its two forms, page by page: what each refusal says, where it goes, and what it
counts, so a person at the browser and the operator both learn what went wrong.

In-process (httpx2.ASGITransport) against the demo shop at https://gw.example, as in test_attacks."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urlencode

import httpx2
import pytest
from starlette.requests import Request

from demo import ADMIN_KEY
from oauth import ApiKeyLogin, PreregisteredClient, Principal
from oauth._crypto import token_hash
from oauth.errors import LoginError
from tests.oauth.conftest import REDIRECT_URI, Browser, Site, page_form, query
from tests.oauth.test_attacks import (
    BASE,
    authorize_url,
    client_id,
    exchange,
    new_verifier,
    site_and_web,
)

pytestmark = pytest.mark.anyio

AGAIN = "Go back to the app and connect again."


class Recorder:
    """An OAuth event listener that keeps what it is told, in order."""

    def __init__(self) -> None:
        self.logins: list[str] = []
        self.refusals: list[tuple[str, str]] = []
        self.stores: list[tuple[str, str]] = []

    def login(self, outcome: str) -> None:
        self.logins.append(outcome)

    def refusal(self, endpoint: str, error: str) -> None:
        self.refusals.append((endpoint, error))

    def store_failure(self, store: str) -> None:
        self.stores.append((store, "failure"))

    def store_state(self, store: str, up: bool) -> None:
        self.stores.append((store, "up" if up else "down"))


@asynccontextmanager
async def observed(**options: Any) -> AsyncIterator[tuple[Site, httpx2.AsyncClient, Recorder]]:
    async with site_and_web(**options) as (site, web):
        recorder = Recorder()
        site.server.observe(recorder)
        yield site, web, recorder


class _Page(HTMLParser):
    """The heading and the error paragraph of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.title = self.message = ""
        self._into: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "h1":
            self._into = "title"
        elif tag == "p" and ("class", "error") in attrs:
            self._into = "message"

    def handle_endtag(self, tag: str) -> None:
        self._into = None

    def handle_data(self, data: str) -> None:
        if self._into is not None:
            setattr(self, self._into, getattr(self, self._into) + data)


def page(response: httpx2.Response) -> tuple[int, str, str]:
    """The status, heading and error message of an HTML page (never a redirect)."""
    assert "location" not in response.headers, response.headers
    assert response.headers["content-type"].startswith("text/html")
    parser = _Page()
    parser.feed(response.text)
    return response.status_code, parser.title, parser.message


def authorize_query(**params: str) -> str:
    return f"/authorize?{urlencode(params)}"


# GET /authorize: problems before the client and its redirect URI are known are pages, never redirects


async def test_a_repeated_parameter_is_a_malformed_request_page() -> None:
    async with observed() as (_, web, _recorder):
        answer = await web.get("/authorize?client_id=a&client_id=b")
    assert page(answer) == (
        400,
        "The app sent a malformed request",
        f"the parameter 'client_id' is given more than once. {AGAIN}",
    )


async def test_a_request_without_client_id_is_an_incomplete_request_page() -> None:
    async with observed() as (_, web, _recorder):
        answers = [await web.get(authorize_query(response_type="code")), await web.get("/authorize?client_id=")]
    for answer in answers:
        assert page(answer) == (400, "The app sent an incomplete request", f"client_id is missing. {AGAIN}")


async def test_a_state_of_up_to_1024_characters_is_kept_and_a_longer_one_is_a_malformed_request_page() -> None:
    async with observed() as (_, web, _recorder):
        client = await client_id(web)
        longest = "s" * 1024
        landed = await Browser(web).authorize(authorize_url(client, new_verifier(), state=longest))
        refused = await web.get(authorize_url(client, new_verifier(), state=longest + "s"))
    assert query(landed)["state"] == longest
    assert page(refused) == (
        400,
        "The app sent a malformed request",
        f"Its state is 1025 characters long; at most 1024 are accepted. {AGAIN}",
    )


async def test_an_unknown_client_id_is_named_on_the_unknown_app_page() -> None:
    async with observed() as (_, web, _recorder):
        answer = await web.get(authorize_url("no-such-client", new_verifier()))
    assert page(answer) == (
        400,
        "Unknown app",
        f"No app with client_id 'no-such-client' is registered here. {AGAIN}",
    )


async def test_an_unregistered_redirect_uri_is_named_on_its_page() -> None:
    async with observed() as (_, web, _recorder):
        client = await client_id(web)
        answer = await web.get(authorize_url(client, new_verifier(), redirect_uri="https://evil.example/cb"))
    assert page(answer) == (
        400,
        "The app's redirect address is not registered",
        "redirect_uri 'https://evil.example/cb' is not one this app registered, so the login stops here.",
    )


async def test_logins_started_past_the_per_address_limit_get_a_429_page_counted_as_limited() -> None:
    async with observed(pending_logins_per_address=2, login_ttl=300.0) as (site, web, recorder):
        client = await client_id(web)
        statuses = [(await web.get(authorize_url(client, new_verifier()))).status_code for _ in range(2)]
        limited = await web.get(authorize_url(client, new_verifier()))
        site.clock.advance(301)
        again = await web.get(authorize_url(client, new_verifier()))
    assert statuses == [200, 200]
    assert page(limited) == (429, "Too many logins", "Too many logins were started from this address. Wait 5 minutes.")
    assert recorder.logins == ["limited"]
    assert again.status_code == 200


# GET /authorize: once the client is known, problems go back to its redirect URI: at once for a configured client,
# through a page with a link for one anyone could have registered (RFC 9700 §4.11.2: no open redirector)

CONFIGURED = PreregisteredClient(client_id="connector", redirect_uris=(REDIRECT_URI,))
BAD_REQUESTS = [
    ({"response_type": "token"}, "unsupported_response_type", "response_type must be 'code', got 'token'"),
    ({"response_type": ""}, "unsupported_response_type", "response_type must be 'code', got None"),
    ({"code_challenge": ""}, "invalid_request", "code_challenge is required (PKCE with S256)"),
    (
        {"code_challenge_method": "plain"},
        "invalid_request",
        "code_challenge_method must be S256; plain is not accepted",
    ),
    (
        {"code_challenge": "short"},
        "invalid_request",
        "code_challenge is not 43 to 128 characters of [A-Za-z0-9-._~]",
    ),
    (
        {"resource": "https://elsewhere.example/mcp"},
        "invalid_target",
        f"resource 'https://elsewhere.example/mcp' is not served here; use '{BASE}/mcp'",
    ),
]


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href")
        if tag == "a" and href is not None:
            self.hrefs.append(href)


def links(response: httpx2.Response) -> list[str]:
    """Where the links of a page lead."""
    parser = _Links()
    parser.feed(response.text)
    return parser.hrefs


@pytest.mark.parametrize(("params", "error", "description"), BAD_REQUESTS)
async def test_a_bad_request_from_a_configured_client_goes_back_at_once_with_its_error_state_and_iss(
    params: dict[str, str], error: str, description: str
) -> None:
    async with observed(clients=(CONFIGURED,)) as (_, web, recorder):
        answer = await web.get(authorize_url(CONFIGURED.client_id, new_verifier(), **params))
    assert answer.status_code == 302
    assert answer.headers["location"].startswith(REDIRECT_URI + "?")
    assert query(answer.headers["location"]) == {
        "error": error,
        "error_description": description,
        "state": "the-state",
        "iss": BASE,
    }
    assert answer.headers["cache-control"] == "no-store"
    assert answer.headers["referrer-policy"] == "no-referrer"
    assert recorder.refusals == [("authorize", error)]


@pytest.mark.parametrize(("params", "error", "description"), BAD_REQUESTS)
async def test_a_bad_request_from_a_registered_client_is_a_page_naming_the_error_and_host_with_a_link_back(
    params: dict[str, str], error: str, description: str
) -> None:
    async with observed() as (_, web, recorder):
        client = await client_id(web)
        answer = await web.get(authorize_url(client, new_verifier(), **params))
    assert page(answer) == (400, "The app's request was refused", f"{error}: {description}")
    assert '<span class="host">claude.ai</span>' in answer.text
    [back] = links(answer)
    assert back.startswith(REDIRECT_URI + "?")
    assert query(back) == {"error": error, "error_description": description, "state": "the-state", "iss": BASE}
    assert answer.headers["x-frame-options"] == "DENY"
    assert recorder.refusals == [("authorize", error)]


async def test_a_registered_native_app_is_not_sent_to_its_scheme_by_a_bad_request_but_shown_it() -> None:
    native = "com.example.app:/oauth2redirect"
    async with observed() as (_, web, _recorder):
        client = await client_id(web, native)
        answer = await web.get(authorize_url(client, new_verifier(), redirect_uri=native, response_type="x"))
    assert page(answer)[:2] == (400, "The app's request was refused")
    assert f'<span class="host">{native}</span>' in answer.text
    assert [link.split("?")[0] for link in links(answer)] == [native]


async def test_the_link_back_of_a_refused_request_is_escaped_on_the_page() -> None:
    async with observed() as (_, web, _recorder):
        client = await client_id(web)
        answer = await web.get(authorize_url(client, new_verifier(), response_type='"><script>x</script>'))
    assert "<script>x" not in answer.text
    [back] = links(answer)
    assert query(back)["error_description"] == "response_type must be 'code', got '\"><script>x</script>'"


async def test_an_error_redirect_without_state_carries_none() -> None:
    async with observed(clients=(CONFIGURED,)) as (_, web, _recorder):
        answer = await web.get(authorize_url(CONFIGURED.client_id, new_verifier(), state="", response_type="token"))
    assert set(query(answer.headers["location"])) == {"error", "error_description", "iss"}


async def test_the_resource_may_be_named_with_a_trailing_slash_and_the_grant_is_for_the_mcp_endpoint() -> None:
    async with observed() as (site, web, _recorder):
        client, verifier = await client_id(web), new_verifier()
        landed = await Browser(web).authorize(authorize_url(client, verifier, resource=f"{BASE}/mcp/"))
        tokens = (await exchange(web, client, query(landed)["code"], verifier)).json()
        grant = await site.server.grants.check_access_token(tokens["access_token"])
    # A grant for any other resource would not be honoured at the MCP endpoint.
    assert grant is not None


@pytest.mark.parametrize(
    ("asked", "granted"),
    [("mcp", "mcp"), ("", "mcp"), ("unknown mcp", "mcp"), ("unknown", "mcp")],
)
async def test_the_grant_holds_the_known_scopes_asked_for_or_all_of_them(asked: str, granted: str) -> None:
    async with observed() as (_, web, _recorder):
        client, verifier = await client_id(web), new_verifier()
        landed = await Browser(web).authorize(authorize_url(client, verifier, scope=asked))
        tokens = (await exchange(web, client, query(landed)["code"], verifier)).json()
    assert tokens["scope"] == granted


# The login form


async def test_the_login_page_sets_the_browser_cookie_for_the_login_lifetime() -> None:
    async with observed(login_ttl=420.0) as (site, web, _recorder):
        client = await client_id(web)
        answer = await web.get(authorize_url(client, new_verifier()))
    assert answer.status_code == 200
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith(f"{site.server.authorization.cookie_name}=")
    assert "Max-Age=420" in cookie


async def test_two_logins_started_in_one_browser_keep_its_cookie_so_the_first_page_still_works() -> None:
    async with observed() as (_, web, _recorder):
        client = await client_id(web)
        first = await web.get(authorize_url(client, new_verifier()))
        second = await web.get(authorize_url(client, new_verifier()))
        action, fields = page_form(first)
        accepted = await web.post(action, data={**fields, "api_key": ADMIN_KEY})
    assert first.headers["set-cookie"].split(";")[0] == second.headers["set-cookie"].split(";")[0]
    assert accepted.status_code == 200 and "Allow" in accepted.text


async def test_over_plain_http_the_browser_cookie_has_no_secure_prefix_and_still_carries_the_login() -> None:
    # Browsers drop a `__Host-` cookie that is not Secure, and a Secure one set over http.
    async with observed(base="http://127.0.0.1:8000") as (site, web, _recorder):
        client = await client_id(web)
        answer = await web.get(authorize_url(client, new_verifier()))
        action, fields = page_form(answer)
        accepted = await web.post(action, data={**fields, "api_key": ADMIN_KEY})
    cookie = answer.headers["set-cookie"]
    assert site.server.authorization.cookie_name == "mcp-oauth"
    assert cookie.startswith("mcp-oauth=") and "Secure" not in cookie
    assert accepted.status_code == 200 and "Allow" in accepted.text


async def test_a_refused_key_shows_the_login_page_again_with_the_reason_and_counts_as_refused() -> None:
    async with observed() as (_, web, recorder):
        client = await client_id(web)
        action, fields = page_form(await web.get(authorize_url(client, new_verifier())))
        refused = await web.post(action, data={**fields, "api_key": "wrong"})
        # The form on the page again still works.
        again_action, again_fields = page_form(refused)
        accepted = await web.post(again_action, data={**again_fields, "api_key": ADMIN_KEY})
    assert refused.status_code == 400
    assert "did not accept" in page(refused)[2]
    assert accepted.status_code == 200 and "Allow" in accepted.text
    assert recorder.logins == ["refused", "accepted"]


async def test_the_fifth_refused_key_ends_the_login_with_its_own_page() -> None:
    async with observed() as (site, web, recorder):
        client = await client_id(web)
        action, fields = page_form(await web.get(authorize_url(client, new_verifier())))
        answers = [await web.post(action, data={**fields, "api_key": f"guess-{n}"}) for n in range(5)]
        late = await web.post(action, data={**fields, "api_key": ADMIN_KEY})
        left = await site.server.store.get("request", fields["request_id"])
    assert page(answers[4]) == (400, "Too many attempts", f"The key was refused 5 times. {AGAIN}")
    assert left is None
    assert page(late) == (400, "This page has expired", f"The login took too long. {AGAIN}")
    assert recorder.logins == ["refused"] * 5


async def test_a_key_posted_once_five_others_are_counted_ends_the_login_unchecked_and_counts_as_limited() -> None:
    # Keys posted at the same moment (to this instance or another sharing the store) are each counted before
    # any is checked; the five counted here stand for them.
    async with observed(login_ttl=300.0) as (site, web, recorder):
        client = await client_id(web)
        action, fields = page_form(await web.get(authorize_url(client, new_verifier())))
        for _ in range(5):
            await site.server.store.count(f"request:{fields['request_id']}", window=300.0)
        late = await web.post(action, data={**fields, "api_key": ADMIN_KEY})
        left = await site.server.store.get("request", fields["request_id"])
    assert page(late) == (400, "Too many attempts", f"The key was refused 5 times. {AGAIN}")
    assert left is None
    assert recorder.logins == ["limited"]


async def test_thirty_keys_from_one_address_then_429_pages_counted_as_limited_and_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="oauth.authorize")
    async with observed() as (_, web, recorder):
        client = await client_id(web)
        answers = []
        for keys in (4, 4, 4, 4, 4, 4, 4, 4, 4):
            action, fields = page_form(await web.get(authorize_url(client, new_verifier())))
            answers += [await web.post(action, data={**fields, "api_key": f"k{n}"}) for n in range(keys)]
    assert [answer.status_code for answer in answers] == [400] * 30 + [429] * 6
    assert page(answers[-1]) == (429, "Too many attempts", "Too many keys came from this address. Wait 15 minutes.")
    assert recorder.logins == ["refused"] * 30 + ["limited"] * 6
    # One line for the window, however many keys follow: a visitor cannot write to the log at will.
    assert [record.getMessage() for record in caplog.records] == [
        "refused API keys from 127.0.0.1: more than 30 in 900 s"
    ]


async def test_a_client_id_with_a_line_break_is_refused_on_a_page_and_never_reaches_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="oauth")
    forged = "2026-01-01 00:00:00 gateway.calls caller=admin status=200"
    async with observed() as (_, web, _recorder):
        answers = [
            await web.get(authorize_url(f"https://no-such-host.invalid/c{breaks}{forged}", new_verifier()))
            for breaks in ("\n", "\r\n", "\r", "\x85", "\u2028")
        ]
    for answer in answers:
        assert page(answer) == (
            400,
            "This app could not be identified",
            "the client_id holds control characters or is longer than 2000 characters; send the client_id the "
            "registration endpoint returned, or the https URL of the client's metadata document",
        )
    assert [record.getMessage() for record in caplog.records if forged in record.getMessage()] == []


async def test_a_login_form_posted_again_after_a_key_was_accepted_shows_the_consent_page() -> None:
    async with observed() as (_, web, _recorder):
        client = await client_id(web)
        action, fields = page_form(await web.get(authorize_url(client, new_verifier())))
        first = await web.post(action, data={**fields, "api_key": ADMIN_KEY})
        second = await web.post(action, data={**fields, "api_key": "anything"})
    assert first.status_code == second.status_code == 200
    assert page_form(first) == page_form(second)


# Both forms: stale, forged or foreign


async def test_a_form_for_an_unknown_or_expired_request_is_an_expired_page() -> None:
    async with observed(login_ttl=60.0) as (site, web, _recorder):
        client = await client_id(web)
        action, fields = page_form(await web.get(authorize_url(client, new_verifier())))
        unknown = await web.post(action, data={**fields, "request_id": "nope", "api_key": ADMIN_KEY})
        missing = await web.post(action, data={"csrf": fields["csrf"], "api_key": ADMIN_KEY})
        site.clock.advance(61)
        expired = await web.post(action, data={**fields, "api_key": ADMIN_KEY})
    for answer in (unknown, missing, expired):
        assert page(answer) == (400, "This page has expired", f"The login took too long. {AGAIN}")


async def test_a_form_from_another_site_or_without_this_browsers_token_is_refused_with_403() -> None:
    async with observed() as (site, web, _recorder):
        client = await client_id(web)
        action, fields = page_form(await web.get(authorize_url(client, new_verifier())))
        cross = await web.post(
            action, data={**fields, "api_key": ADMIN_KEY}, headers={"origin": "https://evil.example"}
        )
        own_origin = await web.post(action, data={**fields, "api_key": "x"}, headers={"origin": BASE})
        forged = await web.post(action, data={**fields, "csrf": "forged", "api_key": ADMIN_KEY})
        web.cookies.delete(site.server.authorization.cookie_name)
        no_cookie = await web.post(action, data={**fields, "api_key": ADMIN_KEY})
    assert page(cross) == (403, "This form came from another site", "The request was refused.")
    assert own_origin.status_code == 400 and "did not accept" in own_origin.text
    for answer in (forged, no_cookie):
        assert page(answer) == (
            403,
            "This form could not be verified",
            f"It was not sent from the page this browser opened. {AGAIN}",
        )


async def test_a_form_that_cannot_be_read_gets_a_page_saying_so() -> None:
    async with observed() as (_, web, _recorder):
        client = await client_id(web)
        action, fields = page_form(await web.get(authorize_url(client, new_verifier())))
        repeated = await web.post(
            action,
            content=urlencode([*fields.items(), ("api_key", "a"), ("api_key", "b")]),
            headers={"content-type": "application/x-www-form-urlencoded"},
        )
    status, title, message = page(repeated)
    assert (status, title) == (400, "The form could not be read")
    assert "api_key" in message


async def test_a_form_for_a_client_that_is_gone_is_an_unknown_app_page() -> None:
    async with observed() as (site, web, _recorder):
        client = await client_id(web)
        action, fields = page_form(await web.get(authorize_url(client, new_verifier())))
        await site.server.store.delete("new-client", token_hash(client))
        answer = await web.post(action, data={**fields, "api_key": ADMIN_KEY})
    assert page(answer) == (400, "Unknown app", f"The app is no longer registered. {AGAIN}")


# The consent form


async def consent_form(web: httpx2.AsyncClient, url: str) -> tuple[str, dict[str, str]]:
    return page_form(await Browser(web).login(url))


async def test_the_consent_form_before_a_key_was_accepted_asks_to_log_in_first() -> None:
    async with observed() as (site, web, _recorder):
        client = await client_id(web)
        _, fields = page_form(await web.get(authorize_url(client, new_verifier())))
        answer = await web.post(site.server.authorization.consent_action, data={**fields, "decision": "allow"})
    assert page(answer) == (
        400,
        "Log in first",
        f"This browser has not logged in for this request. {AGAIN}",
    )


@pytest.mark.parametrize("decision", ["", "maybe", "Allow"])
async def test_a_consent_without_allow_or_deny_asks_for_one_and_the_request_stays(decision: str) -> None:
    async with observed() as (_, web, _recorder):
        client = await client_id(web)
        action, fields = await consent_form(web, authorize_url(client, new_verifier()))
        unclear = await web.post(action, data={**fields, "decision": decision})
        allowed = await web.post(action, data={**fields, "decision": "allow"})
    assert page(unclear) == (400, "The form could not be read", "Choose Allow or Deny.")
    assert allowed.status_code == 303


async def test_a_consent_answered_twice_is_refused_and_the_request_is_gone() -> None:
    async with observed() as (site, web, recorder):
        client = await client_id(web)
        action, fields = await consent_form(web, authorize_url(client, new_verifier()))
        first = await web.post(action, data={**fields, "decision": "allow"})
        left = await site.server.store.get("request", fields["request_id"])
        claimed, _ = await site.server.store.claim("request", fields["request_id"])
        second = await web.post(action, data={**fields, "decision": "deny"})
    assert first.status_code == 303
    assert left is None and claimed is None
    assert page(second) == (400, "This page has expired", f"The login took too long. {AGAIN}")
    assert recorder.logins == ["accepted", "allowed"]


async def test_a_consent_another_submission_claimed_first_is_already_answered() -> None:
    async with observed() as (site, web, recorder):
        client = await client_id(web)
        action, fields = await consent_form(web, authorize_url(client, new_verifier()))
        # Two submissions at once: the other one claimed the request between this one's read and its claim.
        await site.server.store.claim("request", fields["request_id"])
        answer = await web.post(action, data={**fields, "decision": "allow"})
    assert page(answer) == (400, "Already answered", f"This request was answered already. {AGAIN}")
    assert recorder.logins == ["accepted"]


async def test_denying_describes_the_refusal_and_counts_as_denied() -> None:
    async with observed() as (_, web, recorder):
        client = await client_id(web)
        landed = await Browser(web, decision="deny").authorize(authorize_url(client, new_verifier()))
    assert query(landed)["error_description"] == "the user denied access"
    assert recorder.logins == ["accepted", "denied"]


async def test_allowing_issues_a_code_for_the_user_who_logged_in_bound_to_the_redirect_uri_asked_for() -> None:
    async with observed() as (site, web, recorder):
        me = await site.server.authorization.login.check_key(ADMIN_KEY)
        client, verifier = await client_id(web), new_verifier()
        first = query(await Browser(web).authorize(authorize_url(client, verifier)))
        # The request named redirect_uri, so the token request must name it too (OAuth 2.1 §4.1.3).
        form = {"grant_type": "authorization_code", "code": first["code"], "client_id": client}
        without = await web.post("/token", data={**form, "code_verifier": verifier})
        second = query(await Browser(web).authorize(authorize_url(client, verifier)))
        tokens = await exchange(web, client, second["code"], verifier)
        grant = await site.server.grants.check_access_token(tokens.json()["access_token"])
    assert without.status_code == 400 and without.json()["error"] == "invalid_grant"
    assert tokens.status_code == 200, tokens.text
    assert grant is not None and grant.subject == me.subject and grant.client_id == client
    assert set(first) == set(second) == {"code", "state", "iss"}
    assert recorder.logins.count("allowed") == 2


async def test_allowing_without_state_sends_back_code_and_iss_only() -> None:
    async with observed() as (_, web, _recorder):
        client = await client_id(web)
        landed = await Browser(web).authorize(authorize_url(client, new_verifier(), state=""))
    assert set(query(landed)) == {"code", "iss"}
    assert query(landed)["iss"] == BASE


# A host app's own session: the login's `current` names the user, so no key is asked for


class SessionLogin:
    """A host app's login: the browser's `session` cookie names the user; a `broken` one cannot be read."""

    def __init__(self, keys: Any) -> None:
        self.keys = keys

    async def current(self, request: Request) -> Principal | None:
        session = request.cookies.get("session")
        if session == "broken":
            raise LoginError("your session could not be read; log in to the shop again")
        if session is None:
            return None
        return Principal(subject=f"user-{session}", name=f"Shopper {session}", credentials={"x-api-key": ADMIN_KEY})

    async def check_key(self, key: str) -> Principal:
        principal: Principal = await self.keys.check_key(key)
        return principal


async def test_a_browser_the_host_app_knows_goes_straight_to_consent_and_gets_a_code_for_that_user() -> None:
    async with observed() as (site, web, recorder):
        site.server.authorization.login = SessionLogin(site.server.authorization.login)
        client, verifier = await client_id(web), new_verifier()
        web.cookies.set("session", "42", domain="gw.example")
        consent = await web.get(authorize_url(client, verifier))
        action, fields = page_form(consent)
        answer = await web.post(action, data={**fields, "decision": "allow"})
        tokens = await exchange(web, client, query(answer.headers["location"])["code"], verifier)
        grant = await site.server.grants.check_access_token(tokens.json()["access_token"])
    assert consent.status_code == 200 and "Shopper 42" in consent.text and "Allow" in consent.text
    assert consent.headers["set-cookie"].startswith(f"{site.server.authorization.cookie_name}=")
    assert grant is not None and grant.subject == "user-42" and grant.credentials == {"x-api-key": ADMIN_KEY}
    assert recorder.logins == ["accepted", "allowed"]


async def test_a_session_the_login_cannot_read_is_a_page_saying_why() -> None:
    async with observed() as (site, web, recorder):
        site.server.authorization.login = SessionLogin(site.server.authorization.login)
        client = await client_id(web)
        web.cookies.set("session", "broken", domain="gw.example")
        answer = await web.get(authorize_url(client, new_verifier()))
    assert page(answer) == (
        400,
        "You could not be logged in",
        "your session could not be read; log in to the shop again",
    )
    assert recorder.logins == []


async def test_a_host_login_that_knows_nobody_asks_for_an_api_key_and_checks_it_with_its_own_check_key() -> None:
    async with observed() as (site, web, recorder):
        site.server.authorization.login = SessionLogin(site.server.authorization.login)
        client, verifier = await client_id(web), new_verifier()
        form = await web.get(authorize_url(client, verifier))
        action, fields = page_form(form)
        consent = await web.post(action, data={**fields, "api_key": ADMIN_KEY})
    assert form.status_code == 200
    assert '<label for="api_key">Your API key for Demo shop</label>' in form.text
    assert consent.status_code == 200 and "Allow" in consent.text
    assert recorder.logins == ["accepted"]


async def test_the_operator_is_warned_once_when_an_address_starts_too_many_logins(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="oauth.authorize")
    async with observed(pending_logins_per_address=1, login_ttl=60.0) as (_, web, recorder):
        client = await client_id(web)
        answers = [await web.get(authorize_url(client, new_verifier())) for _ in range(2)]
        at_the_first_refusal = [record.getMessage() for record in caplog.records]
        answers.append(await web.get(authorize_url(client, new_verifier())))
    assert [answer.status_code for answer in answers] == [200, 429, 429]
    assert page(answers[1])[2] == "Too many logins were started from this address. Wait 1 minutes."
    warning = "refused logins from 127.0.0.1: more than 1 in 60 s"
    assert at_the_first_refusal == [record.getMessage() for record in caplog.records] == [warning]
    assert recorder.logins == ["limited", "limited"]


async def test_the_operator_is_warned_of_a_forged_form(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="oauth.authorize")
    async with observed() as (_, web, _recorder):
        client = await client_id(web)
        action, fields = page_form(await web.get(authorize_url(client, new_verifier())))
        await web.post(action, data={**fields, "csrf": "forged", "api_key": "k"})
    assert [record.getMessage() for record in caplog.records] == [
        "refused a login form whose CSRF token or browser cookie does not match"
    ]


async def test_a_login_form_sent_without_a_key_asks_for_one() -> None:
    async with observed() as (_, web, recorder):
        client = await client_id(web)
        action, fields = page_form(await web.get(authorize_url(client, new_verifier())))
        keyless = await web.post(action, data=fields)
    status, _, message = page(keyless)
    assert (status, message) == (400, "Paste your API key to continue.")
    assert recorder.logins == ["refused"]


@pytest.mark.parametrize(("asked", "granted"), [("orders", "orders"), ("mcp orders", "mcp orders"), ("", "mcp orders")])
async def test_with_several_scopes_known_the_grant_holds_those_asked_for(asked: str, granted: str) -> None:
    async with observed(scopes=("mcp", "orders")) as (_, web, _recorder):
        client, verifier = await client_id(web), new_verifier()
        landed = await Browser(web).authorize(authorize_url(client, verifier, scope=asked))
        tokens = (await exchange(web, client, query(landed)["code"], verifier)).json()
    assert tokens["scope"] == granted


async def test_the_pages_name_the_key_as_the_login_labels_it() -> None:
    async with observed() as (site, web, _recorder):
        keys = site.server.authorization.login
        assert isinstance(keys, ApiKeyLogin)
        site.server.authorization.login = ApiKeyLogin(keys._whoami, key_label="shop token")
        client = await client_id(web)
        login = await web.get(authorize_url(client, new_verifier()))
        action, fields = page_form(login)
        consent = await web.post(action, data={**fields, "api_key": ADMIN_KEY})
    assert "shop token" in login.text and "API key" not in login.text
    assert "shop token" in consent.text
