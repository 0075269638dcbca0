"""MCP prompts: `Prompt` templates an operator writes in Python, and the `PromptSet` an endpoint serves.

A prompt is a name, a description, its arguments and a template with `{argument}` placeholders (`{{` and `}}` for
literal braces); prompts/get fills it in and answers one user message. An argument may say which names complete it
(`complete="modules"`, `"functions"` or `"terms"` of the catalog, or fixed `choices`): completion/complete offers
them by prefix, and prompts/get refuses a value that is not one of them, with the closest names.

    Gateway(app=app, prompts=[
        Prompt(
            name="refund_order",
            description="Refund one order, checking its state first.",
            arguments=(PromptArgument(name="order_id", description="The order to refund.", required=True),),
            template="Refund order {order_id}: get it with orders.get_order, check it is paid, then refund it.",
        ),
    ])
"""

from __future__ import annotations

import difflib
import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from gateway.errors import ConfigError, RequestError
from gateway.mcp.listing import PAGE_SIZE, Completion, complete, page
from gateway.mcp.toolspec import Content, TextContent
from gateway.policy import CallerPolicy

__all__ = ["Prompt", "PromptArgument", "PromptSet", "Renderer", "Vocabulary"]

Vocabulary = Literal["modules", "functions", "terms"]
"""The catalog names an argument takes: its modules, its functions (`module.function`) or its terms."""

Renderer = Callable[[Mapping[str, str], CallerPolicy], "str | Sequence[Content]"]
"""Makes a prompt's messages for a caller from its checked arguments: one text, or content blocks (each a user
message)."""

_VOCABULARIES: Final = ("modules", "functions", "terms")
_NAME: Final = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_ARGUMENT: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
_FORMATTER: Final = string.Formatter()


@dataclass(frozen=True, kw_only=True)
class PromptArgument:
    """One argument of a prompt: its name, what it is for, whether it is required, and what completes it."""

    name: str
    description: str = ""
    required: bool = False
    #: The catalog names this argument takes, offered by completion/complete and checked by prompts/get.
    complete: Vocabulary | None = None
    #: Or a fixed list of values, offered and checked the same way.
    choices: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _ARGUMENT.match(self.name):
            raise ConfigError(
                f"prompt argument name {self.name!r} must be an identifier of at most 64 characters, e.g. 'module'"
            )
        if self.complete is not None and self.complete not in _VOCABULARIES:
            raise ConfigError(
                f"prompt argument {self.name!r}: complete must be one of {', '.join(_VOCABULARIES)}, "
                f"not {self.complete!r}"
            )
        if isinstance(self.choices, str) or not all(isinstance(choice, str) for choice in self.choices):
            raise ConfigError(f"prompt argument {self.name!r}: choices must be a list of strings, not {self.choices!r}")
        object.__setattr__(self, "choices", tuple(self.choices))
        if self.choices and self.complete is not None:
            raise ConfigError(f"prompt argument {self.name!r}: give complete or choices, not both")


