"""The command line's options, generated from the dataclasses that declare them (`GatewayConfig` and its groups,
and the command line's own `Listen`, `ServeLimits` and `OAuthFlags`): each field with `cli(...)` metadata is a
flag, read from its `MCP_GATEWAY_*` variable when not given (see `gateway.flags`).

`add_flags` puts a dataclass's flags on a parser (a group per dataclass); `given` reads back what was given for
one, as the keyword arguments of that dataclass; `gateway_options` turns everything given into the keyword
arguments of `Gateway(...)`, groups included.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
import sys
from collections.abc import Callable, Collection, Iterator
from typing import Any, Final

from gateway.flags import CLI, Flag, Where

__all__ = ["ENV_PREFIX", "add_flags", "environment", "flag_of", "gateway_options", "given", "leaves"]

ENV_PREFIX: Final = "MCP_GATEWAY_"
_TRUE: Final = ("1", "true", "yes", "on")


@dataclasses.dataclass(frozen=True)
class Leaf:
    """One flag: the field it sets, where it sits (`limits.timeout` is `("limits", "timeout")`), and its `Flag`."""

    path: tuple[str, ...]
    field: dataclasses.Field[Any]
    flag: Flag
    default: Any

    @property
    def dest(self) -> str:
        return "__".join(self.path)

    @property
    def option(self) -> str:
        return "--" + (self.flag.name or self.field.name.replace("_", "-"))

    @property
    def env(self) -> str:
        return ENV_PREFIX + (self.flag.env or self.field.name.upper())

    @property
    def metavar(self) -> str:
        """What the flag's value is called in the help."""
        parse = self.flag.parse
        if self.flag.metavar:
            return self.flag.metavar
        kind = getattr(parse, "__name__", "")
        return {"seconds": "SECONDS", "float": "SECONDS", "whole": "N", "int": "N", "port": "PORT"}.get(
            kind, self.field.name.upper()
        )

    @property
    def kind(self) -> str:
        """switch, list or value: what the field's default (or `repeat`) makes of it."""
        if isinstance(self.default, bool):
            return "switch"
        if self.flag.repeat or isinstance(self.default, tuple):
            return "list"
        return "value"


def flag_of(item: dataclasses.Field[Any]) -> Flag | None:
    """The `Flag` a dataclass field declares, if any."""
    found = item.metadata.get(CLI)
    return found if isinstance(found, Flag) else None


def _default(item: dataclasses.Field[Any]) -> Any:
    if item.default is not dataclasses.MISSING:
        return item.default
    if item.default_factory is not dataclasses.MISSING:
        return item.default_factory()
    return None


@functools.cache
def _group_of(owner: type, name: str) -> type | None:
    """The dataclass a field of `owner` holds (a group, or an optional one such as `ScriptConfig | None`), read
    from its annotation's names in the owner's module (without evaluating the rest, which may be type-only)."""
    annotation = next((item.type for item in dataclasses.fields(owner) if item.name == name), None)
    names = annotation.split("|") if isinstance(annotation, str) else []
    module = sys.modules[owner.__module__].__dict__
    for candidate in (module.get(part.strip()) for part in names):
        if isinstance(candidate, type) and dataclasses.is_dataclass(candidate):
            return candidate
    return None


def leaves(cls: type, path: tuple[str, ...] = ()) -> Iterator[Leaf]:
    """Every flag of `cls` and of the groups its fields hold, in declaration order."""
    for item in dataclasses.fields(cls):
        if not item.init:
            continue
        flag = flag_of(item)
        group = _group_of(cls, item.name)
        if flag is not None and flag.flag:
            yield Leaf(path=(*path, item.name), field=item, flag=flag, default=False if group else _default(item))
        if group is not None:
            yield from leaves(group, (*path, item.name))


def environment(cls: type) -> Iterator[tuple[str, Leaf]]:
    """Every `MCP_GATEWAY_*` variable of `cls`'s options, with the option it sets (secrets read only there too)."""
    for item in dataclasses.fields(cls):
        flag = flag_of(item)
        if flag is not None:
            yield ENV_PREFIX + (flag.env or item.name.upper()), Leaf((item.name,), item, flag, _default(item))
        group = _group_of(cls, item.name)
        if group is not None:
            yield from environment(group)


