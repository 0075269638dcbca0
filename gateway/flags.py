"""`cli(...)`: how an option of the gateway appears on the command line, declared on the option itself.

Each field of `GatewayConfig` and of its groups that the command line takes carries `metadata=cli(help)`: the
flag is `--` and the field's name with dashes (or `name`), read from `MCP_GATEWAY_` and the name in capitals (or
`env`) when not given. The kind follows the field's default: a bool is a switch, a tuple (or `repeat`) a
repeatable flag (a comma-separated variable), a number or text one value (`parse` reads it); `build` makes the
option's value of the repeated ones. An option that is a group of its own (`scripts`, `tasks`) is a switch that
turns it on, and any of the group's flags turns it on too. A secret is read from the environment only (`flag`
False). `gateway.cli` builds its parser from these, so the options are listed once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

__all__ = ["CLI", "Flag", "Where", "choice", "cli", "port", "seconds", "whole"]

CLI: Final = "gateway.cli"
"""The metadata key of a field's `Flag`."""

Where = Literal["all", "http", "serve"]
"""Which commands take a flag: every command that builds a gateway, those that serve it or describe what is
served over HTTP (serve, snapshot check, reference), or `serve` alone."""


@dataclass(frozen=True, kw_only=True)
class Flag:
    """One option on the command line (see the module docstring)."""

    help: str
    name: str | None = None
    env: str | None = None
    metavar: str | None = None
    parse: Callable[[str], Any] | None = None
    where: Where = "all"
    repeat: bool = False
    build: Callable[[list[Any]], Any] | None = None
    flag: bool = True


def cli(
    help: str,
    *,
    name: str | None = None,
    env: str | None = None,
    metavar: str | None = None,
    parse: Callable[[str], Any] | None = None,
    where: Where = "all",
    repeat: bool = False,
    build: Callable[[list[Any]], Any] | None = None,
    flag: bool = True,
) -> Mapping[str, Flag]:
    """The `metadata` of a dataclass field the command line takes."""
    return {
        CLI: Flag(
            help=help,
            name=name,
            env=env,
            metavar=metavar,
            parse=parse,
            where=where,
            repeat=repeat,
            build=build,
            flag=flag,
        )
    }


# Parsers of one value, for `cli(parse=...)`: a ValueError's message says what is allowed (the command line shows it
# as a usage error; a `MCP_GATEWAY_*` variable is read the same way).


def whole(least: int = 0) -> Callable[[str], int]:
    """A whole number, `least` or more."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise ValueError(f"{text!r} is not a whole number") from None
        if value < least:
            raise ValueError(f"must be {least} or more, not {text!r}")
        return value

    parse.__name__ = "whole"
    return parse


def choice(*values: str) -> Callable[[str], str]:
    """One of `values`, exactly."""

    def parse(text: str) -> str:
        if text not in values:
            raise ValueError(f"must be one of {', '.join(values)}, not {text!r}")
        return text

    parse.__name__ = "choice"
    return parse


def seconds(text: str) -> float:
    """A positive, finite number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a number of seconds") from None
    if not 0 < value < float("inf"):
        raise ValueError(f"must be a positive number of seconds, not {text!r}")
    return value


def port(text: str) -> int:
    """A TCP port, 0 to 65535."""
    try:
        value = whole()(text)
    except ValueError:
        if text.lstrip("-").isdigit():
            raise ValueError(f"a port is 0 to 65535, not {text!r}") from None
        raise
    if value > 65535:
        raise ValueError(f"a port is 0 to 65535, not {text!r}")
    return value
