"""Build the catalog from a loaded document: modules from tags, functions from operations, terms from schemas."""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urljoin, urlsplit

from catalog._allof import MAX_MERGED_PROPERTIES, AllOfProperties
from catalog._html import plain_text
from catalog._refs import RefResolver
from catalog.composite import Composite, Concept
from catalog.effects import Effect, EffectRules, EffectSource, document_effect, method_effect
from catalog.errors import CatalogConfigError, DocumentError
from catalog.fetched import Fetch, read_file
from catalog.loading import Document, DocumentWarning, load_document
from catalog.model import Arg, ArgLocation, Catalog, Function, Module, SecurityRequirement, Term
from catalog.naming import (
    clean_operation_id,
    function_name_from_route,
    path_resources,
    snake_case,
    split_words,
)
from catalog.schemas import (
    DEFAULT_MAX_SCHEMA_NODES,
    MAX_CATALOG_INLINED_NODES,
    MAX_INLINED_NODES,
    MAX_SCHEMA_DEPTH,
    TOO_DEEP,
    TOO_LARGE,
    NodeBudget,
    SchemaSpace,
)

__all__ = ["build_catalog", "load_catalog"]

_METHODS = ("get", "put", "post", "patch", "delete", "head", "options", "trace")
_LOCATION_ORDER: dict[str, int] = {"path": 0, "query": 1, "header": 2, "cookie": 3}
# OAS 3.x §4.8.12.1: these header parameters are ignored; the transport sets them.
_IGNORED_HEADERS = frozenset({"accept", "content-type", "authorization"})
#: Header parameters that frame the message or address a hop (RFC 9110 §7.2, §7.6.1, §8.6; RFC 9112 §6.1):
#: an agent setting them could switch virtual hosts behind a proxy or break the request. Dropped, with a warning.
_HOP_HEADERS = frozenset(
    {"host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te", "trailer"}
)
_SCHEMA_KEYS_WITH_SCHEMA = ("items", "additionalProperties", "not", "contains", "propertyNames")
_SCHEMA_KEYS_WITH_LIST = ("allOf", "anyOf", "oneOf", "prefixItems")
_WHITESPACE = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
#: A `{name}` in a path template.
_TEMPLATE_PARAMETER = re.compile(r"\{([^{}/]+)\}")
#: An untagged path group larger than this is split by the sub-resources in its paths.
_SPLIT_UNTAGGED_OVER = 20
_SUMMARY_LIMIT = 200


def build_catalog(
    document: Document,
    *,
    composites: Sequence[Composite] = (),
    concepts: Mapping[str, Concept] | None = None,
    max_schema_nodes: int = DEFAULT_MAX_SCHEMA_NODES,
    effects: EffectRules | None = None,
) -> Catalog:
    """The catalog of `document` plus the project's composites and concepts; deterministic for the same input.

    `effects` are the operator's read/write/destructive rules (see `catalog.effects`). Raises DocumentError
    when the document has no usable structure, CatalogConfigError for a bad composite or conflicting rules.
    """
    builder = _Builder(document, max_schema_nodes=max_schema_nodes, effects=effects or EffectRules())
    return builder.build(composites, concepts or {})


def load_catalog(
    source: Any,
    *,
    composites: Sequence[Composite] = (),
    concepts: Mapping[str, Concept] | None = None,
    max_schema_nodes: int = DEFAULT_MAX_SCHEMA_NODES,
    effects: EffectRules | None = None,
    fetch: Fetch = read_file,
) -> Catalog:
    """Load `source` (path, URL, text, bytes, dict or app; see `load_document`, which `fetch` goes to) and
    build its catalog."""
    return build_catalog(
        load_document(source, fetch=fetch),
        composites=composites,
        concepts=concepts,
        max_schema_nodes=max_schema_nodes,
        effects=effects,
    )


@dataclass
class _Operation:
    method: str
    path: str
    pointer: str
    operation: Mapping[str, Any]
    path_parameters: Sequence[Any]
    tag: str | None
    #: The `servers` of the operation, else of its path item (OAS 3.1 §4.8.10: they override the document's).
    servers: Any = None
    module: str = ""
    base_name: str = ""
    fallback_name: str = ""
    refs_in_args: set[str] = field(default_factory=set)
    refs_in_result: set[str] = field(default_factory=set)
    #: The nodes inlining `$ref`s may build for this operation's argument and result schemas.
    inlining: NodeBudget = field(default_factory=lambda: NodeBudget(0))


