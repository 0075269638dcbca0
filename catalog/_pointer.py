"""JSON pointers as OpenAPI writes them in `$ref` fragments (RFC 6901, percent-encoded per RFC 3986 §3.5)."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

__all__ = ["MISSING", "escape_token", "join_pointer", "lookup", "split_fragment"]

#: What `lookup` returns when the pointer leads nowhere (None is a legitimate value in a document).
MISSING: Any = object()


def escape_token(token: str) -> str:
    """Escape one reference token: `~` → `~0`, `/` → `~1` (RFC 6901 §3)."""
    return token.replace("~", "~0").replace("/", "~1")


def join_pointer(tokens: list[str] | tuple[str, ...]) -> str:
    """The local ref `#/a/b~1c` for the tokens ['a', 'b/c']; `#` for no tokens."""
    return "#" + "".join("/" + escape_token(token) for token in tokens)


def split_fragment(fragment: str) -> list[str] | None:
    """The tokens of a pointer fragment (`/a/b~1c`, without `#`), percent-decoded; None when it is no pointer.

    An empty fragment is the whole document (no tokens). A fragment that does not start with `/` is a plain
    name (a JSON Schema `$anchor`), not a pointer.
    """
    fragment = unquote(fragment)
    if fragment == "":
        return []
    if not fragment.startswith("/"):
        return None
    return [token.replace("~1", "/").replace("~0", "~") for token in fragment[1:].split("/")]


def lookup(document: Any, tokens: list[str]) -> Any:
    """The value at `tokens` inside `document`, or `MISSING`."""
    value = document
    for token in tokens:
        if isinstance(value, dict):
            value = value.get(token, MISSING)
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            return MISSING
        if value is MISSING:
            return MISSING
    return value
