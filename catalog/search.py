"""Search: rank a catalog's functions for a task in free text, and list modules and their functions.

Ranking is BM25F over the fields of each function (names, summary, path, args, terms, description) with light
stemming and a synonym table of API vocabulary (`_search_vocabulary`), then adjusted by how much of the function's
name the query covers and by whether the function reads or writes as the query's verbs ask. It is deterministic:
equal scores are ordered by function name.
"""

from __future__ import annotations

import difflib
import heapq
import math
import threading
import weakref
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from catalog._search_query import Query, parse_query
from catalog._search_text import stem, tokens
from catalog._search_vocabulary import VERBS, Intent
from catalog.errors import UnknownNameError
from catalog.model import Catalog, Function, Module
from catalog.render import function_line, module_line

__all__ = ["MODULE_LISTING_CAP", "SearchIndex", "SearchResult", "search"]

#: How many functions a module listing shows before asking for a query.
MODULE_LISTING_CAP: Final = 100


@dataclass(frozen=True)
class _Field:
    weight: float
    #: BM25 length normalization: 0 ignores the field's length, 1 divides by it fully.
    b: float


_FIELDS: Final[dict[str, _Field]] = {
    "name": _Field(3.0, 0.3),
    "module": _Field(2.0, 0.3),
    "summary": _Field(3.0, 0.5),
    "path": _Field(1.0, 0.5),
    "args": _Field(0.4, 0.75),
    "terms": _Field(0.8, 0.75),
    "description": _Field(0.6, 0.75),
    "context": _Field(0.2, 0.75),
}
_K1: Final = 1.2
#: How much of a function's score depends on the share of its name (and, half as much, summary) the query covers.
_COVERAGE: Final = 0.65
#: Factor for a function whose leading verb the query says (`merge` for pulls.merge); half of it for a synonym.
_LEADING_VERB: Final = 1.2
#: Factor for a function whose module names the thing the query says (`issues.*` for "create a ticket").
_RESOURCE: Final = 1.15
#: Added to the idf of a function's name and summary words when weighing how much of them a query covers.
_CORE_IDF_FLOOR: Final = 0.5
#: Factor for reads when the query has no verb at all ("customer details").
_READ_BY_DEFAULT: Final = 1.15
_DESCRIPTION_CHARS: Final = 400
#: The term frequency at which a function counts fully in a word's document frequency (a summary mention).
_SOFT_DF: Final = 3.0
_ACTIONS: Final[tuple[Intent, ...]] = ("list", "read", "create", "update", "delete", "write")
_HTTP_METHODS: Final = frozenset({"get", "post", "put", "patch", "delete", "head", "options"})
_CREATE_VERBS: Final = frozenset({"creat", "add", "new", "insert", "register", "post"})
_UPDATE_VERBS: Final = frozenset({"updat", "edit", "modify", "set", "chang", "renam", "replac", "put", "patch"})
_DELETE_VERBS: Final = frozenset({"delet", "remov", "destroy"})
_READ_VERBS: Final = frozenset({"get", "list", "fetch", "retriev", "read", "search", "find"})

#: Score factor by the intent of the query (rows) and what a function does (columns).
_INTENT_FIT: Final[dict[Intent, dict[Intent, float]]] = {
    "list": {"list": 1.3, "read": 1.15, "create": 0.8, "update": 0.8, "delete": 0.75, "write": 0.8},
    "read": {"list": 1.15, "read": 1.25, "create": 0.8, "update": 0.8, "delete": 0.75, "write": 0.8},
    "create": {"list": 0.8, "read": 0.8, "create": 1.25, "update": 1.0, "delete": 0.7, "write": 1.05},
    "update": {"list": 0.8, "read": 0.8, "create": 0.95, "update": 1.25, "delete": 0.7, "write": 1.05},
    "delete": {"list": 0.75, "read": 0.75, "create": 0.8, "update": 0.9, "delete": 1.3, "write": 1.0},
    "write": {"list": 0.8, "read": 0.8, "create": 1.05, "update": 1.05, "delete": 0.9, "write": 1.2},
}


