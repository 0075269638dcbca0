"""People log in at the API's own identity provider: a real OpenID Connect provider (panva's oidc-provider, run by
tests/oauth/idp) on 127.0.0.1, the official `mcp` client's OAuth flow through the gateway to the provider and back,
and an API that accepts only the provider's JWTs, checked by itself (signature from the provider's keys, audience,
scopes). The MCP tokens never reach the API; the provider's tokens are renewed, revoked, exchanged, and every
fault of the provider's ends in a page or error that says what happened, with nothing issued."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import anyio
import httpx2
import mcp_types as types
import pytest
import uvicorn

from gateway.gateway import Gateway
from gateway.limits import Limits
from gateway.mcp.tasks import TaskConfig
from gateway.options import Security
from gateway.policy import Access
from oauth import OAuthConfig, OAuthServer
from oauth._authlib import s256_challenge
from oauth._crypto import Sealer, token_hash
from oauth.upstream import IdentityProvider, ProviderLogin
from tests.gateway.conftest import _Uvicorn
from tests.oauth.clients import MemoryStorage, connect, handlers, provider, whoami
from tests.oauth.conftest import REDIRECT_URI, SECRET, page_form, query
from tests.oauth.idp import IdpClient, IdpSettings, RunningProvider, running_provider
from tests.oauth.idp.api import Api, orders_api

pytestmark = pytest.mark.anyio

CLIENT_SECRET = "the-gateway-secret-at-the-provider"
ME = {"name": "users.get_me", "args": {}}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Site:
    """The API with the gateway at /mcp and the OAuth server logging people in at the provider."""

    base: str
    idp: RunningProvider
    api: Api
    server: OAuthServer
    gateway: Gateway

    @property
    def mcp_url(self) -> str:
        return f"{self.base}/mcp"


@asynccontextmanager
async def serve(
    *,
    access_token_ttl: int = 30,
    renew_before: float = 5.0,
    token_exchange: bool = False,
    timeout: float = 10.0,
    document_scopes: bool = False,
    clock: Callable[[], float] | None = None,
    tasks: TaskConfig | None = None,
    limits: Limits | None = None,
) -> AsyncIterator[Site]:
    """The provider, then the site on real uvicorn (its port is chosen first: the provider must know the callback)."""
    sock = __import__("socket").socket()
    sock.bind(("127.0.0.1", 0))
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    gateway_client = IdpClient(
        client_id="gateway", client_secret=CLIENT_SECRET, redirect_uris=(f"{base}/authorize/callback",)
    )
    settings = IdpSettings(clients=(gateway_client,), access_token_ttl=access_token_ttl)
    with running_provider(settings) as idp:
        api = orders_api(idp.issuer, idp.api)
        config = OAuthConfig(
            issuer=base,
            resource=f"{base}/mcp",
            secret_key=SECRET,
            resource_name="Orders",
            scopes=("orders:read", "orders:write"),
            default_scopes=("orders:read",),
        )
        login = ProviderLogin(
            IdentityProvider(
                issuer=idp.issuer,
                client_id="gateway",
                client_secret=CLIENT_SECRET,
                auth_method="client_secret_post",
                scopes=("openid", "profile", "email"),
                audience=idp.api,
                token_exchange=token_exchange,
                renew_before=renew_before,
                timeout=timeout,
            ),
            clock=clock,
        )
        server = OAuthServer(config, login=login)
        gateway = Gateway(
            app=api.app,
            whoami="users.get_me",
            auth=server.auth,
            security=Security(allowed_hosts=["127.0.0.1"]),
            access=Access(document_scopes=document_scopes),
            tasks=tasks,
            limits=limits or Limits(),
        )
        gateway.mount(api.app, "/mcp")
        server.mount(api.app)
        site = Site(base=base, idp=idp, api=api, server=server, gateway=gateway)
        uvicorn_server = _Uvicorn(uvicorn.Config(api.app, log_level="warning", lifespan="on", access_log=False))
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(uvicorn_server.serve, [sock])
                with anyio.fail_after(10):
                    await uvicorn_server.startup_done.wait()
                try:
                    yield site
                finally:
                    uvicorn_server.should_exit = True
        finally:
            sock.close()
            await server.aclose()


@dataclass
class Person:
    """Someone at a browser who logs in at the provider as `account` and allows the app."""

    http: httpx2.AsyncClient
    idp: RunningProvider
    account: str = "bob"
    landed: list[str] = field(default_factory=list)

    async def authorize(self, url: str) -> str:
        start = await self.http.get(url)
        assert start.status_code == 303, start.text
        callback = await self.idp.login(self.http, start.headers["location"], self.account)
        consent = await self.http.get(callback)
        assert consent.status_code == 200, consent.text
        action, fields = page_form(consent)
        answer = await self.http.post(action, data={**fields, "decision": "allow"})
        assert answer.status_code == 303, answer.text
        self.landed.append(answer.headers["location"])
        return str(answer.headers["location"])


async def register(http: httpx2.AsyncClient, site: Site) -> str:
    registered = await http.post(
        f"{site.base}/register", json={"redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none"}
    )
    assert registered.status_code == 201, registered.text
    return str(registered.json()["client_id"])


def authorize_url(site: Site, client_id: str, verifier: str) -> str:
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT_URI,
        "state": "app-state",
        "code_challenge": s256_challenge(verifier),
        "code_challenge_method": "S256",
    }
    return f"{site.base}/authorize?{urlencode(params)}"


async def tokens(http: httpx2.AsyncClient, site: Site, client_id: str, landed: str, verifier: str) -> dict[str, Any]:
    answer = await http.post(
        f"{site.base}/token",
        data={
            "grant_type": "authorization_code",
            "code": query(landed)["code"],
            "client_id": client_id,
            "redirect_uri": REDIRECT_URI,
            "code_verifier": verifier,
        },
    )
    assert answer.status_code == 200, answer.text
    value: dict[str, Any] = answer.json()
    return value


async def logged_in(http: httpx2.AsyncClient, site: Site, account: str = "bob") -> tuple[str, dict[str, Any]]:
    """The whole login by hand: the client id and the MCP tokens."""
    client_id, verifier = await register(http, site), "v" * 64
    landed = await Person(http, site.idp, account).authorize(authorize_url(site, client_id, verifier))
    return client_id, await tokens(http, site, client_id, landed, verifier)


def mcp_call(token: str) -> dict[str, Any]:
    return {
        "json": {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "call_function", "arguments": ME},
        },
        "headers": {"authorization": f"Bearer {token}", "accept": "application/json, text/event-stream"},
    }


async def upstream_of(site: Site, mcp_access: str) -> dict[str, str]:
    """What the server keeps of the provider's tokens for the grant of an MCP access token (unsealed)."""
    record = await site.server.store.get("access", token_hash(mcp_access))
    assert record is not None
    kept = await site.server.store.get("upstream", record["grant_id"])
    assert kept is not None
    return Sealer(SECRET).unseal(kept["kept"])


