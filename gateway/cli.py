"""The `mcp-gateway` command line: catalog inspection now, serving the gateway with the gateway package.

Exit codes: 0 success, 1 the document was refused or a name is unknown, 2 wrong usage.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from catalog.errors import CatalogError, DocumentError, UnknownNameError
from catalog.model import Catalog
from gateway.errors import ConfigError as GatewayConfigError
from gateway.errors import GatewayError

if TYPE_CHECKING:
    from gateway.app import Gateway

__all__ = ["main"]

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with `argv` (default: sys.argv[1:]); returns the exit code."""
    parser = _parser()
    options = parser.parse_args(argv)
    if not hasattr(options, "run"):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        code: int = options.run(options, sys.stdout)
    except DocumentError as error:
        print(f"mcp-gateway: {error.location}: {error.pointer}: {error}", file=sys.stderr)
        return EXIT_REFUSED
    except UnknownNameError as error:
        hint = f"; did you mean {', '.join(error.suggestions)}?" if error.suggestions else ""
        print(f"mcp-gateway: {error}{hint}", file=sys.stderr)
        return EXIT_REFUSED
    except (CatalogError, GatewayError) as error:
        print(f"mcp-gateway: {error}", file=sys.stderr)
        return EXIT_REFUSED
    return code


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mcp-gateway", description="Serve an OpenAPI-described API to AI agents.")
    commands = parser.add_subparsers(metavar="COMMAND")
    serve = commands.add_parser("serve", help="serve the gateway over streamable HTTP (default: the demo API)")
    _gateway_options(serve)
    serve.add_argument("--host", default=_env("HOST", "127.0.0.1"), help="interface to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=int(_env("PORT", "8000")), help="port (default 8000)")
    serve.add_argument("--path", default=_env("PATH", "/mcp"), help="MCP endpoint path (default /mcp)")
    serve.add_argument(
        "--allowed-host",
        action="append",
        default=_env_list("ALLOWED_HOSTS"),
        metavar="HOST",
        help="also accept this Host header (name, name:port, *.domain or *); loopback is always accepted",
    )
    serve.add_argument(
        "--allowed-origin",
        action="append",
        default=_env_list("ALLOWED_ORIGINS"),
        metavar="ORIGIN",
        help="also accept this browser Origin (scheme://host[:port])",
    )
    serve.set_defaults(run=_serve)
    stdio = commands.add_parser("stdio", help="serve the gateway over stdio (Claude Desktop, Claude Code)")
    _gateway_options(stdio)
    stdio.set_defaults(run=_stdio)
    catalog = commands.add_parser("catalog", help="inspect the catalog an agent sees for an OpenAPI document")
    actions = catalog.add_subparsers(metavar="ACTION")

    check = actions.add_parser("check", help="load and build; print counts and warnings")
    check.add_argument("spec", help="OpenAPI document: file path or URL (JSON or YAML), or `demo`")
    check.add_argument("--warnings", type=int, default=20, metavar="N", help="print at most N warnings (default 20)")
    check.set_defaults(run=_check)

    search = actions.add_parser("search", help="rank functions for a task, as search_functions does")
    search.add_argument("spec")
    search.add_argument("query", nargs="?", default=None)
    search.add_argument("--module", default=None)
    search.add_argument("--limit", type=int, default=10)
    search.set_defaults(run=_search)

    describe = actions.add_parser("describe", help="describe functions, as describe_function does")
    describe.add_argument("spec")
    describe.add_argument("names", nargs="+", metavar="NAME")
    describe.set_defaults(run=_describe)

    term = actions.add_parser("term", help="explain a term, as explain_term does")
    term.add_argument("spec")
    term.add_argument("name")
    term.set_defaults(run=_term)

    snapshot = actions.add_parser("snapshot", help="write the catalog as stable JSON")
    snapshot.add_argument("spec")
    snapshot.add_argument("-o", "--output", type=Path, default=None, help="file to write (default: stdout)")
    snapshot.set_defaults(run=_snapshot)
    return parser


def _env(name: str, default: str) -> str:
    return os.environ.get(f"MCP_GATEWAY_{name}", default)


def _env_list(name: str) -> list[str]:
    value = os.environ.get(f"MCP_GATEWAY_{name}", "")
    return [item.strip() for item in value.split(",") if item.strip()]


def _gateway_options(parser: argparse.ArgumentParser) -> None:
    source = parser.add_argument_group("what to serve (default: the bundled demo API)")
    source.add_argument("--spec", default=os.environ.get("MCP_GATEWAY_SPEC"), help="OpenAPI document: path or URL")
    source.add_argument(
        "--app",
        default=os.environ.get("MCP_GATEWAY_APP"),
        metavar="MODULE:ATTR",
        help="ASGI app to dispatch to in-process (its own openapi() is the spec unless --spec is given)",
    )
    source.add_argument(
        "--upstream",
        default=os.environ.get("MCP_GATEWAY_UPSTREAM"),
        metavar="URL",
        help="base URL of a remote REST API to call over HTTP (needs --spec)",
    )
    parser.add_argument("--name", default=os.environ.get("MCP_GATEWAY_NAME"), help="server name shown to clients")
    parser.add_argument("--instructions", default=_env("INSTRUCTIONS", ""), help="a paragraph about the API")
    parser.add_argument("--whoami", default=os.environ.get("MCP_GATEWAY_WHOAMI"), metavar="FUNCTION")
    parser.add_argument(
        "--tool",
        action="append",
        default=_env_list("TOOLS"),
        metavar="FUNCTION",
        help="promote a catalog function to a tool of its own (repeatable)",
    )
    parser.add_argument("--timeout", type=float, default=float(_env("TIMEOUT", "30")), help="seconds per call")
    parser.add_argument("--max-output-bytes", type=int, default=int(_env("MAX_OUTPUT_BYTES", "24000")))


def _build_gateway(options: argparse.Namespace, **extra: Any) -> tuple[Gateway, bool]:
    """The gateway the options describe; True when it serves the bundled demo."""
    from gateway.app import Gateway

    demo = not (options.spec or options.app or options.upstream)
    if demo:
        from gateway.demo import create_app

        app: Any = create_app()
        whoami = options.whoami or "users.get_current_user"
        instructions = options.instructions or "A demo shop: customers, products, orders and stock."
        gateway = Gateway(
            app=app,
            whoami=whoami,
            instructions=instructions,
            name=options.name or "demo-shop",
            tools=options.tool,
            timeout=options.timeout,
            max_output_bytes=options.max_output_bytes,
            **extra,
        )
        return gateway, True
    if options.upstream and not options.spec:
        raise GatewayConfigError("--upstream needs --spec: the gateway reads the API's document from it")
    app = _import_app(options.app) if options.app else None
    gateway = Gateway(
        spec=options.spec,
        app=app,
        upstream=options.upstream,
        name=options.name,
        whoami=options.whoami,
        instructions=options.instructions,
        tools=options.tool,
        timeout=options.timeout,
        max_output_bytes=options.max_output_bytes,
        **extra,
    )
    return gateway, False


def _import_app(reference: str) -> Any:
    module_name, _, attribute = reference.partition(":")
    if not module_name or not attribute:
        raise GatewayConfigError(f"--app takes MODULE:ATTR, e.g. myapi.main:app, not {reference!r}")
    sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise GatewayConfigError(f"--app: cannot import {module_name!r}: {error}") from error
    app: Any = module
    for part in attribute.split("."):
        app = getattr(app, part, None)
        if app is None:
            raise GatewayConfigError(f"--app: {module_name!r} has no attribute {attribute!r}")
    return app


def _serve(options: argparse.Namespace, out: TextIO) -> int:
    import uvicorn

    gateway, demo = _build_gateway(options, allowed_hosts=options.allowed_host, allowed_origins=options.allowed_origin)
    host = "127.0.0.1" if options.host in ("0.0.0.0", "::") else options.host  # noqa: S104 - only for the URL shown
    url = f"http://{host}:{options.port}{options.path}"
    print(f"{gateway.name}: {len(gateway.catalog.functions())} functions, MCP endpoint {url}", file=out)
    if demo:
        from gateway.demo import ADMIN_KEY, MEMBER_KEY

        config = {
            "mcpServers": {
                "demo-shop": {"type": "http", "url": url, "headers": {"Authorization": f"Bearer {ADMIN_KEY}"}}
            }
        }
        print(f"Demo API keys: {ADMIN_KEY} (admin), {MEMBER_KEY} (member)", file=out)
        header = f'--header "Authorization: Bearer {ADMIN_KEY}"'
        print(f"Claude Code:  claude mcp add --transport http demo-shop {url} {header}", file=out)
        print(f"Client config: {json.dumps(config)}", file=out)
    out.flush()
    uvicorn.run(gateway.standalone(options.path), host=options.host, port=options.port, log_level="info")
    return EXIT_OK


def _stdio(options: argparse.Namespace, out: TextIO) -> int:
    import anyio

    from gateway.stdio import run_stdio

    gateway, _ = _build_gateway(options)

    async def run() -> None:
        token = os.environ.get("MCP_GATEWAY_TOKEN") or None
        gateway.use_stdio_credentials(await gateway.auth(token))
        async with gateway.lifespan():
            await run_stdio(gateway.endpoint)

    anyio.run(run)
    return EXIT_OK


def _catalog(spec: str) -> Catalog:
    """The catalog of SPEC: a path or URL, or `demo` for the bundled demo API."""
    from catalog.builder import load_catalog

    if spec == "demo":
        from gateway.demo import create_app

        return load_catalog(create_app())
    return load_catalog(spec)


def _check(options: argparse.Namespace, out: TextIO) -> int:
    catalog = _catalog(options.spec)
    functions = catalog.functions()
    print(
        f"{catalog.title} {catalog.version}: {len(catalog.modules)} modules, {len(functions)} functions, "
        f"{len(catalog.terms)} terms, {len(catalog.warnings)} warnings",
        file=out,
    )
    unpromotable = catalog.unpromotable()
    if unpromotable:
        print(f"{len(unpromotable)} functions cannot be promoted to tools of their own:", file=out)
        for name, reason in list(unpromotable.items())[: options.warnings]:
            print(f"  {name}: {reason}", file=out)
    for warning in catalog.warnings[: options.warnings]:
        print(f"warning: {warning.pointer}: {warning.message}", file=out)
    if len(catalog.warnings) > options.warnings:
        print(f"… {len(catalog.warnings) - options.warnings} more warnings (--warnings N shows more)", file=out)
    return EXIT_OK


def _search(options: argparse.Namespace, out: TextIO) -> int:
    from catalog.search import search

    catalog = _catalog(options.spec)
    print(search(catalog, options.query, module=options.module, limit=options.limit).text, file=out)
    return EXIT_OK


def _describe(options: argparse.Namespace, out: TextIO) -> int:
    from catalog.render import describe_functions

    catalog = _catalog(options.spec)
    print(describe_functions(catalog, [catalog.function(name) for name in options.names]), file=out)
    return EXIT_OK


def _term(options: argparse.Namespace, out: TextIO) -> int:
    from catalog.render import explain_term

    catalog = _catalog(options.spec)
    print(explain_term(catalog, catalog.term(options.name)), file=out)
    return EXIT_OK


def _snapshot(options: argparse.Namespace, out: TextIO) -> int:
    from catalog.snapshot import catalog_snapshot, dump_snapshot

    text = dump_snapshot(catalog_snapshot(_catalog(options.spec)))
    if options.output is None:
        out.write(text)
    else:
        options.output.write_text(text, encoding="utf-8")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
