"""Find the last top-level expression statement of a script, so its value can be the script's result.

Scripts run as the body of an async function (for top-level `await` and `return`), where the value of the last
expression would be lost. `with_implicit_return` rewrites `...; expr` into `...; return (expr);`. It needs no
full parser: a small tokenizer finds the statement boundaries at nesting depth 0 (after `;`, after a block's
`}`, and at line breaks where automatic semicolon insertion ends a statement), and the engine compiles the
rewrite and falls back to the source as written when it does not compile. Lines keep their numbers, so error
positions stay right.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Token", "last_statement", "tokenize", "with_implicit_return"]

_IDENT = re.compile(r"(?:[A-Za-z_$#\\\u0080-\U0010ffff])(?:[\w$\\\u0080-\U0010ffff])*")
_NUMBER = re.compile(r"(?:0[xXoObB][0-9a-fA-F_]+n?|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?n?)")
_PUNCTUATORS = sorted(
    (
        ">>>= ... === !== **= <<= >>= >>> &&= ||= ??= => == != <= >= && || ?? ?. ++ -- += -= *= /= %= &= |= ^= ** "
        "<< >> { } ( ) [ ] ; , < > + - * / % & | ^ ! ~ ? : = . @"
    ).split(),
    key=len,
    reverse=True,
)
#: After these words a `/` starts a regular expression, not a division.
_BEFORE_EXPRESSION = frozenset(
    "return typeof instanceof in of new delete void throw case do else yield await extends".split()
)
#: A statement cannot end on these words (the next line continues it).
_CANNOT_END = _BEFORE_EXPRESSION | frozenset(
    "if for while with switch catch try finally function class const let var async import export".split()
)
#: A line starting with these words continues the statement before it.
_CONTINUES = frozenset("in of instanceof else catch finally".split())
#: A statement starting with these words is not an expression statement.
_NOT_EXPRESSION = frozenset(
    "var let const if for while do switch try throw return break continue function class import export debugger "
    "with".split()
)
_CONTROL = frozenset("if for while with switch catch".split())
_STARTS_LINE = frozenset({"!", "~", "{", "++", "--"})


class _LexError(Exception):
    """Something unterminated: leave the source to QuickJS, which reports it properly."""


@dataclass(slots=True)
class Token:
    """One significant token: its kind (name, number, string, template, regex, punct), text and place."""

    kind: str  # name, number, string, template, regex, punct
    value: str
    start: int
    end: int
    newline_before: bool
    closes_control: bool = False


def with_implicit_return(source: str) -> str | None:
    """`source` with `return (…);` around its last expression statement, or None when it has none to wrap."""
    found = last_statement(source)
    if found is None:
        return None
    start, end = found
    return f"{source[:start]}return ({source[start:end]});{source[end:]}"


def last_statement(source: str) -> tuple[int, int] | None:
    """Where the last top-level statement starts and ends (trailing `;` and comments excluded), when it may be
    an expression; None when it is a declaration or control statement, or the source cannot be tokenized."""
    try:
        tokens = _tokenize(source)
    except _LexError:
        return None
    candidates: list[int] = []
    depth = 0
    controls: list[bool] = []
    for index, token in enumerate(tokens):
        if depth == 0 and _starts_statement(tokens, index):
            candidates.append(index)
        if token.kind == "punct":
            if token.value in ("(", "[", "{", "${"):
                previous = tokens[index - 1] if index else None
                is_control = token.value == "(" and previous is not None and previous.value in _CONTROL
                controls.append(is_control)
                depth += 1
            elif token.value in (")", "]", "}"):
                if not controls:
                    return None
                token.closes_control = controls.pop() and token.value == ")"
                depth -= 1
    if not candidates or depth != 0:
        return None
    first = candidates[-1]
    last = len(tokens) - 1
    while last >= first and tokens[last].value == ";" and tokens[last].kind == "punct":
        last -= 1
    if last < first:
        return None
    head = tokens[first]
    if head.kind == "name" and head.value in _NOT_EXPRESSION:
        return None
    if head.value == "async" and first + 1 <= last and tokens[first + 1].value == "function":
        return None
    return head.start, tokens[last].end


def tokenize(source: str) -> list[Token] | None:
    """The significant tokens of `source` (comments dropped; a string, template part or regular expression is one
    token), or None when something in it is unterminated."""
    try:
        return _tokenize(source)
    except _LexError:
        return None


def _starts_statement(tokens: list[Token], index: int) -> bool:
    if index == 0:
        return True
    previous, token = tokens[index - 1], tokens[index]
    if previous.kind == "punct" and previous.value == ";":
        return True
    # A statement ends at a line break (automatic semicolon insertion) or after a block's closing brace.
    after_block = previous.kind == "punct" and previous.value == "}"
    if not (token.newline_before or after_block) or not _can_end(previous):
        return False
    if token.kind == "name":
        return token.value not in _CONTINUES
    if token.kind in ("number", "string"):
        return True
    return token.kind == "punct" and token.value in _STARTS_LINE


def _can_end(token: Token) -> bool:
    if token.kind == "name":
        return token.value not in _CANNOT_END
    if token.kind == "punct":
        if token.value == ")":
            return not token.closes_control
        return token.value in ("]", "}", "++", "--")
    return True


def _regex_allowed(previous: Token | None) -> bool:
    if previous is None:
        return True
    if previous.kind == "punct":
        # After `if (…)` and the like a statement starts: `if (x) /re/.test(s)`.
        return previous.value != "]" and (previous.value != ")" or previous.closes_control)
    if previous.kind == "name":
        return previous.value in _BEFORE_EXPRESSION
    return False


def _tokenize(source: str) -> list[Token]:
    """The significant tokens; template literals become one token per literal part, `${` counts as a bracket."""
    tokens: list[Token] = []
    braces: list[str] = []  # "{" for a brace, "`" for a template substitution
    parens: list[bool] = []  # for each open "(", whether it follows if, for, while, with, switch or catch
    position, size = 0, len(source)
    newline = False
    while position < size:
        char = source[position]
        if char in " \t\r\n\f\v\u00a0\ufeff\u2028\u2029":
            newline = newline or char in "\n\r\u2028\u2029"
            position += 1
            continue
        if source.startswith("//", position):
            end = source.find("\n", position)
            position = size if end < 0 else end
            continue
        if source.startswith("/*", position):
            end = source.find("*/", position + 2)
            if end < 0:
                raise _LexError
            newline = newline or "\n" in source[position:end]
            position = end + 2
            continue
        previous = tokens[-1] if tokens else None
        start = position
        if char in "'\"":
            position = _skip_string(source, position, char)
            tokens.append(Token("string", source[start:position], start, position, newline))
        elif char == "`" or (char == "}" and braces and braces[-1] == "`"):
            if char == "}":
                braces.pop()
                tokens.append(Token("punct", "}", start, start + 1, newline))
                newline = False
            position, substitution = _skip_template(source, position + 1)
            tokens.append(Token("template", source[start:position], start, position, newline))
            if substitution:
                braces.append("`")
                tokens.append(Token("punct", "${", position - 2, position, False))
        elif char == "/" and _regex_allowed(previous):
            position = _skip_regex(source, position)
            tokens.append(Token("regex", source[start:position], start, position, newline))
        elif (match := _NUMBER.match(source, position)) and (char.isdigit() or char == "."):
            position = match.end()
            tokens.append(Token("number", match.group(), start, position, newline))
        elif match := _IDENT.match(source, position):
            position = match.end()
            tokens.append(Token("name", match.group(), start, position, newline))
        else:
            value = next((p for p in _PUNCTUATORS if source.startswith(p, position)), char)
            position += len(value)
            token = Token("punct", value, start, position, newline)
            if value == "{":
                braces.append("{")
            elif value == "}" and braces:
                braces.pop()
            elif value == "(":
                parens.append(previous is not None and previous.kind == "name" and previous.value in _CONTROL)
            elif value == ")" and parens:
                token.closes_control = parens.pop()
            tokens.append(token)
        newline = False
    return tokens


def _skip_string(source: str, position: int, quote: str) -> int:
    position += 1
    while position < len(source):
        char = source[position]
        if char == "\\":
            position += 2
        elif char == quote:
            return position + 1
        elif char in "\n\r":
            raise _LexError
        else:
            position += 1
    raise _LexError


def _skip_template(source: str, position: int) -> tuple[int, bool]:
    """The end of a template part starting after its opening `` ` `` or `}`; True when it ends with `${`."""
    while position < len(source):
        char = source[position]
        if char == "\\":
            position += 2
        elif char == "`":
            return position + 1, False
        elif source.startswith("${", position):
            return position + 2, True
        else:
            position += 1
    raise _LexError


def _skip_regex(source: str, position: int) -> int:
    position += 1
    in_class = False
    while position < len(source):
        char = source[position]
        if char == "\\":
            position += 2
            continue
        if char in "\n\r":
            raise _LexError
        if char == "[":
            in_class = True
        elif char == "]":
            in_class = False
        elif char == "/" and not in_class:
            position += 1
            while position < len(source) and (source[position].isalnum() or source[position] in "_$"):
                position += 1
            return position
        position += 1
    raise _LexError
