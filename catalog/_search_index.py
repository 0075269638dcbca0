"""The function index behind search: BM25F over each function's fields, then adjustments for what the query wants.

Each function is indexed by the words of its name, module, summary, path, args (names, enum values, path-arg
descriptions), the terms it takes and returns, its description, context (module and term descriptions) and the
property names of its answer (a field that adds to a match but not to any word's document frequency). A
query's concepts score by BM25F with one idf per concept (its words and synonyms together); the sum is then
adjusted by how much of the function's name the query covers, whether the function reads or writes as the query
asks, whether its name starts with the query's verb, whether its module and its target (the thing its path ends
at) are what the query is about rather than its context, whether it sets what the query names, whether it acts on
many things when the query does, and whether it is deprecated. The API's own name in a query counts for nothing;
a noun the API does not use counts as the API's words for it in the thesaurus.
Another route to a call ranked higher (`/v1/chat` after `/chat`) comes after every different call.
"""

from __future__ import annotations

import dataclasses
import functools
import heapq
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final, TypeVar

from catalog._search_query import Concept, Query
from catalog._search_text import STOPWORDS, name_tokens, stem, tokens, words
from catalog._search_vocabulary import INTENTS, VERBS, Intent, expand
from catalog.model import Catalog, Function, Module, Term

__all__ = ["FunctionIndex", "first_sentence", "result_words"]

_Item = TypeVar("_Item")


@dataclass(frozen=True)
class _Field:
    weight: float
    #: BM25 length normalization: 0 ignores the field's length, 1 divides by it fully.
    b: float
    #: Whether the field's words count in a word's document frequency; an extra field (what a function answers)
    #: only adds to a match, and leaves the weight of every word, and which words are the API's own, as they were.
    counts: bool = True


_FIELDS: Final[dict[str, _Field]] = {
    "name": _Field(3.0, 0.3),
    "module": _Field(2.0, 0.3),
    "summary": _Field(3.0, 0.5),
    "path": _Field(1.0, 0.5),
    "args": _Field(0.4, 0.75),
    "terms": _Field(0.8, 0.75),
    "description": _Field(0.6, 0.75),
    "context": _Field(0.2, 0.75),
    "result": _Field(0.5, 0.75, counts=False),
}
_K1: Final = 1.2
#: The least idf a concept has.
_IDF_FLOOR: Final = 0.5
#: Concepts weighing less than this (context, implied, descriptive words) do not count in the coordination factor.
_MAIN_WEIGHT: Final = 0.55
#: How much of a function's score depends on the share of its name (and, half as much, summary) the query covers.
_COVERAGE: Final = 0.65
#: Factor for a function whose leading verb the query says (`merge` for pulls.merge); half of it for a synonym.
_LEADING_VERB: Final = 1.1
#: Factor for a function whose module names the thing the query says (`issues.*` for "create a ticket").
_RESOURCE: Final = 1.35
#: Factor for a function whose target (the thing its path ends at) is what the query is about.
_TARGET: Final = 1.1
#: Factor for a function whose target is only what the query names as context ("incidents on a service").
_TARGET_IS_CONTEXT: Final = 0.8
#: Path words that say a format, not a thing.
_FORMATS: Final = frozenset({"json", "xml", "csv", "yaml", "html", "txt"})
#: Factor for a function that acts on many things at once when the query asks for that ("resolve all incidents").
_BULK: Final = 1.2
#: Factor for a function that acts on many things at once when the query acts on one ("close an issue").
_BULK_FOR_ONE: Final = 0.9
#: Stems of function-name words that say it acts on many things.
_BULK_NAMES: Final = frozenset({"bulk", "batch", "multiple", "many", "mass"})
#: Factor for a deprecated function: still found, after its replacement.
_DEPRECATED: Final = 0.9
#: A query word the API uses in fewer functions than this (as a main word) is foreign to it: the thesaurus's words
#: for it that the API does use stand in, at this weight.
_FOREIGN_SPREAD: Final = 1.0
_THESAURUS_WEIGHT: Final = 0.6
#: Factor for a write whose args or arg values the query names ("make a repository private").
_SETS_ARG: Final = 1.15
#: Further factor for a write with an arg whose every word the query names ("change the default branch").
_SETS_ARG_PHRASE: Final = 1.3
#: Added to the idf of a function's name and summary words when weighing how much of them a query covers.
_CORE_IDF_FLOOR: Final = 1.0
#: Factor for reads when the query has no verb at all ("customer details").
_READ_BY_DEFAULT: Final = 1.15
_DESCRIPTION_CHARS: Final = 800
#: Enums with more values than this are lists of codes (currencies, countries), not states a call sets.
_MAX_CHOICES: Final = 16
#: How deep the fields of a body's named terms are looked for (a choice of terms, each extending another).
_TERM_DEPTH: Final = 3
_TERM_REF: Final = "#/components/schemas/"
#: How many levels of the answer's properties are indexed (`quota.remaining` is two).
_RESULT_DEPTH: Final = 2
#: A word of the answers of more than this share of the functions (or of `_RESULT_SPREAD_FLOOR`) is not indexed.
_RESULT_SPREAD: Final = 0.03
_RESULT_SPREAD_FLOOR: Final = 3
#: At most this many property names of an answer are indexed (GitHub's repository has 90 at the first level).
_RESULT_NAMES: Final = 120
#: The term frequency at which a function counts fully in a word's document frequency (a summary mention).
_SOFT_DF: Final = 3.0
_ACTIONS: Final[tuple[Intent, ...]] = ("list", "read", "create", "update", "delete", "write")
#: The intents of a query that sets things, where the args a function takes can match.
_WRITES: Final[frozenset[Intent]] = frozenset({"create", "update", "write"})
_PARAM: Final = re.compile(r"\{[^}]*\}")
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


