"""`argument_problems`: what is wrong with a call's arguments, in one wording, naming the argument at fault; and
`oversized`, the bounds on how large and how deep one call's arguments may be."""

from __future__ import annotations

from typing import Any

import jsonschema

from catalog.render import FILE_HINT
from catalog.schemas import file_schema
from gateway.arguments import ArgumentProblem, ArgumentProblems, argument_problems, oversized, schema_message
from gateway.limits import Limits


def problems(schema: dict[str, Any], args: dict[str, Any]) -> list[tuple[str, str]]:
    found = argument_problems(jsonschema.Draft202012Validator(schema), args)
    return [(problem.arg, problem.text) for problem in found]


SIGNATURE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "owner": {"type": "string"},
        "repo": {"type": "string"},
        "item": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}},
            "required": ["name"],
            "additionalProperties": False,
        },
    },
    "required": ["owner", "repo"],
    "additionalProperties": False,
}


def test_missing_arguments_are_named_each_at_the_top_level() -> None:
    assert problems(SIGNATURE, {"owner": "o"}) == [("repo", "missing required argument 'repo'")]
    assert problems(SIGNATURE, {}) == [
        ("owner", "missing required argument 'owner'"),
        ("repo", "missing required argument 'repo'"),
    ]


def test_a_missing_nested_field_is_named_by_its_path_and_blames_its_top_argument() -> None:
    found = problems(SIGNATURE, {"owner": "o", "repo": "r", "item": {}})
    assert found == [("item", "missing required argument 'item.name'")]


def test_an_unknown_argument_lists_the_allowed_names() -> None:
    found = problems(SIGNATURE, {"owner": "o", "repo": "r", "colour": 1})
    assert found == [("colour", "unknown argument 'colour' (allowed: item, owner, repo)")]
    nested = problems(SIGNATURE, {"owner": "o", "repo": "r", "item": {"name": "n", "size": 2}})
    assert nested == [("item", "unknown argument 'item.size' (allowed: name, tags)")]


def test_an_unknown_argument_of_a_function_without_arguments_says_none_are_allowed() -> None:
    assert problems({"type": "object", "additionalProperties": False}, {"x": 1}) == [
        ("x", "unknown argument 'x' (allowed: none)")
    ]


def test_the_allowed_names_are_cut_at_twenty_five_and_the_rest_counted() -> None:
    names = [f"p{n:02}" for n in range(30)]
    schema = {"type": "object", "properties": {name: {} for name in names}, "additionalProperties": False}
    ((_, text),) = problems(schema, {"zz": 1})
    assert text == f"unknown argument 'zz' (allowed: {', '.join(names[:25])}, … 5 more)"
    exactly = {"type": "object", "properties": {name: {} for name in names[:25]}, "additionalProperties": False}
    assert problems(exactly, {"zz": 1}) == [("zz", f"unknown argument 'zz' (allowed: {', '.join(names[:25])})")]


def listing(schema: dict[str, Any], args: dict[str, Any]) -> str:
    return argument_problems(jsonschema.Draft202012Validator(schema), args).text()


def test_unknown_names_past_the_first_ten_are_counted_not_listed() -> None:
    flood = {f"k{index}": 1 for index in range(25)}
    found = argument_problems(jsonschema.Draft202012Validator(SIGNATURE), {"owner": "o", "repo": "r", **flood})
    assert [problem.arg for problem in found] == [f"k{index}" for index in range(10)]
    assert found.text() == (
        "; ".join(f"unknown argument 'k{index}' (allowed: item, owner, repo)" for index in range(10))
        + "; and 15 more unknown arguments"
    )
    nested = listing(SIGNATURE, {"owner": "o", "repo": "r", "item": {"name": "n", **flood}})
    assert nested.endswith("unknown argument 'item.k9' (allowed: name, tags); and 15 more unknown arguments")


def test_the_problems_listed_before_unknown_names_take_their_room_and_one_more_is_said_so() -> None:
    flood = {f"k{index}": 1 for index in range(10)}
    assert listing(SIGNATURE, {"repo": 1, **flood}) == (
        "missing required argument 'owner'; "
        + "; ".join(f"unknown argument 'k{index}' (allowed: item, owner, repo)" for index in range(9))
        + "; and 2 more problems"
    )
    assert listing(SIGNATURE, {"repo": "r", **flood}).endswith(
        "'k8' (allowed: item, owner, repo); and 1 more unknown argument"
    )