async def test_an_mcp_client_logs_in_at_the_provider_and_calls_the_api_with_the_providers_token() -> None:
    async with serve() as site, httpx2.AsyncClient(timeout=10) as http:
        person, storage = Person(http, site.idp), MemoryStorage()
        async with connect(site, provider(site, storage, *handlers(person))) as client:
            me = whoami(await client.call_tool("call_function", ME))
        assert me == {"id": "bob", "scope": "orders:read"}
        assert site.idp.log().count("POST /token 200") == 1  # the code's exchange alone
        assert len(person.landed) == 1 and query(person.landed[0])["iss"] == site.base
        # The API saw the provider's token for bob, checked by itself; never an MCP token.
        assert storage.tokens is not None
        assert site.api.claims[-1]["sub"] == "bob" and site.api.claims[-1]["aud"] == site.idp.api
        assert storage.tokens.access_token not in site.api.received
        assert storage.tokens.refresh_token not in site.api.received


async def test_the_providers_access_token_is_renewed_before_it_expires_without_a_new_login() -> None:
    async with serve(access_token_ttl=4, renew_before=2.0) as site, httpx2.AsyncClient(timeout=10) as http:
        _, mcp = await logged_in(http, site)
        first = await http.post(site.mcp_url, **mcp_call(mcp["access_token"]))
        assert first.status_code == 200 and "bob" in first.text
        before = await upstream_of(site, mcp["access_token"])
        await anyio.sleep(2.5)  # the provider's token now expires within renew_before
        second = await http.post(site.mcp_url, **mcp_call(mcp["access_token"]))
        assert second.status_code == 200 and "bob" in second.text, second.text
        after = await upstream_of(site, mcp["access_token"])
        await anyio.sleep(2.0)  # past the first token's expiry: the renewed one still works
        third = await http.post(site.mcp_url, **mcp_call(mcp["access_token"]))
        assert third.status_code == 200 and "bob" in third.text, third.text
    assert site.api.received[0] != site.api.received[1]
    assert after["refresh_token"] != before["refresh_token"]  # the provider rotates them; the newest is kept
    assert float(after["expires_at"]) > float(before["expires_at"])


