"""MCP's conformance suite, `authorization` mode: its authorization-server scenarios against the demo's OAuth
server on real uvicorn, with the test as the person who logs in when the suite prints the authorization URL.

`scripts/install-node-tools` installs the suite under `.tools/`; without it this test is skipped (not in CI).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from anyio.streams.text import TextReceiveStream

from oauth import PreregisteredClient
from tests.conftest import free_port
from tests.oauth.conftest import Browser, serve_site

REPO = Path(__file__).resolve().parents[2]
CONFORMANCE = REPO / ".tools" / "bin" / "conformance"

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(
        not CONFORMANCE.exists() and not os.environ.get("CI"),
        reason=".tools/ is absent: run scripts/install-node-tools",
    ),
]


async def test_the_conformance_suite_passes_the_authorization_server_scenarios(tmp_path: Path) -> None:
    port = free_port()
    client = PreregisteredClient(client_id="conformance", redirect_uris=(f"http://127.0.0.1:{port}/callback",))
    output = tmp_path / "results"
    async with serve_site(clients=(client,)) as site, httpx2.AsyncClient() as web:
        command = [str(CONFORMANCE), "authorization", "--url", site.base, "--client-id", "conformance"]
        command += ["--resource", site.mcp_url, "--port", str(port), "-o", str(output)]
        env = {**os.environ, "HOME": str(tmp_path), "NO_COLOR": "1", "FORCE_COLOR": "0"}
        log = ""
        async with await anyio.open_process(command, env=env) as process:
            assert process.stdout is not None
            with anyio.fail_after(60):
                async for text in TextReceiveStream(process.stdout):
                    log += text
                    urls = [line for line in log.splitlines() if line.startswith(f"{site.base}/authorize?")]
                    if urls:
                        break
                assert urls, log
                landed = await Browser(web).authorize(urls[0])
                # Deliver the redirect to the suite's callback server, as the browser would.
                await web.get(landed)
                await process.wait()
    checks: list[dict[str, Any]] = []
    for path in sorted(output.rglob("checks.json")):
        checks += json.loads(path.read_text())
    statuses = {check["id"]: check["status"] for check in checks}
    assert statuses == {
        "authorization-server-metadata": "SUCCESS",
        "authorization-server-metadata-cimd": "SUCCESS",
        "authorization-code-grant": "SUCCESS",
    }, (checks, log)
