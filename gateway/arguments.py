"""Checking arguments against a JSON Schema, in one wording for every tool and function call."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema

from catalog.errors import shown
from catalog.render import FILE_HINT
from catalog.schemas import is_file_schema

__all__ = ["MAX_ARGUMENT_NODES", "ArgumentProblem", "argument_problems", "oversized", "schema_message"]

#: The most values (objects, arrays and scalars) one call's arguments may hold: far more than any API call
#: needs, few enough that checking them costs the event loop a few milliseconds at most.
MAX_ARGUMENT_NODES = 20_000

#: How much of an offending value a problem quotes.
_VALUE_CHARS = 60
#: How many allowed names an unknown-argument problem lists.
_ALLOWED_SHOWN = 25


@dataclass(frozen=True, kw_only=True)
class ArgumentProblem:
    """One thing wrong with the arguments: the top-level argument at fault ('args' for the whole) and why."""

    arg: str
    text: str


def oversized(args: Any, limit: int = MAX_ARGUMENT_NODES) -> str | None:
    """Why `args` is too big to check (more than `limit` values), counted without recursion and stopping at the
    limit; None when it is not."""
    pending: list[Any] = [args]
    count = 0
    while pending:
        item = pending.pop()
        count += 1
        if count > limit:
            return f"the arguments hold more than {limit:,} values; send less per call (a page, a batch)"
        if isinstance(item, Mapping):
            pending.extend(item.values())
            count += len(item)  # the keys
        elif isinstance(item, list):
            pending.extend(item)
    return None


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
    message = error.message
    value = repr(error.instance)
    if len(value) > _VALUE_CHARS and value in message:
        message = message.replace(value, f"{value[:_VALUE_CHARS]}… ({len(value):,} characters)", 1)
    return message if len(message) <= limit else message[: limit - 1] + "…"
