"""Faults of the state store on served instances, as an operator meets them: Redis stopped by its pid under three
`serve --oauth` instances behind HAProxy (deploy/haproxy.cfg), then started again; and a SQLite store whose disk
refuses writes under one instance. Clients see the server's trouble (503, Retry-After, no Bearer challenge), keep
their tokens, and everything recovers by itself; the operator sees one log line per outage and a metric."""

from __future__ import annotations

import json
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import free_port
from tests.deploy.cluster import (
    SECRET,
    Cluster,
    Tokens,
    environment,
    login,
    running_cluster,
    start_process,
    stop_process,
)

pytestmark = pytest.mark.anyio

UNAVAILABLE = "the token store is unavailable; retry shortly"
ME = {"name": "users.get_current_user", "args": {}}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with running_cluster(
        tmp_path_factory.mktemp("faults"), persistent=True, extra_args=["--metrics-path", "/metrics"]
    ) as running:
        yield running


def mcp_request(token: str) -> dict[str, object]:
    return {
        "json": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        "headers": {"authorization": f"Bearer {token}", "accept": "application/json, text/event-stream"},
    }


async def call_me(url: str, token: str) -> str:
    """The official client's call of users.get_current_user at `url` with `token`: the user's name."""
    async with (
        httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"}, timeout=10) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        result = await client.call_tool("call_function", ME)
    assert not result.is_error, result
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return str(json.loads(block.text)["name"])


def refresh_form(tokens: Tokens) -> dict[str, str]:
    return {"grant_type": "refresh_token", "refresh_token": tokens.refresh, "client_id": tokens.client_id}


def leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [error]


async def until(condition: object, *, within: float, step: float = 0.05) -> float:
    """Seconds until the awaitable-returning `condition()` is true; fails after `within` seconds."""
    started = time.monotonic()
    while not await condition():  # type: ignore[operator]
        assert time.monotonic() - started < within, f"not within {within} s"
        await anyio.sleep(step)
    return time.monotonic() - started


def health(port: int, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gateway.cli", "health", "--port", str(port), *flags],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


async def test_a_redis_outage_is_the_servers_trouble_for_every_client_and_everything_recovers_by_itself(
    cluster: Cluster,
) -> None:
    first = cluster.instance_ports[0]
    one = f"http://127.0.0.1:{first}"
    async with httpx2.AsyncClient(timeout=10) as web:
        tokens = await login(cluster.base, web)
        assert await call_me(cluster.mcp_url, tokens.access) == "Bob Okafor"
        log_before = cluster.instances[0].log.read_text()

        cluster.redis.stop()

        # One instance, asked directly: every MCP request is 503 with Retry-After, never a Bearer challenge.
        for _ in range(20):
            answer = await web.post(f"{one}/mcp", **mcp_request(tokens.access))  # type: ignore[arg-type]
            assert answer.status_code == 503, answer.text
            assert "www-authenticate" not in answer.headers and answer.headers["retry-after"] == "5"
            assert answer.json()["error"] == {"code": -32000, "message": UNAVAILABLE}
        with pytest.raises(BaseExceptionGroup) as failed:
            await call_me(f"{one}/mcp", tokens.access)
        assert {str(leaf) for leaf in leaves(failed.value)} == {UNAVAILABLE}
        # The OAuth endpoints answer OAuth errors as JSON.
        refresh = await web.post(
            f"{one}/token",
            data={"grant_type": "refresh_token", "refresh_token": tokens.refresh, "client_id": tokens.client_id},
        )
        assert refresh.status_code == 503 and refresh.headers["retry-after"] == "5"
        assert refresh.json() == {"error": "server_error", "error_description": UNAVAILABLE}
        register = await web.post(f"{one}/register", json={"redirect_uris": ["https://claude.ai/cb"]})
        assert register.status_code == 503 and register.json()["error"] == "server_error"
        authorize = await web.get(
            f"{one}/authorize?response_type=code&client_id={tokens.client_id}", headers={"accept": "application/json"}
        )
        assert authorize.status_code == 503 and authorize.json()["error"] == "temporarily_unavailable"
        # Readiness tells the truth; liveness stays separate.
        ready = await web.get(f"{one}/ready")
        assert ready.status_code == 503 and ready.json() == {
            "ready": False,
            "unavailable": ["the token store is unavailable"],
        }
        assert (await web.get(f"{one}/")).status_code == 200
        checked = health(first, "--ready")
        assert checked.returncode == 1 and "not ready: the token store is unavailable" in checked.stderr
        assert health(first).returncode == 0
        metrics = (await web.get(f"{one}/metrics")).text
        assert 'mcp_gateway_store_up{store="token"} 0.0' in metrics
        failures = next(line for line in metrics.splitlines() if line.startswith("mcp_gateway_store_failures_total"))
        assert float(failures.split()[-1]) >= 25

        # The balancer takes the instances out (none can serve) and answers as they would.
        await until(lambda: _all(cluster, "DOWN"), within=10)
        balanced = await web.post(cluster.mcp_url, **mcp_request(tokens.access))  # type: ignore[arg-type]
        assert balanced.status_code == 503 and balanced.headers["retry-after"] == "5"
        assert "www-authenticate" not in balanced.headers
        assert balanced.json()["error"]["code"] == -32000
        balanced_token = await web.post(
            f"{cluster.base}/token",
            data={"grant_type": "refresh_token", "refresh_token": tokens.refresh, "client_id": tokens.client_id},
        )
        assert balanced_token.status_code == 503 and balanced_token.json()["error"] == "temporarily_unavailable"

        cluster.redis.start()

        async def instance_serves() -> bool:
            answer = await web.post(f"{one}/mcp", **mcp_request(tokens.access))  # type: ignore[arg-type]
            return answer.status_code == 200

        async def balancer_serves() -> bool:
            answer = await web.post(cluster.mcp_url, **mcp_request(tokens.access))  # type: ignore[arg-type]
            return answer.status_code == 200

        instance_back = await until(instance_serves, within=5)
        balancer_back = await until(balancer_serves, within=10)
        print(f"\nRedis back: an instance serves after {instance_back:.2f} s, the balancer after {balancer_back:.2f} s")

        # Nothing was lost: the tokens from before the outage still work, and refresh as usual.
        assert await call_me(cluster.mcp_url, tokens.access) == "Bob Okafor"
        refreshed = await web.post(
            f"{cluster.base}/token",
            data={"grant_type": "refresh_token", "refresh_token": tokens.refresh, "client_id": tokens.client_id},
        )
        assert refreshed.status_code == 200, refreshed.text
        assert await until(lambda: _all(cluster, "UP"), within=10) >= 0

    log = cluster.instances[0].log.read_text()[len(log_before) :]
    down = [line for line in log.splitlines() if "the token store is unavailable:" in line]
    assert len(down) == 1 and "ConnectionError" in down[0], down
    assert "Traceback" not in log and "Exception in ASGI application" not in log


async def _all(cluster: Cluster, state: str) -> bool:
    states = await anyio.to_thread.run_sync(cluster.states)
    return set(states.values()) == {state}


def _ignoring_file_size_signal() -> None:
    # Writes past RLIMIT_FSIZE then fail with EFBIG instead of killing the process (SIGXFSZ's default); an ignored
    # signal stays ignored across exec.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


async def test_a_sqlite_store_whose_disk_refuses_writes_keeps_serving_reads_and_loses_nothing(
    tmp_path: Path,
) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    store = tmp_path / "state" / "oauth.db"
    argv = [sys.executable, "-m", "gateway.cli", "serve", "--oauth", "--port", str(port)]
    argv += ["--public-url", base, "--oauth-store", str(store)]
    instance = start_process(
        "gw",
        argv,
        marker=b"Application startup complete",
        logs=tmp_path,
        env={**environment(), "MCP_GATEWAY_OAUTH_SECRET": SECRET},
        setup=_ignoring_file_size_signal,
    )
    try:
        async with httpx2.AsyncClient(timeout=10) as web:
            tokens: Tokens = await login(base, web)
            # The disk refuses writes from now on (the file-size limit of the process, lowered under it).
            _, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
            resource.prlimit(instance.pid, resource.RLIMIT_FSIZE, (0, hard))
            try:
                # Reads still work: a valid token is checked and the call is made.
                assert await call_me(f"{base}/mcp", tokens.access) == "Bob Okafor"
                refresh = await web.post(
                    f"{base}/token",
                    data={
                        "grant_type": "refresh_token",
                        "refresh_token": tokens.refresh,
                        "client_id": tokens.client_id,
                    },
                )
                assert refresh.status_code == 503 and refresh.headers["retry-after"] == "5"
                assert refresh.json() == {"error": "server_error", "error_description": UNAVAILABLE}
                ready = await web.get(f"{base}/ready")
                assert ready.status_code == 503
            finally:
                resource.prlimit(instance.pid, resource.RLIMIT_FSIZE, (hard, hard))
            # Space again: the refresh token the failed refresh did not use works now.
            refreshed = await web.post(f"{base}/token", data=refresh_form(tokens))
            assert refreshed.status_code == 200, refreshed.text
            assert (await web.get(f"{base}/ready")).status_code == 200
    finally:
        stop_process(instance)
    log = instance.log.read_text()
    down = [line for line in log.splitlines() if "the token store is unavailable:" in line]
    assert len(down) == 1 and str(store) in down[0], log
    assert "Traceback" not in log
