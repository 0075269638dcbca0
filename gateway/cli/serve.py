"""`mcp-gateway serve`: the gateway over streamable HTTP with uvicorn, its flags, and the client configurations
it prints ready to paste."""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Final, TextIO

from gateway.cli.gateways import build_gateway, demo_served, gateway_flags, stdio_args
from gateway.cli.oauth import OAuthFlags, OAuthSetup, oauth_server
from gateway.cli.options import add_flags, given
from gateway.extras import install_command, switched_off
from gateway.flags import cli, port

if TYPE_CHECKING:
    from gateway.options import GatewayConfig

__all__ = ["Listen", "configure", "print_client_setup", "serve_command", "with_oauth"]

EXIT_OK: Final = 0


@dataclass(frozen=True, kw_only=True)
class Listen:
    """Where `serve` listens."""

    host: str = field(default="127.0.0.1", metadata=cli("interface to bind (default 127.0.0.1)", where="serve"))
    port: int = field(default=8000, metadata=cli("port (default 8000)", parse=port, where="serve"))
    path: str = field(default="/mcp", metadata=cli("MCP endpoint path (default /mcp)", where="serve"))


def configure(parser: argparse.ArgumentParser) -> None:
    """The flags of `serve`: where it listens, every gateway option, how it serves, and OAuth."""
    from gateway.serving import ServeLimits

    add_flags(parser, Listen, where={"serve"}, title="where to listen")
    gateway_flags(parser, {"all", "http", "serve"})
    add_flags(parser, ServeLimits, where={"serve"}, title="serving")
    add_flags(parser, OAuthFlags, where={"serve"}, title=OAuthFlags.__doc__)
    parser.set_defaults(run=serve_command)


def serve_command(options: argparse.Namespace, out: TextIO) -> int:
    """Build the gateway the options describe and serve it until stopped."""
    from gateway.serving import ServeLimits, serve

    listen = Listen(**given(options, Listen))
    flags = OAuthFlags(**given(options, OAuthFlags))
    demo = demo_served(options)
    host = "127.0.0.1" if listen.host in ("0.0.0.0", "::") else listen.host  # noqa: S104 - only for the URL shown
    oauth = (
        oauth_server(options, flags, host=host, port=listen.port, path=listen.path, demo=demo) if flags.oauth else None
    )
    gateway, demo = build_gateway(options, (lambda config: with_oauth(config, oauth, flags)) if oauth else None)
    if oauth is not None:
        oauth.start(gateway.catalog)
    url = oauth.server.config.resource if oauth else f"http://{host}:{listen.port}{listen.path}"
    print(f"{gateway.name}: {len(gateway.catalog.functions())} functions, MCP endpoint {url}", file=out)
    if gateway.reference_path is not None:
        print(f"Reference page: http://{host}:{listen.port}{gateway.reference_path}", file=out)
    if gateway.metrics_path is not None:
        print(f"Metrics: http://{host}:{listen.port}{gateway.metrics_path}", file=out)
    print(f"Readiness (for load balancers): http://{host}:{listen.port}/ready", file=out)
    for feature, extra in switched_off().items():
        print(f"{feature.capitalize()}: off, the {extra!r} extra is not installed ({install_command(extra)})", file=out)
    log_calls()
    if oauth is not None:
        oauth.gateways.append(gateway)
        oauth.server.observe(gateway.observer.oauth)
        gateway.readiness.add(oauth.server.ready)
        print(
            f"OAuth: add {url} as a custom connector in claude.ai or ChatGPT; people log in with their API key",
            file=out,
        )
    print_client_setup(options, gateway.name, url, demo=demo, oauth=oauth is not None, out=out)
    out.flush()
    app = gateway.standalone(listen.path)
    if oauth is not None:
        oauth.server.mount(app)
    # The client address is the proxy's unless a trusted proxy says otherwise (uvicorn rewrites it from
    # X-Forwarded-For only for the addresses given), so a caller cannot claim another address. A trusted proxy's
    # connections carry many clients: they are not held to --max-connections-per-client.
    trusted = gateway.config.security.trusted_proxies
    serve(
        app,
        host=listen.host,
        port=listen.port,
        limits=ServeLimits(**given(options, ServeLimits)),
        trusted_proxies=gateway.config.security.proxies,
        log_level="info",
        proxy_headers=bool(trusted),
        forwarded_allow_ips=",".join(trusted) if trusted else None,
    )
    return EXIT_OK


def with_oauth(config: GatewayConfig, oauth: OAuthSetup, flags: OAuthFlags) -> GatewayConfig:
    """`config` behind the OAuth server: its credentials from the server's tokens, its host accepted, tasks (and
    calls waiting for approval) beside the OAuth server's store when --tasks (--approval) is given without
    --tasks-store (--approval-store) (the instances that serve together share it already), and with an identity
    provider, functions seen by the document's scopes."""
    security = replace(config.security, allowed_hosts=(*config.security.allowed_hosts, *oauth.allowed_hosts))
    tasks = config.tasks
    if tasks is not None and tasks.store is None:
        tasks = replace(tasks, store=flags.oauth_store)
    effects = config.effects
    if effects.approval != "none" and effects.approval_store is None and tasks is None:
        effects = replace(effects, approval_store=flags.oauth_store)
    # Logged in at the API's identity provider, a caller sees the functions whose document scopes it was granted.
    access = replace(config.access, document_scopes=True) if flags.oauth_upstream else config.access
    return replace(config, auth=oauth.auth, security=security, tasks=tasks, access=access, effects=effects)


def print_client_setup(
    options: argparse.Namespace, name: str, url: str, *, demo: bool, oauth: bool, out: TextIO
) -> None:
    """How to add this server to Claude Code, Claude Desktop and URL-configured clients, ready to paste."""
    key = "YOUR_API_KEY"
    if demo:
        from demo import ADMIN_KEY, MEMBER_KEY

        key = ADMIN_KEY
        print(f"Demo API keys: {ADMIN_KEY} (admin), {MEMBER_KEY} (member)", file=out)
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-").lower() or "api"
    header = "" if oauth else f' --header "Authorization: Bearer {key}"'
    print(f"Claude Code:  claude mcp add --transport http {slug} {url}{header}", file=out)
    if not oauth:
        config = {"mcpServers": {slug: {"url": url, "headers": {"Authorization": f"Bearer {key}"}}}}
        print(f"Clients configured by URL (Cursor, VS Code, ...): {json.dumps(config)}", file=out)
    # Claude Desktop's config file starts local servers only (command, args, env): the same API over stdio.
    entry = {"command": sys.executable, "args": ["-m", "gateway.cli", "stdio", *stdio_args(options)]}
    desktop = {"mcpServers": {slug: {**entry, "env": {"MCP_GATEWAY_TOKEN": key}}}}
    print(f"Claude Desktop (claude_desktop_config.json): {json.dumps(desktop)}", file=out)


def log_calls() -> None:
    """Print the gateway.calls lines (one per tool call) to stderr beside uvicorn's, unless logging is set up."""
    import logging

    from gateway.observability import LOGGER_NAME

    calls = logging.getLogger(LOGGER_NAME)
    if calls.handlers or logging.getLogger().handlers:
        return
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
    calls.addHandler(handler)
    calls.setLevel(logging.INFO)
