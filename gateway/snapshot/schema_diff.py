"""Classify the difference between two versions of one JSON Schema as breaking or not, for snapshot diffs.

A schema is read in a direction: `input` (what the agent sends: narrowing is breaking, widening is not),
`output` (what the agent receives: widening is breaking, narrowing is not) or `both` (any change of type is
breaking). Removing an enum value is breaking in every direction. Schemas are compared as trees; references to
named components (`$ref`) are compared by name, never followed, so a change inside a term is reported once,
on the term.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Literal

from catalog.render import type_of

__all__ = ["Direction", "SchemaChange", "schema_changes"]

Direction = Literal["input", "output", "both"]

SchemaChange = tuple[bool, str]
"""(breaking, message): one finding, its message starting with where it is (`arg 'x'`, `field 'y.z'`)."""

_WORDING = ("title", "description", "example", "examples", "default", "deprecated", "readOnly", "writeOnly")
_COMBINATORS = ("oneOf", "anyOf")
_MAX_VALUES = 8
#: Constraints that narrow what is accepted as they grow (True) or as they shrink (False).
_LOWER_BOUNDS = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")
_UPPER_BOUNDS = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")
_HANDLED = frozenset(
    {
        "$ref",
        "type",
        "nullable",
        "enum",
        "const",
        "format",
        "properties",
        "required",
        "items",
        "additionalProperties",
        "pattern",
        "multipleOf",
        "allOf",
        *_COMBINATORS,
        *_WORDING,
        *_LOWER_BOUNDS,
        *_UPPER_BOUNDS,
    }
)


def schema_changes(
    old: Any, new: Any, *, root: str, path: str = "", label: str | None = None, direction: Direction
) -> Iterator[SchemaChange]:
    """Each difference between `old` and `new`, classified; nothing when they are equal.

    `root` names what the schema's positions are in messages (`arg`, `field`); `path` is the position, shown
    quoted after it (`arg 'items[].quantity'`). `label` names the schema itself, at the empty path (default:
    `root`).
    """
    if old == new:
        return
    where = f"{root} {path!r}" if path else (label or root)
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        yield True, f"{where}: schema changed from {type_of(old)} to {type_of(new)}"
        return
    typed = list(_types(old, new, where, direction))
    yield from typed
    old_core, new_core = _core(old), _core(new)
    ignore = _HANDLED - set(_WORDING)
    if _ref(old_core) is not None or _ref(new_core) is not None:
        yield from _wording(old_core, new_core, where, ignore=ignore)
        return
    if _is_union(old, old_core) or _is_union(new, new_core):
        # Unions of objects or of several named types: judged by how they render, not structurally.
        if not typed:
            before, after = type_of(old), type_of(new)
            if before != after:
                yield True, f"{where}: type changed from {before} to {after}"
            else:
                yield False, f"{where}: schema details changed"
        return
    yield from _enum(old_core, new_core, where, direction)
    yield from _format(old_core, new_core, where, direction)
    yield from _bounds(old_core, new_core, where, direction)
    yield from _properties(old_core, new_core, root, path, where, direction)
    if old_core.get("items") != new_core.get("items"):
        yield from schema_changes(
            old_core.get("items"), new_core.get("items"), root=root, path=f"{path}[]", direction=direction
        )
    if old_core.get("allOf") != new_core.get("allOf"):
        before, after = type_of({"allOf": old_core.get("allOf")}), type_of({"allOf": new_core.get("allOf")})
        if before != after:
            yield True, f"{where}: type changed from {before} to {after}"
        else:
            yield False, f"{where}: schema details changed"
    yield from _wording(old_core, new_core, where, ignore=ignore)


def _ref(schema: Mapping[str, Any]) -> str | None:
    ref = schema.get("$ref")
    return ref if isinstance(ref, str) else None


def _alternatives(schema: Mapping[str, Any]) -> list[Any] | None:
    for key in _COMBINATORS:
        value = schema.get(key)
        if isinstance(value, list):
            return value
    return None


def _is_union(schema: Mapping[str, Any], core: Mapping[str, Any]) -> bool:
    """True for a oneOf/anyOf that is more than "X or null"."""
    return _alternatives(schema) is not None and core is schema


def _is_null(schema: Any) -> bool:
    return isinstance(schema, Mapping) and (schema.get("type") == "null" or schema.get("enum") == [None])


def _core(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """The schema without its null alternative: `anyOf: [X, {type: null}]` → X (with the outer wording)."""
    alternatives = _alternatives(schema)
    if alternatives is None:
        return schema
    others = [part for part in alternatives if not _is_null(part)]
    if len(others) != 1 or not isinstance(others[0], Mapping):
        return schema
    outer = {key: value for key, value in schema.items() if key not in _COMBINATORS}
    return {**outer, **others[0]}


def _type_set(schema: Any) -> frozenset[str] | None:
    """The JSON types (and named refs, as `ref:<name>`) a schema admits; None when any value is."""
    if not isinstance(schema, Mapping):
        return None
    ref = _ref(schema)
    if ref is not None:
        return frozenset({f"ref:{ref.rsplit('/', 1)[-1]}"})
    alternatives = _alternatives(schema)
    if alternatives is not None:
        found: set[str] = set()
        for part in alternatives:
            part_types = _type_set(part)
            if part_types is None:
                return None
            found |= part_types
        return frozenset(found)
    kind = schema.get("type")
    kinds: set[str]
    if isinstance(kind, str):
        kinds = {kind}
    elif isinstance(kind, list):
        kinds = {k for k in kind if isinstance(k, str)}
    elif "enum" in schema or "const" in schema:
        values = schema.get("enum") if "enum" in schema else [schema.get("const")]
        kinds = {_json_type(value) for value in values} if isinstance(values, list) else set()
    elif isinstance(schema.get("properties"), Mapping):
        kinds = {"object"}
    else:
        return None
    if schema.get("nullable") is True:
        kinds.add("null")
    return frozenset(kinds)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _covers(types: frozenset[str] | None, kind: str) -> bool:
    return types is None or kind in types or (kind == "integer" and "number" in types)


def _types(old: Mapping[str, Any], new: Mapping[str, Any], where: str, direction: Direction) -> Iterator[SchemaChange]:
    before, after = _type_set(old), _type_set(new)
    if before == after:
        return
    lost = (before is None and after is not None) or any(not _covers(after, kind) for kind in before or ())
    gained = (after is None and before is not None) or any(not _covers(before, kind) for kind in after or ())
    shown = f"from {type_of(old)} to {type_of(new)}"
    if lost and gained:
        yield True, f"{where}: type changed {shown}"
    elif lost:
        yield direction != "output", f"{where}: type narrowed {shown}"
    elif gained:
        yield direction != "input", f"{where}: type widened {shown}"


def _enum(old: Mapping[str, Any], new: Mapping[str, Any], where: str, direction: Direction) -> Iterator[SchemaChange]:
    before, after = _values(old), _values(new)
    if before == after:
        return
    if before is None and after is not None:
        yield direction != "output", f"{where}: now limited to {_list(after)}"
        return
    if after is None and before is not None:
        yield direction != "input", f"{where}: no longer limited to {_list(before)}"
        return
    removed = [value for value in before or [] if value not in (after or [])]
    added = [value for value in after or [] if value not in (before or [])]
    if removed:
        yield True, f"{where}: enum value{'s' if len(removed) > 1 else ''} {_list(removed)} removed"
    if added:
        yield False, f"{where}: enum value{'s' if len(added) > 1 else ''} {_list(added)} added"


def _values(schema: Mapping[str, Any]) -> list[Any] | None:
    if isinstance(schema.get("enum"), list):
        return list(schema["enum"])
    if "const" in schema:
        return [schema["const"]]
    return None


def _list(values: list[Any]) -> str:
    shown = ", ".join(type_of({"const": value}) for value in values[:_MAX_VALUES])
    return shown if len(values) <= _MAX_VALUES else f"{shown} and {len(values) - _MAX_VALUES} more"


def _format(old: Mapping[str, Any], new: Mapping[str, Any], where: str, direction: Direction) -> Iterator[SchemaChange]:
    before, after = old.get("format"), new.get("format")
    if before == after:
        return
    if before is None:
        yield direction != "output", f"{where}: format {after!r} added"
    elif after is None:
        yield direction != "input", f"{where}: format {before!r} removed"
    else:
        yield True, f"{where}: format changed from {before!r} to {after!r}"


def _bounds(old: Mapping[str, Any], new: Mapping[str, Any], where: str, direction: Direction) -> Iterator[SchemaChange]:
    for key in (*_LOWER_BOUNDS, *_UPPER_BOUNDS, "pattern", "multipleOf"):
        before, after = old.get(key), new.get(key)
        if before == after:
            continue
        if before is None:
            shown, tighter = f"{key} {after!r} added", True
        elif after is None:
            shown, tighter = f"{key} {before!r} removed", False
        else:
            shown = f"{key} {before!r} → {after!r}"
            try:
                tighter = key in ("pattern", "multipleOf") or (
                    after > before if key in _LOWER_BOUNDS else after < before
                )
            except TypeError:
                tighter = True
        if tighter:
            yield direction != "output", f"{where}: narrowed, {shown}"
        else:
            yield False, f"{where}: widened, {shown}"


def _properties(
    old: Mapping[str, Any], new: Mapping[str, Any], root: str, path: str, where: str, direction: Direction
) -> Iterator[SchemaChange]:
    before, after = _mapping(old.get("properties")), _mapping(new.get("properties"))
    required_before, required_after = _names(old.get("required")), _names(new.get("required"))
    prefix = f"{path}." if path else ""
    for name in before:
        if name not in after:
            yield True, f"{root} {prefix + name!r}: removed"
    for name in after:
        if name not in before:
            required = name in required_after
            breaking = required and direction != "output"
            yield breaking, f"{root} {prefix + name!r}: added{' as required' if required else ''}"
    for name in before:
        if name not in after:
            continue
        yield from schema_changes(before[name], after[name], root=root, path=prefix + name, direction=direction)
        was, now = name in required_before, name in required_after
        if was and not now:
            yield direction != "input", f"{root} {prefix + name!r}: now optional"
        elif now and not was:
            yield direction != "output", f"{root} {prefix + name!r}: now required"
    extra_before, extra_after = old.get("additionalProperties"), new.get("additionalProperties")
    if extra_before != extra_after:
        if extra_after is False:
            yield direction != "output", f"{where}: no longer accepts other properties"
        elif extra_before is False:
            yield direction != "input", f"{where}: now allows other properties"
        else:
            yield from schema_changes(extra_before, extra_after, root=root, path=f"{prefix}*", direction=direction)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _names(value: Any) -> set[str]:
    return {name for name in value if isinstance(name, str)} if isinstance(value, list) else set()


def _wording(
    old: Mapping[str, Any], new: Mapping[str, Any], where: str, *, ignore: frozenset[str] | set[str]
) -> Iterator[SchemaChange]:
    """Wording (descriptions, titles, examples, defaults, deprecation) and keywords this module does not judge."""
    changed = sorted(
        key
        for key in set(old) | set(new)
        if key not in ignore and key not in _COMBINATORS and old.get(key) != new.get(key)
    )
    if "deprecated" in changed:
        changed.remove("deprecated")
        yield False, f"{where}: {'now deprecated' if new.get('deprecated') is True else 'no longer deprecated'}"
    if changed:
        yield False, f"{where}: {', '.join(changed)} changed"
