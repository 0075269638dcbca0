"""Search: find a catalog's functions for a task in free text, list one module's functions, or list the modules.

What the agent reads is `SearchResult.text`: one `function_line` per hit, each starting with the full function name.
Ranking (`_search_index`) is BM25F over names, summaries, paths, args, terms and descriptions, with light stemming,
a table of API synonyms and intents (`_search_vocabulary`), and a thesaurus of what people call the words APIs use
(`_search_thesaurus`), read for the nouns an API does not use itself; it knows no API in particular and is
deterministic.
The index of a catalog is built on its first search and shared by every later one while the catalog lives.
With the `semantic` extra installed, the lexical top candidates and the few functions nearest to the query in
meaning are ranked together with sentence embeddings (`_search_semantic`, `Ranking`).
"""

from __future__ import annotations

import difflib
import threading
import weakref
from dataclasses import dataclass
from typing import Final

from catalog._collector import collector_paused
from catalog._search_index import FunctionIndex
from catalog._search_query import parse_query
from catalog._search_semantic import CANDIDATES, Ranking, ranked, wait
from catalog.errors import UnknownNameError, shown
from catalog.model import Catalog, Function, Module
from catalog.render import function_line, module_line

__all__ = ["MAX_QUERY_CHARS", "MODULE_LISTING_CAP", "Ranking", "SearchIndex", "SearchResult", "search"]

#: How many functions a module listing shows before asking for a query.
MODULE_LISTING_CAP: Final = 100
#: The longest query read: a task in words is far shorter, and the time to read one grows with its length.
MAX_QUERY_CHARS: Final = 1_000
#: How many modules a search without hits suggests.
_CLOSEST_MODULES: Final = 5


@dataclass(frozen=True, kw_only=True)
class SearchResult:
    """What a search found, and the text the agent reads.

    `functions`: the ranked hits, or the functions a module listing shows. `modules`: the modules of a listing
    without query, or the closest modules when nothing matched. `text` is never empty.
    """

    functions: tuple[Function, ...] = ()
    modules: tuple[Module, ...] = ()
    text: str


class SearchIndex:
    """Ranks the functions of one catalog for free-text tasks.

    Cheap to create: the index itself is built on first use and cached per catalog (built once, shared by every
    SearchIndex and `search` call on that catalog, dropped with the catalog).
    """

    def __init__(self, catalog: Catalog, ranking: Ranking | None = None) -> None:
        self.catalog = catalog
        self.ranking = ranking or Ranking()

    def build(self, *, wait_semantic: float | None = 0) -> bool:
        """Build the index now rather than on the first search, and start the semantic vectors when semantic
        ranking is on; wait up to `wait_semantic` seconds for them (None: until ready). True once they are ready."""
        _index_of(self.catalog)
        return wait(self.catalog, self.ranking, wait_semantic)

    def start_semantic(self) -> None:
        """Start making the semantic vectors in the background when semantic ranking is on (SemanticModelError
        when it is required and the extra is not installed)."""
        wait(self.catalog, self.ranking, 0)

    def rank(self, query: str, *, module: str | None = None, limit: int = 10) -> tuple[Function, ...]:
        """The `limit` functions that best match `query` (within `module` when given), best first."""
        semantic = self.ranking.semantic_on
        fetch = max(limit, CANDIDATES) if semantic else limit
        index = _index_of(self.catalog)
        scored = index.score(parse_query(query), module, fetch)
        reranked = ranked(self.catalog, query, scored, self.ranking, module) if semantic else None
        if reranked is None:
            return tuple(function for function, _ in scored[:limit])
        return tuple(index.routes_last(reranked)[:limit])

    def scored(self, query: str, *, module: str | None = None) -> list[tuple[Function, float]]:
        """Every function that matches `query` at all, with its score, best first; ties in name order."""
        return _index_of(self.catalog).score(parse_query(query), module, None)

    def closest_modules(self, query: str, *, limit: int = _CLOSEST_MODULES) -> tuple[Module, ...]:
        """Modules whose names or descriptions share words with `query`; else similar names; else the largest."""
        index = _index_of(self.catalog)
        concepts = parse_query(query).concepts
        overlaps = [
            (sum(1 for concept in concepts if not words.isdisjoint(concept.variants)), module)
            for module, words in zip(index.modules, index.module_words, strict=True)
        ]
        found = [module for hits, module in sorted(overlaps, key=lambda pair: (-pair[0], pair[1].name)) if hits]
        if not found:
            names = {module.name: module for module in index.modules}
            close: list[str] = []
            for word in query.lower().split():
                close.extend(difflib.get_close_matches(word, list(names), n=limit, cutoff=0.6))
            found = [names[name] for name in dict.fromkeys(close)]
        if not found:
            found = sorted(index.modules, key=lambda module: (-len(module.functions), module.name))
        return tuple(found[:limit])