class _Builder:
    def __init__(self, document: Document, *, max_schema_nodes: int, effects: EffectRules) -> None:
        self.document = document
        self.effects = effects
        self.data = document.data
        servers = self.data.get("servers")
        #: The document's top-level server URLs, variables at their defaults, relative ones resolved.
        self.server_urls = [
            _server_url(server, document.location)
            for server in (servers if isinstance(servers, list) else [])
            if isinstance(server, Mapping) and isinstance(server.get("url"), str)
        ]
        self.main_servers = {url.rstrip("/") for url in self.server_urls}
        self.resolver = RefResolver(self.data)
        self.space = SchemaSpace(self.resolver, openapi_30=document.openapi.startswith("3.0"))
        self.max_schema_nodes = max_schema_nodes
        self.inlining = NodeBudget(MAX_CATALOG_INLINED_NODES)
        #: The properties of request bodies that split into arguments, merged once per schema for the whole catalog.
        self.body_properties = AllOfProperties(self.resolver, objects_only=True)
        self.warnings: list[DocumentWarning] = list(document.warnings)

    def warn(self, pointer: str, message: str) -> None:
        self.warnings.append(DocumentWarning(pointer=pointer, message=message))

    def build(self, composites: Sequence[Composite], concepts: Mapping[str, Concept]) -> Catalog:
        info = self.data.get("info")
        info = info if isinstance(info, Mapping) else {}
        operations = self._operations()
        webhooks = self.data.get("webhooks")
        if isinstance(webhooks, Mapping) and webhooks:
            self.warn(
                "#/webhooks",
                f"{len(webhooks)} webhook(s) left out: a webhook is a request the API sends, not a function to call",
            )
        self._assign_modules(operations)
        functions = self._name_functions(operations)
        functions.extend(self._composites(composites, {f.name for f in functions}))
        functions = self._operator_effects(functions)
        tag_descriptions = self._tag_descriptions()
        by_module: dict[str, list[Function]] = defaultdict(list)
        for function in functions:
            by_module[function.module].append(function)
        modules = [
            Module(
                name=name,
                description=tag_descriptions.get(name, ""),
                functions=tuple(sorted(members, key=lambda f: f.name)),
            )
            for name, members in sorted(by_module.items())
        ]
        terms = self._terms(operations, functions, concepts)
        return Catalog(
            title=_text(info.get("title")) or "API",
            version=_text(info.get("version")),
            description=_text(info.get("description")),
            modules=modules,
            terms=terms,
            warnings=self.warnings,
            space=self.space,
            servers=self.server_urls,
        )

    # Operations and modules

    def _operations(self) -> list[_Operation]:
        paths = self.data.get("paths")
        if paths is None:
            return []
        if not isinstance(paths, Mapping):
            raise DocumentError(
                f"'paths' must be a mapping of path to path item, not {type(paths).__name__}; fix the document",
                pointer="#/paths",
                location=self.document.location,
            )
        found: list[_Operation] = []
        for path in sorted(paths, key=str):
            pointer = "#/paths/" + str(path).replace("~", "~0").replace("/", "~1")
            item, _ = self.resolver.deref(paths[path])
            if not isinstance(item, Mapping):
                self.warn(pointer, "path item is not a mapping (or its $ref does not resolve); skipped")
                continue
            if not str(path).startswith("/"):
                self.warn(pointer, "path does not start with '/'; it is used as written")
            shared = item.get("parameters")
            shared_params = shared if isinstance(shared, list) else []
            for method in _METHODS:
                if method not in item:
                    continue
                operation, _ = self.resolver.deref(item[method])
                if not isinstance(operation, Mapping):
                    self.warn(f"{pointer}/{method}", "operation is not a mapping; skipped")
                    continue
                tags = operation.get("tags")
                tag = (
                    next((t for t in tags if isinstance(t, str) and t.strip()), None)
                    if isinstance(tags, list)
                    else None
                )
                servers = operation.get("servers") or item.get("servers")
                found.append(
                    _Operation(method, str(path), f"{pointer}/{method}", operation, shared_params, tag, servers)
                )
        return found

    def _assign_modules(self, operations: list[_Operation]) -> None:
        untagged: dict[str, list[tuple[_Operation, list[str]]]] = defaultdict(list)
        for op in operations:
            if op.tag is not None and split_words(op.tag):
                op.module = snake_case(op.tag)
                continue
            # Untagged, or a tag without a Latin letter or digit ("用户"), which would name no module: by path.
            resources = path_resources(op.path)
            untagged[resources[0] if resources else "root"].append((op, resources))
        for group, members in untagged.items():
            if len(members) <= _SPLIT_UNTAGGED_OVER:
                for op, _ in members:
                    op.module = group
                continue
            collections = {segment for op, _ in members for segment in _collection_segments(op.path)}
            for op, resources in members:
                deeper = [resource for resource in resources if resource in collections]
                op.module = deeper[-1] if deeper else group

    def _tag_descriptions(self) -> dict[str, str]:
        tags = self.data.get("tags")
        found: dict[str, str] = {}
        for tag in tags if isinstance(tags, list) else []:
            if isinstance(tag, Mapping) and isinstance(tag.get("name"), str):
                name = snake_case(tag["name"])
                description = _text(tag.get("description"))
                if description and name not in found:
                    found[name] = description
        return found

    # Functions

    def _name_functions(self, operations: list[_Operation]) -> list[Function]:
        for op in operations:
            operation_id = op.operation.get("operationId")
            if isinstance(operation_id, str) and split_words(operation_id):
                # An id without a Latin letter or digit ("获取用户") names nothing an agent can type: the route does.
                raw = snake_case(operation_id)
                cleaned = snake_case(clean_operation_id(operation_id, method=op.method, path=op.path))
                op.base_name = _strip_prefix(cleaned, op.module)
                op.fallback_name = _strip_prefix(raw, op.module)
            else:
                op.base_name = _strip_prefix(function_name_from_route(op.method, op.path), op.module)
                op.fallback_name = op.base_name
        names = _unique_names(operations)
        return [self._function(op, names[id(op)]) for op in operations]

    def _function(self, op: _Operation, name: str) -> Function:
        operation = op.operation
        op.inlining = NodeBudget(MAX_INLINED_NODES, within=self.inlining)
        args, body_type, request_types, body_required, body_term = self._args(op)
        returns, return_schema, response_types = self._result(op)
        if op.inlining.cut is not None:
            limit = (
                f"the catalog's {MAX_CATALOG_INLINED_NODES:,}"
                if self.inlining.left == 0
                else f"one function's {MAX_INLINED_NODES:,}"
            )
            self.warn(
                op.pointer,
                f"{op.module}.{name}: inlining $ref {op.inlining.cut!r} (and the refs inside it) would build more "
                f"schema nodes than {limit}; the parts past that are left out of its arguments and result (they accept "
                "anything). Make the schemas that refs repeat named components (#/components/schemas/...), which "
                "are referenced instead of copied",
            )
        security = self._security(op)
        declared, problem = document_effect(operation, op.method)
        if problem is not None:
            self.warn(op.pointer, problem)
        effect: Effect = declared or method_effect(op.method)
        description = _text(operation.get("description"))
        summary = _one_line(_text(operation.get("summary"))) or _first_sentence(description)
        return Function(
            name=f"{op.module}.{name}",
            module=op.module,
            summary=summary or f"{op.method.upper()} {op.path}",
            description=description,
            method=op.method.upper(),
            path=op.path,
            args=tuple(args),
            returns=returns,
            return_schema=return_schema,
            deprecated=operation.get("deprecated") is True,
            read_only=effect == "read",
            destructive=effect == "destructive",
            effect_source="document" if declared else "method",
            request_content_types=request_types,
            response_content_types=response_types,
            body_content_type=body_type,
            body_required=body_required,
            body_term=body_term,
            operation_id=operation.get("operationId") if isinstance(operation.get("operationId"), str) else None,
            server=self._own_server(op),
            oauth_scopes=self._oauth_scopes(security),
            security=security,
            _space=self.space,
            _max_nodes=self.max_schema_nodes,
        )

    def _security(self, op: _Operation) -> tuple[SecurityRequirement, ...]:
        """The operation's security requirements (its `security`, else the document's; OAS 3.1 §4.8.30: any one
        requirement will do, each needs all its schemes), scheme names and scopes sorted, requirements sorted."""
        security = op.operation.get("security", self.data.get("security"))
        if not isinstance(security, list):
            return ()
        requirements: set[SecurityRequirement] = set()
        for requirement in security:
            if isinstance(requirement, Mapping):
                requirements.add(
                    tuple(
                        sorted(
                            (
                                str(scheme),
                                tuple(sorted({s for s in scopes if isinstance(s, str)}))
                                if isinstance(scopes, list)
                                else (),
                            )
                            for scheme, scopes in requirement.items()
                        )
                    )
                )
        return tuple(sorted(requirements))

    def _oauth_scopes(self, security: tuple[SecurityRequirement, ...]) -> tuple[tuple[str, ...], ...]:
        """The scope sets of the security requirements, counting `oauth2` and `openIdConnect` schemes; () when one
        requirement needs no scope (it is met without any, e.g. an API key, or `security: []`, public)."""
        if not security:
            return ()
        components = self.data.get("components")
        schemes = components.get("securitySchemes") if isinstance(components, Mapping) else None
        schemes = schemes if isinstance(schemes, Mapping) else {}
        alternatives: set[tuple[str, ...]] = set()
        for requirement in security:
            needed: set[str] = set()
            for scheme_name, scopes in requirement:
                scheme, _ = self.resolver.deref(schemes.get(scheme_name))
                if isinstance(scheme, Mapping) and scheme.get("type") in ("oauth2", "openIdConnect"):
                    needed.update(scope for scope in scopes if scope)
            if not needed:
                return ()
            alternatives.add(tuple(sorted(needed)))
        return tuple(sorted(alternatives))

    def _own_server(self, op: _Operation) -> str | None:
        """The first absolute URL among the operation's own servers when it is not one of the document's
        (uploads.github.com beside api.github.com), else None: the gateway's upstream serves it."""
        if not isinstance(op.servers, list):
            return None
        for server in op.servers:
            if isinstance(server, Mapping) and isinstance(server.get("url"), str):
                url = _server_url(server, self.document.location)
                parts = urlsplit(url)
                if parts.scheme in ("http", "https") and parts.netloc and "{" not in url:
                    return None if url.rstrip("/") in self.main_servers else url
        return None

    def _args(self, op: _Operation) -> tuple[list[Arg], str | None, tuple[str, ...], bool, str | None]:
        merged: dict[tuple[str, ArgLocation], tuple[Mapping[str, Any], str]] = {}
        own = op.operation.get("parameters")
        for index, (source, raw) in enumerate(
            [("shared", p) for p in op.path_parameters] + [("own", p) for p in (own if isinstance(own, list) else [])]
        ):
            parameter, _ = self.resolver.deref(raw)
            pointer = f"{op.pointer}/parameters/{index}"
            if not isinstance(parameter, Mapping):
                self.warn(pointer, "parameter is not a mapping or its $ref does not resolve; skipped")
                continue
            name, location = parameter.get("name"), parameter.get("in")
            if not isinstance(name, str) or location not in _LOCATION_ORDER:
                self.warn(
                    pointer, f"parameter needs a string 'name' and 'in' of path/query/header/cookie; skipped ({source})"
                )
                continue
            if location == "header" and name.lower() in _IGNORED_HEADERS:
                continue
            if location == "header" and (name.lower() in _HOP_HEADERS or name.lower().startswith("proxy-")):
                self.warn(
                    pointer,
                    f"header parameter {name!r} is left out: it frames the request or addresses a hop, which "
                    "the gateway sets itself",
                )
                continue
            merged[(name, location)] = (parameter, pointer)
        for name in dict.fromkeys(_TEMPLATE_PARAMETER.findall(op.path)):
            if (name, "path") not in merged:
                # Strictly invalid, and seen in hand-written documents: left out, the call would send `{id}` as is.
                self.warn(op.pointer, f"path parameter {{{name}}} is not declared; it is read as a required string")
                merged[(name, "path")] = ({"name": name, "in": "path", "schema": {"type": "string"}}, op.pointer)
        args: list[Arg] = []
        for (name, location), (parameter, _) in sorted(merged.items(), key=lambda item: _LOCATION_ORDER[item[0][1]]):
            schema = parameter.get("schema")
            if schema is None and isinstance(parameter.get("content"), Mapping):
                media = next(iter(parameter["content"].values()), None)
                schema = media.get("schema") if isinstance(media, Mapping) else None
            kept = self._keep_named(schema, op.refs_in_args, op.inlining)
            explode = parameter.get("explode")
            style = parameter.get("style")
            args.append(
                Arg(
                    name=name,
                    location=location,
                    required=parameter.get("required") is True or location == "path",
                    description=_text(parameter.get("description")),
                    schema=kept,
                    style=style if isinstance(style, str) else None,
                    explode=explode if isinstance(explode, bool) else None,
                )
            )
        body_args, body_type, request_types, body_required, body_term = self._body(op, {arg.name for arg in args})
        return args + body_args, body_type, request_types, body_required, body_term

    def _body(self, op: _Operation, taken: set[str]) -> tuple[list[Arg], str | None, tuple[str, ...], bool, str | None]:
        body, _ = self.resolver.deref(op.operation.get("requestBody"))
        if not isinstance(body, Mapping) or not isinstance(body.get("content"), Mapping) or not body["content"]:
            return [], None, (), False, None
        content: Mapping[str, Any] = body["content"]
        request_types = tuple(str(media) for media in content)
        chosen = _preferred_media_type(request_types)
        media = content[chosen]
        raw_schema = media.get("schema") if isinstance(media, Mapping) else None
        if raw_schema is None and _is_raw_media(chosen):
            raw_schema = {"type": "string", "format": "binary"}  # OAS 3.1 §4.8.14: no schema is any bytes.
        required = body.get("required") is True
        term = RefResolver.schema_name(raw_schema)
        if term is not None:
            op.refs_in_args.add(term)
        merged = self.body_properties.of(raw_schema)
        if merged is None:
            self.warn(
                op.pointer,
                f"{op.method.upper()} {op.path}: merging the allOf parts of its request body would copy more than "
                f"the catalog's {MAX_MERGED_PROPERTIES:,} properties, so the body is one `body` argument, not one "
                "argument per property. Give its schema fewer allOf parts, each listed once",
            )
        properties, required_names = merged or ({}, set())
        if properties and not (set(properties) & taken) and "body" not in taken:
            args = []
            for name, schema in properties.items():
                resolved, _ = self.resolver.deref(schema)
                if isinstance(resolved, Mapping) and resolved.get("readOnly") is True:
                    continue  # OAS 3.x: readOnly properties are sent by the server, never by the client.
                args.append(
                    Arg(
                        name=name,
                        location="body",
                        required=required and name in required_names,
                        description=_text(resolved.get("description")) if isinstance(resolved, Mapping) else "",
                        schema=self._keep_named(schema, op.refs_in_args, op.inlining),
                        body_property=name,
                    )
                )
            if args:
                return args, chosen, request_types, required, term
        whole = Arg(
            name="body",
            location="body",
            required=required,
            description=_text(body.get("description")),
            schema=self._keep_named(raw_schema, op.refs_in_args, op.inlining),
        )
        return [whole], chosen, request_types, required, term

    def _result(self, op: _Operation) -> tuple[str | None, dict[str, Any] | None, tuple[str, ...]]:
        responses = op.operation.get("responses")
        if not isinstance(responses, Mapping):
            return None, None, ()
        success = sorted(code for code in map(str, responses) if code.startswith("2") or code.upper() == "2XX")
        types: list[str] = []
        returns: str | None = None
        schema: dict[str, Any] | None = None
        for code in success:
            response, _ = self.resolver.deref(responses.get(code, responses.get(int(code)) if code.isdigit() else None))
            content = response.get("content") if isinstance(response, Mapping) else None
            if not isinstance(content, Mapping):
                continue
            types.extend(str(media) for media in content if str(media) not in types)
            if schema is not None:
                continue
            json_type = next((str(m) for m in content if _is_json(str(m))), None)
            if json_type is None:
                continue
            media = content[json_type]
            raw = media.get("schema") if isinstance(media, Mapping) else None
            if raw is None:
                continue
            schema = self._keep_named(raw, op.refs_in_result, op.inlining)
            returns = RefResolver.schema_name(raw)
            if returns is None:
                resolved, _ = self.resolver.deref(raw)
                if isinstance(resolved, Mapping) and resolved.get("type") == "array":
                    returns = RefResolver.schema_name(resolved.get("items"))
        return returns, schema, tuple(types)

    def _keep_named(
        self, schema: Any, refs: set[str], budget: NodeBudget, seen: tuple[str, ...] = (), depth: int = 0
    ) -> dict[str, Any]:
        """A copy of `schema` with refs inlined, except refs to named component schemas (recorded in `refs`).

        Subschemas nested more than MAX_SCHEMA_DEPTH levels deep are cut (TOO_DEEP stands for them), and so are
        the nodes of inlined refs past `budget` (TOO_LARGE stands for them).
        """
        ref = schema.get("$ref") if isinstance(schema, Mapping) else None
        if isinstance(ref, str) and depth <= MAX_SCHEMA_DEPTH and ref not in seen and len(seen) <= 16:
            name = RefResolver.schema_name(schema)
            named = name is not None and name in self.resolver.schemas
            target = None if named else self.resolver.deref(schema)[0]
            if target is not None:
                # The ref is replaced by its target: what that builds is what counts against the budget.
                return self._keep_named(target, refs, budget, (*seen, ref), depth)
        if seen and not budget.spend(seen[0]):
            return dict(TOO_LARGE)
        if not isinstance(schema, Mapping):
            return {} if schema is None or schema is True else {"not": {}} if schema is False else {}
        if depth > MAX_SCHEMA_DEPTH:
            return dict(TOO_DEEP)
        if isinstance(ref, str):
            name = RefResolver.schema_name(schema)
            if name is not None and name in self.resolver.schemas:
                refs.add(name)
                return dict(schema)
            # A cycle, a chain too long, or a ref to nothing.
            return {} if ref in seen or len(seen) > 16 else dict(schema)
        out: dict[str, Any] = {}
        below = depth + 1
        for key, value in schema.items():
            if key == "properties" and isinstance(value, Mapping):
                out[key] = {str(k): self._keep_named(v, refs, budget, seen, below) for k, v in value.items()}
            elif key in _SCHEMA_KEYS_WITH_SCHEMA and isinstance(value, Mapping):
                out[key] = self._keep_named(value, refs, budget, seen, below)
            elif key in _SCHEMA_KEYS_WITH_LIST and isinstance(value, list):
                out[key] = [self._keep_named(v, refs, budget, seen, below) for v in value]
            else:
                out[key] = value
        return out

    # Composites and terms

    def _operator_effects(self, functions: list[Function]) -> list[Function]:
        """The functions with the operator's effect rules applied; unused patterns are warnings."""
        if not self.effects:
            return functions
        for pattern in self.effects.unused(function.name for function in functions):
            self.warn("#/paths", f"the effect rule {pattern!r} matches no function; check its spelling")
        changed: list[Function] = []
        for function in functions:
            effect = self.effects.effect(function.name)
            if effect is None:
                changed.append(function)
                continue
            source: EffectSource = "operator"
            changed.append(
                replace(
                    function,
                    read_only=effect == "read",
                    destructive=effect == "destructive",
                    effect_source=source,
                )
            )
        return changed

    def _composites(self, composites: Sequence[Composite], taken: set[str]) -> list[Function]:
        functions: list[Function] = []
        for item in composites:
            if not isinstance(item, Composite):
                raise CatalogConfigError(f"composites must be Composite values, not {type(item).__name__}")
            if item.full_name in taken:
                raise CatalogConfigError(
                    f"composite {item.full_name!r} has the name of a function the catalog already has; rename it"
                )
            taken.add(item.full_name)
            properties = item.input_schema.get("properties")
            required = set(item.input_schema.get("required") or [])
            args = tuple(
                Arg(
                    name=name,
                    location="body",
                    required=name in required,
                    description=_text(schema.get("description")) if isinstance(schema, Mapping) else "",
                    schema=dict(schema) if isinstance(schema, Mapping) else {},
                    body_property=name,
                )
                for name, schema in (properties.items() if isinstance(properties, Mapping) else [])
            )
            functions.append(
                Function(
                    name=item.full_name,
                    module=item.module,
                    summary=_one_line(item.summary),
                    description=item.description,
                    method="",
                    path="",
                    args=args,
                    returns=None,
                    return_schema=item.output_schema,
                    deprecated=False,
                    read_only=item.read_only,
                    destructive=item.destructive,
                    composite=item,
                )
            )
        return functions

    def _terms(
        self, operations: Iterable[_Operation], functions: Sequence[Function], concepts: Mapping[str, Concept]
    ) -> list[Term]:
        accepted: dict[str, list[str]] = defaultdict(list)
        returned: dict[str, list[str]] = defaultdict(list)
        by_pointer = {f"{f.method.lower()} {f.path}": f.name for f in functions if not f.is_composite}
        for op in operations:
            name = by_pointer[f"{op.method} {op.path}"]
            for ref in op.refs_in_args:
                accepted[ref].append(name)
            for ref in op.refs_in_result:
                returned[ref].append(name)
        terms: dict[str, Term] = {}
        for name, schema in self.resolver.schemas.items():
            resolved = schema if isinstance(schema, Mapping) else {}
            terms[str(name)] = Term(
                name=str(name),
                description=_text(resolved.get("description")) or _text(resolved.get("title")),
                schema=dict(resolved),
                accepted_by=tuple(sorted(set(accepted.get(str(name), ())))),
                returned_by=tuple(sorted(set(returned.get(str(name), ())))),
            )
        for name, concept in concepts.items():
            if not isinstance(concept, Concept):
                raise CatalogConfigError(f"concept {name!r} must be a Concept, not {type(concept).__name__}")
            existing = terms.get(name)
            if existing is None:
                terms[name] = Term(name=name, description=concept.text, aliases=tuple(concept.aliases))
            else:
                terms[name] = Term(
                    name=name,
                    description=concept.text or existing.description,
                    aliases=tuple(dict.fromkeys((*existing.aliases, *concept.aliases))),
                    schema=existing.schema,
                    accepted_by=existing.accepted_by,
                    returned_by=existing.returned_by,
                )
        return sorted(terms.values(), key=lambda term: (term.name.casefold(), term.name))


