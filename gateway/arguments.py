"""Checking arguments against a JSON Schema, in one wording for every tool and function call."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema
import pydantic_core

from catalog.errors import shown
from catalog.render import FILE_HINT
from catalog.schemas import is_file_schema
from gateway.limits import Limits, option_name

__all__ = ["ArgumentProblem", "ArgumentProblems", "argument_problems", "oversized", "schema_message"]

#: How much of an offending value a problem quotes.
_VALUE_CHARS = 60
#: How many allowed names an unknown-argument problem lists.
_ALLOWED_SHOWN = 25
#: How many problems a message lists; the rest are counted. A caller invents as many unknown names, or as many
#: wrong items of an array, as its arguments can hold (800,000 in 9.5 MB): listed whole, that is 38 MB of error.
_LISTED = 10
#: How many of the validator's errors are read. Each costs the validator ~40 µs, and an array of 800,000 wrong
#: items has as many (~37 s of one thread); past this many the count is a lower bound.
_ERRORS_READ = 1_000
#: A JSON string in compact JSON text (escapes included), to drop before counting brackets.
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
#: Every byte but the four brackets, deleted to leave the nesting alone.
_NOT_BRACKETS = bytes(range(256)).translate(None, b"[]{}")
#: +1 for an opening bracket, -1 for a closing one, by byte.
_STEPS = [(byte in b"[{") - (byte in b"]}") for byte in range(256)]


@dataclass(frozen=True, kw_only=True)
class ArgumentProblem:
    """One thing wrong with the arguments: the top-level argument at fault ('args' for the whole) and why."""

    arg: str
    text: str


@dataclass(frozen=True, kw_only=True)
class ArgumentProblems:
    """What is wrong with one call's arguments: the first few problems (iterating gives them), and how many more
    were found, `more_unknown` of them unknown arguments; `complete` is False when there may be others still."""

    listed: tuple[ArgumentProblem, ...] = ()
    more: int = 0
    more_unknown: int = 0
    complete: bool = True

    def __iter__(self) -> Iterator[ArgumentProblem]:
        return iter(self.listed)

    def __len__(self) -> int:
        return len(self.listed)

    def args(self) -> list[str]:
        """The arguments at fault in the problems listed, each once, in their order."""
        return list(dict.fromkeys(problem.arg for problem in self.listed))

    def text(self) -> str:
        """The problems listed, then "and N more unknown arguments" (or "problems") when some are not."""
        listing = "; ".join(problem.text for problem in self.listed)
        if not self.more:
            return listing
        kind = "unknown argument" if self.more == self.more_unknown else "problem"
        at_least = "" if self.complete else "at least "
        return f"{listing}; and {at_least}{self.more:,} more {kind}{'' if self.more == 1 else 's'}"


def oversized(args: Any, limits: Limits) -> str | None:
    """Why `args` are not taken: longer as compact JSON than `limits.max_argument_bytes`, or nested deeper than
    `limits.max_argument_depth`; None when neither. Both are read off the JSON text, so the cost is the encoder's
    and the brackets', not a walk of every value (a 12 MiB array of numbers: ~0.12 s, was ~2 s); the brackets are
    only followed when there are enough of them to nest too deep."""
    try:
        text = pydantic_core.to_json(args, fallback=str)  # ~4x json.dumps, small arguments and large alike
    except pydantic_core.PydanticSerializationError:
        # Nested past that encoder's own depth (254 levels): the standard one, bounded by the recursion limit.
        try:
            text = json.dumps(args, separators=(",", ":"), ensure_ascii=False, default=str).encode()
        except RecursionError:
            return _too_deep(limits)
    if len(text) > limits.max_argument_bytes:
        return (
            f"the arguments are {len(text):,} bytes of JSON, over the limit of {limits.max_argument_bytes:,} "
            f"({option_name('max_argument_bytes')}); send less per call (a page, a batch), or ask the operator to "
            "raise the limit"
        )
    most = limits.max_argument_depth
    if len(text) <= 2 * most or text.count(b"[") + text.count(b"{") <= most:
        # Nesting deeper than `most` takes more than `most` opening brackets (and as many closing ones).
        return None
    brackets = _JSON_STRING.sub(b"", text).translate(None, _NOT_BRACKETS)
    if max(itertools.accumulate(map(_STEPS.__getitem__, brackets)), default=0) > most:
        return _too_deep(limits)
    return None


def _too_deep(limits: Limits) -> str:
    return (
        f"the arguments nest objects and arrays more than {limits.max_argument_depth} levels deep, the limit "
        f"{option_name('max_argument_depth')}; flatten them, or ask the operator to raise the limit"
    )


def argument_problems(validator: jsonschema.protocols.Validator, args: Mapping[str, Any]) -> ArgumentProblems:
    """The problems of `args`, ordered by where they are, each once; the same wording for tools and functions alike.

    The first `_LISTED` are listed and the rest counted, so the work and the message stay small however many
    there are: unknown names past the listed ones are counted, never worded (nor, at the top level, handed to the
    validator, whose own message sorts and quotes them all), and at most `_ERRORS_READ` validator errors are read.
    """
    checked, more_unknown = _unknown_past_listed_left_out(validator.schema, args)
    read = list(itertools.islice(validator.iter_errors(checked), _ERRORS_READ + 1))
    errors = sorted(read[:_ERRORS_READ], key=_where_and_message)
    found: dict[str, ArgumentProblem] = {}
    for error in errors:
        problems, unworded = _problems(error, room=max(_LISTED - len(found), 0))
        more_unknown += unworded
        for problem in problems:
            found.setdefault(problem.text, problem)
    listed = list(found.values())
    return ArgumentProblems(
        listed=tuple(listed[:_LISTED]),
        more=max(len(listed) - _LISTED, 0) + more_unknown,
        more_unknown=more_unknown,
        complete=len(read) <= _ERRORS_READ,
    )


def _where_and_message(error: jsonschema.ValidationError) -> tuple[list[tuple[int, int, str]], str]:
    """Sorts errors by path, array indexes in numeric order (tags[2] before tags[10]), then by message."""
    path = [(0, part, "") if isinstance(part, int) else (1, 0, str(part)) for part in error.absolute_path]
    return path, error.message


def _unknown_past_listed_left_out(schema: Any, args: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
    """`args` without the unknown top-level names past the first `_LISTED`, and how many were left out; a schema
    that does not refuse unknown names outright (a function's always does) keeps them all."""
    if (
        not isinstance(schema, Mapping)
        or schema.get("additionalProperties") is not False
        or "patternProperties" in schema
        or not isinstance(known := schema.get("properties", {}), Mapping)
    ):
        return dict(args), 0
    unknown = [name for name in args if name not in known]
    if len(unknown) <= _LISTED:
        return dict(args), 0
    kept = set(unknown[:_LISTED])
    return {name: value for name, value in args.items() if name in known or name in kept}, len(unknown) - _LISTED


def _problems(error: jsonschema.ValidationError, *, room: int) -> tuple[list[ArgumentProblem], int]:
    """The problems `error` stands for, and how many unknown names it holds past the `room` worded."""
    path = list(error.absolute_path)
    top = str(path[0]) if path else "args"
    where = "".join(f"[{part!r}]" if isinstance(part, int) else f".{part}" for part in path).removeprefix(".")
    prefix = f"{where}." if where else ""
    instance, expected, schema = error.instance, error.validator_value, error.schema
    if error.validator == "required" and isinstance(instance, Mapping) and isinstance(expected, list):
        missing = [
            ArgumentProblem(
                arg=top if path else str(name), text=f"missing required argument {shown(prefix + str(name))}"
            )
            for name in expected
            if name not in instance
        ]
        return missing, 0
    if (
        error.validator == "additionalProperties"
        and isinstance(instance, Mapping)
        and isinstance(schema, Mapping)
        and "patternProperties" not in schema
    ):
        properties = schema.get("properties", {})
        known = sorted(properties)
        allowed = ", ".join(known[:_ALLOWED_SHOWN])
        if len(known) > _ALLOWED_SHOWN:
            allowed += f", … {len(known) - _ALLOWED_SHOWN} more"
        unknown = [name for name in instance if name not in properties]
        worded = [
            ArgumentProblem(
                arg=top if path else str(name),
                text=f"unknown argument {shown(prefix + str(name))} (allowed: {allowed or 'none'})",
            )
            for name in unknown[:room]
        ]
        return worded, len(unknown) - len(worded)
    if not where:
        return [ArgumentProblem(arg="args", text=f"arguments: {schema_message(error)}")], 0
    if is_file_schema(schema):
        # A file cannot be a bare string or bytes: say the one form that works.
        return [ArgumentProblem(arg=top, text=f"argument {shown(where)} is a file. {FILE_HINT}")], 0
    return [ArgumentProblem(arg=top, text=f"argument {shown(where)}: {schema_message(error)}")], 0


def schema_message(error: jsonschema.ValidationError, *, limit: int = 300) -> str:
    """The validator's message with a long offending value cut short, its reason kept ("'aaa…' is too long")."""
    message = _wrong_type(error) or error.message
    value = repr(error.instance)
    if len(value) > _VALUE_CHARS and value in message:
        message = message.replace(value, f"{value[:_VALUE_CHARS]}… ({len(value):,} characters)", 1)
    return message if len(message) <= limit else message[: limit - 1] + "…"


def _wrong_type(error: jsonschema.ValidationError) -> str | None:
    """ "'yes' is not of type 'boolean' or 'null'" for a value that fits none of the bare types an anyOf or oneOf
    offers (pydantic writes every `X | None` so), where the validator's own message names none of them."""
    if error.validator not in ("anyOf", "oneOf") or not error.context:
        return None
    if any(sub.validator != "type" or sub.relative_path for sub in error.context):
        return None
    types: list[str] = []
    for sub in error.context:
        named = sub.validator_value if isinstance(sub.validator_value, list) else [sub.validator_value]
        types.extend(str(name) for name in named if str(name) not in types)
    return f"{error.instance!r} is not of type {' or '.join(map(repr, types))}"