class FunctionIndex:
    """The inverted index of a catalog's functions: for each stem, its BM25F term frequency in each function."""

    def __init__(self, catalog: Catalog) -> None:
        self.functions: tuple[Function, ...] = catalog.functions()
        fields_by_function = _fields(catalog, self.functions)
        count = len(self.functions)
        average = {
            name: (sum(len(fields.get(name, ())) for fields in fields_by_function) / count if count else 0.0) or 1.0
            for name in _FIELDS
        }
        #: For each word, the saturated BM25F term frequency tf / (k1 + tf) in each function that has it.
        self.saturated: dict[str, dict[int, float]] = defaultdict(dict)
        spread: dict[str, float] = defaultdict(float)
        specs = [(name, spec.weight, spec.b, average[name]) for name, spec in _FIELDS.items() if spec.counts]
        extras = [(name, spec.weight, spec.b, average[name]) for name, spec in _FIELDS.items() if not spec.counts]
        for position, fields in enumerate(fields_by_function):
            weighted = _weighted(fields, specs)
            for word, frequency in weighted.items():
                # A word in every path ("accounts" in Twilio's) tells functions apart by where else it is: the
                # document frequency counts a function fully only where the word weighs like a summary word.
                spread[word] += 1.0 if frequency >= _SOFT_DF else frequency / _SOFT_DF
            for word, extra in _weighted(fields, extras).items():
                weighted[word] = weighted.get(word, 0.0) + extra
            for word, frequency in weighted.items():
                self.saturated[word][position] = frequency / (_K1 + frequency)
        self.count = count
        #: For each word, how many functions it is a main word of (a summary-level mention counts one).
        self.spread: dict[str, float] = dict(spread)
        self.idf = {word: _idf(frequency, count) for word, frequency in spread.items()}
        #: The words that say what each function is (name and module fully, summary half), weighted by idf.
        self.core: tuple[tuple[tuple[tuple[str, float], ...], float], ...] = tuple(
            self._core(fields) for fields in fields_by_function
        )
        self.leading: tuple[str, ...] = tuple(_leading_verb(fields["name"]) for fields in fields_by_function)
        #: The thing each function's module is about: the last word of its name (`issue_comments` → comment).
        self.resources: tuple[str, ...] = tuple(
            fields["module"][-1] if fields["module"] else "" for fields in fields_by_function
        )
        #: The thing each function's path ends at: `/pulls/{n}/reviews` → review; `/pulls/{n}/merge` → pull.
        self.targets: tuple[frozenset[str], ...] = tuple(_target(function.path) for function in self.functions)
        #: Whether each function acts on many things at once: so named, or a write to a whole collection.
        self.bulk: tuple[bool, ...] = tuple(
            _is_bulk(function, fields["name"])
            for function, fields in zip(self.functions, fields_by_function, strict=True)
        )
        #: The stems of the body args of each function, arg by arg (`default_branch` → default, branch).
        self.arg_phrases: tuple[tuple[frozenset[str], ...], ...] = tuple(
            tuple(
                frozenset(name_tokens(arg.name))
                for arg in function.args
                if arg.location == "body" and ("_" in arg.name or not arg.name.islower())
            )
            for function in self.functions
        )
        #: The stems of the args each function takes and the values its enums allow.
        self.settable: tuple[frozenset[str], ...] = tuple(
            frozenset(fields["settable"]) for fields in fields_by_function
        )
        self.actions: tuple[Intent, ...] = tuple(
            _action(function, leading) for function, leading in zip(self.functions, self.leading, strict=True)
        )
        #: What makes each function the same call as another at another route (`/v1/chat` and `/chat`), or None.
        self.routes: tuple[tuple[str, ...] | None, ...] = tuple(_route_key(function) for function in self.functions)
        self._route_of = {id(function): key for function, key in zip(self.functions, self.routes, strict=True)}
        #: The stem of the API's own name ("zoom" for the Zoom API): in a query it names the API, not a function.
        self.brand: frozenset[str] = _brand(catalog.title)
        self.modules: tuple[Module, ...] = catalog.modules
        self.module_words: tuple[frozenset[str], ...] = tuple(
            frozenset(tokens(module.name) + tokens(first_sentence(module.description))) for module in catalog.modules
        )

    def _core(self, fields: dict[str, list[str]]) -> tuple[tuple[tuple[str, float], ...], float]:
        shares = dict.fromkeys(fields["summary"], 0.5)
        shares.update(dict.fromkeys(fields["name"] + fields["module"], 1.0))
        # Even a word every function has ("account" in Twilio's) says what a function is, a little.
        weighted = tuple(
            (word, share * (self.idf[word] + _CORE_IDF_FLOOR)) for word, share in shares.items() if word in self.idf
        )
        return weighted, sum(weight for _, weight in weighted)

    def score(self, query: Query, module: str | None, limit: int | None) -> list[tuple[Function, float]]:
        """The best `limit` functions for `query` (all when None) within `module` (any when None), with scores.

        Best first; equal scores (to 9 decimals) in name order, so the ranking is the same on every run. A function
        that is another route to one ranked above it (same module, method, summary and resource: `/v1/chat` and
        `/chat`) comes after every function that is not, so the first hits are all different calls.
        """
        query = self._translated(self._unbranded(query))
        fetch = None if limit is None else 2 * limit + 5
        ranked = self._ranked(query, module, fetch)
        distinct, routes = self._distinct(ranked)
        if limit is not None and len(distinct) < limit and len(ranked) == fetch:
            distinct, routes = self._distinct(self._ranked(query, module, None))
        return (distinct + routes)[:limit]

    def routes_last(self, functions: Sequence[Function]) -> list[Function]:
        """`functions` in their order, but a function that is another route to one before it comes after every
        function that is not (the rule of `score`, kept by an order made elsewhere: the semantic reranking)."""
        distinct, routes = _routes_apart(functions, [self._route_of.get(id(function)) for function in functions])
        return distinct + routes

    def _distinct(self, ranked: list[tuple[int, float]]) -> tuple[list[tuple[Function, float]], ...]:
        """`ranked` split into the first function of each call and the other routes to the same calls."""
        hits = [(self.functions[position], score) for position, score in ranked]
        return _routes_apart(hits, [self.routes[position] for position, _ in ranked])

    def _ranked(self, query: Query, module: str | None, limit: int | None) -> list[tuple[int, float]]:
        """The positions of the best `limit` functions (all when None) with their scores, best first."""
        fit = _fit(query)
        # The adjustments never raise a score by more than this, so once the best the rest could reach is below
        # the `limit`-th score so far, the ranking is settled.
        ceiling = _LEADING_VERB * _RESOURCE * _TARGET
        if query.bulk:
            ceiling *= _BULK
        if not query.intents.isdisjoint(_WRITES):
            ceiling *= _SETS_ARG * _SETS_ARG_PHRASE
        candidates = sorted(
            (base * fit[self.actions[position]], position)
            for position, base in self._matches(query).items()
            if module is None or self.functions[position].module == module
        )
        ranked: list[tuple[float, str, int]] = []
        kept: list[float] = []
        while candidates:
            fitted, position = candidates.pop()
            if limit is not None and len(kept) >= limit and fitted * ceiling < kept[0]:
                break
            score = round(fitted * self._adjustment(query, position), 9)
            ranked.append((-score, self.functions[position].name, position))
            if limit is not None:
                if len(kept) < limit:
                    heapq.heappush(kept, score)
                elif score > kept[0]:
                    heapq.heapreplace(kept, score)
        ranked.sort()
        return [(position, -score) for score, _, position in ranked[:limit]]

    def _unbranded(self, query: Query) -> Query:
        """The query without the API's own name ("schedule a zoom call"), unless that is all it says."""
        if not self.brand or not self.brand <= query.stems:
            return query
        kept = tuple(concept for concept in query.concepts if self.brand.isdisjoint(concept.variants))
        if not kept:
            return query
        variants = {word: weight for word, weight in query.variants.items() if word not in self.brand}
        return dataclasses.replace(query, concepts=kept, variants=variants)

    def _translated(self, query: Query) -> Query:
        """The query with the API's words for the words it says that the API does not use ("server" → droplet)."""
        if not query.related:
            return query
        concepts: list[Concept] = []
        variants = dict(query.variants)
        for concept in query.concepts:
            if any(self.spread.get(word, 0.0) >= _FOREIGN_SPREAD for word in concept.variants):
                # The API says the concept in words of its own, or in the vocabulary's synonyms of them.
                concepts.append(concept)
                continue
            added: dict[str, float] = {}
            for word, weight in concept.variants.items():
                if weight < 1.0:
                    continue
                for api_word in sorted(query.related.get(word, ())):
                    if api_word in self.saturated and api_word not in concept.variants:
                        added[api_word] = _THESAURUS_WEIGHT
            if added:
                concept = dataclasses.replace(concept, variants={**concept.variants, **added})
                for api_word, weight in added.items():
                    variants[api_word] = max(weight, variants.get(api_word, 0.0))
            concepts.append(concept)
        return dataclasses.replace(query, concepts=tuple(concepts), variants=variants)

    def _matches(self, query: Query) -> dict[int, float]:
        """BM25F score of each function that matches a concept, times the share of the query it matches."""
        totals: dict[int, float] = defaultdict(float)
        matched: dict[int, float] = defaultdict(float)
        said = 0.0
        for concept in query.concepts:
            # The best match per function among the concept's words (said, weight 1) and synonyms (less).
            said_words = [word for word, weight in concept.variants.items() if weight >= 1.0 and word in self.saturated]
            best: dict[int, float] = dict(self.saturated[said_words[0]]) if said_words else {}
            for word, weight in concept.variants.items():
                if said_words and word == said_words[0]:
                    continue
                for position, saturated in self.saturated.get(word, {}).items():
                    value = weight * saturated
                    if value > best.get(position, 0.0):
                        best[position] = value
            if not best:
                continue  # no function has it: it cannot tell them apart, nor count against any
            # One document frequency for the concept, its words and synonyms together (an upper bound of it).
            frequency = min(float(self.count), sum(self.spread.get(word, 0.0) for word in concept.variants))
            idf = concept.weight * max(_idf(frequency, self.count), _IDF_FLOOR)
            synonyms = [weight for weight in concept.variants.values() if weight < 1.0]
            said_here = sum(self.spread.get(word, 0.0) for word, weight in concept.variants.items() if weight >= 1.0)
            if synonyms and said_here < 1.0:
                # The query's word is not this API's ("ticket" where it says "issue"): the synonyms are its words.
                idf /= max(synonyms)
            # Context ("in a project", "from my branch") adds where it matches; only the rest must be there.
            main = concept.weight if concept.weight >= _MAIN_WEIGHT else 0.0
            said += main
            for position, value in best.items():
                totals[position] += idf * value
                matched[position] += main
        return {
            position: total * math.sqrt(matched[position] / said if said else 1.0) for position, total in totals.items()
        }

    def _adjustment(self, query: Query, position: int) -> float:
        """How much the function at `position` fits the query beyond its words: coverage, verb, resource, args."""
        factor = 1.0
        core, whole = self.core[position]
        if whole:
            covered = sum(share * query.variants.get(word, 0.0) for word, share in core)
            factor *= 1.0 - _COVERAGE + _COVERAGE * covered / whole
        leading = self.leading[position]
        if leading in query.main_verbs:
            factor *= _LEADING_VERB
        elif leading in query.variants:
            factor *= 1.0 + (_LEADING_VERB - 1.0) / 2
        if not query.intents.isdisjoint(_WRITES) and not query.focus.isdisjoint(self.settable[position]):
            # "make a repository private", "change the due date": the query names what the call sets.
            factor *= _SETS_ARG
            if any(len(phrase) > 1 and phrase <= query.focus for phrase in self.arg_phrases[position]):
                # "change the default branch": all the words of an arg (`default_branch`), the call's very setting.
                factor *= _SETS_ARG_PHRASE
        if self.functions[position].deprecated:
            factor *= _DEPRECATED
        if self.bulk[position]:
            factor *= _BULK if query.bulk else _BULK_FOR_ONE
        target = self.targets[position]
        if target:
            if not target.isdisjoint(query.focus):
                factor *= _TARGET
            elif not target.isdisjoint(query.context):
                factor *= _TARGET_IS_CONTEXT
        resource = self.resources[position]
        if resource in query.stems:
            factor *= _RESOURCE
        elif resource in query.variants:
            factor *= 1.0 + (_RESOURCE - 1.0) / 2
        return factor


