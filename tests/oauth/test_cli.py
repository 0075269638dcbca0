"""`mcp-gateway serve --oauth` serves the demo behind OAuth: metadata, a 401 challenge, the login page, and
per-address limits that read X-Forwarded-For only from the proxies named with `--trusted-proxy`."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from anyio.streams.text import TextReceiveStream

from tests.conftest import free_port

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def serve(tmp_path: Path, *options: str, env: dict[str, str] | None = None) -> AsyncIterator[str]:
    """`serve --oauth` with `options` on a free port; its base URL once uvicorn has started."""
    port = free_port()
    command = [sys.executable, "-m", "gateway.cli", "serve", "--oauth", "--port", str(port)]
    command += ["--oauth-store", str(tmp_path / "oauth.db"), *options]
    environment = {**os.environ, "MCP_GATEWAY_OAUTH_SECRET": "x" * 40, **(env or {})}
    async with await anyio.open_process(command, env=environment) as process:
        try:
            assert process.stderr is not None
            log = ""
            with anyio.fail_after(30):
                async for text in TextReceiveStream(process.stderr):
                    log += text
                    if "Application startup complete" in log:
                        break
            yield f"http://127.0.0.1:{port}"
        finally:
            process.terminate()


async def test_serve_with_oauth_guards_the_demo_and_publishes_the_metadata(tmp_path: Path) -> None:
    async with serve(tmp_path, "--oauth-client", "connector=https://claude.ai/cb") as base:
        async with httpx2.AsyncClient(base_url=base) as web:
            refused = await web.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            metadata = (await web.get("/.well-known/oauth-authorization-server")).json()
            page = await web.get(
                "/authorize",
                params={
                    "response_type": "code",
                    "client_id": "connector",
                    "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
                    "code_challenge_method": "S256",
                },
            )
    assert refused.status_code == 401
    assert f'resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"' in refused.headers["www-authenticate"]
    assert metadata["issuer"] == base
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert page.status_code == 200 and "Demo shop" in page.text
    assert (tmp_path / "oauth.db").exists()


async def registrations(base: str, count: int) -> list[int]:
    """The statuses of `count` registrations from 127.0.0.1, each claiming another X-Forwarded-For."""
    body = {"redirect_uris": ["https://claude.ai/cb"], "token_endpoint_auth_method": "none"}
    async with httpx2.AsyncClient(base_url=base) as web:
        return [
            (await web.post("/register", json=body, headers={"x-forwarded-for": f"198.51.100.{n}"})).status_code
            for n in range(count)
        ]


async def test_serve_never_trusts_x_forwarded_for_without_a_trusted_proxy(tmp_path: Path) -> None:
    async with serve(tmp_path) as base:
        statuses = await registrations(base, 61)
    assert statuses == [201] * 60 + [429]


async def test_serve_reads_x_forwarded_for_from_the_proxies_in_mcp_gateway_trusted_proxies(tmp_path: Path) -> None:
    async with serve(tmp_path, env={"MCP_GATEWAY_TRUSTED_PROXIES": "127.0.0.1"}) as base:
        statuses = await registrations(base, 61)
    assert statuses == [201] * 61
