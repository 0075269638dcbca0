"""The identity-provider login on the balanced deployment: three `serve --oauth-upstream` instances sharing Redis
behind HAProxy (deploy/haproxy.cfg), a real OpenID provider, and an API that checks the provider's JWTs itself.
A login's steps land on different instances, and one renewal of the provider's token serves them all."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from oauth._authlib import s256_challenge
from tests.conftest import free_port
from tests.deploy.cluster import Cluster, running_cluster
from tests.oauth.conftest import REDIRECT_URI, page_form, query
from tests.oauth.idp import IdpClient, IdpSettings, RunningProvider, running_provider

pytestmark = pytest.mark.anyio

CLIENT_SECRET = "the-gateway-secret-at-the-provider"
REPO = Path(__file__).resolve().parents[2]
#: The provider's access tokens live 65 s: renewed when under 60 s are left, 5 s after the login.
TOKEN_TTL = 65


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Cluster, RunningProvider]]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    client = IdpClient(
        client_id="gateway",
        client_secret=CLIENT_SECRET,
        redirect_uris=(f"{base}/authorize/callback",),
        token_endpoint_auth_method="client_secret_basic",
    )
    with running_provider(IdpSettings(clients=(client,), access_token_ttl=TOKEN_TTL)) as idp:
        args = [
            "--app",
            "tests.oauth.idp.api:app",
            "--app-dir",
            str(REPO),
            "--whoami",
            "users.get_me",
            "--oauth-upstream",
            idp.issuer,
            "--oauth-upstream-client-id",
            "gateway",
            "--oauth-upstream-scope",
            "orders:read",
            "--oauth-upstream-audience",
            idp.api,
        ]
        env = {
            "MCP_GATEWAY_OAUTH_UPSTREAM_CLIENT_SECRET": CLIENT_SECRET,
            "ORDERS_API_ISSUER": idp.issuer,
            "ORDERS_API_AUDIENCE": idp.api,
        }
        logs = tmp_path_factory.mktemp("provider-cluster")
        with running_cluster(logs, extra_args=args, balancer_port=port, extra_env=env) as cluster:
            yield cluster, idp


async def test_a_login_at_the_provider_spread_over_the_instances_calls_the_api_as_the_person(
    deployment: tuple[Cluster, RunningProvider],
) -> None:
    cluster, idp = deployment
    async with httpx2.AsyncClient(timeout=10) as web:
        registered = await web.post(
            f"{cluster.base}/register",
            json={"redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none", "application_type": "web"},
        )
        assert registered.status_code == 201, registered.text
        client_id, verifier = registered.json()["client_id"], secrets.token_urlsafe(48)
        params = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": REDIRECT_URI,
            "code_challenge": s256_challenge(verifier),
            "code_challenge_method": "S256",
        }
        # Each request goes to the next instance (round robin): begun on one, back from the provider on another,
        # allowed on a third; what holds them together is in Redis.
        start = await web.get(f"{cluster.base}/authorize?{urlencode(params)}")
        assert start.status_code == 303, start.text
        callback = await idp.login(web, start.headers["location"], "alice")
        consent = await web.get(callback)
        assert consent.status_code == 200, consent.text
        action, fields = page_form(consent)
        allowed = await web.post(action, data={**fields, "decision": "allow"})
        assert allowed.status_code == 303, allowed.text
        form = {
            "grant_type": "authorization_code",
            "code": query(allowed.headers["location"])["code"],
            "client_id": client_id,
            "redirect_uri": REDIRECT_URI,
            "code_verifier": verifier,
        }
        tokens = await web.post(f"{cluster.base}/token", data=form)
        assert tokens.status_code == 200, tokens.text
        assert tokens.json()["scope"] == "orders:read"
        access = tokens.json()["access_token"]

        async def me() -> dict[str, object]:
            async with (
                httpx2.AsyncClient(headers={"authorization": f"Bearer {access}"}, timeout=10) as http,
                Client(streamable_http_client(cluster.mcp_url, http_client=http)) as client,
            ):
                result = await client.call_tool("call_function", {"name": "users.get_me", "args": {}})
            assert not result.is_error, result
            block = result.content[0]
            assert isinstance(block, types.TextContent)
            value: dict[str, object] = json.loads(block.text)
            return value

        assert await me() == {"id": "alice", "scope": "orders:read"}
        # Past the renewal point, six calls at once on three instances: the provider is asked to renew once.
        refreshes = idp.log().count("POST /token ")
        await anyio.sleep(5.5)
        answers: list[dict[str, object]] = []

        async def call() -> None:
            answers.append(await me())

        async with anyio.create_task_group() as group:
            for _ in range(6):
                group.start_soon(call)
        assert answers == [{"id": "alice", "scope": "orders:read"}] * 6
        assert idp.log().count("POST /token ") - refreshes == 1
