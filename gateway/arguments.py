"""Checking arguments against a JSON Schema, in one wording for every tool and function call."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema

from catalog.errors import shown
from catalog.render import FILE_HINT
from catalog.schemas import is_file_schema
from gateway.limits import Limits, option_name

__all__ = ["ArgumentProblem", "argument_problems", "oversized", "schema_message"]

#: How much of an offending value a problem quotes.
_VALUE_CHARS = 60
#: How many allowed names an unknown-argument problem lists.
_ALLOWED_SHOWN = 25
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


def oversized(args: Any, limits: Limits) -> str | None:
    """Why `args` are not taken: longer as compact JSON than `limits.max_argument_bytes`, or nested deeper than
    `limits.max_argument_depth`; None when neither. Both are read off the JSON text, so the cost is the encoder's
    and the brackets', not a walk of every value (a 12 MiB array of numbers: ~0.4 s, was ~2 s); the brackets are
    only followed when there are enough of them to nest too deep."""
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


def argument_problems(validator: jsonschema.protocols.Validator, args: Mapping[str, Any]) -> list[ArgumentProblem]:
    """Every problem of `args`, ordered by where it is; the same wording for tools and functions alike."""
    found: dict[str, ArgumentProblem] = {}
    errors = sorted(validator.iter_errors(dict(args)), key=lambda e: ([str(p) for p in e.absolute_path], e.message))
    for error in errors:
        for problem in _problems(error):
            found.setdefault(problem.text, problem)
    return list(found.values())


def _problems(error: jsonschema.ValidationError) -> list[ArgumentProblem]:
    path = list(error.absolute_path)
    top = str(path[0]) if path else "args"
    where = "".join(f"[{part!r}]" if isinstance(part, int) else f".{part}" for part in path).removeprefix(".")
    prefix = f"{where}." if where else ""
    instance, expected, schema = error.instance, error.validator_value, error.schema
    if error.validator == "required" and isinstance(instance, Mapping) and isinstance(expected, list):
        return [
            ArgumentProblem(arg=top if path else str(name), text=f"missing required argument {prefix + str(name)!r}")
            for name in expected
            if name not in instance
        ]
    if (
        error.validator == "additionalProperties"
        and isinstance(instance, Mapping)
        and isinstance(schema, Mapping)
        and "patternProperties" not in schema
    ):
        known = sorted(schema.get("properties", {}))
        allowed = ", ".join(known[:_ALLOWED_SHOWN])
        if len(known) > _ALLOWED_SHOWN:
            allowed += f", … {len(known) - _ALLOWED_SHOWN} more"
        return [
            ArgumentProblem(
                arg=top if path else str(name),
                text=f"unknown argument {shown(prefix + str(name))} (allowed: {allowed or 'none'})",
            )
            for name in instance
            if name not in known
        ]
    if not where:
        return [ArgumentProblem(arg="args", text=f"arguments: {schema_message(error)}")]
    if is_file_schema(schema):
        # A file cannot be a bare string or bytes: say the one form that works.
        return [ArgumentProblem(arg=top, text=f"argument {where!r} is a file. {FILE_HINT}")]
    return [ArgumentProblem(arg=top, text=f"argument {where!r}: {schema_message(error)}")]


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