def _weighted(fields: dict[str, list[str]], specs: Sequence[tuple[str, float, float, float]]) -> dict[str, float]:
    """Each word's BM25F term frequency over the fields `specs` name (field, weight, b, mean length)."""
    weighted: dict[str, float] = {}
    add = weighted.get
    for name, weight, b, mean in specs:
        found = fields[name]
        if found:
            norm = weight / (1.0 - b + b * len(found) / mean)
            for word in found:
                weighted[word] = add(word, 0.0) + norm
    return weighted


def _routes_apart(items: Sequence[_Item], keys: Sequence[tuple[str, ...] | None]) -> tuple[list[_Item], list[_Item]]:
    """`items` (with their route keys) split into the first of each call and the other routes to a call before."""
    seen: set[tuple[str, ...]] = set()
    distinct: list[_Item] = []
    routes: list[_Item] = []
    for item, key in zip(items, keys, strict=True):
        if key is not None and key in seen:
            routes.append(item)
        else:
            if key is not None:
                seen.add(key)
            distinct.append(item)
    return distinct, routes


def _route_key(function: Function) -> tuple[str, ...] | None:
    """Module, method, summary, last named path segment and path args: equal for routes to one call (`/v1/chat`
    and `/chat`), not for calls on different scopes (`/pods` and `/namespaces/{ns}/pods`); None without summary."""
    if function.is_composite or not function.summary or _is_route(function.summary, function):
        return None
    segments = [segment for segment in function.path.split("/") if segment]
    named = [segment for segment in segments if not segment.startswith("{")]
    params = sorted(segment for segment in segments if segment.startswith("{"))
    return (function.module, function.method, function.summary.strip().lower(), named[-1] if named else "", *params)


