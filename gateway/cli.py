"""The `mcp-gateway` command line: catalog inspection now, serving the gateway with the gateway package.

Exit codes: 0 success, 1 the document was refused or a name is unknown, 2 wrong usage.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from catalog.errors import CatalogError, DocumentError, UnknownNameError
from catalog.model import Catalog

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
    except CatalogError as error:
        print(f"mcp-gateway: {error}", file=sys.stderr)
        return EXIT_REFUSED
    return code


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mcp-gateway", description="Serve an OpenAPI-described API to AI agents.")
    commands = parser.add_subparsers(metavar="COMMAND")
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
