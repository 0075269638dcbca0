"""`mcp-gateway serve --oauth` serves the demo behind OAuth: metadata, a 401 challenge, and the login page."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import httpx2
import pytest
from anyio.streams.text import TextReceiveStream

from tests.oauth.conftest import free_port

pytestmark = pytest.mark.anyio


async def test_serve_with_oauth_guards_the_demo_and_publishes_the_metadata(tmp_path: Path) -> None:
    port = free_port()
    command = [sys.executable, "-m", "gateway.cli", "serve", "--oauth", "--port", str(port)]
    command += ["--oauth-store", str(tmp_path / "oauth.db"), "--oauth-client", "connector=https://claude.ai/cb"]
    env = {**os.environ, "MCP_GATEWAY_OAUTH_SECRET": "x" * 40}
    async with await anyio.open_process(command, env=env) as process:
        try:
            assert process.stderr is not None
            log = ""
            with anyio.fail_after(30):
                async for text in TextReceiveStream(process.stderr):
                    log += text
                    if "Application startup complete" in log:
                        break
            base = f"http://127.0.0.1:{port}"
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
        finally:
            process.terminate()
    assert refused.status_code == 401
    assert f'resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"' in refused.headers["www-authenticate"]
    assert metadata["issuer"] == base
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert page.status_code == 200 and "Demo shop" in page.text
    assert (tmp_path / "oauth.db").exists()