def _argument_type(leaf: Leaf) -> Callable[[str], Any] | None:
    parse = leaf.flag.parse
    if parse is None:
        return None
    what = {int: "a whole number", float: "a number"}.get(parse, "a valid value")  # type: ignore[call-overload]

    def typed(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as error:
            # Our parsers say what is allowed; a builtin's message is Python's, so it is replaced.
            said = str(error) if parse not in (int, float) else ""
            raise argparse.ArgumentTypeError(said or f"{text!r} is not {what}") from None

    typed.__name__ = leaf.field.name
    return typed


def add_flags(
    parser: argparse.ArgumentParser, cls: type, *, where: Collection[Where], title: str | None = None
) -> None:
    """Put the flags of `cls` (and its groups) that commands `where` take on `parser`, each defaulting to its
    `MCP_GATEWAY_*` variable (None, or False for a switch, when neither is given)."""
    groups: dict[tuple[str, ...], Any] = {}
    for leaf in leaves(cls):
        if leaf.flag.where not in where:
            continue
        key = leaf.path[:-1] if len(leaf.path) > 1 else ()
        if key not in groups:
            heading = title if not key else f"{key[-1]} ({getattr(_group_type(cls, key), '__name__', key[-1])})"
            groups[key] = parser.add_argument_group(heading) if heading else parser
        target = groups[key]
        raw = os.environ.get(leaf.env)
        help_text = f"{leaf.flag.help} [{leaf.env}]"
        if leaf.kind == "switch":
            on = raw is not None and raw.strip().lower() in _TRUE
            if leaf.default is True:
                target.add_argument(
                    leaf.option,
                    dest=leaf.dest,
                    action=argparse.BooleanOptionalAction,
                    default=None if raw is None else on,
                    help=help_text,
                )
            else:
                target.add_argument(leaf.option, dest=leaf.dest, action="store_true", default=on, help=help_text)
        elif leaf.kind == "list":
            items = [item.strip() for item in (raw or "").split(",") if item.strip()]
            target.add_argument(
                leaf.option,
                dest=leaf.dest,
                action="append",
                default=items or None,
                metavar=leaf.metavar,
                type=_argument_type(leaf),
                help=f"{help_text} (repeatable)",
            )
        else:
            target.add_argument(
                leaf.option,
                dest=leaf.dest,
                default=raw,
                metavar=leaf.metavar,
                type=_argument_type(leaf),
                help=help_text,
            )


def _group_type(cls: type, path: tuple[str, ...]) -> type | None:
    owner: type | None = cls
    for name in path:
        owner = _group_of(owner, name) if owner is not None else None
    return owner


def given(options: argparse.Namespace, cls: type, path: tuple[str, ...] = ()) -> dict[str, Any]:
    """What was given on the command line (or in the environment) for the fields of `cls` at `path`: its keyword
    arguments, the groups under it made of theirs, a group that is only switched on made with its defaults."""
    values: dict[str, Any] = {}
    for item in dataclasses.fields(cls):
        if not item.init:
            continue
        here = (*path, item.name)
        flag = flag_of(item)
        group = _group_of(cls, item.name)
        if group is not None:
            inner = given(options, group, here)
            switched = flag is not None and getattr(options, "__".join(here), False) is True
            if inner or switched:
                values[item.name] = group(**inner)
            continue
        if flag is None:
            continue
        value: Any = (
            os.environ.get(ENV_PREFIX + (flag.env or item.name.upper())) or None  # a secret: the environment only
            if not flag.flag
            else getattr(options, "__".join(here), None)
        )
        # A switch given as its default is left out (--no-FLAG of a switch that is on by default is not).
        if value is None or (isinstance(_default(item), bool) and value is _default(item)):
            continue
        if isinstance(value, list):
            value = flag.build(value) if flag.build is not None else tuple(value)
        values[item.name] = value
    return values


def gateway_options(options: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of `Gateway(...)` the options give (`app` as given: a `MODULE:ATTR` to import)."""
    from gateway.options import GatewayConfig

    return given(options, GatewayConfig)
