"""The check of a script's `api` calls before it runs: calls of functions or arguments that do not exist.

`check_calls(source, functions, arguments)` reads the script's tokens (so a call inside a string, comment, template
text or regular expression is no call) and finds `api.<module>.<function>(` calls, also written with `?.` or as
`api["module"]["function"](` with literal names, and `call("module.function", {...})` with a literal name, and the
plain keys of the object literal passed as the arguments. A call of a module or function the script's `api` does not
have, or with a key the function takes no argument of, is a `CallProblem` naming the closest of the script's own
names (`functions`: a caller's view; no other name is ever suggested). Anything dynamic is left to run time:
computed or escaped names, spreads, a script that binds `api` or `call` itself, `with` and `eval`, and a function the
script also looks at without calling it (`if (api.m.f) ...`: it may test before it calls). So a script the check
refuses would have failed at those calls.
"""

from __future__ import annotations

import bisect
import difflib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from sandbox._source import Token, tokenize

__all__ = ["CallProblem", "check_calls"]

#: The most problems one refusal lists.
MAX_PROBLEMS = 5
#: The most argument names a problem lists.
_MAX_LISTED = 12
#: After these tokens `api.` is a use of the global `api`; anything else may be the script's own binding.
_USES = frozenset({".", "?.", "["})


@dataclass(frozen=True, kw_only=True)
class CallProblem:
    """One call that cannot work: its line in the script and what is wrong, with the closest names."""

    line: int
    message: str


@dataclass(frozen=True, kw_only=True)
class _Call:
    module: str
    function: str
    line: int
    #: The name as written in `call("module.function", ...)`; empty for `api.module.function(...)`.
    by_name: str = ""
    #: The plain keys of the first argument when it is an object literal of plain keys only, else None.
    keys: tuple[tuple[str, int], ...] | None


def check_calls(source: str, functions: Sequence[str], arguments: Mapping[str, Collection[str]]) -> list[CallProblem]:
    """The problems of `source`'s static `api` calls, given the script's `functions` ("module.function") and, for
    some of them, the argument names they take (a function absent from `arguments` takes any)."""
    tokens = tokenize(source)
    if tokens is None or ("with" in (names := _free_names(tokens))) or "eval" in names:
        return []
    lines = _LineIndex(source)
    modules: dict[str, list[str]] = {}
    for name in functions:
        module, _, function = name.partition(".")
        modules.setdefault(module, []).append(function)
    known = frozenset(functions)
    problems: list[CallProblem] = []
    calls: list[_Call] = []
    looked_at: set[str] = set()
    if _is_global(tokens, "api", _USES):
        calls, looked_at = _calls(tokens, lines)
    if _is_global(tokens, "call", frozenset({"("})):
        calls = sorted([*calls, *_calls_by_name(tokens, lines)], key=lambda call: call.line)
    for call in calls:
        full = call.by_name or f"{call.module}.{call.function}"
        if full not in known and (call.module in looked_at or full in looked_at):
            continue  # the script tests whether it exists before calling it
        if call.by_name and full not in known:
            if call.module in modules:
                close = [f"{call.module}.{name}" for name in _closest(call.function, modules[call.module])]
                close = close or [name for name in functions if name.partition(".")[2] == call.function][:3]
            else:
                close = _closest(full, functions)
            hint = f"; did you mean {', '.join(map(_quoted, close))}?" if close else ""
            problems.append(_problem(call.line, f"call({_quoted(full)}): there is no function {full!r}{hint}"))
        elif call.module not in modules:
            close = _closest(call.module, list(modules))
            hint = f"; did you mean {', '.join(f'api.{name}' for name in close)}?" if close else ""
            problems.append(_problem(call.line, f"api has no module {call.module!r}{hint}"))
        elif full not in known:
            close = _closest(call.function, modules[call.module])
            hint = f"; did you mean {', '.join(f'api.{call.module}.{name}' for name in close)}?" if close else ""
            elsewhere = [name for name in functions if name.partition(".")[2] == call.function]
            if not close and elsewhere:
                hint = f"; it is {', '.join(f'api.{name}' for name in elsewhere[:3])}"
            problems.append(_problem(call.line, f"api.{call.module} has no function {call.function!r}{hint}"))
        elif call.keys is not None and full in arguments:
            taken = list(arguments[full])
            for key, line in call.keys:
                if key not in taken:
                    close = _closest(key, taken)
                    hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
                    listed = ", ".join(taken[:_MAX_LISTED]) + (", …" if len(taken) > _MAX_LISTED else "")
                    its = f" (its arguments: {listed})" if taken else " (it takes no arguments)"
                    shown = f"call({_quoted(full)})" if call.by_name else f"api.{full}"
                    problems.append(_problem(line, f"{shown} takes no argument {key!r}{hint}{its}"))
    return problems


def _quoted(name: str) -> str:
    return f'"{name}"'


def _problem(line: int, message: str) -> CallProblem:
    return CallProblem(line=line, message=f"line {line}: {message}")


def _closest(name: str, candidates: Sequence[str]) -> list[str]:
    close = difflib.get_close_matches(name, candidates, n=3, cutoff=0.6)
    if not close:
        folded = name.casefold()
        close = [c for c in candidates if folded and (folded in c.casefold() or c.casefold() in folded)][:3]
    return close


def _free_names(tokens: Sequence[Token]) -> set[str]:
    """The names the script uses other than as properties (`x.name`)."""
    return {
        token.value for index, token in enumerate(tokens) if token.kind == "name" and not _is_property(tokens, index)
    }


