"""Headless Chromium (Debian's, driven by playwright-core) logs in and allows, for the official `mcp` client.

`scripts/install-browser` installs both; without them these tests are skipped, except in CI, where they fail.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import anyio
import pytest
from mcp.shared.auth import AuthorizationCodeResult

from demo import MEMBER_KEY
from tests.oauth.clients import MemoryStorage, connect, provider, whoami
from tests.oauth.conftest import query, serve_site

REPO = Path(__file__).resolve().parents[2]
PLAYWRIGHT = REPO / ".tools" / "browser" / "node_modules" / "playwright-core"
CHROMIUM = Path("/usr/bin/chromium")
SCRIPT = Path(__file__).with_name("browser_login.mjs")
NODE = REPO / ".tools" / "bin" / "node"

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(
        not (PLAYWRIGHT.is_dir() and CHROMIUM.exists()) and not os.environ.get("CI"),
        reason="Chromium or playwright-core is absent: run scripts/install-browser",
    ),
]


async def chromium_login(url: str, key: str, redirect_prefix: str, shots: Path | None = None) -> dict[str, str]:
    node = str(NODE) if NODE.exists() else (shutil.which("node") or "node")
    env = {**os.environ, "PLAYWRIGHT_CORE_DIR": str(PLAYWRIGHT), "CHROMIUM": str(CHROMIUM)}
    with anyio.fail_after(60):
        run = await anyio.run_process(
            [node, str(SCRIPT), url, key, redirect_prefix, str(shots or "")], env=env, check=False
        )
    assert run.returncode == 0, run.stderr.decode(errors="replace")[-3000:]
    result: dict[str, str] = json.loads(run.stdout.decode().strip().splitlines()[-1])
    return result


async def test_chromium_logs_in_and_allows_and_the_mcp_client_calls_as_that_user(tmp_path: Path) -> None:
    async with serve_site() as site:
        callback_prefix = "http://127.0.0.1:9/callback"
        landed: list[str] = []

        async def redirect(url: str) -> None:
            landed.append((await chromium_login(url, MEMBER_KEY, callback_prefix, tmp_path))["landed"])

        async def callback() -> AuthorizationCodeResult:
            params = query(landed[-1])
            return AuthorizationCodeResult(code=params["code"], state=params.get("state"), iss=params.get("iss"))

        auth = provider(site, MemoryStorage(), redirect, callback, redirect_uri=callback_prefix)
        async with connect(site, auth) as client:
            result = await client.call_tool("call_function", {"name": "users.get_current_user", "args": {}})
    assert whoami(result)["name"] == "Bob Okafor"
    assert landed[0].startswith(callback_prefix + "?")
    assert (tmp_path / "consent.png").stat().st_size > 1000
