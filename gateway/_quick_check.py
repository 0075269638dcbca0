"""A quick yes to "are these arguments valid?" for the simple schemas most calls have, before jsonschema runs.

`quick_check(schema)` compiles the schema into a predicate that answers True only when the value is certainly
valid under JSON Schema 2020-12 as the gateway's validators read it (`gateway.validators`: formats are annotations
there, unknown keywords are ignored, patterns run on RE2); False means "not sure": the caller then asks jsonschema,
which names every problem in its own words.
So a valid call skips jsonschema's per-call cost, and every verdict that refuses is still jsonschema's. A
schema with any assertion keyword this module does not know compiles to None (always ask jsonschema).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from gateway.patterns import is_checked, pattern_search

__all__ = ["Check", "quick_check"]

Check = Callable[[Any], bool]

#: Keywords that assert nothing (JSON Schema 2020-12 annotations, and OpenAPI's own words jsonschema ignores).
_ANNOTATIONS: Final = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$comment",
        "format",
        "nullable",
        "example",
        "externalDocs",
        "xml",
        "discriminator",
        "contentMediaType",
        "contentEncoding",
        "$schema",
        "$id",
    }
)
_KNOWN: Final = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "enum",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "pattern",
        "items",
        "minItems",
        "maxItems",
        "const",
        "anyOf",
        "allOf",
    }
)


def _type_check(kind: str) -> Check | None:
    if kind == "object":
        return lambda value: type(value) is dict
    if kind == "array":
        return lambda value: type(value) is list
    if kind == "string":
        return lambda value: type(value) is str
    if kind == "integer":  # 1.0 is an integer to jsonschema too, but then jsonschema says so
        return lambda value: type(value) is int
    if kind == "number":
        return lambda value: type(value) is int or type(value) is float
    if kind == "boolean":
        return lambda value: type(value) is bool
    if kind == "null":
        return lambda value: value is None
    return None


def _number(value: object) -> bool:
    return type(value) is int or type(value) is float


def quick_check(schema: object) -> Check | None:
    """The predicate for `schema` (True: certainly valid; False: ask jsonschema), or None when it cannot help."""
    if schema is True or schema == {}:
        return lambda value: True
    if not isinstance(schema, dict):
        return None
    keys = set(schema) - _ANNOTATIONS
    if not keys <= _KNOWN:
        return None
    checks: list[Check] = []
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        parts = [_type_check(k) for k in kinds if isinstance(k, str)]
        if not parts or any(part is None for part in parts) or len(parts) != len(kinds):
            return None
        type_checks = [part for part in parts if part is not None]
        checks.append(lambda value: any(check(value) for check in type_checks))
    if "properties" in schema or "required" in schema or "additionalProperties" in schema:
        object_check = _object_check(schema)
        if object_check is None:
            return None
        checks.append(object_check)
    if "enum" in schema:
        enum = schema["enum"]
        if not isinstance(enum, list):
            return None
        # Only same-typed equality counts (jsonschema tells 1 from True, and 1 from 1.0 in some places).
        allowed = [(type(item), item) for item in enum if type(item) in (str, int, bool) or item is None]
        checks.append(lambda value: (type(value), value) in allowed)
    bounds = [
        (key, schema[key]) for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum") if key in schema
    ]
    if bounds:
        if not all(_number(limit) for _, limit in bounds):
            return None
        checks.append(lambda value: not _number(value) or all(_within(key, limit, value) for key, limit in bounds))
    lengths = [(key, schema[key]) for key in ("minLength", "maxLength") if key in schema]
    if "pattern" in schema or lengths:
        string_check = _string_check(schema.get("pattern"), lengths)
        if string_check is None:
            return None
        checks.append(string_check)
    if "const" in schema:
        const = schema["const"]
        if not (type(const) in (str, int, bool) or const is None):
            return None
        checks.append(lambda value: type(value) is type(const) and value == const)
    for keyword in ("anyOf", "allOf"):
        if keyword in schema:
            combined = _combined_check(keyword, schema[keyword])
            if combined is None:
                return None
            checks.append(combined)
    if "items" in schema or "minItems" in schema or "maxItems" in schema:
        array_check = _array_check(schema)
        if array_check is None:
            return None
        checks.append(array_check)
    if len(checks) == 1:
        return checks[0]
    return lambda value: all(check(value) for check in checks)


def _combined_check(keyword: str, branches: object) -> Check | None:
    """`anyOf`: certainly valid when one branch certainly is (a branch it cannot judge just never says so);
    `allOf`: when every branch certainly is."""
    if not isinstance(branches, list) or not branches:
        return None
    compiled = [quick_check(branch) for branch in branches]
    known = [check for check in compiled if check is not None]
    if keyword == "anyOf":
        return (lambda value: any(check(value) for check in known)) if known else None
    if len(known) != len(compiled):
        return None
    return lambda value: all(check(value) for check in known)


def _within(key: str, limit: float, value: float) -> bool:
    if key == "minimum":
        return value >= limit
    if key == "maximum":
        return value <= limit
    if key == "exclusiveMinimum":
        return value > limit
    return value < limit


def _object_check(schema: dict[str, Any]) -> Check | None:
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if not isinstance(properties, dict) or not isinstance(required, list):
        return None
    compiled: dict[str, Check] = {}
    for name, sub in properties.items():
        check = quick_check(sub)
        if check is None:
            return None
        compiled[name] = check
    extra_check = quick_check(extra) if extra is not False else None
    if extra is not False and extra_check is None:
        return None
    needed = tuple(required)

    def check_object(value: Any) -> bool:
        if type(value) is not dict:
            return True  # not an object: `type` decides
        for name in needed:
            if name not in value:
                return False
        for name, item in value.items():
            check = compiled.get(name)
            if check is not None:
                if not check(item):
                    return False
            elif extra_check is None or not extra_check(item):
                return False
        return True

    return check_object


def _string_check(pattern: object, lengths: list[tuple[str, Any]]) -> Check | None:
    if pattern is not None and not isinstance(pattern, str):
        return None
    if not all(type(limit) is int for _, limit in lengths):
        return None
    if pattern is not None and not is_checked(pattern):
        return None  # a pattern the gateway does not check: left to jsonschema's keyword, which passes it
    low = next((limit for key, limit in lengths if key == "minLength"), 0)
    high = next((limit for key, limit in lengths if key == "maxLength"), None)

    def check_string(value: Any) -> bool:
        if type(value) is not str:
            return True
        if len(value) < low or (high is not None and len(value) > high):
            return False
        # Only plain ASCII is decided here; anything else goes to jsonschema.
        return pattern is None or (value.isascii() and pattern_search(pattern, value) is True)

    return check_string


def _array_check(schema: dict[str, Any]) -> Check | None:
    items = schema.get("items", True)
    item_check = quick_check(items)
    low, high = schema.get("minItems", 0), schema.get("maxItems")
    if item_check is None or type(low) is not int or (high is not None and type(high) is not int):
        return None

    def check_array(value: Any) -> bool:
        if type(value) is not list:
            return True
        if len(value) < low or (high is not None and len(value) > high):
            return False
        return all(item_check(item) for item in value)

    return check_array