def _is_global(tokens: Sequence[Token], name: str, uses: frozenset[str]) -> bool:
    """Whether every `name` in the script is the global one: always followed by one of `uses` (so never declared,
    assigned or taken as a parameter), and never after `function` (a function or method of that name)."""
    for index, token in enumerate(tokens):
        if token.kind != "name" or token.value != name or _is_property(tokens, index):
            continue
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        if following is None or following.kind != "punct" or following.value not in uses:
            return False
        previous = tokens[index - 1] if index else None
        if previous is not None and previous.kind == "name" and previous.value in ("function", "get", "set", "static"):
            return False
    return True


def _is_property(tokens: Sequence[Token], index: int) -> bool:
    previous = tokens[index - 1] if index else None
    return previous is not None and previous.kind == "punct" and previous.value in (".", "?.")


def _calls(tokens: Sequence[Token], lines: _LineIndex) -> tuple[list[_Call], set[str]]:
    """The static calls, and the modules and functions (`m`, `m.f`) the script names without calling."""
    found: list[_Call] = []
    looked_at: set[str] = set()
    for index, token in enumerate(tokens):
        if token.kind != "name" or token.value != "api" or _is_property(tokens, index):
            continue
        module_end, module = _member(tokens, index + 1)
        if module is None:
            continue
        function_end, function = _member(tokens, module_end)
        if function is None:
            looked_at.add(module)
            continue
        opening = function_end
        if _punct(tokens, opening, "?.") and _punct(tokens, opening + 1, "("):
            opening += 1
        if not _punct(tokens, opening, "("):
            looked_at.add(f"{module}.{function}")
            continue
        keys = _keys(tokens, opening + 1, lines)
        found.append(_Call(module=module, function=function, line=lines.line(token.start), keys=keys))
    return found, looked_at


def _calls_by_name(tokens: Sequence[Token], lines: _LineIndex) -> list[_Call]:
    """The `call("module.function", ...)` calls with a plain string literal as the name."""
    found: list[_Call] = []
    for index, token in enumerate(tokens):
        if token.kind != "name" or token.value != "call" or _is_property(tokens, index):
            continue
        if not _punct(tokens, index + 1, "(") or index + 2 >= len(tokens):
            continue
        name = _string(tokens[index + 2])
        if name is None:
            continue
        if _punct(tokens, index + 3, ","):
            keys = _keys(tokens, index + 4, lines)
        elif _punct(tokens, index + 3, ")"):
            keys = ()
        else:
            continue  # `call("a" + b, ...)`: a name made at run time
        module, _, function = name.partition(".")
        found.append(_Call(module=module, function=function, line=lines.line(token.start), keys=keys, by_name=name))
    return found


def _punct(tokens: Sequence[Token], index: int, value: str) -> bool:
    return index < len(tokens) and tokens[index].kind == "punct" and tokens[index].value == value


def _member(tokens: Sequence[Token], index: int) -> tuple[int, str | None]:
    """The member name accessed at `index` (`.name`, `?.name`, `["name"]`, `?.["name"]`) and the index after it."""
    if _punct(tokens, index, "?.") and _punct(tokens, index + 1, "["):
        index += 1
    if _punct(tokens, index, ".") or _punct(tokens, index, "?."):
        name = tokens[index + 1] if index + 1 < len(tokens) else None
        if name is not None and name.kind == "name" and "\\" not in name.value and not name.value.startswith("#"):
            return index + 2, name.value
        return index, None
    if _punct(tokens, index, "[") and index + 2 < len(tokens) and _punct(tokens, index + 2, "]"):
        return index + 3, _string(tokens[index + 1])
    return index, None


def _string(token: Token) -> str | None:
    """The value of a plain string literal (no escapes), else None."""
    if token.kind != "string" or "\\" in token.value:
        return None
    return token.value[1:-1]


def _keys(tokens: Sequence[Token], index: int, lines: _LineIndex) -> tuple[tuple[str, int], ...] | None:
    """The keys of the object literal at `index` when it is the whole first argument and every key is plain."""
    if not _punct(tokens, index, "{"):
        return None
    keys: list[tuple[str, int]] = []
    position = index + 1
    while position < len(tokens):
        token = tokens[position]
        if token.kind == "punct" and token.value == "}":
            after = position + 1
            return tuple(keys) if _punct(tokens, after, ")") or _punct(tokens, after, ",") else None
        if token.kind == "name" and "\\" not in token.value:
            key: str | None = token.value
        elif token.kind == "string":
            key = _string(token)
        else:
            return None  # a spread, a computed or numeric key, a method or accessor: left to run time
        following = position + 1
        if key is None or key == "__proto__":
            return None  # `__proto__: x` sets the prototype, not an argument
        if _punct(tokens, following, ":"):
            position = _value_end(tokens, following + 1)
        elif token.kind == "name" and (_punct(tokens, following, ",") or _punct(tokens, following, "}")):
            position = following  # shorthand `{owner}`
        else:
            return None
        keys.append((key, lines.line(token.start)))
        if position >= len(tokens):
            return None
        if _punct(tokens, position, ","):
            position += 1
    return None


def _value_end(tokens: Sequence[Token], index: int) -> int:
    """The index of the `,` or `}` that ends the property value starting at `index` (nested brackets skipped)."""
    depth = 0
    position = index
    while position < len(tokens):
        token = tokens[position]
        if token.kind == "punct":
            if token.value in ("(", "[", "{", "${"):
                depth += 1
            elif token.value in (")", "]", "}"):
                if depth == 0:
                    return position
                depth -= 1
            elif token.value == "," and depth == 0:
                return position
        position += 1
    return position


class _LineIndex:
    """Line numbers (from 1) of offsets in the source."""

    def __init__(self, source: str) -> None:
        self._breaks = [offset for offset, char in enumerate(source) if char == "\n"]

    def line(self, offset: int) -> int:
        return bisect.bisect_left(self._breaks, offset) + 1
