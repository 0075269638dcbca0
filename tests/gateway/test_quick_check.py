"""The quick check says yes only where the gateway's validators (jsonschema, patterns on RE2) find nothing wrong,
and says it for common arguments and answers."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from gateway._quick_check import quick_check
from gateway.validators import validator_for

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
        assert list(validator_for(schema)(schema).iter_errors(value)) == []


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


#: Every keyword it knows, at once: a schema may use them all.
EVERY_KEYWORD: dict[str, Any] = {
    "type": "integer",
    "properties": {},
    "required": [],
    "additionalProperties": True,
    "enum": [1, 2],
    "minimum": 0,
    "maximum": 2,
    "exclusiveMinimum": 0,
    "exclusiveMaximum": 2,
    "minLength": 0,
    "maxLength": 1,
    "pattern": "x",
    "items": True,
    "minItems": 0,
    "maxItems": 1,
    "const": 1,
    "anyOf": [{}],
    "allOf": [{}],
}


@pytest.mark.parametrize(
    ("schema", "value", "quick"),
    [
        ({}, "anything", True),
        (True, None, True),
        (EVERY_KEYWORD, 1, True),
        ({"type": "number"}, 2.5, True),
        ({"enum": ["a", None]}, None, True),
        ({"type": "number"}, "2.5", False),
        ({"maximum": 5}, 5, True),
        ({"maximum": 5}, 4.5, True),
        ({"maximum": 5}, 5.5, False),
        ({"exclusiveMinimum": 0}, 0, False),
        ({"exclusiveMinimum": 0}, 0.5, True),
        ({"minimum": 1, "exclusiveMaximum": 3}, 2.5, True),
        ({"required": ["id"]}, {"id": 1, "other": "x"}, True),
        ({"required": ["id"]}, {}, False),
        ({"properties": {"a": {"type": "string"}}}, {"b": 1}, True),
        ({"properties": {"a": {"type": "string"}}}, "not an object", True),
        ({"properties": {"a": {"type": "string"}}, "additionalProperties": False}, {"b": 1}, False),
        ({"pattern": "^a"}, "abc", True),
        ({"pattern": "^a"}, "bc", False),
        ({"minLength": 2}, "a", False),
        ({"minLength": 2}, "ab", True),
        ({"minLength": 2}, 5, True),
        ({"maxLength": 3}, "", True),
        ({"minLength": 2, "maxLength": 3}, "ab", True),
        ({"minLength": 2, "maxLength": 3}, "abcd", False),
        ({"minItems": 1}, [], False),
        ({"minItems": 1}, [1, "x"], True),
        ({"minItems": 1}, "not an array", True),
        ({"maxItems": 2}, [], True),
        ({"maxItems": 2}, [1, 2], True),
        ({"maxItems": 2}, [1, 2, 3], False),
        ({"items": {"type": "integer"}}, [1, "x"], False),
    ],
)
def test_each_keyword_says_yes_up_to_its_bound_and_no_past_it(schema: Any, value: Any, quick: bool) -> None:
    check = quick_check(schema)
    assert check is not None
    assert check(value) is quick
    assert (list(validator_for(schema)(schema).iter_errors(value)) == []) is quick


@pytest.mark.parametrize(
    "schema",
    [
        {"type": []},
        {"type": ["string", 5]},
        {"type": ["string", "date"]},
        {"allOf": []},
        {"anyOf": "x"},
        {"anyOf": [{"not": {}}]},
        {"properties": "x"},
        {"required": "id"},
        {"properties": {"a": {"not": {}}}},
        {"additionalProperties": {"not": {}}},
        {"pattern": 5},
        {"pattern": "("},
        {"pattern": "^(?=a)"},
        {"minLength": "2"},
        {"items": {"not": {}}},
        {"minItems": "1"},
        {"maxItems": "2"},
        {"maximum": "5"},
        {"enum": "a"},
        {"const": 1.5},
    ],
)
def test_a_schema_it_cannot_read_is_left_to_jsonschema(schema: dict[str, Any]) -> None:
    assert quick_check(schema) is None