@dataclass(frozen=True, kw_only=True)
class SearchResult:
    """What a search found and the text the agent reads.

    `functions` are the ranked hits (or a module's functions when listing one), `modules` the modules of a
    listing without query or the closest modules when nothing matched; `text` is never empty.
    """

    functions: tuple[Function, ...] = ()
    modules: tuple[Module, ...] = ()
    text: str


class _Index:
    """The inverted index: for each stem, its BM25F term frequency in each function that has it."""

    def __init__(self, catalog: Catalog) -> None:
        self.functions: tuple[Function, ...] = catalog.functions()
        fields_by_function = _fields(catalog, self.functions)
        count = len(self.functions)
        average = {
            name: (sum(len(fields.get(name, ())) for fields in fields_by_function) / count if count else 0.0) or 1.0
            for name in _FIELDS
        }
        self.postings: dict[str, dict[int, float]] = defaultdict(dict)
        spread: dict[str, float] = defaultdict(float)
        for position, fields in enumerate(fields_by_function):
            weighted: dict[str, float] = {}
            for name, spec in _FIELDS.items():
                found = fields[name]
                if found:
                    norm = spec.weight / (1.0 - spec.b + spec.b * len(found) / average[name])
                    for word in found:
                        weighted[word] = weighted.get(word, 0.0) + norm
            for word, frequency in weighted.items():
                self.postings[word][position] = frequency
                spread[word] += min(1.0, frequency / _SOFT_DF)
        self.count = count
        self.idf = {word: _idf(frequency, count) for word, frequency in spread.items()}
        #: The words that say what each function is (name and module fully, summary half), weighted by idf.
        self.core: tuple[tuple[tuple[tuple[str, float], ...], float], ...] = tuple(
            self._core(fields) for fields in fields_by_function
        )
        self.leading: tuple[str, ...] = tuple(_leading_verb(fields["own_name"]) for fields in fields_by_function)
        #: The thing each function's module is about: the last word of its name (`issue_comments` → comment).
        self.resources: tuple[str, ...] = tuple(
            fields["module"][-1] if fields["module"] else "" for fields in fields_by_function
        )
        self.actions: tuple[Intent, ...] = tuple(
            _action(function, leading) for function, leading in zip(self.functions, self.leading, strict=True)
        )
        self.modules: tuple[Module, ...] = catalog.modules
        self.module_words: tuple[frozenset[str], ...] = tuple(
            frozenset(tokens(module.name) + tokens(_first_sentence(module.description))) for module in catalog.modules
        )

    def _core(self, fields: dict[str, list[str]]) -> tuple[tuple[tuple[str, float], ...], float]:
        shares = dict.fromkeys(fields["summary"], 0.5)
        shares.update(dict.fromkeys(fields["own_name"] + fields["module"], 1.0))
        # Even a word every function has ("account" in Twilio's) says what a function is, a little.
        weighted = tuple(
            (word, share * (self.idf[word] + _CORE_IDF_FLOOR)) for word, share in shares.items() if word in self.idf
        )
        return weighted, sum(weight for _, weight in weighted)

    def score(self, query: Query, module: str | None, limit: int | None) -> list[tuple[Function, float]]:
        """The best `limit` functions for `query` (all when None) with their scores, best first, ties by name."""
        totals: dict[int, float] = defaultdict(float)
        matched: dict[int, float] = defaultdict(float)
        # Concepts no function has cannot tell functions apart: they do not count against coverage.
        said = 0.0
        for concept in query.concepts:
            best: dict[int, float] = {}
            strongest: dict[int, float] = {}
            for word, weight in concept.variants.items():
                for position, frequency in self.postings.get(word, {}).items():
                    value = weight * frequency / (_K1 + frequency)
                    if value > best.get(position, 0.0):
                        best[position] = value
                    if frequency > strongest.get(position, 0.0):
                        strongest[position] = frequency
            # A word in every path ("accounts" in Twilio's) tells functions apart by where else it is: the
            # document frequency counts a function fully only where the word weighs like a summary word.
            frequency = sum(min(1.0, value / _SOFT_DF) for value in strongest.values())
            if not frequency:
                continue
            idf = concept.weight * _idf(frequency, self.count)
            if not any(word in self.postings for word, weight in concept.variants.items() if weight >= 1.0):
                # The query's word is not this API's ("ticket" where the API says "issue"): its synonyms are the
                # words for it here, as good as said.
                idf /= max(weight for weight in concept.variants.values() if weight < 1.0)
            said += concept.weight
            for position, value in best.items():
                totals[position] += idf * value
                matched[position] += concept.weight
        if query.intents:
            fit = {action: max(_INTENT_FIT[intent][action] for intent in query.intents) for action in _ACTIONS}
        elif not query.verbs:
            fit = {action: _READ_BY_DEFAULT if action in ("list", "read") else 1.0 for action in _ACTIONS}
        else:
            fit = dict.fromkeys(_ACTIONS, 1.0)
        stems = query.stems
        variants = query.variants
        candidates = sorted(
            (total * math.sqrt(matched[position] / said), position)
            for position, total in totals.items()
            if module is None or self.functions[position].module == module
        )
        # Adjustments never raise a score by more than this, so once the best possible of the rest is below the
        # `limit`-th score so far, the ranking is settled.
        ceiling = max(fit.values()) * _LEADING_VERB * _RESOURCE
        ranked: list[tuple[float, str, int]] = []
        kept: list[float] = []
        while candidates:
            base, position = candidates.pop()
            if limit is not None and len(kept) >= limit and base * ceiling < kept[0]:
                break
            score = base * fit[self.actions[position]]
            core, whole = self.core[position]
            if whole:
                covered = sum(share * variants.get(word, 0.0) for word, share in core)
                score *= 1.0 - _COVERAGE + _COVERAGE * covered / whole
            leading = self.leading[position]
            if leading in query.main_verbs:
                score *= _LEADING_VERB
            elif leading in variants:
                score *= 1.0 + (_LEADING_VERB - 1.0) / 2
            resource = self.resources[position]
            if resource in stems:
                score *= _RESOURCE
            elif resource in variants:
                score *= 1.0 + (_RESOURCE - 1.0) / 2
            score = round(score, 9)
            ranked.append((-score, self.functions[position].name, position))
            if limit is not None:
                if len(kept) < limit:
                    heapq.heappush(kept, score)
                elif score > kept[0]:
                    heapq.heapreplace(kept, score)
        ranked.sort()
        return [(self.functions[position], -score) for score, _, position in ranked[:limit]]