# The cached index holds the catalog's functions and modules, not the catalog, so the cache lets catalogs go.
_INDEXES: weakref.WeakKeyDictionary[Catalog, FunctionIndex] = weakref.WeakKeyDictionary()
_INDEXES_LOCK = threading.Lock()


def _index_of(catalog: Catalog) -> FunctionIndex:
    index = _INDEXES.get(catalog)
    if index is None:
        with _INDEXES_LOCK, collector_paused():
            index = _INDEXES.get(catalog)
            if index is None:
                index = _INDEXES[catalog] = FunctionIndex(catalog)
    return index


def search(
    catalog: Catalog,
    query: str | None = None,
    *,
    module: str | None = None,
    limit: int = 10,
    ranking: Ranking | None = None,
) -> SearchResult:
    """Find functions for a task, list one module's functions, or list the modules.

    With a query (optionally within `module`): the `limit` best functions, one `function_line` each. With only a
    module: its functions, up to MODULE_LISTING_CAP, then a line saying how many more. With neither: every module
    with its function count and description, after a one-line hint on searching. A blank query counts as none.
    An unknown module raises UnknownNameError with the closest names; `limit` below 1 and a query longer than
    MAX_QUERY_CHARS raise ValueError. When nothing matches, the text says so and names the closest modules: it is
    never empty. `ranking` (default `Ranking()`): lexical, or reranked with the `semantic` extra when it is installed.
    """
    if limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit!r}")
    text = (query or "").strip()
    if len(text) > MAX_QUERY_CHARS:
        raise ValueError(
            f"the query is {len(text):,} characters; say the task in at most {MAX_QUERY_CHARS:,} "
            "(a few words work best)"
        )
    if module is not None:
        _check_module(catalog, module)
    if not text:
        return _module_listing(catalog.module(module)) if module is not None else _catalog_listing(catalog)
    index = SearchIndex(catalog, ranking)
    hits = index.rank(text, module=module, limit=limit)
    if hits:
        return SearchResult(functions=hits, text="\n".join(function_line(function) for function in hits))
    return _no_hits(index, text, module)


def _check_module(catalog: Catalog, module: str) -> None:
    try:
        catalog.module(module)
    except UnknownNameError as error:
        closest = f"; closest: {', '.join(error.suggestions)}" if error.suggestions else ""
        raise UnknownNameError(
            f"no module named {shown(module)}{closest}; search without query and module to list every module",
            name=module,
            suggestions=error.suggestions,
        ) from None


def _catalog_listing(catalog: Catalog) -> SearchResult:
    count = sum(len(module.functions) for module in catalog.modules)
    hint = (
        f"{len(catalog.modules)} modules, {count} functions. Search with a task in words "
        "(e.g. 'refund a charge'), or give a module name to list its functions."
    )
    return SearchResult(modules=catalog.modules, text="\n".join([hint, *map(module_line, catalog.modules)]))


def _module_listing(module: Module) -> SearchResult:
    shown = module.functions[:MODULE_LISTING_CAP]
    lines = [module_line(module), *map(function_line, shown)]
    hidden = len(module.functions) - len(shown)
    if hidden:
        lines.append(f"… {hidden} more, narrow with a query")
    return SearchResult(functions=shown, text="\n".join(lines))


def _no_hits(index: SearchIndex, query: str, module: str | None) -> SearchResult:
    where = f" in module {module!r}" if module is not None else ""
    closest = index.closest_modules(query)
    lines = [f"No function{where} matches {query!r}. Closest modules (give one as module to list its functions):"]
    lines.extend(map(module_line, closest))
    lines.append("Or search again with other words for the task.")
    return SearchResult(modules=closest, text="\n".join(lines))
