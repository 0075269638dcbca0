"""Start-up on big real apps: what `Gateway(app=app)` costs beyond the app's own `openapi()`.

    REAL_APPS_VENV=/path/venv scripts/real-apps/install
    /path/venv/bin/python bench/app_startup.py [--repeat 3] [--profile DIR] [APP ...]

The apps are the real-apps trial's (scripts/real-apps/apps.py): Prefect's server, LiteLLM's proxy and dstack's
server from PyPI, each configured as the trial configures it (offline, its data in a temporary folder). Every
run is a fresh process that imports the gateway, builds the app as its own server entry point does, and then
times, in order:

- `openapi()`: the app's own first `app.openapi()` (FastAPI generates the document, then caches it): the
  baseline, what any OpenAPI-based tool pays;
- `catalog`: `build_catalog(load_document(app))` from the app;
- `Gateway()`: `Gateway(app=app)` as the README mounts it (catalog, tool set, argument validators): the
  gateway's own share;
- `first tools/list` and `first call`: the first MCP `tools/list` and a `search_functions` tools/call, in
  process through `gateway.wrap(app)` (the SDK's server and the search index are made on first use).

Both steps call `app.openapi()` again; an app that caches its document answers at once, one that does not
(Prefect) generates it again, and that time is the app's: it is left out of both steps and shown as
`openapi() again`. Medians of `--repeat` runs per app. `--profile DIR` writes a cProfile of `Gateway(app=app)`
per app there. Exit 1 when the gateway's share (`Gateway()` + first tools/list) is 1 s or more on an app.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts" / "real-apps"))

from apps import APPS, child_env  # noqa: E402

TARGET_S = 1.0
STEPS = ("openapi()", "openapi() again", "catalog", "Gateway()", "first tools/list", "first call")


def _post(body: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1:8000"),
            (b"content-type", b"application/json"),
            (b"accept", b"application/json, text/event-stream"),
            (b"mcp-protocol-version", b"2025-11-25"),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    return scope, json.dumps({"jsonrpc": "2.0", "id": 1, **body}).encode()


async def _exchange(app: Any, body: dict[str, Any]) -> bytes:
    scope, raw = _post(body)
    sent: list[dict[str, Any]] = []
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": raw, "more_body": False}
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    status = sent[0]["status"]
    answer = b"".join(m.get("body", b"") for m in sent[1:])
    if status != 200 or b'"error"' in answer[:200]:
        raise SystemExit(f"unexpected answer {status}: {answer[:300]!r}")
    return answer


def _worker(key: str, out: Path, profile: Path | None) -> None:
    import asyncio

    from catalog.builder import build_catalog
    from catalog.loading import load_document
    from gateway.gateway import Gateway

    spec = APPS[key]
    app = spec.build()
    times: dict[str, float] = {}

    started = time.perf_counter()
    document = app.openapi()
    times["openapi()"] = time.perf_counter() - started

    # Some apps regenerate their document on every call (Prefect's `openapi()` override keeps no cache): the
    # time spent inside it is the app's, so it is counted apart from the steps below.
    generate = app.openapi
    inside = [0.0]

    def timed_openapi() -> Any:
        started = time.perf_counter()
        try:
            return generate()
        finally:
            inside[0] += time.perf_counter() - started

    app.openapi = timed_openapi

    started = time.perf_counter()
    catalog = build_catalog(load_document(app))
    times["catalog"] = time.perf_counter() - started - inside[0]
    times["openapi() again"] = inside[0]
    inside[0] = 0.0

    profiler = None
    if profile is not None:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    started = time.perf_counter()
    gateway = Gateway(app=app)
    times["Gateway()"] = time.perf_counter() - started - inside[0]
    if profiler is not None and profile is not None:
        profiler.disable()
        profiler.dump_stats(str(profile))

    wrapped = gateway.wrap(app, "/mcp")

    async def first_requests() -> None:
        started = time.perf_counter()
        await _exchange(wrapped, {"method": "tools/list"})
        times["first tools/list"] = time.perf_counter() - started
        call = {"name": "search_functions", "arguments": {"query": "list items"}}
        started = time.perf_counter()
        await _exchange(wrapped, {"method": "tools/call", "params": call})
        times["first call"] = time.perf_counter() - started

    asyncio.run(first_requests())
    result = {
        "times": times,
        "operations": sum(1 for _ in catalog.functions()),
        "document_bytes": len(json.dumps(document)),
    }
    out.write_text(json.dumps(result))


def _run(key: str, repeat: int, profile: Path | None) -> list[dict[str, Any]]:
    runs = []
    for index in range(repeat):
        with tempfile.TemporaryDirectory(prefix=f"startup-{key}-") as folder:
            data = Path(folder)
            out = data / "result.json"
            env = child_env(APPS[key], data / "app")
            env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env["PYTHONPATH"]])
            command = [sys.executable, __file__, "--worker", key, str(out)]
            if profile is not None and index == 0:
                profile.mkdir(parents=True, exist_ok=True)
                command += ["--profile-to", str(profile / f"{key}.prof")]
            done = subprocess.run(command, env=env, cwd=data, capture_output=True, text=True)
            if done.returncode != 0 or not out.exists():
                raise SystemExit(f"{key}: the worker failed\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
            runs.append(json.loads(out.read_text()))
    return runs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("apps", nargs="*", metavar="APP", help=f"some of {', '.join(APPS)} (default: all)")
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per app (default 3)")
    parser.add_argument("--profile", type=Path, help="write a cProfile of Gateway(app=app) per app to this folder")
    parser.add_argument("--worker", nargs=2, metavar=("APP", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--profile-to", type=Path, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker:
        _worker(options.worker[0], Path(options.worker[1]), options.profile_to)
        return 0
    keys = options.apps or list(APPS)
    unknown = sorted(set(keys) - set(APPS))
    if unknown:
        parser.error(f"unknown app(s) {', '.join(unknown)}; choose from {', '.join(APPS)}")
    header = f"{'app':<10} {'ops':>5} {'doc KiB':>8} " + " ".join(f"{step + ' s':>18}" for step in STEPS)
    print(header + f" {'share s':>8} {'share / openapi()':>18}")
    ok = True
    for key in keys:
        runs = _run(key, options.repeat, options.profile)
        median = {step: statistics.median(run["times"][step] for run in runs) for step in STEPS}
        share = median["Gateway()"] + median["first tools/list"]
        ok = ok and share < TARGET_S
        cells = " ".join(f"{median[step]:>18.3f}" for step in STEPS)
        ratio = share / median["openapi()"]
        print(
            f"{key:<10} {runs[0]['operations']:>5} {runs[0]['document_bytes'] // 1024:>8} {cells} "
            f"{share:>8.3f} {ratio:>17.2f}x",
            flush=True,
        )
    print(f"target: the gateway's share (Gateway() + first tools/list) under {TARGET_S:g} s on every app")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
