"""The `mcp-gateway` command line: catalog inspection now, serving the gateway with the gateway package.

Exit codes: 0 success, 1 the document was refused, a name is unknown, a snapshot check failed or a file could not be
read or written, 2 wrong usage.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import re
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import urlsplit

from catalog.errors import CatalogError, DocumentError, UnknownNameError
from gateway.errors import ConfigError as GatewayConfigError
from gateway.errors import CredentialError, GatewayError

if TYPE_CHECKING:  # imported where used: `--help` and the catalog commands load only what they run
    from catalog.effects import EffectRules
    from catalog.model import Catalog
    from gateway.gateway import Gateway

__all__ = ["main"]

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with `argv` (default: sys.argv[1:]); returns the exit code."""
    parser = _parser()
    words = list(sys.argv[1:] if argv is None else argv)
    if not words:  # a newcomer's first try: the help, as --help gives it
        parser.print_help(sys.stdout)
        return EXIT_OK
    options = parser.parse_args(words)
    options.argv = words
    if not hasattr(options, "run"):
        options.usage_of.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        code: int = options.run(options, sys.stdout)
    except DocumentError as error:
        print(f"mcp-gateway: {error.location}: {error.pointer}: {error}", file=sys.stderr)
        return EXIT_REFUSED
    except UnknownNameError as error:
        # Some messages name the closest already ("no module named 'x'; closest: ..."): not twice.
        named = "closest:" in str(error)
        hint = f"; did you mean {', '.join(error.suggestions)}?" if error.suggestions and not named else ""
        print(f"mcp-gateway: {error}{hint}", file=sys.stderr)
        return EXIT_REFUSED
    except (CatalogError, GatewayError) as error:
        print(f"mcp-gateway: {error}", file=sys.stderr)
        return EXIT_REFUSED
    except BrokenPipeError:
        # The reader went away (`... | head`): nothing is wrong with the command, and nothing more can be said.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_REFUSED
    except OSError as error:  # a snapshot, page or output path that cannot be read or written
        where = f"{error.filename}: " if error.filename else ""
        print(f"mcp-gateway: {where}{error.strerror or error}", file=sys.stderr)
        return EXIT_REFUSED
    return code


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mcp-gateway", description="Serve an OpenAPI-described API to AI agents.")
    parser.add_argument("--version", action=_Version, help="show the installed version and exit")
    parser.set_defaults(usage_of=parser)
    commands = parser.add_subparsers(metavar="COMMAND")
    serve = commands.add_parser(
        "serve",
        help="serve the gateway over streamable HTTP (default: the demo API)",
        epilog=_ENVIRONMENT + _SERVE_ENVIRONMENT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _gateway_options(serve)
    serve.add_argument("--host", default=_env("HOST", "127.0.0.1"), help="interface to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=_port, default=_env("PORT", "8000"), help="port (default 8000)")
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
    serve.add_argument(
        "--read-timeout",
        type=_seconds,
        default=_env("READ_TIMEOUT", "30"),
        metavar="SECONDS",
        help="close a connection whose request has not arrived whole within this time (default 30)",
    )
    serve.add_argument(
        "--max-connections",
        type=_positive,
        default=_env("MAX_CONNECTIONS", "512"),
        metavar="N",
        help="answer 503 past this many open connections (default 512)",
    )
    serve.add_argument(
        "--max-running",
        type=_count,
        default=_env("MAX_RUNNING", "16"),
        metavar="N",
        help="work on at most N MCP requests at once, the others waiting in arrival order, each counting for "
        "at most 0.1 s (default 16; 0 works on all at once)",
    )
    serve.add_argument(
        "--trusted-proxy",
        action="append",
        default=_env_list("TRUSTED_PROXIES"),
        metavar="ADDRESS",
        help="a proxy (address, network such as 10.0.0.0/8, or *) whose X-Forwarded-For and -Proto are believed "
        "(repeatable); without one, forwarded headers are never trusted",
    )
    _reference_option(serve)
    serve.add_argument(
        "--metrics-path",
        default=os.environ.get("MCP_GATEWAY_METRICS_PATH") or None,
        metavar="PATH",
        help="serve Prometheus metrics at PATH, e.g. /metrics (needs pip install 'openapi-mcp-gateway[metrics]')",
    )
    _oauth_options(serve)
    _script_options(serve)
    serve.set_defaults(run=_serve)
    stdio = commands.add_parser(
        "stdio",
        help="serve the gateway over stdio (Claude Desktop, Claude Code)",
        epilog=_ENVIRONMENT
        + "\n  MCP_GATEWAY_TOKEN         the API key or token sent to the REST API as `Authorization: Bearer ...`",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _gateway_options(stdio)
    _script_options(stdio)
    stdio.set_defaults(run=_stdio)

    health = commands.add_parser(
        "health",
        help="exit 0 when the gateway `serve` runs with the same settings answers (for container health checks)",
    )
    health.add_argument("--host", default=_env("HOST", "127.0.0.1"), help="interface served (MCP_GATEWAY_HOST)")
    health.add_argument("--port", type=_port, default=_env("PORT", "8000"), help="port served (MCP_GATEWAY_PORT)")
    health.set_defaults(run=_health)

    surface = commands.add_parser("snapshot", help="the agent-facing surface as a committed file, checked in CI")
    surface.set_defaults(usage_of=surface)
    surface_actions = surface.add_subparsers(metavar="ACTION")
    surface_check = surface_actions.add_parser(
        "check",
        help="compare the gateway's surface with SNAPSHOT; exit 1 on drift, with each change classified",
        description="Compare what agents see (instructions, tools, modules, functions, terms) with the committed "
        "SNAPSHOT file and print each change as breaking or non-breaking. Exit 1 when the --fail-on gate fails.",
    )
    surface_check.add_argument(
        "snapshot", type=Path, metavar="SNAPSHOT", help="the snapshot file, e.g. snapshots/api.json"
    )
    _gateway_options(surface_check)
    # Every serve option that changes what agents see, so any served surface can be checked.
    _script_options(surface_check)
    _reference_option(surface_check, serves="the surface lists the reference page resource")
    surface_check.add_argument("--update", action="store_true", help="rewrite SNAPSHOT to match (after review)")
    surface_check.add_argument(
        "--fail-on",
        choices=("breaking", "any"),
        default="any",
        help="fail on breaking changes only, or on any change (default: any)",
    )
    surface_check.add_argument(
        "--format",
        choices=("text", "markdown", "github"),
        default="text",
        help="text for a terminal, markdown for a PR comment, github for workflow annotations (default: text)",
    )
    surface_check.set_defaults(run=_snapshot_check)

    reference = commands.add_parser("reference", help="write the reference page: what agents see, for people")
    _gateway_options(reference)
    _script_options(reference)
    reference.add_argument("-o", "--output", type=Path, default=None, help="HTML file to write (default: stdout)")
    reference.set_defaults(run=_reference)
    catalog = commands.add_parser("catalog", help="inspect the catalog an agent sees for an OpenAPI document")
    catalog.set_defaults(usage_of=catalog)
    actions = catalog.add_subparsers(metavar="ACTION")
    spec_help = "OpenAPI document: file path or URL (JSON or YAML), or `demo` for the bundled demo API"

    check = actions.add_parser(
        "check",
        help="load and build; print counts and warnings (exit 1 when the document has no operations)",
        epilog="environment:\n  MCP_GATEWAY_FETCH_TIMEOUT  seconds to wait for a spec URL (default 10)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("spec", help=spec_help)
    check.add_argument("--warnings", type=_count, default=20, metavar="N", help="print at most N warnings (default 20)")
    for flag, what in (("--read-only", "only reads"), ("--destructive", "deletes data"), ("--writes", "writes")):
        check.add_argument(flag, action="append", default=[], metavar="PATTERN", help=f"functions that {what}")
    check.add_argument(
        "--strict",
        action="store_true",
        help="also validate the document with openapi-spec-validator; list its errors at their JSON pointers and "
        "exit 1 when there are any",
    )
    check.set_defaults(run=_check)

    search = actions.add_parser("search", help="rank functions for a task, as search_functions does")
    search.add_argument("spec", help=spec_help)
    search.add_argument("query", nargs="?", default=None, help="the task in words, e.g. 'refund a payment'")
    search.add_argument("--module", default=None, help="search only this module")
    search.add_argument("--limit", type=_positive, default=10, help="hits to show (default 10)")
    search.set_defaults(run=_search)

    describe = actions.add_parser("describe", help="describe functions, as describe_function does")
    describe.add_argument("spec", help=spec_help)
    describe.add_argument("names", nargs="+", metavar="NAME", help="full function names, e.g. pets.create_pet")
    describe.set_defaults(run=_describe)

    term = actions.add_parser("term", help="explain a term, as explain_term does")
    term.add_argument("spec", help=spec_help)
    term.add_argument("name", help="a term of the glossary (a schema's name), e.g. Pet")
    term.set_defaults(run=_term)

    snapshot = actions.add_parser("snapshot", help="write the catalog as stable JSON")
    snapshot.add_argument("spec", help=spec_help)
    snapshot.add_argument("-o", "--output", type=Path, default=None, help="file to write (default: stdout)")
    snapshot.set_defaults(run=_snapshot)
    return parser


_ENVIRONMENT = """environment:
  Options read these variables when not given (lists are comma-separated; true is 1, true or yes):
  MCP_GATEWAY_SPEC, _APP, _APP_DIR, _UPSTREAM, _NAME, _INSTRUCTIONS, _WHOAMI   --spec, --app, --app-dir, ...
  MCP_GATEWAY_TOOLS         --tool (a list)
  MCP_GATEWAY_PREFIX, _WHOAMI_FIELDS, _AUTH_HEADERS   --prefix, --whoami-field, --auth-header (lists)
  MCP_GATEWAY_OTHER_HOSTS   --other-host (a list)
  MCP_GATEWAY_READ_ONLY, _DESTRUCTIVE, _WRITES        --read-only, --destructive, --writes (lists)
  MCP_GATEWAY_CHATGPT_TOOLS, _TIMEOUT, _MAX_OUTPUT_BYTES, _COMPACT_RESULTS
  MCP_GATEWAY_SCRIPTS, _SCRIPTS_ALLOW_WRITES
  MCP_GATEWAY_SCOPES, _HIDE  --scope, --hide (lists)
  MCP_GATEWAY_TASKS, _TASKS_STORE, _TASK_TIMEOUT      --tasks, --tasks-store, --task-timeout
  MCP_GATEWAY_FETCH_TIMEOUT seconds a `catalog` command waits for a spec URL (default 10, as --spec does)"""
_SERVE_ENVIRONMENT = """
  MCP_GATEWAY_HOST, _PORT, _PATH, _REFERENCE_PATH, _METRICS_PATH
  MCP_GATEWAY_CALLER_KEY    keys the caller hash of the call log (the same on every instance matches callers)
  MCP_GATEWAY_ALLOWED_HOSTS, _ALLOWED_ORIGINS   --allowed-host, --allowed-origin (lists)
  MCP_GATEWAY_TRUSTED_PROXIES                  --trusted-proxy (a list)
  MCP_GATEWAY_READ_TIMEOUT, _MAX_CONNECTIONS, _MAX_RUNNING   --read-timeout, --max-connections, --max-running
  MCP_GATEWAY_OAUTH, _PUBLIC_URL, _OAUTH_STORE, _OAUTH_CLIENTS (a list)
  MCP_GATEWAY_OAUTH_SECRET  the key that signs and seals OAuth state (required with --oauth)"""


class _Version(argparse.Action):
    """`--version`: the installed distribution's version, read only when asked (importlib.metadata is slow)."""

    def __init__(self, option_strings: list[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            installed = version("openapi-mcp-gateway")
        except PackageNotFoundError:  # pragma: no cover - run from a checkout that was never installed
            installed = "unknown (not installed)"
        print(f"{parser.prog} {installed}")
        parser.exit()


def _env(name: str, default: str) -> str:
    return os.environ.get(f"MCP_GATEWAY_{name}", default)


# Option types: argparse applies them to string defaults too, so a bad MCP_GATEWAY_* value is a usage error.
def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def _count(text: str) -> int:
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {text!r}")
    return value


def _positive(text: str) -> int:
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {text!r}")
    return value


def _port(text: str) -> int:
    value = _integer(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535, not {text!r}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text!r}")
    return value


def _env_list(name: str) -> list[str]:
    value = os.environ.get(f"MCP_GATEWAY_{name}", "")
    return [item.strip() for item in value.split(",") if item.strip()]


def _reference_option(parser: argparse.ArgumentParser, serves: str = "serve the reference page for people") -> None:
    parser.add_argument(
        "--reference-path",
        default=os.environ.get("MCP_GATEWAY_REFERENCE_PATH"),
        metavar="PATH",
        help=f"{serves} at PATH (default: /reference for the demo, else off; '' for off)",
    )


def _reference_path(options: argparse.Namespace) -> str | None:
    """`reference_path=` as serve gives it: --reference-path ('' for none), else /reference for the demo, else the
    gateway's own default (None)."""
    demo = not (options.spec or options.app or options.upstream)
    path: str | None = options.reference_path
    return "/reference" if path is None and demo else path


def _script_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--scripts",
        action="store_true",
        default=_env("SCRIPTS", "").lower() in ("1", "true", "yes"),
        help="offer run_script, sandboxed JavaScript that chains calls (needs --whoami; the demo has one)",
    )
    parser.add_argument(
        "--scripts-allow-writes",
        action="store_true",
        default=_env("SCRIPTS_ALLOW_WRITES", "").lower() in ("1", "true", "yes"),
        help="let scripts call functions that change data (implies --scripts)",
    )


def _script_config(options: argparse.Namespace) -> dict[str, Any]:
    """`script=` for the Gateway when --scripts or --scripts-allow-writes turns run_script on."""
    from gateway.tools.scripts import ScriptConfig

    if not (options.scripts or options.scripts_allow_writes):
        return {}
    return {"script": ScriptConfig(allow_writes=options.scripts_allow_writes)}


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
        "--app-dir",
        default=os.environ.get("MCP_GATEWAY_APP_DIR"),
        metavar="DIR",
        help="the folder --app's module is imported from (default: the current folder; give it when a client such "
        "as Claude Desktop starts the server elsewhere)",
    )
    source.add_argument(
        "--other-host",
        action="append",
        default=_env_list("OTHER_HOSTS"),
        metavar="HOST",
        help="a host besides --upstream that functions with servers of their own may be called at, with the "
        "caller's credentials, over https (repeatable; catalog check lists them)",
    )
    source.add_argument(
        "--prefix",
        default=os.environ.get("MCP_GATEWAY_PREFIX"),
        metavar="PATH",
        help="path before every documented path in the app, e.g. /api for a sub-app mounted there (default: the "
        "document's relative server URL)",
    )
    source.add_argument(
        "--upstream",
        default=os.environ.get("MCP_GATEWAY_UPSTREAM"),
        metavar="URL",
        help="base URL of a remote REST API to call over HTTP (needs --spec; default: its first absolute server URL)",
    )
    parser.add_argument("--name", default=os.environ.get("MCP_GATEWAY_NAME"), help="server name shown to clients")
    parser.add_argument("--instructions", default=_env("INSTRUCTIONS", ""), help="a paragraph about the API")
    parser.add_argument(
        "--whoami",
        default=os.environ.get("MCP_GATEWAY_WHOAMI"),
        metavar="FUNCTION",
        help="the function that says who the caller is (e.g. users.get_current_user); the whoami tool calls it",
    )
    parser.add_argument(
        "--whoami-field",
        action="append",
        default=_env_list("WHOAMI_FIELDS") or None,
        metavar="FIELD",
        help="show only this field of the whoami answer (repeatable; dotted paths; default: all but credentials)",
    )
    parser.add_argument(
        "--auth-header",
        action="append",
        default=_env_list("AUTH_HEADERS"),
        metavar="TEMPLATE",
        help="send the token to the API as this header instead of 'Authorization: Bearer', e.g. 'X-API-Key: "
        "{token}', 'Authorization: Basic {basic}', or 'X-Key: {key}' with 'X-Secret: {secret}' (repeatable)",
    )
    effects = parser.add_argument_group(
        "what functions do, where the HTTP method says otherwise (patterns on names, e.g. '*.count_*')"
    )
    effects.add_argument(
        "--read-only", action="append", default=_env_list("READ_ONLY"), metavar="PATTERN", help="only reads"
    )
    effects.add_argument(
        "--destructive",
        action="append",
        default=_env_list("DESTRUCTIVE"),
        metavar="PATTERN",
        help="deletes or overwrites data",
    )
    effects.add_argument(
        "--writes", action="append", default=_env_list("WRITES"), metavar="PATTERN", help="changes data, additively"
    )
    parser.add_argument(
        "--tool",
        action="append",
        default=_env_list("TOOLS"),
        metavar="FUNCTION",
        help="promote a catalog function to a tool of its own (repeatable)",
    )
    parser.add_argument(
        "--chatgpt-tools",
        action="store_true",
        default=_env("CHATGPT_TOOLS", "").lower() in ("1", "true", "yes"),
        help="also serve ChatGPT's search/fetch pair over the catalog (deep research, company knowledge)",
    )
    parser.add_argument("--timeout", type=_seconds, default=_env("TIMEOUT", "30"), help="seconds per call")
    parser.add_argument(
        "--max-output-bytes",
        type=_positive,
        default=_env("MAX_OUTPUT_BYTES", "24000"),
        help="the most bytes of text one tool answer holds (default 24000, about 6k tokens)",
    )
    parser.add_argument(
        "--compact-results",
        action=argparse.BooleanOptionalAction,
        default=_env("COMPACT_RESULTS", "") in ("1", "true", "yes"),
        help="JSON results as header-and-rows tables where that is 20%% shorter (bench/compact_results.py)",
    )
    access = parser.add_argument_group("who sees what (patterns on full function names, e.g. 'orders.*')")
    access.add_argument(
        "--scope",
        action="append",
        default=_env_list("SCOPES"),
        metavar="SCOPE=PATTERN",
        help="an OAuth scope and functions it reaches (repeatable, also for one scope); a caller whose token "
        "carries scopes then sees and calls only the functions they reach",
    )
    access.add_argument(
        "--hide",
        action="append",
        default=_env_list("HIDE"),
        metavar="PATTERN",
        help="hide these functions from every caller: listings, search, describe, calls and scripts (repeatable)",
    )
    long_calls = parser.add_argument_group("long calls")
    long_calls.add_argument(
        "--tasks",
        action="store_true",
        default=_env("TASKS", "").lower() in ("1", "true", "yes"),
        help="serve task-augmented tool calls (MCP tasks: a call that outlives the client's request timeout)",
    )
    long_calls.add_argument(
        "--tasks-store",
        default=os.environ.get("MCP_GATEWAY_TASKS_STORE"),
        metavar="URL",
        help="where task state lives (implies --tasks): redis://... when several instances serve, or a SQLite "
        "file (default: the --oauth-store with --oauth, else this process's memory)",
    )
    long_calls.add_argument(
        "--task-timeout",
        type=_seconds,
        default=_env("TASK_TIMEOUT", "600"),
        help="seconds one call run as a task may take (default 600)",
    )


def _shared_options(options: argparse.Namespace) -> dict[str, Any]:
    """The Gateway options every source takes the same way."""
    shared: dict[str, Any] = {
        "tools": options.tool,
        "timeout": options.timeout,
        "max_output_bytes": options.max_output_bytes,
        "compact_results": options.compact_results,
        "research": options.chatgpt_tools,
        "read_only": options.read_only,
        "destructive": options.destructive,
        "writes": options.writes,
        "whoami_fields": options.whoami_field,
    }
    if options.auth_header:
        from gateway.rest.credentials import header_templates

        shared["auth"] = header_templates(options.auth_header)
    if options.scope or options.hide:
        from gateway.policy import Access

        shared["access"] = Access(hide=tuple(options.hide), scopes=_scope_map(options.scope) if options.scope else None)
    if getattr(options, "max_running", None) is not None:  # serve's: the HTTP endpoint's admission gate
        from gateway.mcp.admission import Admission

        shared["admission"] = Admission(max_running=options.max_running) if options.max_running else None
    if options.tasks or options.tasks_store:
        from gateway.mcp.tasks import TaskConfig

        shared["tasks"] = TaskConfig(store=options.tasks_store, timeout=options.task_timeout)
    return shared


def _scope_map(items: Sequence[str]) -> dict[str, list[str]]:
    """`--scope SCOPE=PATTERN` items as the scope map `Gateway(scopes=...)` takes."""
    scopes: dict[str, list[str]] = {}
    for item in items:
        scope, _, pattern = item.partition("=")
        if not scope.strip() or not pattern.strip():
            raise GatewayConfigError(
                f"--scope takes SCOPE=PATTERN, e.g. orders:read=orders.get_*, not {item!r} (repeat it for more)"
            )
        scopes.setdefault(scope.strip(), []).append(pattern.strip())
    return scopes


def _build_gateway(options: argparse.Namespace, **extra: Any) -> tuple[Gateway, bool]:
    """The gateway the options describe; True when it serves the bundled demo."""
    from gateway.gateway import Gateway

    demo = not (options.spec or options.app or options.upstream)
    extra = {**_shared_options(options), **extra}
    if demo:
        from demo import create_app

        app: Any = create_app()
        whoami = options.whoami or "users.get_current_user"
        instructions = options.instructions or "A demo shop: customers, products, orders and stock."
        gateway = Gateway(
            app=app,
            whoami=whoami,
            instructions=instructions,
            name=options.name or "demo-shop",
            **extra,
        )
        return gateway, True
    if options.upstream and not options.spec:
        raise GatewayConfigError("--upstream needs --spec: the gateway reads the API's document from it")
    if options.prefix is not None and not options.app:
        raise GatewayConfigError("--prefix applies to --app; for an upstream, put the path in --upstream's URL")
    if options.other_host:
        extra["other_hosts"] = options.other_host
    app = _import_app(options.app, options.app_dir) if options.app else None
    gateway = Gateway(
        spec=options.spec,
        app=app,
        upstream=options.upstream,
        prefix=options.prefix,
        name=options.name,
        whoami=options.whoami,
        instructions=options.instructions,
        **extra,
    )
    return gateway, False


def _import_app(reference: str, folder: str | None = None) -> Any:
    """The ASGI app `MODULE:ATTR` names (imported from `folder`, else the current one), calling ATTR first when it
    is a factory that takes no arguments."""
    module_name, _, attribute = reference.partition(":")
    if not module_name or not attribute:
        raise GatewayConfigError(f"--app takes MODULE:ATTR, e.g. myapi.main:app, not {reference!r}")
    if folder is not None and not os.path.isdir(folder):
        raise GatewayConfigError(f"--app-dir: {folder!r} is not a folder; give the folder {module_name!r} is in")
    sys.path.insert(0, os.path.abspath(folder or os.getcwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise GatewayConfigError(f"--app: cannot import {module_name!r}: {error}") from error
    found: Any = module
    for part in attribute.split("."):
        found = getattr(found, part, None)
        if found is None:
            raise GatewayConfigError(f"--app: {module_name!r} has no attribute {attribute!r}")
    if _is_asgi_app(found):
        return found
    if _is_factory(found):
        try:
            made = found()
        except Exception as error:
            raise GatewayConfigError(f"--app: {reference}() failed: {type(error).__name__}: {error}") from error
        if _is_asgi_app(made):
            return made
        raise GatewayConfigError(
            f"--app: {reference}() returned {_described(made)}, not an ASGI app such as FastAPI(); name the app "
            "or a function that returns one"
        )
    raise GatewayConfigError(
        f"--app: {reference} is {_described(found)}, not an ASGI app or a function that makes one "
        "(e.g. myapi.main:app or myapi.main:create_app)"
    )


def _is_asgi_app(value: Any) -> bool:
    """An ASGI 3 app: a Starlette-like app or router, or a callable taking (scope, receive, send)."""
    if hasattr(value, "router") or type(value).__name__ in ("Router", "Starlette"):
        return True
    if isinstance(value, type) or not callable(value):
        return False
    return _required_parameters(value) == 3


def _is_factory(value: Any) -> bool:
    return callable(value) and not isinstance(value, type) and _required_parameters(value) == 0


def _required_parameters(value: Any) -> int | None:
    import inspect

    try:
        signature = inspect.signature(value)
    except (TypeError, ValueError):
        return None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(1 for p in signature.parameters.values() if p.kind in kinds and p.default is inspect.Parameter.empty)


def _described(value: Any) -> str:
    kind = "a class" if isinstance(value, type) else f"a {type(value).__name__}"
    shown = repr(value)
    return f"{kind} ({shown[:80]}{'…' if len(shown) > 80 else ''})"


def _serve(options: argparse.Namespace, out: TextIO) -> int:
    from gateway.serving import ServeLimits, serve

    demo = not (options.spec or options.app or options.upstream)
    reference_path = _reference_path(options)
    host = "127.0.0.1" if options.host in ("0.0.0.0", "::") else options.host  # noqa: S104 - only for the URL shown
    oauth = _oauth_server(options, host, demo) if options.oauth else None
    gateway, demo = _build_gateway(
        options,
        allowed_hosts=[*options.allowed_host, *(oauth.allowed_hosts if oauth else ())],
        allowed_origins=options.allowed_origin,
        trusted_proxies=options.trusted_proxy,
        reference_path=reference_path,
        metrics_path=options.metrics_path,
        caller_key=os.environ.get("MCP_GATEWAY_CALLER_KEY") or None,
        **({"auth": oauth.server.auth} if oauth else {}),
        **_oauth_tasks(options, oauth),
        **_script_config(options),
    )
    url = oauth.server.config.resource if oauth else f"http://{host}:{options.port}{options.path}"
    print(f"{gateway.name}: {len(gateway.catalog.functions())} functions, MCP endpoint {url}", file=out)
    if gateway.reference_path is not None:
        print(f"Reference page: http://{host}:{options.port}{gateway.reference_path}", file=out)
    if gateway.metrics_path is not None:
        print(f"Metrics: http://{host}:{options.port}{gateway.metrics_path}", file=out)
    _log_calls()
    if oauth is not None:
        oauth.gateways.append(gateway)
        oauth.server.observe(gateway.observer.oauth)
        print(
            f"OAuth: add {url} as a custom connector in claude.ai or ChatGPT; people log in with their API key",
            file=out,
        )
    _print_client_setup(options, gateway.name, url, demo=demo, oauth=oauth is not None, out=out)
    out.flush()
    app = gateway.standalone(options.path)
    if oauth is not None:
        oauth.server.mount(app)
    # The client address is the proxy's unless a trusted proxy says otherwise (uvicorn rewrites it from
    # X-Forwarded-For only for the addresses given), so a caller cannot claim another address.
    trusted = options.trusted_proxy
    serve(
        app,
        host=options.host,
        port=options.port,
        limits=ServeLimits(read_timeout=options.read_timeout, max_connections=options.max_connections),
        log_level="info",
        proxy_headers=bool(trusted),
        forwarded_allow_ips=",".join(trusted) if trusted else None,
    )
    return EXIT_OK


def _oauth_tasks(options: argparse.Namespace, oauth: _OAuthSetup | None) -> dict[str, Any]:
    """With --oauth and --tasks but no --tasks-store, tasks live in the OAuth store, which is already shared
    by the instances that serve together (the OAuth server closes it)."""
    if oauth is None or not options.tasks or options.tasks_store:
        return {}
    from gateway.mcp.tasks import TaskConfig

    return {"tasks": TaskConfig(store=oauth.server.store, timeout=options.task_timeout)}


def _print_client_setup(
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


def stdio_args(options: argparse.Namespace) -> list[str]:
    """The `stdio` options that serve what `options` describe, from any folder and without MCP_GATEWAY_* variables:
    paths made absolute, `--app-dir` added for `--app`, defaults left out."""
    parser = argparse.ArgumentParser(add_help=False)
    saved = {name: value for name, value in os.environ.items() if name.startswith("MCP_GATEWAY_")}
    for name in saved:
        del os.environ[name]
    try:
        _gateway_options(parser)
        _script_options(parser)
        defaults = parser.parse_args([])
    finally:
        os.environ.update(saved)
    args: list[str] = []
    for action in parser._actions:
        value = getattr(options, action.dest, None)
        if action.dest == "app_dir":
            continue
        if action.dest == "spec" and isinstance(value, str) and os.path.exists(value):
            value = os.path.abspath(value)
        flag = action.option_strings[-1]
        if value is None or value == getattr(defaults, action.dest) or value in ("", []):
            continue
        if action.nargs == 0:
            args.append(flag)
        elif isinstance(value, list):
            for item in value:
                args.extend((flag, str(item)))
        else:
            args.extend((flag, f"{value:g}" if isinstance(value, float) else str(value)))
        if action.dest == "app":
            args.extend(("--app-dir", os.path.abspath(options.app_dir or os.getcwd())))
    return args


#: Over stdio the only credential is the server's MCP_GATEWAY_TOKEN: each message says how to set it.
_KEY_ADVICE = (
    'Set MCP_GATEWAY_TOKEN to an API key in the server\'s environment and restart it (Claude Desktop: the "env" '
    "of its entry in claude_desktop_config.json; Claude Code: `claude mcp add NAME -e MCP_GATEWAY_TOKEN=KEY -- "
    "mcp-gateway stdio ...`)."
)
_KEY_MISSING = (
    f"This stdio server was started without MCP_GATEWAY_TOKEN, so calls reach the API without a key. {_KEY_ADVICE}"
)
_KEY_REFUSED = f"The API refused the key in MCP_GATEWAY_TOKEN, the only credential of this stdio server. {_KEY_ADVICE}"


def _log_calls() -> None:
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


def _health(options: argparse.Namespace, out: TextIO) -> int:
    from gateway.health import check_health

    problem = check_health(options.host, options.port)
    if problem is not None:
        print(f"mcp-gateway health: {problem}", file=sys.stderr)
        return EXIT_REFUSED
    print("healthy", file=out)
    return EXIT_OK


def _stdio(options: argparse.Namespace, out: TextIO) -> int:
    import anyio

    from gateway.mcp.stdio import run_stdio

    gateway, _ = _build_gateway(options, **_script_config(options))

    token = os.environ.get("MCP_GATEWAY_TOKEN") or None
    if token is None:
        print(f"mcp-gateway stdio: {_KEY_MISSING}", file=sys.stderr)

    async def run() -> None:
        try:
            headers = await gateway.auth(token)
        except CredentialError as error:
            raise CredentialError(f"MCP_GATEWAY_TOKEN was refused ({error}). {_KEY_ADVICE}") from None
        gateway.use_stdio_credentials(headers, hint=_KEY_MISSING if token is None else _KEY_REFUSED)
        async with gateway.lifespan():
            await run_stdio(gateway.endpoint)

    anyio.run(run)
    return EXIT_OK


def _catalog(spec: str, effects: EffectRules | None = None) -> Catalog:
    """The catalog of SPEC: a path or URL, or `demo` for the bundled demo API."""
    from catalog.builder import load_catalog
    from gateway.rest.fetching import FETCH_TIMEOUT, http_fetch

    if spec == "demo":
        from demo import create_app

        return load_catalog(create_app(), effects=effects)
    timeout = os.environ.get("MCP_GATEWAY_FETCH_TIMEOUT", "")
    try:
        fetch = http_fetch(float(timeout) if timeout else FETCH_TIMEOUT)
    except ValueError:
        raise GatewayConfigError(
            f"MCP_GATEWAY_FETCH_TIMEOUT must be a positive number of seconds, not {timeout!r}"
        ) from None
    return load_catalog(spec, effects=effects, fetch=fetch)


def _check(options: argparse.Namespace, out: TextIO) -> int:
    from catalog.effects import EffectRules

    rules = EffectRules.of(read_only=options.read_only, destructive=options.destructive, writes=options.writes)
    catalog = _catalog(options.spec, rules)
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
    _print_other_hosts(catalog, out)
    _print_effect_candidates(catalog, out, limit=options.warnings)
    if not functions:
        print(
            f"mcp-gateway: {options.spec}: the document describes no operations, so agents would find no functions; "
            "check that `paths` lists operations (get, post, ...) and that this is the API's full document",
            file=sys.stderr,
        )
        return EXIT_REFUSED
    if getattr(options, "strict", False) and catalog.resolver is not None:
        return _print_spec_problems(catalog.resolver.document, out, limit=options.warnings)
    return EXIT_OK


def _print_spec_problems(document: Any, out: TextIO, *, limit: int) -> int:
    """The document's own validation errors (`--strict`); EXIT_REFUSED when there are any."""
    from catalog.strict import spec_problems

    problems = spec_problems(document)
    if not problems:
        print("strict: the document is valid OpenAPI (openapi-spec-validator)", file=out)
        return EXIT_OK
    print(f"strict: {len(problems)} validation error(s) in the document (openapi-spec-validator):", file=out)
    for problem in problems[:limit]:
        print(f"  {problem.pointer or '(document root)'}: {problem.message[:300]}", file=out)
    if len(problems) > limit:
        print(f"  … {len(problems) - limit} more (--warnings N shows more)", file=out)
    return EXIT_REFUSED


def _print_other_hosts(catalog: Catalog, out: TextIO) -> None:
    """Every host besides the document's servers that calls would go to, which the operator must allow."""
    servers = catalog.own_servers()
    if not servers:
        return
    count = sum(map(len, servers.values()))
    print(
        f"{count} function{'s are' if count != 1 else ' is'} served at other hosts than the document's servers; "
        "calls go there only with --other-host HOST, over https:",
        file=out,
    )
    for server, names in servers.items():
        parts = urlsplit(server)
        host = parts.netloc.rpartition("@")[2]
        listed = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        print(f"  {parts.scheme}://{host}{parts.path}: {listed}", file=out)


def _print_effect_candidates(catalog: Catalog, out: TextIO, *, limit: int) -> None:
    """POST operations whose names read like reads or deletes: the operator decides, nothing is reclassified."""
    from catalog.effects import effect_candidates

    found = effect_candidates(catalog.functions())
    if not found:
        return
    print(
        f"{len(found)} POST function{'s' if len(found) != 1 else ''} counted as writes but named like reads or "
        "deletes; mark them "
        "in the document (x-mcp-read-only / x-mcp-destructive) or with --read-only / --destructive PATTERN:",
        file=out,
    )
    for function, suggested in found[:limit]:
        option = "--read-only" if suggested == "read" else "--destructive"
        print(f"  {function.name} (POST {function.path}): reads like {suggested}? {option} {function.name}", file=out)
    if len(found) > limit:
        print(f"  … {len(found) - limit} more (--warnings N shows more)", file=out)


def _search(options: argparse.Namespace, out: TextIO) -> int:
    from catalog.search import search

    catalog = _catalog(options.spec)
    try:
        result = search(catalog, options.query, module=options.module, limit=options.limit)
    except ValueError as error:
        print(f"mcp-gateway: {error}", file=sys.stderr)
        return EXIT_USAGE
    print(result.text, file=out)
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
        options.output.parent.mkdir(parents=True, exist_ok=True)
        options.output.write_text(text, encoding="utf-8")
    return EXIT_OK


def _snapshot_check(options: argparse.Namespace, out: TextIO) -> int:
    from gateway.snapshot.check import check_snapshot, render_check

    gateway, demo = _build_gateway(options, reference_path=_reference_path(options), **_script_config(options))
    if demo:
        print("mcp-gateway: no --spec or --app given: checking the bundled demo API", file=sys.stderr)
    check = check_snapshot(gateway, options.snapshot, update=options.update)
    accept = _accept_command(options.argv)
    print(render_check(check, options.format, fail_on=options.fail_on, accept=accept), file=out)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if options.format == "github" and summary and (check.diff or check.missing):
        # GitHub Actions shows this file on the run's summary page: the same report, as Markdown.
        with open(summary, "a", encoding="utf-8") as file:
            file.write(render_check(check, "markdown", fail_on=options.fail_on, accept=accept) + "\n")
    return EXIT_REFUSED if check.failed(options.fail_on) else EXIT_OK


def _accept_command(argv: Sequence[str]) -> str:
    """The command that accepts a snapshot check's changes: the same check, with the options that chose the
    API and its surface, and --update instead of the report options."""
    kept: list[str] = []
    skip = False
    for word in argv:
        if skip:
            skip = False
        elif word in ("--format", "--fail-on"):
            skip = True
        elif word != "--update" and not word.startswith(("--format=", "--fail-on=")):
            kept.append(word)
    return shlex.join(["mcp-gateway", *kept, "--update"])


def _reference(options: argparse.Namespace, out: TextIO) -> int:
    from gateway.reference import reference_page

    gateway, _ = _build_gateway(options, **_script_config(options))
    page = reference_page(gateway)
    if options.output is None:
        out.write(page)
    else:
        options.output.parent.mkdir(parents=True, exist_ok=True)
        options.output.write_text(page, encoding="utf-8")
        print(f"wrote {options.output} ({len(page.encode()) // 1024} KiB)", file=sys.stderr)
    return EXIT_OK


# OAuth: the CLI composes the oauth package with the gateway (the gateway itself never imports oauth).


def _oauth_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("OAuth, for claude.ai and ChatGPT connectors (needs MCP_GATEWAY_OAUTH_SECRET)")
    group.add_argument(
        "--oauth",
        action="store_true",
        default=_env("OAUTH", "") not in ("", "0", "false"),
        help="guard the MCP endpoint with OAuth 2.1; people log in with the API key they use with the REST API",
    )
    group.add_argument(
        "--public-url",
        default=os.environ.get("MCP_GATEWAY_PUBLIC_URL"),
        metavar="URL",
        help="the https base URL clients reach the gateway at (behind a proxy); default http://HOST:PORT",
    )
    group.add_argument(
        "--oauth-store",
        default=_env("OAUTH_STORE", ".mcp-gateway/oauth.sqlite3"),
        metavar="PATH|URL",
        help="where logins and tokens live: a SQLite file (default .mcp-gateway/oauth.sqlite3) or redis://host:port/db",
    )
    group.add_argument(
        "--oauth-client",
        action="append",
        default=_env_list("OAUTH_CLIENTS"),
        metavar="ID=REDIRECT_URI",
        help="pre-register a public client with one redirect URI (repeatable)",
    )


class _OAuthSetup:
    """The OAuth server of `serve --oauth`; its login checks keys through the gateway appended to `gateways`."""

    def __init__(self, server: Any, allowed_hosts: list[str], gateways: list[Gateway]) -> None:
        self.server = server
        self.allowed_hosts = allowed_hosts
        self.gateways = gateways


def _oauth_server(options: argparse.Namespace, host: str, demo: bool) -> _OAuthSetup:
    import secrets
    from urllib.parse import urlsplit

    from oauth import ApiKeyLogin, OAuthConfig, OAuthServer, PreregisteredClient, open_store
    from oauth.errors import OAuthError

    whoami = options.whoami or ("users.get_current_user" if demo else None)
    if not whoami:
        raise GatewayConfigError("--oauth needs --whoami FUNCTION: the login page checks each API key with it")
    secret = os.environ.get("MCP_GATEWAY_OAUTH_SECRET", "")
    if not secret:
        secret = secrets.token_urlsafe(32)
        print(
            "mcp-gateway: MCP_GATEWAY_OAUTH_SECRET is not set; using a random one, so every login ends when the "
            "gateway stops. Set it to 32 or more random characters to keep logins.",
            file=sys.stderr,
        )
    base = (options.public_url or f"http://{host}:{options.port}").rstrip("/")
    clients = []
    for entry in options.oauth_client:
        client_id, separator, redirect_uri = entry.partition("=")
        if not separator:
            raise GatewayConfigError(f"--oauth-client takes ID=REDIRECT_URI, not {entry!r}")
        clients.append(PreregisteredClient(client_id=client_id, redirect_uris=(redirect_uri,)))
    gateways: list[Gateway] = []

    async def check(headers: Any) -> Any:
        return await gateways[0].call(headers, whoami, {})

    try:
        config = OAuthConfig(
            issuer=base,
            resource=f"{base}{options.path}",
            secret_key=secret.encode(),
            resource_name=options.name or ("Demo shop" if demo else "MCP server"),
            clients=tuple(clients),
        )
        server = OAuthServer(config, login=ApiKeyLogin(check), store=open_store(options.oauth_store))
    except OAuthError as error:
        raise GatewayConfigError(f"--oauth: {error}") from error
    return _OAuthSetup(server, [urlsplit(base).netloc], gateways)


if __name__ == "__main__":
    sys.exit(main())
