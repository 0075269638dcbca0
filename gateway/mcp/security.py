"""Which Host and Origin headers the HTTP transport accepts: the DNS rebinding protection.

Kept apart from the transport so that a gateway can be built, checked and snapshot without importing the MCP SDK.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

from gateway.errors import ConfigError

__all__ = ["LOOPBACK_HOSTS", "LOOPBACK_ORIGINS", "TransportSecurity"]

LOOPBACK_HOSTS: Final = ("localhost", "127.0.0.1", "[::1]")
"""Host names always accepted, on any port: only a local client (or a proxy that rewrites Host) sends them."""

LOOPBACK_ORIGINS: Final = tuple(f"{scheme}://{host}:*" for scheme in ("http", "https") for host in LOOPBACK_HOSTS)
"""Origins always accepted: pages served from this machine, e.g. a local MCP Inspector."""

_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


def _split_host(value: str) -> tuple[str, int | None] | None:
    """`host[:port]` (RFC 9110 §7.2) as a lower-case host name and a port, or None if malformed."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[: end + 1], value[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:] if rest else ""
    else:
        name, _, port_text = value.partition(":")
    name = name.rstrip(".")
    if not name or any(ch in name for ch in "/@ ?#"):
        return None
    if not port_text:
        return name, None
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        return None
    return name, int(port_text)


def _split_origin(origin: str) -> tuple[str, str, int | None] | None:
    """An Origin header (RFC 6454 §7) as scheme, host name (IPv6 in brackets) and explicit port, or None."""
    try:
        parts = urlsplit(origin.strip().lower())
        port = parts.port
    except ValueError:
        return None
    if not parts.scheme or not parts.hostname or parts.path not in ("", "/") or parts.query or parts.username:
        return None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return parts.scheme, host, port


@dataclass(frozen=True, kw_only=True)
class TransportSecurity:
    """Which Host and Origin headers the HTTP transport accepts: the DNS rebinding protection.

    `allowed_hosts` adds to `LOOPBACK_HOSTS`: a host name (any port), `name:port`, `*.example.com` (any
    subdomain), or `*` to accept every Host, e.g. behind a proxy that checks Host itself. A proxy that rewrites
    Host to the upstream's loopback address needs nothing. `allowed_origins` adds to `LOOPBACK_ORIGINS`:
    `scheme://host[:port]`, `scheme://host:*` (any port) or `*`. A request without Origin (every non-browser
    client) is accepted, and so is one whose Origin names the same host and port as its Host header.
    """

    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.allowed_hosts, str) or isinstance(self.allowed_origins, str):
            raise ConfigError("allowed_hosts and allowed_origins are tuples of strings, not one string")
        for pattern in self.allowed_hosts:
            if pattern != "*" and _split_host(pattern.removeprefix("*.")) is None:
                raise ConfigError(f"allowed host {pattern!r} is not a host name, 'name:port', '*.domain' or '*'")
        for pattern in self.allowed_origins:
            if pattern != "*" and _split_origin(pattern.replace(":*", "")) is None:
                raise ConfigError(f"allowed origin {pattern!r} is not 'scheme://host[:port]', 'scheme://host:*' or '*'")

    def host_allowed(self, host: str | None) -> bool:
        """Whether a request with this Host header may be served."""
        if "*" in self.allowed_hosts:
            return True
        parsed = _split_host(host or "")
        if parsed is None:
            return False
        name, port = parsed
        if name in LOOPBACK_HOSTS:
            return True
        for pattern in self.allowed_hosts:
            if pattern.startswith("*."):
                if name.endswith(pattern[1:].lower()):
                    return True
                continue
            allowed = _split_host(pattern)
            if allowed is not None and allowed[0] == name and allowed[1] in (None, port):
                return True
        return False

    def origin_allowed(self, origin: str | None, host: str | None) -> bool:
        """Whether a request with this Origin (and Host) header may be served."""
        # MCP 2025-11-25 transports, security warning: validate Origin; a request without one is no browser's.
        if not origin:
            return True
        if "*" in self.allowed_origins:
            return True
        parsed = _split_origin(origin)
        if parsed is None:
            return False
        scheme, name, port = parsed
        effective_port = port if port is not None else _DEFAULT_PORTS.get(scheme)
        own = _split_host(host or "")
        if own is not None and own[0] == name:
            # Same origin as the request's own authority. The scheme is not compared: TLS may end at a proxy.
            own_port = own[1] if own[1] is not None else _DEFAULT_PORTS.get(scheme)
            if own_port == effective_port:
                return True
        for pattern in (*LOOPBACK_ORIGINS, *self.allowed_origins):
            any_port = pattern.endswith(":*")
            allowed = _split_origin(pattern.removesuffix(":*") if any_port else pattern)
            if allowed is None or allowed[:2] != (scheme, name):
                continue
            allowed_port = allowed[2] if allowed[2] is not None else _DEFAULT_PORTS.get(scheme)
            if any_port or allowed_port == effective_port:
                return True
        return False
