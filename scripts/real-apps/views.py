"""The MCP Apps views on a real FastAPI app from PyPI, in headless Chromium inside the test host of
tests/gateway/apps_host/ (the official AppBridge and TypeScript client): lists as tables (paged through the host
where the app pages), single objects as details. A scripted trial, not part of `make test`.

    REAL_APPS_VENV=/path scripts/real-apps/views.py prefect|dstack [--artifacts DIR] [--json FILE]

Runs with the trial's virtualenv python (its apps installed) and this checkout first on the path; needs
scripts/install-browser and scripts/install-apps-host. Prints each call's view and the screenshots' paths.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(REPO), str(HERE)]

from apps import DSTACK, PREFECT, AppSpec  # noqa: E402 - beside this script

TOOLS = Path(os.environ.get("TOOLS_DIR", REPO / ".tools"))
HOST = REPO / "tests" / "gateway" / "apps_host"

#: The calls each app's views are shown for: (tool, args); the app's data is made first where it has none.
CALLS: dict[str, list[dict[str, Any]]] = {
    "prefect": [
        {"tool": "call_function", "args": {"name": "flows.read_flows", "args": {"limit": 10}}},
        {"tool": "call_function", "args": {"name": "root.hello", "args": {}}},
        {"tool": "call_function", "args": {"name": "admin.read_settings", "args": {}}},
    ],
    "dstack": [
        {"tool": "call_function", "args": {"name": "projects.list_projects", "args": {}}},
        {"tool": "call_function", "args": {"name": "users.get_my_user", "args": {}}},
        {"tool": "call_function", "args": {"name": "server.get_server_info", "args": {}}},
    ],
}


def _seed(spec: AppSpec, app: Any) -> None:
    """Data to list: 25 Prefect flows (so that a page of 10 has a next one)."""
    if spec.key != "prefect":
        return
    from starlette.testclient import TestClient

    with TestClient(app) as client:
        for index in range(25):
            client.post("/api/flows/", json={"name": f"trial-flow-{index:02d}"}).raise_for_status()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("app", choices=sorted(CALLS))
    parser.add_argument("--artifacts", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    options = parser.parse_args()
    spec = {"prefect": PREFECT, "dstack": DSTACK}[options.app]
    data = Path(tempfile.mkdtemp(prefix=f"views-{spec.key}-"))
    os.environ.update(spec.env(data))
    artifacts = options.artifacts or data / "screenshots"
    artifacts.mkdir(parents=True, exist_ok=True)

    import anyio
    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import FileResponse, Response
    from starlette.routing import Mount, Route

    from gateway.gateway import Gateway
    from gateway.options import Effects, Output

    app = spec.build()
    _seed(spec, app)
    bundle = data / "host.js"
    subprocess.run(  # noqa: S603 - our esbuild on our host
        [
            str(TOOLS / "apps-host" / "node_modules" / ".bin" / "esbuild"),
            str(HOST / "host.mjs"),
            "--bundle",
            "--format=iife",
            "--platform=browser",
            f"--outfile={bundle}",
            "--log-level=warning",
        ],
        check=True,
        env={**os.environ, "NODE_PATH": str(TOOLS / "apps-host" / "node_modules")},
    )
    gateway = Gateway(app=app, whoami=spec.whoami, output=Output(name=spec.key), effects=Effects(**spec.effects))

    async def page(request: Any) -> Response:
        return FileResponse(HOST / "host.html", media_type="text/html")

    async def script(request: Any) -> Response:
        return FileResponse(bundle, media_type="text/javascript")

    async def icon(request: Any) -> Response:
        return Response(status_code=204)

    site = Starlette(
        routes=[
            Route("/host", page),
            Route("/host.js", script),
            Route("/favicon.ico", icon),
            Route("/mcp", gateway.asgi(), methods=["POST"]),
            Mount("/", app),
        ]
    )

    async def run() -> dict[str, Any]:
        config = uvicorn.Config(site, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
        server = uvicorn.Server(config)
        async with gateway.lifespan(), anyio.create_task_group() as group:
            group.start_soon(server.serve)
            while not server.started:
                await anyio.sleep(0.05)
            port = server.servers[0].sockets[0].getsockname()[1]
            node = shutil.which("node") or str(TOOLS / "bin" / "node")
            env = {
                **os.environ,
                "PLAYWRIGHT_CORE": str(TOOLS / "browser" / "node_modules" / "playwright-core"),
                "CHROMIUM": os.environ.get("CHROMIUM", "/usr/bin/chromium"),
                "TOKEN": spec.bearer or "",
                "REAL_CALLS": json.dumps(CALLS[spec.key]),
            }
            command = [node, str(HOST / "drive.js"), f"http://127.0.0.1:{port}", str(artifacts), "real"]
            done = await anyio.run_process(command, env=env, check=False)
            server.should_exit = True
            if done.returncode != 0:
                raise SystemExit(done.stderr.decode()[-3000:])
            return json.loads(done.stdout)["real"]

    seen = anyio.run(run)
    for call in seen.get("calls", []):
        print(json.dumps(call, ensure_ascii=False)[:600])
    if "failed" in seen:
        print("FAILED:", seen["failed"])
    for shot in sorted(artifacts.glob("*.png")):
        print(f"screenshot: {shot}")
    if options.json is not None:
        options.json.write_text(json.dumps(seen, indent=2))
    return 1 if "failed" in seen or seen.get("problems") else 0


if __name__ == "__main__":
    sys.exit(main())
