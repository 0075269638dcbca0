"""JSON Schema 2020-12 from OpenAPI schema objects: what tools advertise and what validates an agent's arguments.

OpenAPI 3.0 schemas are a dialect (`nullable`, boolean `exclusiveMinimum`, `example`); 3.1 schemas are 2020-12 plus
a few keywords. Named component schemas become `$defs` entries referenced by `$ref`, which keeps recursive types
finite. Keywords whose values are malformed (real documents have them) are dropped rather than advertised.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final
from urllib.parse import quote

from catalog._refs import RefResolver, encode_pointer_token
from catalog.errors import SchemaTooLargeError

__all__ = [
    "DEFAULT_MAX_SCHEMA_NODES",
    "MAX_CATALOG_INLINED_NODES",
    "MAX_INLINED_NODES",
    "MAX_SCHEMA_DEPTH",
    "TOO_DEEP",
    "TOO_LARGE",
    "NodeBudget",
    "SchemaSpace",
    "check_size",
    "count_nodes",
    "defs_ref",
    "file_schema",
    "inline_refs",
    "is_binary",
    "is_file_schema",
]

DEFAULT_MAX_SCHEMA_NODES = 1000
#: Schemas nested deeper than this (real documents nest under 15) are cut there: what lies below accepts anything.
MAX_SCHEMA_DEPTH = 64
#: What stands for a schema cut at MAX_SCHEMA_DEPTH (it accepts anything).
TOO_DEEP: Final[dict[str, Any]] = {
    "description": f"(nested more than {MAX_SCHEMA_DEPTH} levels deep: not described further)"
}

#: The most schema nodes that inlining `$ref`s (refs to anything but a named component schema, which stay refs) may
#: build for one function's argument and result schemas, or for one converted schema. Real documents build under
#: 130; a few kilobytes of refs to refs to ... would build billions.
MAX_INLINED_NODES = 10_000
#: The most schema nodes inlining `$ref`s may build for all the functions of one catalog (real documents: under 300).
MAX_CATALOG_INLINED_NODES = 100_000
#: What stands for a schema that inlining `$ref`s would have built past its budget (it accepts anything).
TOO_LARGE: Final[dict[str, Any]] = {
    "description": "(not described: inlining its $refs would build more schema nodes than the catalog allows)"
}

JSONSchema = dict[str, Any]


class NodeBudget:
    """The schema nodes that inlining `$ref`s may still build: `nodes`, and no more than the budget it is `within`.

    `cut` is the first ref whose target was cut short for want of nodes (None while none was).
    """

    def __init__(self, nodes: int, *, within: NodeBudget | None = None) -> None:
        self.left = nodes
        self.within = within
        self.cut: str | None = None

    def spend(self, ref: str) -> bool:
        """Take one node for the target of `ref`; False, noting `ref` as `cut`, when none is left."""
        if self.left > 0 and (self.within is None or self.within.spend(ref)):
            self.left -= 1
            return True
        self.left = 0
        if self.cut is None:
            self.cut = ref
        return False


_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object", "null"})
_SCHEMA_MAP_KEYWORDS = ("properties", "patternProperties", "dependentSchemas", "$defs", "definitions")
_SCHEMA_KEYWORDS = (
    "items",
    "additionalProperties",
    "not",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
)
_SCHEMA_LIST_KEYWORDS = ("allOf", "anyOf", "oneOf", "prefixItems")
_NUMBER_KEYWORDS = ("minimum", "maximum", "multipleOf")
_COUNT_KEYWORDS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains")
_STRING_KEYWORDS = ("description", "title", "format", "pattern", "contentMediaType", "contentEncoding", "$comment")
_BOOL_KEYWORDS = ("uniqueItems", "readOnly", "writeOnly", "deprecated")
_PASS_KEYWORDS = ("const", "default")


def defs_ref(name: str) -> str:
    """The `$ref` that points at a named schema in `$defs`."""
    return "#/$defs/" + quote(encode_pointer_token(name), safe="~")


def count_nodes(schema: Any) -> int:
    """The number of schema objects (mappings) in `schema`, nested ones included, however deep."""
    count = 0
    pending = [schema]
    while pending:
        value = pending.pop()
        if isinstance(value, Mapping):
            count += 1
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
    return count


def check_size(schema: JSONSchema, *, max_nodes: int, what: str) -> None:
    """SchemaTooLargeError when `schema` (the JSON Schema of `what`) has more than `max_nodes` nodes."""
    size = count_nodes(schema)
    if size > max_nodes:
        raise SchemaTooLargeError(
            f"the JSON Schema of {what} has {size} nodes, over the cap of {max_nodes}; "
            "raise max_schema_nodes or keep this function out of promoted tools",
            nodes=size,
            limit=max_nodes,
        )


class SchemaSpace:
    """Converts a document's schemas to JSON Schema 2020-12 once, and assembles self-contained schemas with `$defs`."""

    def __init__(self, resolver: RefResolver, *, openapi_30: bool) -> None:
        self._resolver = resolver
        self.resolver = resolver
        self._openapi_30 = openapi_30
        self._components: dict[str, tuple[JSONSchema, frozenset[str]]] = {}

    def convert(self, schema: Any) -> tuple[JSONSchema, frozenset[str]]:
        """`schema` as JSON Schema 2020-12, and the names of the component schemas it references directly.

        Other refs are inlined, within MAX_INLINED_NODES: TOO_LARGE stands for what lies past it.
        """
        names: set[str] = set()
        converted = self._convert(schema, names, (), 0, NodeBudget(MAX_INLINED_NODES))
        return converted, frozenset(names)

    def component(self, name: str) -> tuple[JSONSchema, frozenset[str]]:
        """The converted component schema `name` and the names it references (an unknown name is `{}`)."""
        cached = self._components.get(name)
        if cached is None:
            # Placeholder first: a schema that refers to itself finds an entry instead of recursing.
            self._components[name] = ({}, frozenset())
            cached = self.convert(self._resolver.schemas.get(name, {}))
            self._components[name] = cached
        return cached

    def closure(self, names: Iterable[str]) -> dict[str, JSONSchema]:
        """Every component reachable from `names`, converted, keyed by name in sorted order."""
        found: dict[str, JSONSchema] = {}
        pending = list(names)
        while pending:
            name = pending.pop()
            if name in found:
                continue
            schema, refs = self.component(name)
            found[name] = schema
            pending.extend(ref for ref in refs if ref not in found)
        return {name: found[name] for name in sorted(found)}

    def standalone(self, schema: JSONSchema, names: Iterable[str]) -> JSONSchema:
        """`schema` with the `$defs` it needs attached."""
        defs = self.closure(names)
        result = dict(schema)
        if defs:
            result["$defs"] = defs
        return result

    def _convert(
        self, schema: Any, names: set[str], inlining: tuple[str, ...], depth: int, budget: NodeBudget
    ) -> JSONSchema:
        if depth > MAX_SCHEMA_DEPTH:
            return dict(TOO_DEEP)
        ref = schema.get("$ref") if isinstance(schema, Mapping) else None
        if isinstance(ref, str):
            target = self._ref(ref, names, inlining, depth, budget)
            siblings = {key: value for key, value in schema.items() if key != "$ref"}
            if not siblings or self._openapi_30:
                # OpenAPI 3.0: siblings of $ref are ignored, except that a description is worth keeping.
                description = siblings.get("description")
                if isinstance(description, str) and description and "$ref" in target:
                    return {**target, "description": description}
                return target
            rest = self._convert(siblings, names, inlining, depth, budget)
            return {**rest, **target} if "$ref" in target else {"allOf": [target], **rest}
        if inlining and not budget.spend(inlining[0]):
            return dict(TOO_LARGE)
        if isinstance(schema, bool):
            return {} if schema else {"not": {}}
        if not isinstance(schema, Mapping):
            return {}
        return self._convert_object(schema, names, inlining, depth + 1, budget)

    def _ref(self, ref: str, names: set[str], inlining: tuple[str, ...], depth: int, budget: NodeBudget) -> JSONSchema:
        name = RefResolver.schema_name({"$ref": ref})
        named = name is not None and name in self._resolver.schemas
        if not named and ref not in inlining:
            target, _ = self._resolver.deref({"$ref": ref})
            if target is not None:
                # The ref is replaced by its target: what that builds is what counts against the budget.
                return self._convert(target, names, (*inlining, ref), depth + 1, budget)
        if inlining and not budget.spend(inlining[0]):
            return dict(TOO_LARGE)
        if name is not None and named:
            names.add(name)
            return {"$ref": defs_ref(name)}
        return {}  # A ref to nothing, or a cycle through unnamed schemas: cut it rather than recurse forever.

    def _convert_object(
        self, schema: Mapping[str, Any], names: set[str], inlining: tuple[str, ...], depth: int, budget: NodeBudget
    ) -> JSONSchema:
        """`schema`'s keywords in 2020-12; its subschemas are converted at `depth` (one below `schema`)."""
        out: JSONSchema = {}
        for key, value in schema.items():
            if key in _SCHEMA_MAP_KEYWORDS:
                if isinstance(value, Mapping):
                    out[key] = {str(k): self._convert(v, names, inlining, depth, budget) for k, v in value.items()}
            elif key in _SCHEMA_KEYWORDS:
                if key == "items" and isinstance(value, list):
                    out["prefixItems"] = [self._convert(v, names, inlining, depth, budget) for v in value]
                elif key == "additionalProperties" and isinstance(value, bool):
                    out[key] = value
                elif isinstance(value, Mapping | bool):
                    out[key] = self._convert(value, names, inlining, depth, budget)
            elif key in _SCHEMA_LIST_KEYWORDS:
                if isinstance(value, list) and value:
                    out[key] = [self._convert(v, names, inlining, depth, budget) for v in value]
            elif key == "type":
                kind = _convert_type(value)
                if kind is not None:
                    out["type"] = kind
            elif key in _NUMBER_KEYWORDS:
                if _is_number(value):
                    out[key] = value
            elif key in ("exclusiveMinimum", "exclusiveMaximum"):
                if _is_number(value):
                    out[key] = value
            elif key in _COUNT_KEYWORDS:
                if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                    out[key] = value
            elif key in _STRING_KEYWORDS:
                if isinstance(value, str):
                    out[key] = value
            elif key in _BOOL_KEYWORDS:
                if isinstance(value, bool):
                    out[key] = value
            elif key == "required":
                if isinstance(value, list) and all(isinstance(item, str) for item in value):
                    out[key] = list(dict.fromkeys(value))
            elif key == "enum":
                if isinstance(value, list) and value:
                    out[key] = value
            elif key in _PASS_KEYWORDS:
                out[key] = value
        if self._openapi_30:
            _apply_30_semantics(schema, out)
        if is_binary(out):
            # Bytes cannot travel in JSON arguments as they are: the agent passes a file object, which the
            # gateway decodes and sends as the part or body (gateway.rest).
            return file_schema(out)
        return out


