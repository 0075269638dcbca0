"""The quick check says yes only where jsonschema finds nothing wrong, and says it for common arguments and answers."""

from __future__ import annotations

import itertools
from typing import Any

import jsonschema
import pytest

from gateway._quick_check import quick_check

SCHEMAS: list[dict[str, Any]] = [
    {"type": "object", "properties": {"id": {"type": "integer", "minimum": 1}}, "required": ["id"]},
    {"type": "object", "properties": {"q": {"type": "string", "maxLength": 3}}, "additionalProperties": False},
    {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2}}},
    {"type": "object", "properties": {"s": {"enum": ["a", "b", 1]}}, "additionalProperties": {"type": "number"}},
    {"type": "object", "properties": {"p": {"type": "string", "pattern": "^[a-z]+$"}}},
    {"type": "object", "properties": {"n": {"type": ["integer", "null"], "exclusiveMaximum": 10}}},
    {"type": "object", "properties": {"b": {"type": "boolean"}, "x": {"nullable": True, "format": "date"}}},
    {"type": "object", "properties": {"r": {"$ref": "#/$defs/x"}}, "$defs": {"x": {"type": "string"}}},
    {"type": "object", "properties": {"o": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}},
    {"type": "object", "properties": {"o": {"anyOf": [{"type": "string", "maxLength": 2}, {"type": "null"}]}}},
    {"type": "object", "properties": {"o": {"anyOf": [{"not": {"type": "string"}}, {"type": "integer"}]}}},
    {"type": "object", "properties": {"o": {"allOf": [{"type": "integer"}, {"minimum": 2}]}}},
    {"type": "object", "properties": {"o": {"allOf": [{"type": "integer"}, {"not": {"const": 3}}]}}},
    {"type": "object", "properties": {"k": {"const": "order"}, "o": {"const": 1}}},
]
VALUES: list[Any] = [
    {},
    {"id": 3},
    {"id": 0},
    {"id": True},
    {"id": 1.0},
    {"q": "abc"},
    {"q": "abcd"},
    {"q": "é"},
    {"tags": ["a", "b"]},
    {"tags": ["a", "b", "c"]},
    {"tags": [1]},
    {"s": "a"},
    {"s": 1},
    {"s": True},
    {"s": 1.0},
    {"other": 2.5},
    {"other": "x"},
    {"p": "abc"},
    {"p": "ab1"},
    {"p": "é"},
    {"n": None},
    {"n": 9},
    {"n": 10},
    {"n": float("nan")},
    {"b": False},
    {"b": 0},
    {"x": "not a date"},
    {"r": "x"},
    {"o": 1},
    {"o": 3},
    {"o": True},
    {"o": 1.0},
    {"o": None},
    {"o": "ab"},
    {"o": "abc"},
    {"k": "order"},
    {"k": "Order"},
    {"k": "order", "o": True},
    [],
    "text",
]


@pytest.mark.parametrize(("schema", "value"), list(itertools.product(SCHEMAS, VALUES)))
def test_a_quick_yes_is_never_a_value_jsonschema_refuses(schema: dict[str, Any], value: Any) -> None:
    check = quick_check(schema)
    if check is not None and check(value):
        assert list(jsonschema.Draft202012Validator(schema).iter_errors(value)) == []


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        (SCHEMAS[0], {"id": 3}),
        (SCHEMAS[1], {"q": "abc"}),
        (SCHEMAS[2], {"tags": ["a"]}),
        (SCHEMAS[3], {"s": "b", "extra": 2}),
        (SCHEMAS[5], {"n": None}),
        (SCHEMAS[6], {"b": True, "x": "2026-01-01"}),
        (SCHEMAS[9], {"o": None}),
        (SCHEMAS[9], {"o": "ab"}),
        (SCHEMAS[10], {"o": 4}),
        (SCHEMAS[11], {"o": 2}),
        (SCHEMAS[13], {"k": "order", "o": 1}),
    ],
)
def test_common_valid_arguments_get_a_quick_yes(schema: dict[str, Any], value: Any) -> None:
    check = quick_check(schema)
    assert check is not None and check(value)


def test_a_schema_with_keywords_it_does_not_know_is_left_to_jsonschema() -> None:
    assert quick_check(SCHEMAS[7]) is None
    assert quick_check(SCHEMAS[8]) is None
    assert quick_check(SCHEMAS[12]) is None  # allOf with a branch it cannot judge
    check = quick_check(SCHEMAS[10])  # anyOf: the branch it can judge still says yes, the other never does
    assert check is not None and check({"o": 4}) and not check({"o": "x"})
