"""The `mcp-gateway` command line: serving the gateway (HTTP and stdio), health checks, snapshots, the reference
page, and catalog inspection.

Each command's parser is built only when that command runs (`catalog` commands import no web framework, MCP SDK or
OAuth library), and the gateway's flags are generated from `GatewayConfig` (`gateway.cli.options`). Exit codes: 0
success, 1 the document was refused, a name is unknown, a snapshot check failed or a file could not be read or
written, 2 wrong usage.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, Final

from catalog.errors import CatalogError, DocumentError, UnknownNameError
from gateway.errors import GatewayError

__all__ = ["EXIT_OK", "EXIT_REFUSED", "EXIT_USAGE", "main", "parser_for"]

EXIT_OK: Final = 0
EXIT_REFUSED: Final = 1
EXIT_USAGE: Final = 2
#: Stopped with Ctrl-C (128 + SIGINT, as shells report it).
EXIT_INTERRUPTED: Final = 130

_ENVIRONMENT: Final = """environment:
  Every option reads MCP_GATEWAY_<NAME>, shown in brackets after its help, when it is not given (lists are
  comma-separated; a switch is on for 1, true, yes or on). Read from the environment only:
  MCP_GATEWAY_TOKEN         (stdio) the API key or token sent to the REST API as `Authorization: Bearer ...`
  MCP_GATEWAY_OAUTH_SECRET  (serve --oauth) the key that signs and seals OAuth state
  MCP_GATEWAY_OAUTH_UPSTREAM_CLIENT_SECRET  (serve --oauth-upstream) this gateway's client secret at the provider
  MCP_GATEWAY_CALLER_KEY    keys the caller hash of the call log (the same on every instance matches callers)
  MCP_GATEWAY_FETCH_TIMEOUT seconds to wait for a spec URL (default 10)"""


def _configure_serve(parser: argparse.ArgumentParser) -> None:
    from gateway.cli.serve import configure

    configure(parser)


def _configure_stdio(parser: argparse.ArgumentParser) -> None:
    from gateway.cli.stdio import configure

    configure(parser)


def _configure_health(parser: argparse.ArgumentParser) -> None:
    from gateway.cli.options import add_flags
    from gateway.cli.serve import Listen

    add_flags(parser, Listen, where={"serve"})
    parser.add_argument(
        "--ready",
        action="store_true",
        help="check readiness (GET /ready: the state stores answer) rather than that the server answers at all",
    )
    parser.set_defaults(run=_health)


def _configure_snapshot(parser: argparse.ArgumentParser) -> None:
    from gateway.cli.snapshot import configure_check

    configure_check(parser)


def _configure_reference(parser: argparse.ArgumentParser) -> None:
    from gateway.cli.snapshot import configure_reference

    configure_reference(parser)


def _configure_catalog(parser: argparse.ArgumentParser) -> None:
    from gateway.cli.catalog import configure

    configure(parser)


#: Each command: its one-line help, and what adds its flags (run only for the command given).
COMMANDS: Final[dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]]] = {
    "serve": ("serve the gateway over streamable HTTP (default: the demo API)", _configure_serve),
    "stdio": ("serve the gateway over stdio (Claude Desktop, Claude Code)", _configure_stdio),
    "health": (
        "exit 0 when the gateway `serve` runs with the same settings answers, or with --ready when it can serve "
        "(for container health checks and balancers)",
        _configure_health,
    ),
    "snapshot": ("the agent-facing surface as a committed file, checked in CI", _configure_snapshot),
    "reference": ("write the reference page: what agents see, for people", _configure_reference),
    "catalog": ("inspect the catalog an agent sees for an OpenAPI document", _configure_catalog),
}


def parser_for(words: Sequence[str]) -> argparse.ArgumentParser:
    """The parser of the command line `words`: every command listed, the flags of the one given added."""
    parser = argparse.ArgumentParser(prog="mcp-gateway", description="Serve an OpenAPI-described API to AI agents.")
    parser.add_argument("--version", action=_Version, help="show the installed version and exit")
    parser.set_defaults(usage_of=parser)
    commands = parser.add_subparsers(metavar="COMMAND")
    chosen = next((word for word in words if not word.startswith("-")), None)
    for name, (help_text, configure) in COMMANDS.items():
        command = commands.add_parser(
            name, help=help_text, epilog=_ENVIRONMENT, formatter_class=argparse.RawDescriptionHelpFormatter
        )
        command.set_defaults(usage_of=command)
        if name == chosen:
            configure(command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with `argv` (default: sys.argv[1:]); returns the exit code."""
    words = list(sys.argv[1:] if argv is None else argv)
    parser = parser_for(words)
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
    except KeyboardInterrupt:
        # Ctrl-C: a server has shut down in order by now (uvicorn raises the signal again once it has); no traceback.
        return EXIT_INTERRUPTED
    return code


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


def _health(options: argparse.Namespace, out: Any) -> int:
    from gateway.cli.options import given
    from gateway.cli.serve import Listen
    from gateway.health import check_health, check_ready

    listen = Listen(**given(options, Listen))
    problem = (check_ready if options.ready else check_health)(listen.host, listen.port)
    if problem is not None:
        print(f"mcp-gateway health: {problem}", file=sys.stderr)
        return EXIT_REFUSED
    print("ready" if options.ready else "healthy", file=out)
    return EXIT_OK
