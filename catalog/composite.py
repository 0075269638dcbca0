"""Hand-written functions (composites) and glossary concepts that a project adds to its catalog."""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, get_type_hints

from catalog.errors import CatalogConfigError

__all__ = ["Composite", "Concept", "Invoker", "composite"]

_SNAKE = re.compile(r"^[a-z][a-z0-9_]*$")


class Invoker(Protocol):
    """Calls catalog functions with the credentials of the current request; composites and scripts use it."""

    async def call(self, name: str, args: Mapping[str, Any]) -> Any:
        """Invoke `module.function` with flat arguments and return the decoded response body."""
        ...


@dataclass(frozen=True, kw_only=True)
class Concept:
    """A glossary entry the project supplies: a term that is not a schema, or text and aliases for one that is."""

    text: str
    aliases: Sequence[str] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise CatalogConfigError(f"a concept's text must be a string, not {type(self.text).__name__}")
        object.__setattr__(self, "aliases", tuple(self.aliases))


@dataclass(frozen=True, kw_only=True)
class Composite:
    """A hand-written function listed in a module next to the operations; build one with `composite()`."""

    module: str
    name: str
    summary: str
    run: Callable[[Invoker, Any], Awaitable[Any]]
    description: str = ""
    read_only: bool = False
    destructive: bool = False
    input_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    output_schema: dict[str, Any] | None = None
    #: Turns the validated argument object into what `run` takes (a model instance, say); identity by default.
    decode: Callable[[Mapping[str, Any]], Any] = dict
    #: Turns what `run` returns into JSON-compatible data; identity by default.
    encode: Callable[[Any], Any] = lambda value: value

    def __post_init__(self) -> None:
        for label, value in (("module", self.module), ("name", self.name)):
            if not _SNAKE.match(value):
                raise CatalogConfigError(
                    f"composite {label} {value!r} must be snake_case (letters, digits and _; starting with a letter)"
                )
        if not self.summary.strip():
            raise CatalogConfigError(f"composite {self.module}.{self.name} needs a one-line summary")

    @property
    def full_name(self) -> str:
        """`module.name`."""
        return f"{self.module}.{self.name}"


def composite(
    module: str,
    name: str | None = None,
    *,
    summary: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    destructive: bool = False,
) -> Callable[[Callable[[Invoker, Any], Awaitable[Any]]], Composite]:
    """Decorate `async def fn(call: Invoker, args: In) -> Out` to make a Composite.

    The input and output schemas come from the type hints of `args` and of the return value (pydantic models,
    TypedDicts, dataclasses or plain types); the summary and description default to the docstring. Arguments
    that are not an object (`ids: list[int]`) are one argument named after the parameter (`{"ids": [1, 2]}`).
    """

    def build(function: Callable[[Invoker, Any], Awaitable[Any]]) -> Composite:
        from pydantic import TypeAdapter

        hints = get_type_hints(function)
        parameters = list(inspect.signature(function).parameters)
        if len(parameters) != 2:
            raise CatalogConfigError(
                f"composite {function.__name__!r} must take (call, args), not {len(parameters)} parameter(s)"
            )
        input_type = hints.get(parameters[1], dict[str, Any])
        output_type = hints.get("return", Any)
        input_adapter: TypeAdapter[Any] = TypeAdapter(input_type)
        output_adapter: TypeAdapter[Any] = TypeAdapter(output_type)
        input_schema = _json_schema(input_adapter)
        # Arguments that are not an object (a list, a number, a union) are one argument named after the parameter.
        wrapped = parameters[1] if input_schema.get("type") != "object" else None
        if wrapped is not None:
            input_schema = _wrapped(wrapped, input_schema)

        def decode(args: Mapping[str, Any]) -> Any:
            return input_adapter.validate_python(args[wrapped] if wrapped is not None else dict(args))

        output_schema = _json_schema(output_adapter)
        doc = inspect.getdoc(function) or ""
        first, _, rest = doc.partition("\n")
        return Composite(
            module=module,
            name=name or function.__name__,
            summary=summary or first.strip() or function.__name__.replace("_", " "),
            description=description if description is not None else rest.strip(),
            read_only=read_only,
            destructive=destructive,
            input_schema=input_schema,
            output_schema=output_schema if output_schema.get("type") == "object" else None,
            run=function,
            decode=decode,
            encode=lambda value: output_adapter.dump_python(value, mode="json"),
        )

    return build


def _wrapped(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """An object schema with the one required property `name` of `schema`; `$defs` stay at the root."""
    inner = {key: value for key, value in schema.items() if key != "$defs"}
    wrapper: dict[str, Any] = {
        "type": "object",
        "properties": {name: inner},
        "required": [name],
        "additionalProperties": False,
    }
    if "$defs" in schema:
        wrapper["$defs"] = schema["$defs"]
    return wrapper


def _json_schema(adapter: Any) -> dict[str, Any]:
    schema: dict[str, Any] = adapter.json_schema(ref_template="#/$defs/{model}")
    return schema