def _fit(query: Query) -> dict[Intent, float]:
    """The factor for each kind of function (list, read, create…) given what the query wants."""
    if query.intents:
        return {action: max(_INTENT_FIT[intent][action] for intent in query.intents) for action in _ACTIONS}
    if not query.verbs:
        # No verb at all ("customer details", "who am I"): asking about something reads it.
        return {action: _READ_BY_DEFAULT if action in ("list", "read") else 1.0 for action in _ACTIONS}
    return dict.fromkeys(_ACTIONS, 1.0)


def _idf(frequency: float, count: int) -> float:
    return math.log(1.0 + (count - frequency + 0.5) / (frequency + 0.5))


def _brand(title: str) -> frozenset[str]:
    """The stems of the first name in an API's title (`The Jira Cloud platform REST API` → jira), if uncommon."""
    for word in title.replace("'s ", " ").split():
        if word[:1].isupper() and word.lower() not in STOPWORDS:
            found = frozenset(tokens(word))
            common = any(each in VERBS or each in INTENTS or expand(each) for each in found)
            return frozenset() if common else found
    return frozenset()


def _is_bulk(function: Function, name_words: list[str]) -> bool:
    """True for a function named for many things, or an update or delete of a whole collection (`PUT /incidents`)."""
    if not _BULK_NAMES.isdisjoint(name_words):
        return True
    last = function.path.rstrip("/").rsplit("/", 1)[-1]
    return function.method in ("PUT", "PATCH", "DELETE") and "{" not in last and last.endswith("s")


