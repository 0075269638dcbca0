"""The `search`/`fetch` tool pair ChatGPT's deep research and company knowledge connectors require.

OpenAI's published contract (platform.openai.com/docs/mcp, "search tool" and "fetch tool"): `search` takes one
`query` string and answers exactly one text content item whose text is the JSON `{"results": [{"id", "title",
"url"}]}`; `fetch` takes one `id` string and answers exactly one text content item whose text is the JSON
`{"id", "title", "text", "url", "metadata"}`. Both are read-only, idempotent and not destructive.

By default they search the catalog itself, so research learns the API: results are functions (`function:
orders.create`) and terms (`term:Order`), and `fetch` gives the very text `describe_function` / `explain_term`
give. With a `DataSource` they search the API's own records instead, through two catalog functions called with
the caller's credentials like every other call.

`url` is present only when there is one to give (the reference page for catalog entries, a field or template
for records): ChatGPT shows citations only for results with a URL, and an empty or made-up URL would be worse.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NotRequired, TypedDict
from urllib.parse import quote

from catalog.errors import UnknownNameError, shown
from catalog.model import Catalog, Function, Term
from catalog.render import describe_function, explain_term
from catalog.search import Ranking, search
from gateway.errors import ArgumentError, ConfigError, ToolError
from gateway.mcp.toolspec import ToolResult, ToolSpec
from gateway.policy import CallerPolicy
from gateway.reference import anchor
from gateway.requests import RequestInfo
from gateway.rest.dispatcher import Dispatcher, decode_body
from gateway.tools._research_fit import check_record, effective_schema, field_at, records_path
from gateway.tools.results import cap_text, response_result
from gateway.tools.toolset import read_only_spec
from gateway.types import RestContextFor, ToolRunner

__all__ = [
    "DataSource",
    "FetchedDocument",
    "ResearchConfig",
    "SearchHit",
    "SearchResults",
    "research_tools",
]


FUNCTION_PREFIX = "function:"
TERM_PREFIX = "term:"
_MAX_TERMS = 5
_TITLE_CHARS = 120
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_STOP_WORDS = frozenset({"a", "an", "and", "by", "for", "how", "in", "is", "of", "on", "or", "the", "to", "what"})


class SearchHit(TypedDict):
    """One result of `search`, as OpenAI documents it; `url` only when the entry has one."""

    id: str
    title: str
    url: NotRequired[str]


class SearchResults(TypedDict):
    """The JSON text of `search`'s one content item."""

    results: list[SearchHit]


class FetchedDocument(TypedDict):
    """The JSON text of `fetch`'s one content item; `url` only when the entry has one."""

    id: str
    title: str
    text: str
    url: NotRequired[str]
    metadata: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class DataSource:
    """Map `search`/`fetch` onto the API's own records through two read-only catalog functions.

    `search` is called with the query in `query_arg` (plus the fixed `search_args`, e.g. `{"limit": 10}`);
    the records are the list at the dotted path `items` of its answer (None: the answer itself, or the only
    list property its response schema has). `fetch` is called with a result's id in `id_arg` (converted to an
    integer or number when the argument is one). Each record gives `id_field` (required), `title_field`
    (None: `title`, then `name`, then the id), `text_field` for fetch (None: the record as JSON) and its URL
    from `url_field` or `url_template` (formatted with `{id}`), or none. Field names are dotted paths.
    """

    search: str
    query_arg: str
    fetch: str
    id_arg: str
    items: str | None = None
    id_field: str = "id"
    title_field: str | None = None
    text_field: str | None = None
    url_field: str | None = None
    url_template: str | None = None
    search_args: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""

    def __post_init__(self) -> None:
        for name in ("search", "query_arg", "fetch", "id_arg", "id_field"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ConfigError(f"DataSource.{name} must be a non-empty string, got {value!r}")
        if self.url_field is not None and self.url_template is not None:
            raise ConfigError("DataSource: give url_field or url_template, not both")
        if self.url_template is not None:
            _check_url(self.url_template.replace("{id}", "1"), "DataSource.url_template")
        if self.query_arg in self.search_args:
            raise ConfigError(f"DataSource.search_args must not set the query argument {self.query_arg!r}")
        object.__setattr__(self, "search_args", MappingProxyType(dict(self.search_args)))


@dataclass(frozen=True, kw_only=True)
class ResearchConfig:
    """What `search`/`fetch` serve: the catalog (default) or, with `data`, the API's records.

    `reference_url` is the absolute URL of the served reference page (`gateway.reference`); catalog results then
    link to their entry in it (`#fn-orders.create`, `#term-Order`). `max_results` caps a search's functions or
    records.
    """

    reference_url: str | None = None
    data: DataSource | None = None
    max_results: int = 10

    def __post_init__(self) -> None:
        if self.reference_url is not None:
            _check_url(self.reference_url, "reference_url")
            if "#" in self.reference_url:
                raise ConfigError(f"reference_url must not have a fragment, got {self.reference_url!r}")
        if not 1 <= self.max_results <= 50:
            raise ConfigError(f"max_results must be between 1 and 50, got {self.max_results!r}")


def _check_url(url: str, what: str) -> None:
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"{what} must be an absolute http(s) URL (ChatGPT cites only those), got {url!r}")


_SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"query": {"type": "string", "description": "What to look for, in a few words."}},
    "required": ["query"],
}
_FETCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"id": {"type": "string", "description": "The id of a search result."}},
    "required": ["id"],
}


def research_tools(
    catalog: Catalog,
    dispatcher: Dispatcher,
    rest_context: RestContextFor,
    config: ResearchConfig,
    *,
    max_output_bytes: int,
    reference_path: str | None = None,
    ranking: Ranking | None = None,
) -> list[tuple[ToolSpec, ToolRunner]]:
    """The `search` and `fetch` tools with their runners; ConfigError when a DataSource does not fit the catalog.

    The input schemas are OpenAI's (one required string each, no other properties named). Every answer is one
    text content item of JSON; failures (unknown id, REST error) are error results the agent can act on.
    Each caller's policy decides what it finds: search finds, and fetch knows, only its own functions and terms,
    and a DataSource's functions answer only callers who see them.
    """
    if config.data is None:
        research: _CatalogResearch | _DataResearch = _CatalogResearch(
            catalog, config, max_output_bytes, reference_path, ranking
        )
        # Promise a url only where there is a page to cite: a configured one, or the page served over HTTP.
        cited = config.reference_url is not None or reference_path is not None
        search_text = (
            f"Search the {catalog.title} API reference: its functions and terms (data types and concepts) that "
            f"match the query. Answers JSON {{results: [{{id, title{', url' if cited else ''}}}]}}; fetch an id for "
            "the full text."
        )
        fetch_text = (
            "Fetch the full text of one reference entry by the id search gave (function:<module.function> or "
            "term:<Name>): a function's signature and arguments, or a term's fields. Answers JSON "
            f"{{id, title, text{', url' if cited else ''}, metadata}}."
        )
        if cited and config.reference_url is None:
            search_text += " The url is the entry on the reference page, given when served over HTTP."
        titles = ("Search the API reference", "Fetch a reference entry")
        open_world = False
    else:
        data = _DataResearch(catalog, dispatcher, rest_context, config, config.data, max_output_bytes)
        research = data
        what = config.data.description.strip() or data.search_function.summary or data.search_function.name
        linked = config.data.url_field is not None or config.data.url_template is not None
        search_text = (
            f"Search the {catalog.title} API's records ({what}) with the caller's access. Answers JSON "
            f"{{results: [{{id, title{', url' if linked else ''}}}]}}; fetch an id for the record's full text."
        )
        fetch_text = (
            "Fetch one record by the id search gave, with the caller's access. Answers JSON "
            f"{{id, title, text{', url' if linked else ''}, metadata}}."
        )
        titles = ("Search records", "Fetch a record")
        open_world = True
    return [
        (read_only_spec("search", titles[0], search_text, _SEARCH_SCHEMA, open_world=open_world), research.search),
        (read_only_spec("fetch", titles[1], fetch_text, _FETCH_SCHEMA, open_world=open_world), research.fetch),
    ]


