"""Probe what an agent can make the gateway send, on a real upstream served by uvicorn on 127.0.0.1.

Run by hand (`.venv/bin/python scripts/call-path-probes.py`): each probe prints HELD or BROKEN with what the
upstream received. Not part of the test run: the suite tests each defence on its own (tests/gateway/
test_requests.py, test_call_security.py, test_serving.py, tests/sandbox/test_confinement.py); this tries the
finished call path from outside, the way a red-team pass does.
"""

from __future__ import annotations

import asyncio
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from gateway import ConfigError, Gateway, GatewayError

SEEN: list[dict[str, Any]] = []
#: Dot-segments in every encoding tried, plus look-alikes that must pass as ordinary values.
DOTS = ("..", ".", "%2e%2e", "%2E.", ".%2e", "%252e%252e", "..%2f", "../admin", "..\\", "\uff0e\uff0e", "..;x")


async def record(request: Request) -> JSONResponse:
    SEEN.append(
        {"path": request.url.path, "raw": request.scope.get("raw_path", b"").decode(), "headers": dict(request.headers)}
    )
    return JSONResponse({"path": request.url.path, "host": request.headers.get("host")})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_upstream(port: int) -> uvicorn.Server:
    app = Starlette(routes=[Route("/{path:path}", record, methods=["GET", "POST"])])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return server


def spec(port: int, *, extra_servers: list[str] | None = None) -> dict[str, Any]:
    header = [
        {"name": name, "in": "header", "schema": {"type": "string"}}
        for name in ("Host", "Content-Length", "Transfer-Encoding", "Connection", "Proxy-Authorization", "X-Note")
    ]
    report: dict[str, Any] = {
        "operationId": "list_reports",
        "tags": ["reports"],
        "parameters": [{"name": "tenant", "in": "path", "required": True, "schema": {"type": "string"}}, *header],
        "responses": {"200": {"description": "ok"}},
    }
    if extra_servers:
        report["servers"] = [{"url": url} for url in extra_servers]
    return {
        "openapi": "3.0.3",
        "info": {"title": "Probes", "version": "1"},
        "servers": [{"url": f"http://127.0.0.1:{port}/base"}],
        "paths": {"/tenants/{tenant}/reports": {"get": report}},
    }


async def call(gateway: Gateway, args: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    SEEN.clear()
    try:
        await gateway.call({"authorization": "Bearer caller-token"}, "reports.list_reports", args)
    except GatewayError as error:
        return f"refused: {str(error)[:90]}", None
    return "sent", SEEN[-1] if SEEN else None


async def main() -> int:
    port = free_port()
    server = start_upstream(port)
    broken = 0

    def report(name: str, held: bool, detail: str) -> None:
        nonlocal broken
        broken += not held
        print(f"{'HELD  ' if held else 'BROKEN'}  {name:<48} {detail}")

    gateway = Gateway(spec=spec(port))
    for value in DOTS:
        outcome, seen = await call(gateway, {"tenant": value})
        escaped = seen is not None and not seen["path"].startswith("/base/tenants/")
        report(f"path argument {value!r}", not escaped, outcome if seen is None else f"upstream got {seen['raw']}")
    outcome, seen = await call(
        gateway,
        {"tenant": "t1", "Host": "admin.internal", "Content-Length": "0", "Transfer-Encoding": "chunked"},
    )
    host = seen["headers"].get("host") if seen else None
    report("header parameters Host / framing", seen is None or host == f"127.0.0.1:{port}", f"{outcome[:60]}")
    outcome, seen = await call(gateway, {"tenant": "t1", "X-Note": "a\r\nX-Injected: 1"})
    injected = seen is not None and "x-injected" in seen["headers"]
    report("CRLF in a header argument", not injected, outcome)
    for upstream in (f"http://user:pw@127.0.0.1:{port}", f"http://127.0.0.1:{port}@evil.example"):
        try:
            Gateway(spec=spec(port), upstream=upstream)
            report(f"userinfo in upstream {upstream.split('//')[1][:28]!r}", False, "accepted")
        except ConfigError as error:
            report(f"userinfo in upstream {upstream.split('//')[1][:28]!r}", "pw" not in str(error), "refused")
    other = Gateway(spec=spec(port, extra_servers=[f"http://localhost:{port}/elsewhere"]))
    outcome, seen = await call(other, {"tenant": "t1"})
    leaked = seen is not None and "authorization" in seen["headers"]
    report("an operation's own server gets the bearer", not leaked, outcome)
    many = {"tenant": "t1", "X-Note": {str(i): i for i in range(300_000)}}
    outcome, seen = await call(gateway, many)
    report("300,000 argument keys", seen is None, outcome)
    server.should_exit = True
    print(f"\n{broken} broken")
    return 1 if broken else 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