def _target(path: str) -> frozenset[str]:
    """The stems of the last path segment that names a thing (not a parameter, a format or a verb)."""
    for segment in reversed(path.split("/")):
        found = _things(segment)
        if found:
            return found
    return frozenset()


@lru_cache(maxsize=8192)
def _things(segment: str) -> frozenset[str]:
    """The stems of the words of a path segment that name things: no parameters, formats, or verbs like `merge`."""
    if segment.startswith("{") and segment.endswith("}"):
        return frozenset()
    said = [word for word in words(_PARAM.sub(" ", segment)) if len(word) > 1]
    return frozenset(
        stem(word)
        for word in said
        if stem(word) not in _FORMATS and not (stem(word) in VERBS and not word.endswith(("s", "ed")))
    )


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
    """The stems of each function's fields, in `functions` order; `settable` is not indexed, only matched."""
    terms = {term.name: term for term in catalog.terms}
    uses: dict[str, list[str]] = defaultdict(list)
    for each in catalog.terms:
        for name in (*each.accepted_by, *each.returned_by):
            uses[name].append(each.name)
    term_words: dict[str, list[str]] = {}
    term_context: dict[str, list[str]] = {}
    for name in {name for names in uses.values() for name in names} | {
        name for function in functions for name in _named(function.returns, function.body_term)
    }:
        term = terms.get(name)
        term_words[name] = tokens(" ".join((name, *term.aliases)) if term else name)
        term_context[name] = tokens(first_sentence(term.description)) if term else []
    module_context = {module.name: tokens(first_sentence(module.description)) for module in catalog.modules}
    names_of: dict[tuple[str, int], list[str]] = {}
    results = [result_words(function, terms, names_of) for function in functions]
    # A word in the answers of many functions (`customer`, `capture_method` in Stripe's) tells none apart.
    answered: dict[str, int] = defaultdict(int)
    for words_of in results:
        for word in set(words_of):
            answered[word] += 1
    most = max(_RESULT_SPREAD_FLOOR, _RESULT_SPREAD * len(functions))
    found: list[dict[str, list[str]]] = []
    for function, result in zip(functions, results, strict=True):
        choices = tokens(" ".join(_choices(function, terms)))
        names = list(dict.fromkeys([*uses.get(function.name, ()), *_named(function.returns, function.body_term)]))
        found.append(
            {
                "name": _with_verb(function, name_tokens(function.function_name)),
                "module": name_tokens(function.module),
                "summary": [] if _is_route(function.summary, function) else tokens(function.summary),
                "path": tokens(function.path),
                "args": tokens(" ".join(arg.name for arg in function.args))
                + tokens(" ".join(arg.description[:200] for arg in function.args if arg.location == "path"))
                + choices,
                "settable": tokens(" ".join(arg.name for arg in function.args if arg.location == "body")) + choices,
                "terms": _flatten(term_words[name] for name in names),
                "description": tokens(function.description[:_DESCRIPTION_CHARS]),
                "context": module_context.get(function.module, []) + _flatten(term_context[name] for name in names),
                "result": [word for word in result if answered[word] <= most],
            }
        )
    return found