def _server_url(server: Mapping[str, Any], location: str) -> str:
    """A server's URL with each `{variable}` replaced by its default (OAS 3.1 §4.8.6: the value used when none
    is given; one without a string default stays as written), relative to `location` when that is a URL."""
    url: str = server["url"]
    variables = server.get("variables")
    if isinstance(variables, Mapping):
        for name, variable in variables.items():
            default = variable.get("default") if isinstance(variable, Mapping) else None
            if isinstance(default, str):
                url = url.replace("{" + str(name) + "}", default)
    if location.startswith(("http://", "https://")) and not url.startswith(("http://", "https://")):
        url = urljoin(location, url)  # "/v1" in a document fetched from https://api.example.com/openapi.json
    return url


def _collection_segments(path: str) -> list[str]:
    """Static segments directly followed by a path parameter: the collections of a path."""
    segments = [segment for segment in path.split("/") if segment]
    found = []
    for current, following in itertools.pairwise(segments):
        name = snake_case(current)
        # `/collections/by-id/{id}`: a lookup qualifier, not a resource of its own.
        if not current.startswith("{") and following.startswith("{") and not name.startswith("by_"):
            found.append(name)
    return found


def _unique_names(operations: list[_Operation]) -> dict[int, str]:
    """Function names unique within each module, stable for the same document (document order decides ties)."""
    by_module: dict[str, list[_Operation]] = defaultdict(list)
    for op in operations:
        by_module[op.module].append(op)
    names: dict[int, str] = {}
    for members in by_module.values():
        taken: set[str] = set()
        counts: dict[str, int] = defaultdict(int)
        for op in members:
            counts[op.base_name] += 1
        ordered = sorted(members, key=lambda op: (len(op.path), op.path, _METHODS.index(op.method)))
        shortest: dict[str, str] = {}
        for op in ordered:
            shortest.setdefault(op.base_name, op.path)
        for op in ordered:
            candidates = [op.base_name] if counts[op.base_name] == 1 or op.base_name not in taken else []
            # One handler on several routes (`/batches`, `/v1/batches`, `/{provider}/v1/batches`) or methods:
            # the route's version, then the words of this route that the shortest one lacks (`_by_provider`),
            # then the method tell them apart, before the raw operationId does.
            version = _version_segment(op.path)
            qualifier = _route_qualifier(op.path, shortest[op.base_name], op.base_name)
            qualified = [f"{op.base_name}_{part}" for part in (version, qualifier) if part]
            candidates += qualified
            candidates += [f"{name}_{op.method}" for name in (op.base_name, *qualified)]
            candidates.append(op.fallback_name)
            name = next((c for c in candidates if c not in taken), None)
            if name is None:
                number = 2
                while f"{op.base_name}_{number}" in taken:
                    number += 1
                name = f"{op.base_name}_{number}"
            taken.add(name)
            names[id(op)] = name
    return names


