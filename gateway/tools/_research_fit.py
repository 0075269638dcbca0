"""Does a catalog function's answer fit a research data mapping? Checks against its response schema, and lookups.

Used by `gateway.tools.research` when a `DataSource` is built: a mapped field that the response schema clearly lacks
is a ConfigError naming the fields there are. A schema that cannot tell (none, open objects, unions) passes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog.model import Function
from gateway.errors import ConfigError

__all__ = ["check_record", "effective_schema", "field_at", "records_path"]

_MAX_REF_HOPS = 10


def field_at(value: Any, path: str | None) -> Any:
    """The value at dotted `path` inside nested objects, or None (also for a None path)."""
    if path is None:
        return None
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def records_path(function: Function, items: str | None, fields: Mapping[str, str | None]) -> str | None:
    """The dotted path of the record list in `function`'s answer: `items`, or inferred from its response schema.

    None means the answer itself is the list. ConfigError when `items` names no field of the answer, is not a
    list, or cannot be inferred (an object answer without exactly one list field); the records' schema is then
    checked against `fields` (option name → dotted field path) as `check_record` does.
    """
    output = function.output_schema()
    if output is None:
        return items
    defs = output.get("$defs", {})
    schema = effective_schema(output, defs)
    if items is None:
        lists: list[str] = [
            name
            for name, sub in schema.get("properties", {}).items()
            if effective_schema(sub, defs).get("type") == "array"
        ]
        if len(lists) != 1:
            raise ConfigError(
                f"DataSource.items: {function.name!r} answers an object, not a list; set items to the field "
                f"holding the records (its list fields: {', '.join(lists) or 'none'})"
            )
        items = lists[0]
    for part in items.split("."):
        found = _property(schema, part, defs)
        if found is None:
            raise ConfigError(
                f"DataSource.items: {function.name!r}'s answer has no field {part!r} "
                f"(its fields: {', '.join(schema.get('properties', {})) or 'none'})"
            )
        schema = found
    if schema.get("type") not in (None, "array"):
        raise ConfigError(f"DataSource.items: {items!r} of {function.name!r}'s answer is not a list")
    check_record(function, {**effective_schema(schema.get("items"), defs), "$defs": defs}, fields)
    return items


def check_record(function: Function, schema: dict[str, Any] | None, fields: Mapping[str, str | None]) -> None:
    """ConfigError when the record `schema` (with its `$defs`) clearly lacks one of the mapped `fields`."""
    if schema is None:
        return
    defs = schema.get("$defs", {})
    record = effective_schema(schema, defs)
    for option, path in fields.items():
        if path is None:
            continue
        current: dict[str, Any] | None = record
        for part in path.split("."):
            current = _property(current, part, defs) if current else {}
            if current is None:
                known = ", ".join(record.get("properties", {})) or "none"
                raise ConfigError(
                    f"DataSource.{option}: the records {function.name!r} returns have no field {path!r} "
                    f"(their fields: {known})"
                )


def effective_schema(schema: Any, defs: Mapping[str, Any]) -> dict[str, Any]:
    """`schema` with local `$ref`s followed and a nullable `anyOf` unwrapped; {} when it is not a schema object."""
    for _ in range(_MAX_REF_HOPS):
        if not isinstance(schema, dict):
            return {}
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            schema = defs.get(ref.removeprefix("#/$defs/"), {})
            continue
        branches = [b for b in schema.get("anyOf", ()) if not (isinstance(b, dict) and b.get("type") == "null")]
        if len(branches) == 1 and "type" not in schema:
            schema = branches[0]
            continue
        return schema
    return {}


def _property(schema: dict[str, Any], part: str, defs: Mapping[str, Any]) -> dict[str, Any] | None:
    """The schema of property `part`: {} when the schema cannot tell, None when it clearly has no such property."""
    properties = schema.get("properties")
    # An object that lists its properties (and gives no schema for others) is taken at its word.
    if not isinstance(properties, dict) or schema.get("additionalProperties") not in (None, False):
        return {}
    if part not in properties:
        return None
    return effective_schema(properties[part], defs)