def is_binary(schema: Mapping[str, Any]) -> bool:
    """OpenAPI 3.0's `format: binary` (or `type: file`), 3.1's `contentMediaType` without `contentEncoding`."""
    kind = schema.get("type")
    if kind == "file":
        return True
    if kind != "string":
        return False
    return schema.get("format") == "binary" or ("contentMediaType" in schema and "contentEncoding" not in schema)


def file_schema(schema: Mapping[str, Any] | None = None) -> JSONSchema:
    """The file argument, keeping `schema`'s title and description and naming its media type where it gives one."""
    out: JSONSchema = {key: value for key, value in _FILE_OBJECT.items() if key != "properties"}
    properties = dict(_FILE_OBJECT["properties"])
    source = schema or {}
    media = source.get("contentMediaType")
    if isinstance(media, str) and media and media != "application/octet-stream":
        properties["content_type"] = {**properties["content_type"], "default": media}
    out["properties"] = properties
    for key in ("title", "description"):
        if isinstance(source.get(key), str):
            out[key] = source[key]
    return out


def is_file_schema(schema: Any) -> bool:
    """True for a schema made by file_schema(): a file argument ({base64 | text, filename?, content_type?})."""
    return (
        isinstance(schema, Mapping)
        and schema.get("type") == "object"
        and schema.get("anyOf") == _FILE_OBJECT["anyOf"]
        and isinstance(schema.get("properties"), Mapping)
        and set(schema["properties"]) == set(_FILE_OBJECT["properties"])
    )