def result_words(
    function: Function, terms: dict[str, Term], cache: dict[tuple[str, int], list[str]] | None = None
) -> list[str]:
    """The stems of the property names of what `function` answers, a level or two deep ("how much storage is
    left" finds the read whose answer has `quota_remaining`): through named terms, array items and choices.
    `cache` keeps each term's names between calls (one per catalog)."""
    names = _property_names(function.return_schema, terms, _RESULT_DEPTH, {} if cache is None else cache)
    return tokens(" ".join(dict.fromkeys(names[:_RESULT_NAMES])))


def _property_names(
    schema: object, terms: dict[str, Term], depth: int, cache: dict[tuple[str, int], list[str]]
) -> list[str]:
    if not isinstance(schema, dict) or depth <= 0:
        return []
    reference = schema.get("$ref")
    if isinstance(reference, str) and reference.startswith(_TERM_REF):
        key = (reference[len(_TERM_REF) :], depth)
        if key not in cache:
            cache[key] = []  # a term that holds itself adds nothing more
            term = terms.get(key[0])
            if term is not None and term.schema is not None:
                cache[key] = _property_names(term.schema, terms, depth, cache)
        return cache[key]
    found: list[str] = []
    items = schema.get("items")
    if isinstance(items, dict):
        found += _property_names(items, terms, depth, cache)
    for combinator in ("anyOf", "oneOf", "allOf"):
        members = schema.get(combinator)
        if isinstance(members, list):
            for member in members:
                found += _property_names(member, terms, depth, cache)
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for name, value in properties.items():
            if isinstance(name, str):
                found.append(name)
                found += _property_names(value, terms, depth - 1, cache)
    return found[:_RESULT_NAMES]