def _json_result(value: SearchResults | FetchedDocument) -> ToolResult:
    return ToolResult.text(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def _title(text: str) -> str:
    line = text.strip().split("\n", 1)[0]
    return line if len(line) <= _TITLE_CHARS else line[: _TITLE_CHARS - 1].rstrip() + "…"


def _capped(text: str, max_output_bytes: int) -> str:
    # Leave room for the JSON envelope around the text; JSON escaping can grow it, hence the margin.
    return cap_text(text, max(max_output_bytes * 3 // 4, 500))


# Catalog mode


class _CatalogResearch:
    """Search and fetch the catalog's functions and terms."""

    def __init__(
        self,
        catalog: Catalog,
        config: ResearchConfig,
        max_output_bytes: int,
        reference_path: str | None = None,
        ranking: Ranking | None = None,
    ) -> None:
        self.ranking = ranking
        self.reference_url = config.reference_url
        self.reference_path = reference_path
        self.max_results = config.max_results
        self.max_output_bytes = max_output_bytes
        self._term_words = {term.name: _term_words(term) for term in catalog.terms}

    def _page(self, request: RequestInfo) -> str | None:
        """The reference page's absolute URL: configured, or the gateway's own page at the host the client used."""
        if self.reference_url is not None:
            return self.reference_url
        headers = request.headers or {}
        host = headers.get("x-forwarded-host") or headers.get("host")
        if self.reference_path is None or not host:
            return None
        name = host.split(",")[0].strip().rsplit(":", 1)[0].strip("[]")
        default = "http" if name in ("localhost", "127.0.0.1", "::1") else "https"
        scheme = headers.get("x-forwarded-proto", default).split(",")[0].strip()
        return f"{scheme}://{host.split(',')[0].strip()}{self.reference_path}"

    @staticmethod
    def _url(page: str | None, fragment: str) -> str | None:
        # The page's element ids use only URL-safe characters (letters, digits, "_.-~"), so no escaping.
        return None if page is None else f"{page}#{fragment}"

    def _hit(self, id_: str, title: str, fragment: str, page: str | None) -> SearchHit:
        hit: SearchHit = {"id": id_, "title": title}
        url = self._url(page, fragment)
        if url is not None:
            hit["url"] = url
        return hit

    def _function_hit(self, function: Function, page: str | None = None) -> SearchHit:
        title = f"{function.name} — {function.summary}" if function.summary else function.name
        return self._hit(FUNCTION_PREFIX + function.name, _title(title), anchor("fn", function.name), page)

    def _term_hit(self, term: Term, page: str | None = None) -> SearchHit:
        described = term.description.strip() and term.description.strip() != term.name
        title = f"{term.name} — {term.description}" if described else term.name
        return self._hit(TERM_PREFIX + term.name, _title(title), anchor("term", term.name), page)

    async def search(self, args: dict[str, Any], caller: CallerPolicy) -> ToolResult:
        """Exact term matches first, then the ranked functions, then the other matching terms."""
        query = str(args["query"]).strip()
        if not query:
            return _json_result({"results": []})
        request = caller.request
        catalog = caller.catalog
        try:
            functions = search(catalog, query, limit=self.max_results, ranking=self.ranking).functions
        except ValueError as error:  # a query longer than the catalog search reads
            raise ToolError(str(error)) from None
        exact, other = self._terms(catalog, query)
        page = self._page(request)
        hits = [
            *(self._term_hit(term, page) for term in exact),
            *(self._function_hit(function, page) for function in functions),
            *(self._term_hit(term, page) for term in other),
        ]
        return _json_result({"results": hits})

    def _terms(self, catalog: Catalog, query: str) -> tuple[list[Term], list[Term]]:
        """Terms named by the whole query, then the others that share words with it, best first.

        A word of the query in a term's name or alias counts 3, in its description 1, and a term whose name
        the query covers entirely gets 2 more (`Order` before `OrderUpdate` for "cancel an order"); ties go to
        the shorter name, then alphabetically.
        """
        whole = query.casefold()
        words = set(_words(query))
        exact: list[Term] = []
        scored: list[tuple[int, int, str, Term]] = []
        for term in catalog.terms:
            if whole in (name.casefold() for name in (term.name, *term.aliases)):
                exact.append(term)
                continue
            per_name, description = self._term_words[term.name]
            score = 3 * len(words & set().union(*per_name)) + len(words & description)
            if score:
                covered = 2 if any(name <= words for name in per_name) else 0
                scored.append((-score - covered, len(term.name), term.name, term))
        scored.sort(key=lambda item: item[:3])
        return exact, [item[3] for item in scored[: max(_MAX_TERMS - len(exact), 0)]]

    async def fetch(self, args: dict[str, Any], caller: CallerPolicy) -> ToolResult:
        """The describe_function / explain_term text of one entry; ToolError naming the id forms when unknown."""
        id_ = str(args["id"]).strip()
        page = self._page(caller.request)
        catalog = caller.catalog
        if id_.startswith(FUNCTION_PREFIX):
            name = id_.removeprefix(FUNCTION_PREFIX)
            try:
                function = catalog.function(name)
            except UnknownNameError as error:
                raise ToolError(_unknown_id(id_, error, FUNCTION_PREFIX)) from None
            document: FetchedDocument = {
                "id": FUNCTION_PREFIX + function.name,
                "title": self._function_hit(function)["title"],
                "text": _capped(describe_function(catalog, function), self.max_output_bytes),
                "metadata": {
                    "kind": "function",
                    "module": function.module,
                    "method": function.method,
                    "path": function.path,
                    "read_only": function.read_only,
                },
            }
            url = self._url(page, anchor("fn", function.name))
        elif id_.startswith(TERM_PREFIX):
            try:
                term = catalog.term(id_.removeprefix(TERM_PREFIX))
            except UnknownNameError as error:
                raise ToolError(_unknown_id(id_, error, TERM_PREFIX)) from None
            document = {
                "id": TERM_PREFIX + term.name,
                "title": self._term_hit(term)["title"],
                "text": _capped(explain_term(catalog, term), self.max_output_bytes),
                "metadata": {"kind": "term", "aliases": list(term.aliases)},
            }
            url = self._url(page, anchor("term", term.name))
        else:
            raise ToolError(
                f"Unknown id {shown(id_)}: ids look like 'function:orders.create' or 'term:Order'. "
                "Call search first and pass one of the ids it returns."
            )
        if url is not None:
            document["url"] = url
        return _json_result(document)


def _unknown_id(id_: str, error: UnknownNameError, prefix: str) -> str:
    closest = f" Closest: {', '.join(prefix + name for name in error.suggestions)}." if error.suggestions else ""
    return f"Unknown id {shown(id_)}: {error}.{closest} Call search to find ids."


def _words(text: str) -> list[str]:
    """Lower-case words of `text`, camelCase and snake_case split, simple plurals and stop words dropped."""
    found = []
    for word in _WORD.findall(text.replace("_", " ")):
        folded = word.casefold()
        if folded in _STOP_WORDS:
            continue
        found.append(folded[:-1] if len(folded) > 3 and folded.endswith("s") else folded)
    return found


def _term_words(term: Term) -> tuple[list[frozenset[str]], frozenset[str]]:
    """The words of each of a term's names (name, then aliases), and of its description."""
    return [frozenset(_words(name)) for name in (term.name, *term.aliases)], frozenset(_words(term.description))


# Data mode


class _DataResearch:
    """Search and fetch the API's records through two catalog functions, with the caller's credentials."""

    def __init__(
        self,
        catalog: Catalog,
        dispatcher: Dispatcher,
        rest_context: RestContextFor,
        config: ResearchConfig,
        source: DataSource,
        max_output_bytes: int,
    ) -> None:
        self.dispatcher = dispatcher
        self.rest_context = rest_context
        self.source = source
        self.max_results = config.max_results
        self.max_output_bytes = max_output_bytes
        self.search_function = _data_function(catalog, source.search, "search", source.query_arg, "query_arg")
        self.fetch_function = _data_function(catalog, source.fetch, "fetch", source.id_arg, "id_arg")
        _check_fixed_args(self.search_function, source.query_arg, source.search_args, dispatcher)
        others = [a.name for a in self.fetch_function.args if a.required and a.name != source.id_arg]
        if others:
            raise ConfigError(
                f"DataSource.fetch: {source.fetch!r} also requires {', '.join(map(repr, others))}; "
                f"name a function whose only required argument is {source.id_arg!r}"
            )
        id_schema = effective_schema(next(a.schema for a in self.fetch_function.args if a.name == source.id_arg), {})
        self.id_type = id_schema.get("type") if isinstance(id_schema.get("type"), str) else None
        if self.id_type not in (None, "string", "integer", "number"):
            raise ConfigError(
                f"DataSource.id_arg: {source.fetch}'s {source.id_arg!r} is of type {self.id_type!r}; "
                "ids are strings, so name a string, integer or number argument"
            )
        fields = {"id_field": source.id_field, "title_field": source.title_field, "url_field": source.url_field}
        self.items = records_path(self.search_function, source.items, fields)
        fields["text_field"] = source.text_field
        check_record(self.fetch_function, self.fetch_function.output_schema(), fields)

    async def _call(self, function: Function, args: Mapping[str, Any], caller: CallerPolicy) -> Any:
        """The decoded answer; an error ToolResult (status, hint, body) raised as ToolError on a REST error."""
        if not caller.sees(function):  # call_function would not call it for this caller either
            raise ToolError("search and fetch answer no records with this caller's access")
        outcome = await self.dispatcher.call(function, args, await self.rest_context(caller.request))
        if outcome.response is None:
            return outcome.value
        if outcome.response.status >= 400:
            failed = response_result(function, outcome.response, max_output_bytes=self.max_output_bytes)
            raise ToolError("\n".join(failed.texts))
        return decode_body(outcome.response, function=function)

    async def search(self, args: dict[str, Any], caller: CallerPolicy) -> ToolResult:
        """Up to `max_results` records the search function finds for the query, as {id, title, url}."""
        query = str(args["query"]).strip()
        if not query:
            return _json_result({"results": []})
        answer = await self._call(
            self.search_function, {**self.source.search_args, self.source.query_arg: query}, caller
        )
        records = field_at(answer, self.items) if self.items else answer
        if not isinstance(records, list):
            where = f"its {self.items!r} field" if self.items else "its answer"
            raise ToolError(
                f"{self.search_function.name} did not return a list of records in {where}; "
                "the operator must set DataSource.items to the field holding the list"
            )
        hits: list[SearchHit] = []
        for record in records:
            id_ = field_at(record, self.source.id_field)
            if id_ is None or isinstance(id_, dict | list):
                continue
            hit: SearchHit = {"id": str(id_), "title": self._title(record, str(id_))}
            url = self._url(record, str(id_))
            if url is not None:
                hit["url"] = url
            hits.append(hit)
            if len(hits) == self.max_results:
                break
        return _json_result({"results": hits})

    async def fetch(self, args: dict[str, Any], caller: CallerPolicy) -> ToolResult:
        """One record's text (the text field, or the record as JSON) with its title and URL."""
        id_ = str(args["id"]).strip()
        answer = await self._call(self.fetch_function, {self.source.id_arg: self._id_value(id_)}, caller)
        text_value = field_at(answer, self.source.text_field) if self.source.text_field else answer
        text = (
            text_value
            if isinstance(text_value, str)
            else json.dumps(text_value, ensure_ascii=False, indent=2, default=str)
        )
        document: FetchedDocument = {
            "id": id_,
            "title": self._title(answer, id_),
            "text": _capped(text, self.max_output_bytes),
            "metadata": {"source": self.fetch_function.name},
        }
        url = self._url(answer, id_)
        if url is not None:
            document["url"] = url
        return _json_result(document)

    def _id_value(self, id_: str) -> str | int | float:
        try:
            if self.id_type == "integer":
                return int(id_)
            if self.id_type == "number":
                return float(id_)
        except ValueError:
            raise ToolError(
                f"Unknown id {shown(id_)}: {self.fetch_function.name} takes an {self.id_type} {self.source.id_arg!r}. "
                "Call search first and pass one of the ids it returns."
            ) from None
        return id_

    def _title(self, record: Any, id_: str) -> str:
        names = [self.source.title_field] if self.source.title_field else ["title", "name"]
        for name in names:
            value = field_at(record, name)
            if isinstance(value, str | int | float) and str(value).strip():
                return _title(str(value))
        return id_

    def _url(self, record: Any, id_: str) -> str | None:
        if self.source.url_template is not None:
            return self.source.url_template.replace("{id}", quote(id_, safe=""))
        if self.source.url_field is not None:
            value = field_at(record, self.source.url_field)
            if isinstance(value, str) and value.startswith(("http://", "https://")):
                return value
        return None


def _data_function(catalog: Catalog, name: str, option: str, arg: str, arg_option: str) -> Function:
    try:
        function = catalog.function(name)
    except UnknownNameError as error:
        hint = f"; did you mean {', '.join(error.suggestions)}?" if error.suggestions else ""
        raise ConfigError(f"DataSource.{option}: the catalog has no function {name!r}{hint}") from None
    if not function.read_only:
        raise ConfigError(
            f"DataSource.{option}: {name!r} ({function.method} {function.path}) changes data; "
            "search and fetch are read-only, so name a function that only reads"
        )
    names = [a.name for a in function.args]
    if arg not in names:
        listed = ", ".join(names) or "none"
        raise ConfigError(f"DataSource.{arg_option}: {name!r} has no argument {arg!r} (its arguments: {listed})")
    return function


def _check_fixed_args(function: Function, query_arg: str, fixed: Mapping[str, Any], dispatcher: Dispatcher) -> None:
    """The search function must accept the query plus the fixed arguments, and need nothing else."""
    try:
        dispatcher.validate(function, {**fixed, query_arg: "query"})
    except ArgumentError as error:
        raise ConfigError(
            f"DataSource.search: {function.name!r} cannot be called with {query_arg!r} and search_args "
            f"{dict(fixed)!r}: {error}"
        ) from None