@dataclass(frozen=True, kw_only=True)
class Prompt:
    """A prompt clients offer (Claude Desktop as a slash command): prompts/get fills `template` with the arguments.

    `template` holds `{name}` placeholders for the arguments (an optional argument not given is left empty) and
    `{{`/`}}` for literal braces; every placeholder must name one of `arguments`. Construction checks all of it
    and raises ConfigError saying what to fix.
    """

    name: str
    description: str
    template: str
    title: str | None = None
    arguments: tuple[PromptArgument, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ConfigError(
                f"prompt name {self.name!r} must be 1-64 letters, digits, '_', '-' or '.', e.g. 'refund_order'"
            )
        if not isinstance(self.description, str) or not self.description.strip():
            raise ConfigError(f"prompt {self.name!r}: description must not be empty; clients show it to people")
        if not isinstance(self.template, str) or not self.template.strip():
            raise ConfigError(f"prompt {self.name!r}: template must not be empty")
        if isinstance(self.arguments, PromptArgument) or not all(
            isinstance(argument, PromptArgument) for argument in self.arguments
        ):
            raise ConfigError(f"prompt {self.name!r}: arguments must be a list of PromptArgument values")
        object.__setattr__(self, "arguments", tuple(self.arguments))
        names = [argument.name for argument in self.arguments]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ConfigError(f"prompt {self.name!r}: argument {twice[0]!r} is given twice")
        for field_name in _placeholders(self.name, self.template):
            if field_name not in names:
                declared = ", ".join(names) or "none"
                raise ConfigError(
                    f"prompt {self.name!r}: the template uses {{{field_name}}}, which is not one of its arguments "
                    f"({declared}); declare it, or write {{{{ and }}}} for literal braces"
                )

    def render(self, arguments: Mapping[str, str]) -> str:
        """The template filled in with `arguments` (already checked), optional ones not given left empty."""
        parts: list[str] = []
        for literal, field_name, _, _ in _FORMATTER.parse(self.template):
            parts.append(literal)
            if field_name is not None:
                parts.append(arguments.get(field_name, ""))
        return "".join(parts)


def _placeholders(name: str, template: str) -> list[str]:
    try:
        parsed = list(_FORMATTER.parse(template))
    except ValueError as error:
        raise ConfigError(
            f"prompt {name!r}: the template is malformed ({error}); write {{{{ and }}}} for braces"
        ) from None
    found: list[str] = []
    for _, field_name, spec, conversion in parsed:
        if field_name is None:
            continue
        if not _ARGUMENT.match(field_name) or spec or conversion:
            raise ConfigError(
                f"prompt {name!r}: placeholder {{{field_name}{'!' + conversion if conversion else ''}"
                f"{':' + spec if spec else ''}}} must be a plain argument name such as {{module}}"
            )
        found.append(field_name)
    return found


@dataclass(frozen=True, kw_only=True)
class _Served:
    prompt: Prompt
    render: Renderer | None = field(default=None)


class PromptSet:
    """The prompts of one endpoint: listed in pages, filled in with checked arguments, completed by prefix.

    `vocabularies` gives, for a caller, the names of each `Vocabulary` (the modules, functions and terms it sees;
    None takes any value and completes nothing). `renderers` replaces the template of a prompt by name with a
    function of its arguments and caller (the built-in prompts' listings); it may raise RequestError for values
    it cannot use.
    """

    def __init__(
        self,
        prompts: Sequence[Prompt],
        *,
        vocabularies: Mapping[str, Callable[[CallerPolicy], Sequence[str] | None]] | None = None,
        renderers: Mapping[str, Renderer] | None = None,
        page_size: int = PAGE_SIZE,
    ) -> None:
        served: dict[str, _Served] = {}
        renderers = dict(renderers or {})
        for prompt in prompts:
            if not isinstance(prompt, Prompt):
                raise ConfigError(f"prompts must be Prompt values (from gateway.prompts), got {prompt!r}")
            if prompt.name in served:
                raise ConfigError(f"prompt name {prompt.name!r} is given twice (a built-in prompt has it?); rename one")
            served[prompt.name] = _Served(prompt=prompt, render=renderers.pop(prompt.name, None))
        if renderers:
            raise ConfigError(f"renderers name prompts that are not given: {', '.join(sorted(renderers))}")
        self._prompts = served
        self._vocabularies = dict(vocabularies or {})
        for prompt in self.prompts():
            for argument in prompt.arguments:
                if argument.complete is not None and argument.complete not in self._vocabularies:
                    raise ConfigError(
                        f"prompt {prompt.name!r}: argument {argument.name!r} completes {argument.complete}, which "
                        "this server has no list of"
                    )
        self.page_size = page_size

    def prompts(self) -> tuple[Prompt, ...]:
        """The prompts, in the order prompts/list shows them."""
        return tuple(served.prompt for served in self._prompts.values())

    def list_page(self, cursor: str | None) -> tuple[Sequence[Prompt], str | None]:
        """One page of the prompts and the next page's cursor; RequestError for a cursor this set did not give."""
        return page(self.prompts(), cursor, self.page_size)

    def prompt(self, name: str) -> Prompt:
        """The prompt called `name`; RequestError naming the closest prompts when there is none."""
        served = self._prompts.get(name)
        if served is None:
            raise RequestError(
                f"unknown prompt {name!r}{_closest(name, list(self._prompts))}; prompts/list shows every prompt",
                data={"name": name},
            )
        return served.prompt

    def get(
        self, name: str, arguments: Mapping[str, str] | None, caller: CallerPolicy
    ) -> tuple[Prompt, tuple[Content, ...]]:
        """The prompt `name` and its messages for `caller` (user messages, one per block), made from `arguments`
        once checked.

        RequestError for an unknown prompt, a missing required argument, an argument the prompt does not take,
        or a value outside the names or choices the argument takes; each message says what to send instead.
        """
        prompt = self.prompt(name)
        given = dict(arguments or {})
        declared = {argument.name: argument for argument in prompt.arguments}
        takes = ", ".join(declared) or "no arguments"
        unknown = [key for key in given if key not in declared]
        if unknown:
            raise RequestError(
                f"prompt {name!r} takes no argument {unknown[0]!r}{_closest(unknown[0], list(declared))}; it takes "
                f"{takes}",
                data={"name": name, "argument": unknown[0]},
            )
        for argument in prompt.arguments:
            value = given.get(argument.name)
            if value is None or (argument.required and not value.strip()):
                if argument.required:
                    about = f" ({argument.description})" if argument.description else ""
                    raise RequestError(
                        f"prompt {name!r} needs the argument {argument.name!r}{about}; it takes {takes}",
                        data={"name": name, "argument": argument.name},
                    )
                continue
            self._check_value(prompt, argument, value, caller)
        served = self._prompts[name]
        made = served.render(given, caller) if served.render is not None else prompt.render(given)
        return prompt, (TextContent(text=made),) if isinstance(made, str) else tuple(made)

    def _check_value(self, prompt: Prompt, argument: PromptArgument, value: str, caller: CallerPolicy) -> None:
        allowed = self._candidates(argument, caller)
        if allowed is None or value in allowed:
            return
        what = argument.complete[:-1] if argument.complete is not None else "choice"
        raise RequestError(
            f"prompt {prompt.name!r}: {value!r} is not a {what} for {argument.name!r}"
            f"{_closest(value, list(allowed))}; completion/complete lists them",
            data={"name": prompt.name, "argument": argument.name},
        )

    def _candidates(self, argument: PromptArgument, caller: CallerPolicy) -> Sequence[str] | None:
        if argument.choices:
            return argument.choices
        if argument.complete is not None:
            return self._vocabularies[argument.complete](caller)
        return None

    def complete(self, name: str, argument_name: str, value: str, caller: CallerPolicy) -> Completion:
        """Values for `caller` for the argument `argument_name` of prompt `name` that start with `value`; none for
        free text.

        RequestError for an unknown prompt or an argument it does not take.
        """
        prompt = self.prompt(name)
        argument = next((argument for argument in prompt.arguments if argument.name == argument_name), None)
        if argument is None:
            takes = ", ".join(argument.name for argument in prompt.arguments) or "no arguments"
            raise RequestError(
                f"prompt {name!r} takes no argument {argument_name!r}; it takes {takes}",
                data={"name": name, "argument": argument_name},
            )
        return complete(self._candidates(argument, caller) or (), value)


def _closest(name: str, names: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
    return f"; closest: {', '.join(close)}" if close else ""