def test_a_flood_of_wrong_items_lists_ten_in_index_order_and_says_there_are_more() -> None:
    schema = {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}}
    assert listing(schema, {"tags": [1] * 12}) == (
        "; ".join(f"argument 'tags[{index}]': 1 is not of type 'string'" for index in range(10))
        + "; and 2 more problems"
    )
    assert listing(schema, {"tags": [1] * 5_000}).endswith(
        "argument 'tags[9]': 1 is not of type 'string'; and at least 990 more problems"
    )


def test_no_problem_at_all_lists_nothing() -> None:
    found = argument_problems(jsonschema.Draft202012Validator(SIGNATURE), {"owner": "o", "repo": "r"})
    assert (bool(found), found.text(), found.args()) == (False, "", [])
    assert found == ArgumentProblems()


def test_a_long_name_the_caller_chose_is_cut_short_in_a_path() -> None:
    schema = {"type": "object", "properties": {"counts": {"additionalProperties": {"type": "integer"}}}}
    ((arg, text),) = problems(schema, {"counts": {"x" * 10_000: "many"}})
    assert arg == "counts"
    assert text.startswith("argument 'counts.xxx") and "(10,007 characters): 'many' is not of type 'integer'" in text
    assert len(text) < 200


def test_names_refused_by_pattern_properties_get_the_validators_own_wording() -> None:
    schema = {"type": "object", "patternProperties": {"^x-": {}}, "additionalProperties": False}
    ((arg, text),) = problems(schema, {"y": 1})
    assert arg == "args" and text.startswith("arguments: ") and "'y'" in text


def test_a_wrong_type_deep_inside_names_the_path_with_indexes() -> None:
    found = problems(SIGNATURE, {"owner": "o", "repo": "r", "item": {"name": "n", "tags": ["a", 2]}})
    assert found == [("item", "argument 'item.tags[1]': 2 is not of type 'string'")]


def test_a_value_of_none_of_an_optional_arguments_types_names_the_types() -> None:
    # pydantic writes `ready: bool | None` so (MLServer's repository.index); the validator's own message names
    # no type.
    optional = {"type": "object", "properties": {"ready": {"anyOf": [{"type": "boolean"}, {"type": "null"}]}}}
    assert problems(optional, {"ready": "yes"}) == [
        ("ready", "argument 'ready': 'yes' is not of type 'boolean' or 'null'")
    ]


def test_a_value_that_fails_an_alternative_for_another_reason_than_its_type_keeps_the_validators_message() -> None:
    short = {
        "type": "object",
        "properties": {"code": {"anyOf": [{"type": "string", "maxLength": 2}, {"type": "null"}]}},
    }
    assert problems(short, {"code": "abc"}) == [
        ("code", "argument 'code': 'abc' is not valid under any of the given schemas")
    ]


def test_arguments_that_are_wrong_as_a_whole_are_blamed_on_args() -> None:
    assert problems({"type": "object", "maxProperties": 1}, {"a": 1, "b": 2}) == [
        ("args", "arguments: {'a': 1, 'b': 2} has too many properties")
    ]


def test_problems_come_in_order_of_where_they_are_and_each_once() -> None:
    schema = {
        "type": "object",
        "properties": {"b": {"type": "string"}, "a": {"type": "string", "maxLength": 1}},
        "allOf": [{"properties": {"a": {"type": "string"}}}],
    }
    found = problems(schema, {"b": 1, "a": 2})
    assert found == [
        ("a", "argument 'a': 2 is not of type 'string'"),
        ("b", "argument 'b': 1 is not of type 'string'"),
    ]
    assert all(
        isinstance(problem, ArgumentProblem)
        for problem in argument_problems(jsonschema.Draft202012Validator(schema), {"a": 2})
    )


def test_a_long_offending_value_is_cut_short_and_its_length_given() -> None:
    value = "a" * 100
    ((_, text),) = problems({"type": "object", "properties": {"s": {"maxLength": 3}}}, {"s": value})
    assert text == f"argument 's': {repr(value)[:60]}… (102 characters) is too long"


