"""The gateway's validators check what jsonschema checks, in its words, with the document's patterns on RE2: in
time linear in the value, and a pattern RE2 cannot run is not checked."""

from __future__ import annotations

import time
from typing import Any

import pytest

from gateway.patterns import pattern_search
from gateway.validators import validator_for

#: Python's `re` takes minutes to find that `^(a+)+$` does not match this (x4 for each 2 more characters).
HOSTILE = "a" * 32 + "!"


def problems(schema: dict[str, Any], value: Any) -> list[str]:
    return sorted(error.message for error in validator_for(schema)(schema).iter_errors(value))


def test_a_property_name_is_matched_against_pattern_properties_in_linear_time() -> None:
    schema = {"type": "object", "patternProperties": {"^(a+)+$": {"type": "integer"}}, "additionalProperties": False}
    started = time.perf_counter()
    assert problems(schema, {HOSTILE: 1}) == [f"{HOSTILE!r} does not match any of the regexes: '^(a+)+$'"]
    assert time.perf_counter() - started < 1
    assert problems(schema, {"aaa": "x"}) == ["'x' is not of type 'integer'"]
    assert problems(schema, {"aaa": 1}) == []


def test_additional_properties_beside_pattern_properties_get_the_additional_schema() -> None:
    schema = {
        "type": "object",
        "patternProperties": {"^x-": {"type": "string"}},
        "additionalProperties": {"type": "integer"},
    }
    assert problems(schema, {"x-a": "s", "b": 1}) == []
    assert problems(schema, {"x-a": 1, "b": "s"}) == ["'s' is not of type 'integer'", "1 is not of type 'string'"]


def test_a_property_name_a_pattern_the_gateway_cannot_run_might_match_is_left_to_the_api() -> None:
    schema = {"type": "object", "patternProperties": {"^(?=x)x-": {"type": "string"}}, "additionalProperties": False}
    assert problems(schema, {"y": 1}) == []


def test_unevaluated_properties_is_left_to_the_api_only_beside_pattern_properties() -> None:
    beside = {"type": "object", "patternProperties": {"^(a+)+$": {}}, "unevaluatedProperties": False}
    started = time.perf_counter()
    assert problems(beside, {HOSTILE: 1}) == []
    assert time.perf_counter() - started < 1
    alone = {"type": "object", "properties": {"a": {}}, "unevaluatedProperties": False}
    assert problems(alone, {"a": 1, "b": 2}) == ["Unevaluated properties are not allowed ('b' was unexpected)"]


@pytest.mark.parametrize(
    "dialect", ["http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft/2019-09/schema"]
)
def test_every_dialect_matches_patterns_in_linear_time(dialect: str) -> None:
    schema = {"$schema": dialect, "type": "string", "pattern": "^(a+)+$"}
    started = time.perf_counter()
    assert problems(schema, HOSTILE) == [f"{HOSTILE!r} does not match '^(a+)+$'"]
    assert time.perf_counter() - started < 1


def test_a_pattern_is_not_anchored_and_asks_nothing_of_other_types() -> None:
    schema = {"pattern": "[0-9]"}
    assert problems(schema, "ab1c") == []
    assert problems(schema, "abc") == ["'abc' does not match '[0-9]'"]
    assert problems(schema, 5) == []


def test_unicode_escapes_written_as_ecmascript_writes_them_are_checked() -> None:
    assert pattern_search(r"^[\u0041-\u005A]+$", "ABC") is True
    assert pattern_search(r"^[\u0041-\u005A]+$", "abc") is False
    assert pattern_search(r"^\\u0041$", "\\u0041") is True  # an escaped backslash, then the letters u0041
    assert pattern_search(r"^\\u0041$", "A") is False