#: What a binary string (`format: binary`, OpenAPI 3.0's `type: file`) is as an argument: the bytes as base64,
#: or text, with an optional file name and media type.
_FILE_OBJECT: Final[JSONSchema] = {
    "type": "object",
    "properties": {
        "base64": {"type": "string", "contentEncoding": "base64", "description": "The bytes, base64-encoded."},
        "text": {"type": "string", "description": "The content as text (sent as UTF-8), instead of base64."},
        "filename": {"type": "string"},
        "content_type": {"type": "string", "description": "The media type, e.g. image/png."},
    },
    "anyOf": [{"required": ["base64"]}, {"required": ["text"]}],
    "additionalProperties": False,
}


def _convert_type(value: Any) -> str | list[str] | None:
    if isinstance(value, str):
        if value == "file":
            return "file"
        return value if value in _TYPES else None
    if isinstance(value, list):
        kinds = [item for item in value if isinstance(item, str) and item in _TYPES]
        return list(dict.fromkeys(kinds)) or None
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _apply_30_semantics(source: Mapping[str, Any], out: JSONSchema) -> None:
    """OpenAPI 3.0 → 2020-12: boolean exclusive bounds and `nullable` (OAS 3.0.3 §4.7.24.1)."""
    for bound, limit in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        flag = source.get(bound)
        if isinstance(flag, bool):
            out.pop(bound, None)
            if flag and limit in out:
                out[bound] = out.pop(limit)
    if source.get("nullable") is True:
        kind = out.get("type")
        if isinstance(kind, str):
            out["type"] = [kind, "null"]
        elif isinstance(kind, list) and "null" not in kind:
            out["type"] = [*kind, "null"]
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]