def _route_qualifier(path: str, shortest: str, name: str) -> str:
    """The segments of `path` that `shortest` lacks, as words: parameters as `by_x`, static segments unless the
    name says them already; the version is left to its own candidate."""
    named = set(name.split("_"))
    others = set(shortest.split("/"))
    words: list[str] = []
    version = _version_segment(path)
    for segment in path.split("/"):
        if not segment or segment in others or segment.lower() == version:
            continue
        word = snake_case(segment.strip("{}"))
        if segment.startswith("{"):
            words.append(f"by_{word}")
        elif word not in named and word not in _NOISE_WORDS:
            words.append(word)
    return "_".join(words)


_NOISE_WORDS = frozenset({"api", "apis", "rest", "public"})


_VERSION = re.compile(r"v\d+[a-z0-9]*", flags=re.IGNORECASE)


def _version_segment(path: str) -> str | None:
    for segment in path.split("/"):
        if _VERSION.fullmatch(segment):
            return segment.lower()
    return None


def _strip_prefix(name: str, module: str) -> str:
    rest = name[len(module) + 1 :]
    if name.startswith(module + "_") and rest and not _version_segment("/" + rest):
        return name[len(module) + 1 :]
    return name


def _preferred_media_type(types: Sequence[str]) -> str:
    def rank(media: str) -> int:
        lowered = media.lower()
        if _is_json(lowered):
            return 0
        if lowered.startswith("application/x-www-form-urlencoded"):
            return 1
        if lowered.startswith("multipart/form-data"):
            return 2
        if lowered.startswith("text/"):
            return 3
        if lowered.startswith("application/octet-stream"):
            return 4
        return 5

    return min(types, key=rank)


def _is_raw_media(media: str) -> bool:
    """A body sent as bytes: not JSON, text, a form or a wildcard."""
    base = media.split(";", 1)[0].strip().lower()
    sent_as_text = base.startswith(("text/", "multipart/", "application/x-www-form-urlencoded"))
    return not (_is_json(base) or sent_as_text or "*" in base)


def _is_json(media: str) -> bool:
    base = media.split(";", 1)[0].strip().lower()
    return base == "application/json" or base.endswith("+json") or (base == "*/*" and False)


def _text(value: Any) -> str:
    """A document's text field as plain text (HTML read, see `plain_text`), or '' when it is no string."""
    return plain_text(value.strip()) if isinstance(value, str) else ""


def _one_line(text: str) -> str:
    line = _WHITESPACE.sub(" ", text).strip()
    return line if len(line) <= _SUMMARY_LIMIT else line[: _SUMMARY_LIMIT - 1].rstrip() + "…"


def _first_sentence(text: str) -> str:
    paragraph = text.strip().split("\n\n", 1)[0]
    sentence = _SENTENCE_END.split(_WHITESPACE.sub(" ", paragraph), maxsplit=1)[0]
    return _one_line(sentence)