def _choices(function: Function, terms: dict[str, Term]) -> list[str]:
    """The values of the args' enums (`state: "open" | "closed"`): what a call can set things to.

    An arg that names a term counts with the term's enum (`state: issue_state`); a body that is one arg counts
    with the enums of its fields, through the terms it names or chooses from: the `type` of `droplet_action |
    droplet_action_resize` says which actions the call takes (reboot, shutdown, resize).
    """
    found: list[str] = []
    for arg in function.args:
        # The whole body as one arg counts with its fields; a field of a flattened body with the term it names.
        schemas: list[object] = [arg.schema]
        if arg.location == "body" and arg.name == "body":
            schemas.extend(_fields_of(arg.schema, terms, _TERM_DEPTH))
        elif "$ref" in arg.schema:
            # A field that names a term: the term, and its fields a level down (`state: state_create`, whose `type`
            # says which state: "cancel a flow run" sets it to CANCELLED).
            schemas.extend(_fields_of(arg.schema, terms, 1))
        for schema in map(functools.partial(_enum_term, terms=terms), schemas):
            values = schema.get("enum") if isinstance(schema, dict) else None
            if not values and isinstance(schema, dict) and isinstance(schema.get("items"), dict):
                values = schema["items"].get("enum")
            if isinstance(values, list) and len(values) <= _MAX_CHOICES:
                found.extend(value for value in values if isinstance(value, str) and len(value) <= 40)
    return list(dict.fromkeys(found))


def _enum_term(schema: object, terms: dict[str, Term]) -> object:
    """The schema of the term `schema` names when that term is an enum (`type: state_type`), else `schema`."""
    reference = schema.get("$ref") if isinstance(schema, dict) else None
    if isinstance(reference, str) and reference.startswith(_TERM_REF):
        term = terms.get(reference[len(_TERM_REF) :])
        if term is not None and isinstance(term.schema, dict) and "enum" in term.schema:
            return term.schema
    return schema


def _fields_of(schema: object, terms: dict[str, Term], depth: int) -> list[object]:
    """The named terms `schema` is, or is a choice or combination of, and the schemas of their fields."""
    if not isinstance(schema, dict) or depth < 0:
        return []
    reference = schema.get("$ref")
    if isinstance(reference, str) and reference.startswith(_TERM_REF):
        term = terms.get(reference[len(_TERM_REF) :])
        if term is None or term.schema is None:
            return []
        return [term.schema, *_fields_of(term.schema, terms, depth - 1)]
    properties = schema.get("properties")
    found: list[object] = list(properties.values()) if isinstance(properties, dict) else []
    for key in ("anyOf", "oneOf", "allOf"):
        members = schema.get(key)
        if isinstance(members, list):
            for member in members:
                found.extend(_fields_of(member, terms, depth - 1))
    return found


def _is_route(summary: str, function: Function) -> bool:
    """True for the summary the builder makes up from the route when the document gives none."""
    return summary == f"{function.method} {function.path}"


def _named(*names: str | None) -> list[str]:
    return [name for name in names if name]


def _flatten(lists: Iterable[list[str]]) -> list[str]:
    return [word for words in lists for word in words]


def first_sentence(text: str) -> str:
    """The first sentence of the first line of `text`."""
    line = text.strip().split("\n", 1)[0]
    end = line.find(". ")
    return line[: end + 1] if end > 0 else line
