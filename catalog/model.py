"""The agent-facing catalog: modules of functions, their flat arguments, and the glossary of terms."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Final, Literal
from urllib.parse import unquote

from catalog.errors import UnknownNameError, shown
from catalog.naming import is_valid_tool_name, tool_name
from catalog.schemas import check_size

if TYPE_CHECKING:
    from catalog._refs import RefResolver
    from catalog.composite import Composite
    from catalog.effects import EffectSource
    from catalog.loading import DocumentWarning
    from catalog.schemas import SchemaSpace

__all__ = ["Arg", "ArgLocation", "Catalog", "Function", "Module", "SecurityRequirement", "Term"]

ArgLocation = Literal["path", "query", "header", "cookie", "body"]
JSONSchema = dict[str, Any]
#: One security requirement of an operation (OpenAPI `security` entry): each scheme it needs, with the scopes
#: it needs of that scheme, sorted by scheme name.
SecurityRequirement = tuple[tuple[str, tuple[str, ...]], ...]

#: The style a parameter is sent in when it declares none (OAS 3.1 §4.8.12.4).
_DEFAULT_STYLE: Final[Mapping[str, str]] = {"query": "form", "cookie": "form", "path": "simple", "header": "simple"}

#: Property names the Claude API accepts in a tool's input schema.
_PROPERTY_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


@dataclass(frozen=True, kw_only=True)
class Arg:
    """One flat argument of a function and where the REST request carries it."""

    name: str
    location: ArgLocation
    required: bool
    description: str = ""
    #: The schema with refs resolved, except references to named components, which stay `$ref`s to
    #: `#/components/schemas/<Name>` so the agent can look the term up.
    schema: JSONSchema = field(default_factory=dict)
    #: Serialization of a parameter (OpenAPI `style`/`explode`); None means the location's default.
    style: str | None = None
    explode: bool | None = None
    #: For `body` args: the body property it fills, or None when the arg is the whole body.
    body_property: str | None = None

    @property
    def style_used(self) -> str:
        """The style the value is sent in: the declared one, else the location's default (form in query and
        cookie, simple in path and header); "" for body args."""
        return self.style or _DEFAULT_STYLE.get(self.location, "")

    @property
    def exploded(self) -> bool:
        """Whether arrays and objects are sent exploded: as declared, else only in the form style of a query or
        cookie (OAS 3.1 §4.8.12.4; the only locations form is defined for)."""
        if self.explode is not None:
            return self.explode
        return self.style_used == "form" and _DEFAULT_STYLE.get(self.location) == "form"

    @property
    def default_serialization(self) -> bool:
        """True when the arg is sent the way its location sends a parameter that declares no style or explode."""
        default = _DEFAULT_STYLE.get(self.location, "")
        return self.style_used == default and self.exploded == (default == "form")


@dataclass(frozen=True, kw_only=True, eq=False)
class Function:
    """One operation, or a composite the project wrote, as the agent sees it."""

    name: str
    module: str
    summary: str
    description: str
    method: str
    path: str
    args: tuple[Arg, ...]
    returns: str | None
    #: The success response schema (named components kept as refs), or None.
    return_schema: JSONSchema | None
    deprecated: bool
    read_only: bool
    destructive: bool
    #: What decided `read_only` and `destructive`: the HTTP method, the document's extensions, or the operator.
    effect_source: EffectSource = "method"
    request_content_types: tuple[str, ...] = ()
    response_content_types: tuple[str, ...] = ()
    #: The media type call_function sends the body as, or None without a body.
    body_content_type: str | None = None
    body_required: bool = False
    #: The term the request body is, when it is a named schema.
    body_term: str | None = None
    operation_id: str | None = None
    #: The base URL of the operation's own `servers` (another host: uploads.github.com), else None: calls go to
    #: the gateway's app or upstream. Only upstream calls use it; an app in-process serves every route.
    server: str | None = None
    #: The OAuth scopes the document requires of a call (its `security`, or the document's, on `oauth2` and
    #: `openIdConnect` schemes): any one of these sets will do; empty when a call needs none.
    oauth_scopes: tuple[tuple[str, ...], ...] = ()
    #: The security requirements of a call as the document states them (its `security`, or the document's), any
    #: one of which will do, sorted; empty when the document requires none.
    security: tuple[SecurityRequirement, ...] = ()
    composite: Composite | None = None
    _space: SchemaSpace | None = field(default=None, repr=False, compare=False)
    _max_nodes: int = field(default=1000, repr=False, compare=False)

    @property
    def function_name(self) -> str:
        """The name inside the module."""
        return self.name.split(".", 1)[1]

    @property
    def tool_name(self) -> str:
        """The name of the MCP tool this function becomes when promoted: `orders.create` → `orders-create`."""
        return tool_name(self.name)

    @property
    def is_composite(self) -> bool:
        """True for hand-written functions."""
        return self.composite is not None

    @property
    def promotion_problem(self) -> str | None:
        """Why this function cannot become a tool of its own, or None when it can."""
        if not is_valid_tool_name(self.tool_name):
            return f"tool name {self.tool_name!r} does not match ^[a-zA-Z0-9_-]{{1,64}}$"
        for arg in self.args:
            if not (1 <= len(arg.name) <= 64 and set(arg.name) <= _PROPERTY_NAME_CHARS):
                return f"argument name {arg.name!r} does not match ^[a-zA-Z0-9_.-]{{1,64}}$"
        return None

    def input_schema(self, *, capped: bool = True) -> JSONSchema:
        """The JSON Schema 2020-12 of the flat arguments, as a promoted tool advertises it.

        One property per argument name, required when any argument of that name is, path arguments always;
        no other properties. Raises SchemaTooLargeError past the node cap, unless `capped` is False (what
        call_function validates against: any function can be called, only small ones advertised).
        """
        schema = self._input_schema
        if capped:
            check_size(schema, max_nodes=self._max_nodes, what=f"function {self.name!r}")
        return schema

    def output_schema(self) -> JSONSchema | None:
        """The JSON Schema 2020-12 of the success response when it is an object, else None."""
        return self._output_schema

    @cached_property
    def _input_schema(self) -> JSONSchema:
        if self.composite is not None:
            return self.composite.input_schema
        if self._space is None:
            raise RuntimeError(f"function {self.name!r} was not built by build_catalog")
        properties: dict[str, JSONSchema] = {}
        required: list[str] = []
        names: set[str] = set()
        for arg in self.args:
            converted, refs = self._space.convert(arg.schema)
            names |= refs
            if arg.description and "description" not in converted:
                converted = {**converted, "description": arg.description}
            if arg.name not in properties:
                properties[arg.name] = converted
            if (arg.required or arg.location == "path") and arg.name not in required:
                required.append(arg.name)
        schema: JSONSchema = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        schema["additionalProperties"] = False
        return self._space.standalone(schema, names)

    def result_schema(self, *, capped: bool = True) -> JSONSchema | None:
        """The JSON Schema 2020-12 of the success response whatever its type (an array, say), standalone (its
        `$defs` inside); None when the document gives none. SchemaTooLargeError past the node cap, unless `capped`
        is False."""
        schema = self._result_schema
        if schema is not None and capped:
            check_size(schema, max_nodes=self._max_nodes, what=f"{self.name!r}'s result")
        return schema

    @cached_property
    def _result_schema(self) -> JSONSchema | None:
        if self.composite is not None:
            return self.composite.output_schema
        if self.return_schema is None or self._space is None:
            return None
        converted, refs = self._space.convert(self.return_schema)
        return self._space.standalone(converted, refs)

    @cached_property
    def _output_schema(self) -> JSONSchema | None:
        if self.composite is not None:
            return self.composite.output_schema
        schema = self.result_schema()
        if schema is None:
            return None
        target = schema
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            target = schema.get("$defs", {}).get(_unref(ref), {})
        if target.get("type") == "object" or (target.get("properties") and "type" not in target):
            return schema
        return None


def _unref(ref: str) -> str:
    return unquote(ref[len("#/$defs/") :]).replace("~1", "/").replace("~0", "~")


@dataclass(frozen=True, kw_only=True, eq=False)
class Module:
    """The functions of one tag (or one path resource, for untagged operations), sorted by name."""

    name: str
    description: str
    functions: tuple[Function, ...]


@dataclass(frozen=True, kw_only=True, eq=False)
class Term:
    """A glossary entry: a named component schema, a project concept, or both."""

    name: str
    description: str
    aliases: tuple[str, ...] = ()
    schema: JSONSchema | None = None
    accepted_by: tuple[str, ...] = ()
    returned_by: tuple[str, ...] = ()


class Catalog:
    """Modules, functions and terms of one API, in a deterministic order."""

    def __init__(
        self,
        *,
        title: str,
        version: str,
        description: str,
        modules: Sequence[Module],
        terms: Sequence[Term],
        warnings: Sequence[DocumentWarning] = (),
        space: SchemaSpace | None = None,
        servers: Sequence[str] = (),
    ) -> None:
        self.title = title
        self.version = version
        self.description = description
        self.modules: tuple[Module, ...] = tuple(modules)
        self.terms: tuple[Term, ...] = tuple(terms)
        self.warnings: tuple[DocumentWarning, ...] = tuple(warnings)
        self.servers: tuple[str, ...] = tuple(servers)
        self.space = space
        self.resolver: RefResolver | None = space.resolver if space is not None else None
        self._modules = {module.name: module for module in self.modules}
        self._functions = {function.name: function for module in self.modules for function in module.functions}
        self._terms = {term.name: term for term in self.terms}
        self._folded_terms: dict[str, Term] = {}
        for term in reversed(self.terms):
            for key in (term.name, *term.aliases):
                self._folded_terms[key.casefold()] = term

    def functions(self) -> tuple[Function, ...]:
        """Every function, in module order then name order."""
        return tuple(self._functions.values())

    def function(self, name: str) -> Function:
        """The function with this full name (`module.function`); UnknownNameError lists the closest functions
        (`catalog.suggestions`: near spellings, the route it names, the functions that share its words)."""
        found = self._functions.get(name) or self._functions.get(name.replace("-", ".", 1))
        if found is None:
            from catalog.suggestions import closest_functions

            raise UnknownNameError(
                f"no function named {shown(name)}",
                name=name,
                suggestions=[function.name for function in closest_functions(self, name)],
            )
        return found

    def module(self, name: str) -> Module:
        """The module with this name; UnknownNameError lists the closest names."""
        found = self._modules.get(name)
        if found is None:
            raise UnknownNameError(
                f"no module named {shown(name)}", name=name, suggestions=_closest(name, self._modules)
            )
        return found

    def term(self, name: str) -> Term:
        """The term by exact name, else by name or alias case-insensitively; UnknownNameError lists the closest."""
        found = self._terms.get(name) or self._folded_terms.get(name.casefold())
        if found is None:
            raise UnknownNameError(
                f"no term named {shown(name)}",
                name=name,
                suggestions=_closest(
                    name, self._folded_terms, original={k: t.name for k, t in self._folded_terms.items()}
                ),
            )
        return found

    def has_function(self, name: str) -> bool:
        """True when a function has this full name."""
        return name in self._functions

    def own_servers(self) -> dict[str, tuple[str, ...]]:
        """The servers some functions have of their own (not the document's), each with those functions' names."""
        found: dict[str, list[str]] = {}
        for function in self._functions.values():
            if function.server is not None:
                found.setdefault(function.server, []).append(function.name)
        return {server: tuple(names) for server, names in sorted(found.items())}

    def unpromotable(self) -> dict[str, str]:
        """Functions that cannot become tools of their own, with the reason."""
        problems: dict[str, str] = {}
        for function in self._functions.values():
            problem = function.promotion_problem
            if problem is not None:
                problems[function.name] = problem
        return problems


def _closest(name: str, candidates: Mapping[str, Any], *, original: Mapping[str, str] | None = None) -> list[str]:
    keys = list(candidates)
    matches = difflib.get_close_matches(name.casefold() if original else name, keys, n=5, cutoff=0.5)
    if not matches:
        tail = name.rsplit(".", 1)[-1].casefold()
        matches = [key for key in keys if tail and tail in key.casefold()][:5]
    if original:
        return list(dict.fromkeys(original.get(match, match) for match in matches))
    return matches
