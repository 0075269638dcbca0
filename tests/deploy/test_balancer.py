"""deploy/haproxy.cfg for real: three `serve --oauth` instances sharing one redis-server behind HAProxy on
127.0.0.1. A login begun on one instance finishes on the others, and its tokens work, refresh and die on all."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from demo import MEMBER_KEY
from oauth._authlib import s256_challenge
from tests.deploy.cluster import HAPROXY_CFG, Cluster, running_cluster
from tests.oauth.conftest import REDIRECT_URI, Browser, query

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with running_cluster(tmp_path_factory.mktemp("cluster")) as running:
        yield running


class Pinned(httpx2.AsyncBaseTransport):
    """Sends each request straight to one instance (`port`), keeping its URL's Host: as if the balancer chose it."""

    def __init__(self, port: int) -> None:
        self.port = port
        self._inner = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        request.url = request.url.copy_with(port=self.port)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def mcp_request(token: str) -> dict[str, object]:
    return {
        "json": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        "headers": {"authorization": f"Bearer {token}", "accept": "application/json, text/event-stream"},
    }


async def test_a_login_spread_over_three_instances_gives_tokens_that_every_instance_honours(cluster: Cluster) -> None:
    first, second, third = cluster.instance_ports
    pinned = Pinned(first)
    async with httpx2.AsyncClient(transport=pinned, base_url=cluster.base, timeout=10) as web:
        registered = await web.post(
            "/register",
            json={"redirect_uris": [REDIRECT_URI], "client_name": "Claude", "token_endpoint_auth_method": "none"},
        )
        assert registered.status_code == 201, registered.text
        client_id = registered.json()["client_id"]
        verifier = secrets.token_urlsafe(48)
        params = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": REDIRECT_URI,
            "state": "s",
            "code_challenge": s256_challenge(verifier),
            "code_challenge_method": "S256",
            "scope": "mcp",
        }
        # The login page on the second instance, the key and the consent on the third, the code on the first.
        pinned.port = second
        page = await web.get(f"/authorize?{urlencode(params)}")
        assert page.status_code == 200, page.text
        pinned.port = third
        landed = await Browser(web, key=MEMBER_KEY).authorize(f"/authorize?{urlencode(params)}")
        code = query(landed)["code"]
        pinned.port = first
        form = {"grant_type": "authorization_code", "code": code, "client_id": client_id, "redirect_uri": REDIRECT_URI}
        tokens = await web.post("/token", data={**form, "code_verifier": verifier})
        assert tokens.status_code == 200, tokens.text
        access, refresh = tokens.json()["access_token"], tokens.json()["refresh_token"]
        for port in cluster.instance_ports:
            pinned.port = port
            answer = await web.post("/mcp", **mcp_request(access))  # type: ignore[arg-type]
            assert answer.status_code == 200, (port, answer.text)

    async with httpx2.AsyncClient(base_url=cluster.base, timeout=10) as balanced:
        # The official client through the balancer: six calls, two on each instance (round robin).
        before = cluster.served()
        async with (
            httpx2.AsyncClient(headers={"authorization": f"Bearer {access}"}, timeout=10) as http,
            Client(streamable_http_client(cluster.mcp_url, http_client=http)) as client,
        ):
            for _ in range(6):
                result = await client.call_tool("call_function", {"name": "users.get_current_user", "args": {}})
                assert not result.is_error, result
                block = result.content[0]
                assert isinstance(block, types.TextContent)
                assert json.loads(block.text)["name"] == "Bob Okafor"
        after = cluster.served()
        assert all(after[name] > before[name] for name in before), (before, after)

        # Refresh and revoke through the balancer, wherever they land.
        refreshed = await balanced.post(
            "/token", data={"grant_type": "refresh_token", "refresh_token": refresh, "client_id": client_id}
        )
        assert refreshed.status_code == 200, refreshed.text
        new_access, new_refresh = refreshed.json()["access_token"], refreshed.json()["refresh_token"]
        assert new_refresh != refresh
        again = await balanced.post(
            "/token", data={"grant_type": "refresh_token", "refresh_token": new_refresh, "client_id": client_id}
        )
        assert again.status_code == 200, again.text
        newest_access, newest_refresh = again.json()["access_token"], again.json()["refresh_token"]
        revoked = await balanced.post("/revoke", data={"token": newest_refresh, "client_id": client_id})
        assert revoked.status_code == 200, revoked.text

    pinned = Pinned(first)
    async with httpx2.AsyncClient(transport=pinned, base_url=cluster.base, timeout=10) as web:
        for port in cluster.instance_ports:
            pinned.port = port
            for token in (access, new_access, newest_access):
                answer = await web.post("/mcp", **mcp_request(token))  # type: ignore[arg-type]
                assert answer.status_code == 401, (port, answer.text)
            dead = await web.post(
                "/token", data={"grant_type": "refresh_token", "refresh_token": newest_refresh, "client_id": client_id}
            )
            assert dead.status_code == 400 and dead.json()["error"] == "invalid_grant"


async def test_the_balancer_sends_requests_round_robin_over_every_instance(cluster: Cluster) -> None:
    before = cluster.served()
    assert sorted(before) == ["gw1", "gw2", "gw3"]
    async with httpx2.AsyncClient(base_url=cluster.base, timeout=10) as web:  # one keep-alive connection
        for _ in range(9):
            answer = await web.get("/.well-known/oauth-authorization-server")
            assert answer.status_code == 200
            assert answer.json()["issuer"] == cluster.base
    after = cluster.served()
    assert {name: after[name] - before[name] for name in after} == {"gw1": 3, "gw2": 3, "gw3": 3}


async def test_the_balancer_replaces_forwarded_headers_a_client_sends(cluster: Cluster) -> None:
    # The instances believe X-Forwarded-For from the balancer only; the balancer drops a client's own, so a
    # client cannot take another address's registration and login limits (seen in the instance's access log).
    async with httpx2.AsyncClient(base_url=cluster.base, timeout=10) as web:
        for _ in range(3):
            answer = await web.get("/", headers={"x-forwarded-for": "203.0.113.9", "forwarded": "for=203.0.113.9"})
            assert answer.status_code == 200
    logs = "".join(Path(instance.log).read_text() for instance in cluster.instances)
    assert "203.0.113.9" not in logs


def test_the_deployment_files_are_where_the_deployment_page_says() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "deployment.md").read_text()
    assert "deploy/haproxy.cfg" in page and HAPROXY_CFG.exists()
    assert "--trusted-proxy" in page and "MCP_GATEWAY_TRUSTED_PROXIES" in page