class SearchIndex:
    """Ranks the functions of one catalog for free-text tasks; the index is built on first use, once."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._index: _Index | None = None
        self._lock = threading.Lock()

    @classmethod
    def of(cls, catalog: Catalog) -> SearchIndex:
        """The index of `catalog`, shared by every search on it while the catalog lives."""
        with _INDEXES_LOCK:
            index = _INDEXES.get(catalog)
            if index is None:
                index = _INDEXES[catalog] = cls(catalog)
            return index

    def build(self) -> None:
        """Build the index now rather than on the first search."""
        self._built()

    def _built(self) -> _Index:
        if self._index is None:
            with self._lock:
                if self._index is None:
                    self._index = _Index(self.catalog)
        return self._index

    def scored(self, query: str, *, module: str | None = None) -> list[tuple[Function, float]]:
        """Every function matching `query` (within `module` when given) with its score, best first, ties by name."""
        return self._built().score(parse_query(query), module, None)

    def rank(self, query: str, *, module: str | None = None, limit: int = 10) -> tuple[Function, ...]:
        """The `limit` functions that best match `query`, best first."""
        return tuple(function for function, _ in self._built().score(parse_query(query), module, limit))

    def closest_modules(self, query: str, *, limit: int = 5) -> tuple[Module, ...]:
        """Modules whose names or descriptions share words with `query`; else similar names; else the largest."""
        index = self._built()
        concepts = parse_query(query).concepts
        overlap = [
            (sum(1 for concept in concepts if words.intersection(concept.variants)), module)
            for module, words in zip(index.modules, index.module_words, strict=True)
        ]
        found = [module for hits, module in sorted(overlap, key=lambda pair: (-pair[0], pair[1].name)) if hits]
        if not found:
            names = {module.name: module for module in index.modules}
            close: list[str] = []
            for word in query.lower().split():
                close.extend(difflib.get_close_matches(word, list(names), n=limit, cutoff=0.6))
            found = [names[name] for name in dict.fromkeys(close)]
        if not found:
            found = sorted(index.modules, key=lambda module: (-len(module.functions), module.name))
        return tuple(found[:limit])


_INDEXES: weakref.WeakKeyDictionary[Catalog, SearchIndex] = weakref.WeakKeyDictionary()
_INDEXES_LOCK = threading.Lock()


def search(catalog: Catalog, query: str | None = None, *, module: str | None = None, limit: int = 10) -> SearchResult:
    """Find functions for a task, list one module's functions, or list the modules.

    With a query (optionally within `module`): the `limit` best functions, one `function_line` each. With only a
    module: its functions (up to MODULE_LISTING_CAP, then a line saying how many more). With neither: every module
    with its function count and description, after a hint on searching. A blank query counts as none. An unknown
    module raises UnknownNameError with the closest names; `limit` below 1 raises ValueError. When nothing
    matches, the text names the closest modules: it is never empty.
    """
    if limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit!r}")
    if module is not None:
        _check_module(catalog, module)
    text = (query or "").strip()
    if not text:
        if module is not None:
            return _module_listing(catalog.module(module))
        return _catalog_listing(catalog)
    index = SearchIndex.of(catalog)
    hits = index.rank(text, module=module, limit=limit)
    if hits:
        return SearchResult(functions=hits, text="\n".join(function_line(function) for function in hits))
    return _no_hits(index, text, module)


def _check_module(catalog: Catalog, module: str) -> None:
    try:
        catalog.module(module)
    except UnknownNameError as error:
        hint = f"; closest: {', '.join(error.suggestions)}" if error.suggestions else ""
        raise UnknownNameError(
            f"no module named {module!r}{hint}; search without a query and module to list them all",
            name=module,
            suggestions=error.suggestions,
        ) from None


def _catalog_listing(catalog: Catalog) -> SearchResult:
    count = sum(len(module.functions) for module in catalog.modules)
    hint = (
        f"{len(catalog.modules)} modules, {count} functions. Search with a task in words "
        "(e.g. 'refund a charge'), or give a module name to list its functions."
    )
    lines = [module_line(module) for module in catalog.modules]
    return SearchResult(modules=catalog.modules, text="\n".join([hint, *lines]))


def _module_listing(module: Module) -> SearchResult:
    shown = module.functions[:MODULE_LISTING_CAP]
    lines = [module_line(module), *(function_line(function) for function in shown)]
    hidden = len(module.functions) - len(shown)
    if hidden:
        lines.append(f"… {hidden} more, narrow with a query")
    return SearchResult(functions=shown, text="\n".join(lines))


def _no_hits(index: SearchIndex, query: str, module: str | None) -> SearchResult:
    where = f" in module {module!r}" if module is not None else ""
    closest = index.closest_modules(query)
    lines = [f"No function{where} matches {query!r}. Closest modules (give one as module to list its functions):"]
    lines.extend(module_line(found) for found in closest)
    lines.append("Or try other words for the task.")
    return SearchResult(modules=closest, text="\n".join(lines))


def _idf(frequency: float, count: int) -> float:
    return math.log(1.0 + (count - frequency + 0.5) / (frequency + 0.5))


def _leading_verb(name_words: list[str]) -> str:
    """The verb a function name starts with, after an HTTP method (`post_customers_customer_cancel`), or ""."""
    for word in name_words[:2]:
        if word in VERBS:
            return word
    if name_words and name_words[0] in _HTTP_METHODS and name_words[-1] in VERBS:
        return name_words[-1]
    return ""


def _action(function: Function, leading: str) -> Intent:
    """What a function does, from the verb its name starts with, else its method and path."""
    if function.read_only:
        last_is_param = function.path.rstrip("/").endswith("}")
        return "read" if last_is_param and leading != "list" else "list"
    if function.destructive:
        return "delete"
    for verbs, action in (
        (_CREATE_VERBS, "create"),
        (_UPDATE_VERBS, "update"),
        (_DELETE_VERBS, "delete"),
        (_READ_VERBS, "read"),
    ):
        if leading in verbs:
            return action  # type: ignore[return-value]
    if leading:
        return "write"
    segments = [segment for segment in function.path.split("/") if segment]
    if function.method == "POST":
        if not segments or segments[-1].startswith("{"):
            return "update"
        if any(segment.startswith("{") for segment in segments) and stem(segments[-1].lower()) in VERBS:
            # `POST /invoices/{invoice}/pay`: an action on one thing, not a new member of a collection.
            return "write"
        return "create"
    if function.method in ("PUT", "PATCH"):
        return "update"
    return "write"


def _with_verb(function: Function, name: list[str]) -> list[str]:
    """The words of a function name, with a verb in place of a leading `post`, `put` or `patch`.

    Names made of the method and the path (`post_customers`, `get_customers`) say little of the action: a write
    method becomes the verb its method and path imply, and `get` of a collection gains `list`.
    """
    if len(name) < 2 or name[0] not in _HTTP_METHODS:
        return name
    action = _action(function, "")
    if name[0] == "get":
        return [*name, "list"] if action == "list" else name
    if name[0] in ("post", "put", "patch"):
        verb = {"create": "creat", "update": "updat", "delete": "delet"}.get(action)
        return [verb, *name[1:]] if verb else name[1:]
    return name


def _fields(catalog: Catalog, functions: Sequence[Function]) -> list[dict[str, list[str]]]:
    term_words: dict[str, list[str]] = {}
    term_context: dict[str, list[str]] = {}
    uses: dict[str, list[str]] = defaultdict(list)
    for term in catalog.terms:
        term_words[term.name] = tokens(" ".join((term.name, *term.aliases)))
        term_context[term.name] = tokens(_first_sentence(term.description))
        for name in (*term.accepted_by, *term.returned_by):
            uses[name].append(term.name)
    module_context = {module.name: tokens(_first_sentence(module.description)) for module in catalog.modules}
    found: list[dict[str, list[str]]] = []
    for function in functions:
        own_name = _with_verb(function, tokens(function.function_name))
        names = list(dict.fromkeys([*uses.get(function.name, ()), *_named(function.returns, function.body_term)]))
        found.append(
            {
                "own_name": own_name,
                "name": own_name,
                "module": tokens(function.module),
                "summary": [] if _is_route(function.summary, function) else tokens(function.summary),
                "path": tokens(function.path),
                "args": tokens(" ".join(arg.name for arg in function.args))
                + tokens(" ".join(arg.description[:200] for arg in function.args if arg.location == "path")),
                "terms": _flatten(term_words.get(name, tokens(name)) for name in names),
                "description": tokens(function.description[:_DESCRIPTION_CHARS]),
                "context": module_context.get(function.module, [])
                + _flatten(term_context.get(name, []) for name in names),
            }
        )
    return found


def _is_route(summary: str, function: Function) -> bool:
    """True for the summary the builder makes up from the route when the document gives none."""
    return summary == f"{function.method} {function.path}"


def _named(*names: str | None) -> list[str]:
    return [name for name in names if name]


def _flatten(lists: Iterable[list[str]]) -> list[str]:
    return [word for words in lists for word in words]


def _first_sentence(text: str) -> str:
    line = text.strip().split("\n", 1)[0]
    end = line.find(". ")
    return line[: end + 1] if end > 0 else line