def rpc(token: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One JSON-RPC request of `method` at MCP 2025-11-25 (tasks), with the MCP access token `token`."""
    return {
        "json": {"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
        "headers": {
            "authorization": f"Bearer {token}",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2025-11-25",
        },
    }


async def test_the_same_login_after_the_provider_renews_its_token_still_lists_and_reads_its_tasks() -> None:
    tasks, limits = TaskConfig(), Limits(tasks_stored_per_caller=2)
    async with (
        serve(access_token_ttl=4, renew_before=2.0, tasks=tasks, limits=limits) as site,
        httpx2.AsyncClient(timeout=10) as http,
    ):
        _, mcp = await logged_in(http, site)
        token = mcp["access_token"]
        call = {"name": "call_function", "arguments": ME, "task": {"ttl": 600_000}}
        started = [(await http.post(site.mcp_url, **rpc(token, "tools/call", call))).json() for _ in range(2)]
        mine = [answer["result"]["task"]["taskId"] for answer in started]
        before = await upstream_of(site, token)
        await anyio.sleep(2.5)  # the provider's token now expires within renew_before: the next request renews it
        listed = (await http.post(site.mcp_url, **rpc(token, "tasks/list", {}))).json()
        after = await upstream_of(site, token)
        got = (await http.post(site.mcp_url, **rpc(token, "tasks/get", {"taskId": mine[0]}))).json()
        result = (await http.post(site.mcp_url, **rpc(token, "tasks/result", {"taskId": mine[0]}))).json()
        third = (await http.post(site.mcp_url, **rpc(token, "tools/call", call))).json()
    assert after["refresh_token"] != before["refresh_token"]  # renewed: the API now gets another bearer token
    assert sorted(task["taskId"] for task in listed["result"]["tasks"]) == sorted(mine)
    assert got["result"]["taskId"] == mine[0] and got["result"]["status"] == "completed"
    assert "bob" in json.dumps(result["result"]["content"])
    # Its budget is the one it had: the renewal made no new caller.
    assert third["error"]["data"] == {"limit": "tasks_stored_per_caller", "value": 2}


async def test_a_refresh_the_provider_refuses_ends_the_grant_with_a_clear_invalid_grant(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="oauth.grants")
    async with serve(access_token_ttl=3, renew_before=2.0) as site, httpx2.AsyncClient(timeout=10) as http:
        client_id, mcp = await logged_in(http, site)
        await anyio.sleep(1.5)
        with site.idp.faults(refresh="refuse"):
            refused = await http.post(site.mcp_url, **mcp_call(mcp["access_token"]))
        assert refused.status_code == 401 and 'error="invalid_token"' in refused.headers["www-authenticate"]
        again = await http.post(
            f"{site.base}/token",
            data={"grant_type": "refresh_token", "refresh_token": mcp["refresh_token"], "client_id": client_id},
        )
        assert again.status_code == 400
        assert again.json() == {
            "error": "invalid_grant",
            "error_description": "the identity provider ended this login (it refused to renew it); log in again",
        }
    assert any("the identity provider ended a login" in record.getMessage() for record in caplog.records)


async def test_revoking_the_mcp_grant_revokes_the_providers_refresh_token() -> None:
    async with serve() as site, httpx2.AsyncClient(timeout=10) as http:
        client_id, mcp = await logged_in(http, site)
        kept = await upstream_of(site, mcp["access_token"])
        revoked = await http.post(f"{site.base}/revoke", data={"token": mcp["refresh_token"], "client_id": client_id})
        assert revoked.status_code == 200
        metadata = (await http.get(f"{site.idp.issuer}/.well-known/openid-configuration")).json()
        dead = await http.post(
            metadata["token_endpoint"],
            data={
                "grant_type": "refresh_token",
                "refresh_token": kept["refresh_token"],
                "client_id": "gateway",
                "client_secret": CLIENT_SECRET,
            },
        )
        assert dead.status_code == 400 and dead.json()["error"] == "invalid_grant"
        answer = await http.post(site.mcp_url, **mcp_call(mcp["access_token"]))
        assert answer.status_code == 401


async def test_with_token_exchange_the_api_gets_an_exchanged_token_for_its_audience() -> None:
    async with serve(token_exchange=True) as site, httpx2.AsyncClient(timeout=10) as http:
        _, mcp = await logged_in(http, site)
        answer = await http.post(site.mcp_url, **mcp_call(mcp["access_token"]))
        assert answer.status_code == 200 and "bob" in answer.text, answer.text
        # The code's exchange, then the token exchange: two token requests for one login.
        assert site.idp.log().count("POST /token 200") == 2
    assert site.api.claims[-1]["aud"] == site.idp.api


# Faults: each refused with a page or an error that says what happened, nothing issued, and a log line why.


async def started_at_provider(http: httpx2.AsyncClient, site: Site) -> tuple[str, str]:
    """A login begun at the gateway and sent to the provider: the client id and the provider's URL."""
    client_id = await register(http, site)
    start = await http.get(authorize_url(site, client_id, "v" * 64))
    assert start.status_code == 303, start.text
    return client_id, str(start.headers["location"])


async def test_a_provider_that_is_down_gets_a_page_saying_so_and_nothing_is_issued() -> None:
    async with serve() as site, httpx2.AsyncClient(timeout=10) as http:
        client_id = await register(http, site)
        with site.idp.faults(down=True):
            page = await http.get(authorize_url(site, client_id, "v" * 64))
        assert page.status_code == 503 and page.headers["retry-after"] == "5"
        assert "The identity provider cannot be reached" in page.text


async def test_a_provider_that_is_down_when_the_browser_comes_back_gets_a_page_saying_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with serve() as site, httpx2.AsyncClient(timeout=10) as http:
        _, at_provider = await started_at_provider(http, site)
        callback = await site.idp.login(http, at_provider)
        with site.idp.faults(down=True):
            page = await http.get(callback)
        assert page.status_code == 503 and "The identity provider cannot be reached" in page.text
    assert any("the identity provider is unavailable" in record.getMessage() for record in caplog.records)


async def test_a_slow_provider_is_given_up_on_at_the_timeout() -> None:
    async with serve(timeout=1.0) as site, httpx2.AsyncClient(timeout=10) as http:
        _, at_provider = await started_at_provider(http, site)
        callback = await site.idp.login(http, at_provider)
        started = time.monotonic()
        with site.idp.faults(token_delay_ms=3000):
            page = await http.get(callback)
        assert page.status_code == 503 and time.monotonic() - started < 2.5


async def test_a_person_who_declines_at_the_provider_sends_the_app_access_denied() -> None:
    async with serve() as site, httpx2.AsyncClient(timeout=10) as http:
        _, at_provider = await started_at_provider(http, site)
        callback = await site.idp.login(http, at_provider, decision="deny")
        back = await http.get(callback)
        assert back.status_code == 303
        landed = query(back.headers["location"])
        assert landed["error"] == "access_denied" and landed["state"] == "app-state" and landed["iss"] == site.base


@pytest.mark.parametrize("spoiled", ["wrong_audience", "wrong_issuer", "wrong_nonce", "expired", "wrong_signature"])
async def test_an_id_token_that_does_not_hold_is_refused_with_a_page_and_a_log_line_saying_why(
    spoiled: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="oauth.upstream")
    async with serve() as site, httpx2.AsyncClient(timeout=10) as http:
        _, at_provider = await started_at_provider(http, site)
        callback = await site.idp.login(http, at_provider)
        with site.idp.faults(id_token=spoiled):
            page = await http.get(callback)
        assert page.status_code == 400
        assert "could not be verified" in page.text and "code=" not in page.text
    logged = [record.getMessage() for record in caplog.records if "refused an ID token" in record.getMessage()]
    assert len(logged) == 1, logged


async def test_an_id_token_under_a_kid_the_gateway_does_not_know_makes_it_fetch_the_keys_once_a_minute_at_most(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="oauth.upstream")
    now = [time.time()]
    async with serve(clock=lambda: now[0]) as site, httpx2.AsyncClient(timeout=10) as http:
        fetches: list[int] = []
        for later in (0.0, 61.0):
            now[0] += later
            _, at_provider = await started_at_provider(http, site)
            callback = await site.idp.login(http, at_provider)
            before = site.idp.log().count("GET /jwks ")
            with site.idp.faults(id_token="unknown_key"):
                page = await http.get(callback)
            assert page.status_code == 400 and "could not be verified" in page.text
            fetches.append(site.idp.log().count("GET /jwks ") - before)
        # Within a minute of the last fetch the keys are not fetched again; after it, once (a rotation).
        assert fetches == [0, 1]
    logged = [record.getMessage() for record in caplog.records if "refused an ID token" in record.getMessage()]
    assert len(logged) == 2 and all("no key of the provider verifies the ID token" in line for line in logged)


async def test_an_access_token_for_another_api_is_refused_at_login_with_a_page_and_a_log_line_saying_why(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="oauth.upstream")
    async with serve() as site, httpx2.AsyncClient(timeout=10) as http:
        _, at_provider = await started_at_provider(http, site)
        callback = await site.idp.login(http, at_provider)
        with site.idp.faults(access_token="wrong_audience"):
            page = await http.get(callback)
        assert page.status_code == 400
        assert "cannot be used" in page.text and "another-api.example.test" in page.text
        assert "code=" not in page.text and "Allow" not in page.text  # no consent, nothing issued
        assert site.api.received == []
    logged = [record.getMessage() for record in caplog.records if "not for the API" in record.getMessage()]
    assert len(logged) == 1, logged
    assert "https://another-api.example.test" in logged[0] and "--oauth-upstream-audience" in logged[0]


async def test_a_renewal_that_brings_a_token_for_another_api_ends_the_grant() -> None:
    async with serve(access_token_ttl=3, renew_before=2.0) as site, httpx2.AsyncClient(timeout=10) as http:
        client_id, mcp = await logged_in(http, site)
        first = await http.post(site.mcp_url, **mcp_call(mcp["access_token"]))
        assert first.status_code == 200 and "bob" in first.text, first.text
        await anyio.sleep(1.5)
        with site.idp.faults(access_token="wrong_audience"):
            refused = await http.post(site.mcp_url, **mcp_call(mcp["access_token"]))
        assert refused.status_code == 401 and 'error="invalid_token"' in refused.headers["www-authenticate"]
        again = await http.post(
            f"{site.base}/token",
            data={"grant_type": "refresh_token", "refresh_token": mcp["refresh_token"], "client_id": client_id},
        )
        assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert len(site.api.received) == len(site.api.claims)  # every token the API was sent was one for it


async def test_the_providers_answer_is_taken_once_in_the_browser_that_started_the_login() -> None:
    async with serve() as site, httpx2.AsyncClient(timeout=10) as http:
        _, at_provider = await started_at_provider(http, site)
        callback = await site.idp.login(http, at_provider)
        async with httpx2.AsyncClient(timeout=10) as elsewhere:
            stolen = await elsewhere.get(callback)
        assert stolen.status_code == 403 and "started in another browser" in stolen.text
        first = await http.get(callback)
        replayed = await http.get(callback)
        assert first.status_code == 200  # the consent page
        assert replayed.status_code == 400 and "finished already" in replayed.text
        forged = await http.get(f"{site.base}/authorize/callback?code=x&state=made-up")
        assert forged.status_code == 400 and "expired" in forged.text


async def test_a_call_outside_the_grant_asks_for_the_scope_and_the_client_steps_up_at_the_provider() -> None:
    async with serve(document_scopes=True) as site, httpx2.AsyncClient(timeout=10) as http:
        person, storage = Person(http, site.idp), MemoryStorage()
        async with connect(site, provider(site, storage, *handlers(person))) as client:
            listed = await client.call_tool("search_functions", {"query": "orders"})
            found = " ".join(block.text for block in listed.content if isinstance(block, types.TextContent))
            # Granted orders:read at login: the function that needs orders:write is not among the caller's.
            assert "orders.list_orders" in found and "orders.create_order" not in found
            assert storage.tokens is not None and storage.tokens.scope == "orders:read"
            # Its call asks for the scope (403 insufficient_scope); the official client logs in again for it,
            # the provider asks the person, and the call goes through with the new token.
            created = await client.call_tool("call_function", {"name": "orders.create_order", "args": {}})
            assert not created.is_error, created
            assert whoami(created) == {"id": 2, "customer": "bob"}
        assert len(person.landed) == 2
        assert storage.tokens is not None and set(storage.tokens.scope.split()) == {"orders:read", "orders:write"}
        assert site.api.claims[-1]["scope"].split() == ["orders:read", "orders:write"]


async def test_the_step_up_answer_names_the_missing_scope_where_to_log_in_and_keeps_the_token() -> None:
    async with serve(document_scopes=True) as site, httpx2.AsyncClient(timeout=10) as http:
        _, mcp = await logged_in(http, site)
        call = mcp_call(mcp["access_token"])
        call["json"]["params"]["arguments"] = {"name": "orders.create_order", "args": {}}
        answer = await http.post(site.mcp_url, **call)
        assert answer.status_code == 403
        challenge = answer.headers["www-authenticate"]
        assert 'error="insufficient_scope"' in challenge and 'scope="orders:read orders:write"' in challenge
        assert f'resource_metadata="{site.base}/.well-known/oauth-protected-resource/mcp"' in challenge
        # The token still works for what it was granted, and a function that does not exist is no step-up.
        assert (await http.post(site.mcp_url, **mcp_call(mcp["access_token"]))).status_code == 200
        call["json"]["params"]["arguments"] = {"name": "orders.nothing_here", "args": {}}
        unknown = await http.post(site.mcp_url, **call)
        assert unknown.status_code == 200 and "Unknown function" in unknown.text
