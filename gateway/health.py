"""`mcp-gateway health`: whether the gateway `serve` runs with the same settings answers (liveness), or with
`--ready` whether it can serve now (readiness: its state stores answer), for container health checks (an image
has no curl). It reads the host and port the way `serve` does (flags, then MCP_GATEWAY_HOST and
MCP_GATEWAY_PORT), so a check follows the address actually served."""

from __future__ import annotations

import http.client
import json

__all__ = ["check_health", "check_ready", "probe_host"]


def probe_host(host: str) -> str:
    """The address to reach a server bound to `host` at: loopback for the wildcard addresses."""
    if host in ("", "0.0.0.0"):  # noqa: S104 - a bind address read, not bound
        return "127.0.0.1"
    if host in ("::", "[::]"):
        return "::1"
    return host.strip("[]")


def check_health(host: str, port: int, *, timeout: float = 4.0) -> str | None:
    """None when GET / at the served address answers 200 with the server's JSON name; else what went wrong."""
    address = probe_host(host)
    connection = http.client.HTTPConnection(address, port, timeout=timeout)
    try:
        connection.request("GET", "/")
        response = connection.getresponse()
        body = response.read(65536)
    except OSError as error:
        return f"http://{_shown(address)}:{port}/ did not answer ({error}); is `mcp-gateway serve` running there?"
    finally:
        connection.close()
    if response.status != 200:
        return f"http://{_shown(address)}:{port}/ answered HTTP {response.status}, not 200"
    try:
        name = json.loads(body).get("name")
    except (ValueError, AttributeError):
        name = None
    if not isinstance(name, str):
        return f"http://{_shown(address)}:{port}/ answered something other than the gateway's name"
    return None


def check_ready(host: str, port: int, *, timeout: float = 6.0) -> str | None:
    """None when GET /ready at the served address answers 200; else what is unavailable or went wrong."""
    address = probe_host(host)
    url = f"http://{_shown(address)}:{port}/ready"
    connection = http.client.HTTPConnection(address, port, timeout=timeout)
    try:
        connection.request("GET", "/ready")
        response = connection.getresponse()
        body = response.read(65536)
    except OSError as error:
        return f"{url} did not answer ({error}); is `mcp-gateway serve` running there?"
    finally:
        connection.close()
    if response.status == 200:
        return None
    try:
        unavailable = json.loads(body).get("unavailable")
    except (ValueError, AttributeError):
        unavailable = None
    if response.status == 503 and isinstance(unavailable, list) and unavailable:
        return f"not ready: {'; '.join(str(item) for item in unavailable)} (the server's log says what failed)"
    return f"{url} answered HTTP {response.status}, not 200"


def _shown(address: str) -> str:
    return f"[{address}]" if ":" in address else address