class _TooLarge(Exception):
    pass


def inline_refs(schema: JSONSchema, *, max_nodes: int) -> JSONSchema:
    """`schema` with its `$ref`s to `$defs` replaced by their targets, except refs to recursive definitions.

    `$defs` keeps only the recursive definitions still referenced. When inlining would pass `max_nodes` nodes (a
    shared type used in many places), `schema` comes back unchanged.
    """
    defs = schema.get("$defs")
    if not isinstance(defs, Mapping) or not defs:
        return schema
    names = {defs_ref(name): name for name in defs}
    graph = {name: _refs_in(body, names) for name, body in defs.items()}
    recursive = {name for name in defs if name in _reachable(graph, graph[name])}
    budget = [max_nodes]

    def inline(value: Any, depth: int) -> Any:
        if isinstance(value, list):
            return [inline(item, depth) for item in value]
        if not isinstance(value, Mapping):
            return value
        budget[0] -= 1
        if budget[0] < 0 or depth > MAX_SCHEMA_DEPTH:
            raise _TooLarge
        name = names.get(value["$ref"]) if isinstance(value.get("$ref"), str) else None
        if name is not None and name not in recursive:
            target = inline(defs[name], depth + 1)
            siblings = {key: inline(item, depth + 1) for key, item in value.items() if key not in ("$ref", "$defs")}
            if set(siblings) <= {"description", "title"}:
                return {**target, **siblings}
            return {"allOf": [target], **siblings}
        return {key: inline(item, depth + 1) for key, item in value.items() if key != "$defs"}

    try:
        result = inline(schema, 0)
        kept = {name: inline(defs[name], 1) for name in sorted(recursive)}
    except _TooLarge:
        return schema
    used = _reachable(graph, _refs_in(result, names)) & recursive
    if used:
        result["$defs"] = {name: kept[name] for name in sorted(used)}
    return dict(result)


def _refs_in(value: Any, names: Mapping[str, str]) -> set[str]:
    found: set[str] = set()
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, Mapping):
            ref = item.get("$ref")
            if isinstance(ref, str) and ref in names:
                found.add(names[ref])
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return found


def _reachable(graph: Mapping[str, set[str]], start: Iterable[str]) -> set[str]:
    seen: set[str] = set()
    pending = list(start)
    while pending:
        name = pending.pop()
        if name not in seen:
            seen.add(name)
            pending.extend(graph.get(name, ()))
    return seen