def test_a_value_of_sixty_characters_is_quoted_whole() -> None:
    value = "a" * 58  # 60 characters with its quotes
    ((_, text),) = problems({"type": "object", "properties": {"s": {"maxLength": 3}}}, {"s": value})
    assert text == f"argument 's': {value!r} is too long"


def test_only_the_offending_value_is_cut_and_the_schema_quoting_it_stays_whole() -> None:
    value = "a" * 100
    schema = {"type": "object", "properties": {"s": {"not": {"const": value}}}}
    ((_, text),) = problems(schema, {"s": value})
    cut = f"{repr(value)[:60]}… (102 characters)"
    assert text == f"argument 's': {cut} should not be valid under {{'const': {value!r}}}"


def test_problems_of_validators_with_a_list_value_get_the_validators_own_wording() -> None:
    schema = {
        "type": "object",
        "properties": {"colour": {"enum": ["red", "blue"]}, "item": {"type": ["string", "null"]}},
    }
    assert problems(schema, {"colour": "green", "item": {"string": 1}}) == [
        ("colour", "argument 'colour': 'green' is not one of ['red', 'blue']"),
        ("item", "argument 'item': {'string': 1} is not of type 'string', 'null'"),
    ]


def test_a_file_argument_given_as_a_bare_string_is_blamed_with_the_form_that_works() -> None:
    schema = {"type": "object", "properties": {"doc": file_schema()}}
    assert problems(schema, {"doc": "hello"}) == [("doc", f"argument 'doc' is a file. {FILE_HINT}")]


def test_a_long_message_is_cut_at_its_limit_with_an_ellipsis() -> None:
    schema = {"enum": ["x" * 400]}
    error = next(iter(jsonschema.Draft202012Validator(schema).iter_errors("y")))
    cut = schema_message(error)
    assert len(cut) == 300 and cut.endswith("…") and cut[:-1] == error.message[:299]
    assert schema_message(error, limit=len(error.message)) == error.message


def test_arguments_nested_past_the_depth_limit_are_refused_naming_the_limit() -> None:
    def nested(levels: int) -> dict[str, Any]:
        value: dict[str, Any] = {}
        for _ in range(levels - 1):
            value = {"a": value}
        return value

    assert oversized(nested(64), Limits()) is None
    refused = oversized(nested(65), Limits())
    assert refused is not None
    assert "more than 64 levels deep" in refused and "Limits.max_argument_depth (--max-argument-depth)" in refused
    assert oversized({"a": [[[1]]]}, Limits(max_argument_depth=4)) is None
    assert oversized({"a": [[[1]]]}, Limits(max_argument_depth=3)) is not None


def test_brackets_inside_strings_and_keys_are_no_nesting() -> None:
    tight = Limits(max_argument_depth=2)
    assert oversized({"[[[{": ["]]]", '\\"[[[', "{{{\\"], "b": '"[{'}, tight) is None
    assert oversized({"a": [["x"]]}, tight) is not None
    assert oversized({"a": [], "b": [{}], "c": {"d": 1}}, tight) is not None
    assert oversized([{}, [], {"a": []}], Limits(max_argument_depth=3)) is None


def test_arguments_nested_deeper_than_the_encoder_can_go_are_refused_as_too_deep() -> None:
    value: Any = 1
    for _ in range(100_000):
        value = [value]
    refused = oversized({"a": value}, Limits())
    assert refused is not None and "levels deep" in refused


def test_a_raised_depth_limit_is_kept_past_the_fast_encoders_own_depth() -> None:
    value: Any = 1
    for _ in range(299):
        value = [value]
    assert oversized({"a": value}, Limits(max_argument_depth=400)) is None
    refused = oversized({"a": value}, Limits(max_argument_depth=299))
    assert refused is not None and "more than 299 levels deep" in refused


def test_arguments_over_the_size_limit_are_refused_with_their_size_and_the_limit() -> None:
    args = {"text": "é" * 10}  # 20 bytes of UTF-8 in quotes, with its key and braces: 31 bytes of compact JSON
    assert oversized(args, Limits(max_argument_bytes=31)) is None
    assert oversized(args, Limits(max_argument_bytes=30)) == (
        "the arguments are 31 bytes of JSON, over the limit of 30 (Limits.max_argument_bytes "
        "(--max-argument-bytes)); send less per call (a page, a batch), or ask the operator to raise the limit"
    )
