"""The jsonschema validator classes every value the gateway checks goes through: arguments, promoted tools' inputs
and structured answers.

Each is jsonschema's class for the schema's dialect, with the keywords that match regular expressions replaced so
that the document's patterns run on RE2 (`gateway.patterns`), never on Python's backtracking `re`. A pattern RE2
cannot run is not checked: `pattern` passes, a `patternProperties` name counts as matched (its schema is not
applied), and `unevaluatedProperties` is not checked in a schema that has `patternProperties` anywhere (jsonschema
works out what those matched in code of its own that calls `re`). A subschema naming a dialect of its own (`$schema`)
gets jsonschema's class back: the catalog's schemas have none.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any

import jsonschema
from jsonschema.protocols import Validator

from gateway.patterns import pattern_search

__all__ = ["linear", "validator_for"]


def validator_for(schema: Mapping[str, Any] | bool) -> type[Validator]:
    """The validator class of the schema's `$schema` dialect (JSON Schema 2020-12 when it names none), matching
    the schema's patterns in linear time."""
    dialect = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return _linear(dialect, pattern_properties=_has_pattern_properties(schema))


def linear(dialect: type[Validator]) -> type[Validator]:
    """`dialect` (any jsonschema validator class, openapi-core's among them) matching patterns in linear time, for
    schemas not seen in advance: `unevaluatedProperties` is not checked beside a `patternProperties` anywhere."""
    return _linear(dialect, pattern_properties=True)


@functools.cache
def _linear(dialect: type[Validator], *, pattern_properties: bool) -> type[Validator]:
    keywords: dict[str, Any] = {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": functools.partial(
            _additional_properties, dialect.VALIDATORS.get("additionalProperties")
        ),
    }
    if pattern_properties and "unevaluatedProperties" in dialect.VALIDATORS:
        keywords["unevaluatedProperties"] = _not_checked
    return jsonschema.validators.extend(dialect, keywords)  # type: ignore[no-untyped-call,no-any-return]


def _has_pattern_properties(schema: object) -> bool:
    pending = [schema]
    while pending:
        value = pending.pop()
        if isinstance(value, Mapping):
            if "patternProperties" in value:
                return True
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
    return False


def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Iterator[jsonschema.ValidationError]:
    # jsonschema's own keyword, and its wording, with RE2's search for `re.search`.
    if not validator.is_type(instance, "string") or not isinstance(pattern, str):
        return
    if pattern_search(pattern, instance) is False:
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Any, instance: Any, schema: Any
) -> Iterator[jsonschema.ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for name, value in instance.items():
            if pattern_search(pattern, name):
                yield from validator.descend(value, subschema, path=name, schema_path=pattern)


def _matched_by_none(name: str, patterns: Mapping[str, Any]) -> bool:
    """Whether no pattern matches `name`; one the gateway does not check counts as a match."""
    return all(pattern_search(pattern, name) is False for pattern in patterns)


def _additional_properties(
    original: Any, validator: Any, additional: Any, instance: Any, schema: Any
) -> Iterator[jsonschema.ValidationError]:
    patterns = schema.get("patternProperties")
    if not isinstance(patterns, Mapping) or not patterns:
        yield from original(validator, additional, instance, schema)  # no pattern: jsonschema's own keyword
        return
    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    extras = [name for name in instance if name not in properties and _matched_by_none(name, patterns)]
    # jsonschema's additionalProperties from here on, and its wording.
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        verb = "does" if len(extras) == 1 else "do"
        joined = ", ".join(repr(extra) for extra in sorted(extras))
        listed = ", ".join(repr(pattern) for pattern in sorted(patterns))
        yield jsonschema.ValidationError(f"{joined} {verb} not match any of the regexes: {listed}")


def _not_checked(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[jsonschema.ValidationError]:
    return iter(())
