"""The kinds of OpenAPI 3.x objects that can hold `$ref`s, and which of their fields hold which kinds.

A kind is an object kind (`schema`, `operation`, ...), `X{}` for a map of X, `X[]` for a list of X, `schema|[]`
for a schema or a list of them (`items`), `text` for a string field (`description`), or `any` for extension and
unknown values. The tables follow redocly's type tree (packages/core/src/types/oas3.ts), fields in its order.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["DATA", "MAPS", "SECTIONS", "children"]

#: Where a target of each kind is kept when it becomes a component (redocly's mapTypeToComponent).
SECTIONS = {
    "schema": "schemas",
    "parameter": "parameters",
    "response": "responses",
    "example": "examples",
    "requestBody": "requestBodies",
    "header": "headers",
    "securityScheme": "securitySchemes",
    "link": "links",
    "callback": "callbacks",
}
_OPERATION = "operation"
_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_PARAMETER_FIELDS = {"description": "text", "schema": "schema", "examples": "example{}", "content": "mediaType{}"}
_SUBSCHEMA = "schema"
#: The fields of each object kind that can hold refs, in the order redocly visits them (types/oas3.ts); other
#: keys are visited afterwards as `any`, except the values in `DATA`. `X{}` is a map of X, `X[]` a list of X.
_FIELDS: dict[str, dict[str, str]] = {
    "root": {
        "info": "info",
        "tags": "tag[]",
        "paths": "paths",
        "webhooks": "pathItem{}",
        "components": "components",
    },
    "info": {"description": "text"},
    "tag": {"description": "text"},
    "pathItem": {
        "parameters": "parameter[]",
        "summary": "text",
        "description": "text",
        **dict.fromkeys(_METHODS, _OPERATION),
    },
    _OPERATION: {
        "summary": "text",
        "description": "text",
        "parameters": "parameter[]",
        "requestBody": "requestBody",
        "responses": "responses",
        "callbacks": "callback{}",
        "x-codeSamples": "any[]",
        "x-code-samples": "any[]",
    },
    "parameter": _PARAMETER_FIELDS,
    "header": _PARAMETER_FIELDS,
    "requestBody": {"description": "text", "content": "mediaType{}"},
    "mediaType": {"schema": "schema", "examples": "example{}", "encoding": "encoding{}"},
    "encoding": {"headers": "header{}"},
    "response": {"description": "text", "headers": "header{}", "content": "mediaType{}", "links": "link{}"},
    "link": {"description": "text"},
    "example": {"description": "text"},
    "securityScheme": {"description": "text"},
    "discriminator": {"mapping": "mapping"},
    "components": {
        "parameters": "parameter{}",
        "schemas": "schema{}",
        "responses": "response{}",
        "examples": "example{}",
        "requestBodies": "requestBody{}",
        "headers": "header{}",
        "securitySchemes": "securityScheme{}",
        "links": "link{}",
        "callbacks": "callback{}",
        "pathItems": "pathItem{}",
    },
    "schema": {
        "discriminator": "discriminator",
        "allOf": "schema[]",
        "anyOf": "schema[]",
        "oneOf": "schema[]",
        "not": _SUBSCHEMA,
        "properties": "schema{}",
        "items": "schema|[]",
        "additionalProperties": _SUBSCHEMA,
        "description": "text",
        "prefixItems": "schema[]",
        "if": _SUBSCHEMA,
        "then": _SUBSCHEMA,
        "else": _SUBSCHEMA,
        "contains": _SUBSCHEMA,
        "propertyNames": _SUBSCHEMA,
        "additionalItems": _SUBSCHEMA,
        "unevaluatedItems": _SUBSCHEMA,
        "unevaluatedProperties": _SUBSCHEMA,
        "contentSchema": _SUBSCHEMA,
        "patternProperties": "schema{}",
        "dependentSchemas": "schema{}",
        "$defs": "schema{}",
        "definitions": "schema{}",
    },
}
#: Keys whose values are data (examples, defaults, enums): a `$ref` in them is not a reference.
DATA = frozenset({"example", "examples", "default", "enum", "const", "value"})
MAPS = frozenset({"paths", "responses", "callback", "mapping"}) | {
    f"{kind}{{}}" for kind in (*SECTIONS, "pathItem", "mediaType", "encoding")
}
_RESPONSE_CODE = re.compile(r"^[0-9][0-9Xx]{2}$")


def children(kind: str, node: dict[str, Any]) -> list[tuple[str, str]]:
    """The keys of `node` that may hold refs, with their kinds, in redocly's visiting order (a snapshot: the
    walk adds components to the maps it is walking)."""
    if kind.endswith("{}"):
        return [(key, kind[:-2]) for key in node if key != "$ref"]
    if kind == "paths":
        return [(key, "pathItem" if key.startswith("/") else "any") for key in node]
    if kind == "responses":
        keys = sorted(node, key=lambda k: k != "default")
        return [(key, "response" if key == "default" or _RESPONSE_CODE.match(key) else "any") for key in keys]
    if kind == "callback":
        return [(key, "any" if key.startswith("x-") else "pathItem") for key in node]
    if kind == "any":
        return [(key, "any") for key in node if key != "$ref"]
    if kind == "text":
        return []
    fields = _FIELDS.get(kind, {})
    children = [
        (key, "schema" if child == "schema|[]" and not isinstance(node[key], list) else child)
        for key, child in fields.items()
        if key in node
    ]
    for key, value in node.items():
        if key in fields or key == "$ref":
            continue
        if key not in DATA:
            children.append((key, "any"))
        elif key != "value" and isinstance(value, dict) and isinstance(value.get("$ref"), str):
            children.append((key, "text"))  # redocly inlines a ref that is a whole example or default
    return children
