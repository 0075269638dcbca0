"""The MCP Apps views on a real FastAPI app from PyPI, in headless Chromium inside the test host of
tests/gateway/apps_host/ (the official AppBridge and TypeScript client): lists as tables (paged through the host
where the app pages), single objects as details; on Prefect also the approval form of a write (edited, confirmed)
and of a delete (cancelled), each read back. A scripted trial, not part of `make test`.

    "$REAL_APPS_VENV"/bin/python scripts/real-apps/views.py prefect|dstack [--artifacts DIR] [--json FILE]

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
from typing import TYPE_CHECKING, Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(REPO), str(HERE)]

from apps import DSTACK, PREFECT, AppSpec  # noqa: E402 - beside this script

if TYPE_CHECKING:
    from gateway.policy.policy import ApprovalLevel

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


#: Which calls wait for a person's approval in this trial (`Effects.approval`); the apps' own specs leave it off.
APPROVAL: dict[str, ApprovalLevel] = {"prefect": "writes"}


def _forms(spec: AppSpec, flows: list[str]) -> list[dict[str, Any]]:
    """The approval-form steps: the agent proposes a write the person edits and confirms, then a delete the person
    cancels; each read back through call_function (drive.js's `realForm`)."""
    if spec.key != "prefect":
        return []
    edited, kept = flows[0], flows[1]
    return [
        {
            "label": "update a flow's tags, edited, confirmed",
            "propose": {
                "tool": "call_function",
                "args": {"name": "flows.update_flow", "args": {"id": edited, "tags": ["proposed-by-the-agent"]}},
            },
            "edit": {"tags": "approved-by-a-person\nreviewed"},  # a list field: one tag a line
            "action": "confirm",
            "read": {"tool": "call_function", "args": {"name": "flows.read_flow", "args": {"id": edited}}},
            "expect": {"tags": ["approved-by-a-person", "reviewed"]},
        },
        {
            "label": "delete a flow, cancelled",
            "propose": {"tool": "call_function", "args": {"name": "flows.delete_flow", "args": {"id": kept}}},
            "edit": {},
            "action": "cancel",
            "read": {"tool": "call_function", "args": {"name": "flows.read_flow", "args": {"id": kept}}},
            "expect": {"id": kept, "name": "trial-flow-01"},
        },
    ]


def _checked(step: dict[str, Any], seen: dict[str, Any]) -> list[str]:
    """What the read after a form step got wrong: each expected field must hold its value."""
    after = seen.get("after")
    if not isinstance(after, dict):
        return [f"{step['label']}: the read after answered {after!r}"]
    return [
        f"{step['label']}: {key} is {after.get(key)!r} after, expected {value!r}"
        for key, value in step["expect"].items()
        if after.get(key) != value
    ]


def _seed(spec: AppSpec, app: Any) -> list[str]:
    """Data to list: 25 Prefect flows (so that a page of 10 has a next one); answers their ids."""
    if spec.key != "prefect":
        return []
    from starlette.testclient import TestClient

    ids = []
    with TestClient(app) as client:
        for index in range(25):
            made = client.post("/api/flows/", json={"name": f"trial-flow-{index:02d}"})
            made.raise_for_status()
            ids.append(str(made.json()["id"]))
    return ids


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
    forms = _forms(spec, _seed(spec, app))
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
    approval = APPROVAL.get(spec.key, "none")
    gateway = Gateway(
        app=app, whoami=spec.whoami, output=Output(name=spec.key), effects=Effects(**spec.effects, approval=approval)
    )

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
                "REAL_FORMS": json.dumps(forms),
            }
            scenarios = ["real", "realForm"] if forms else ["real"]
            command = [node, str(HOST / "drive.js"), f"http://127.0.0.1:{port}", str(artifacts), *scenarios]
            done = await anyio.run_process(command, env=env, check=False)
            server.should_exit = True
            if done.returncode != 0:
                raise SystemExit(done.stderr.decode()[-3000:])
            observed: dict[str, Any] = json.loads(done.stdout)
            return observed

    observed = anyio.run(run)
    seen, formed = observed["real"], observed.get("realForm", {})
    for call in seen.get("calls", []):
        print(json.dumps(call, ensure_ascii=False)[:600])
    wrong = []
    for step, one in zip(forms, formed.get("steps", []), strict=False):
        print(json.dumps(one, ensure_ascii=False, indent=1))
        wrong += _checked(step, one)
    for scenario in (seen, formed):
        if "failed" in scenario:
            print("FAILED:", scenario["failed"])
    for problem in wrong:
        print("WRONG:", problem)
    for shot in sorted(artifacts.glob("*.png")):
        print(f"screenshot: {shot}")
    if options.json is not None:
        options.json.write_text(json.dumps(observed, indent=2))
    failed = any("failed" in scenario or scenario.get("problems") for scenario in (seen, formed))
    return 1 if failed or wrong or len(formed.get("steps", [])) != len(forms) else 0


if __name__ == "__main__":
    sys.exit(main())
