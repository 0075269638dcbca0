"""How a value a client sent appears in the operator's log: never with a raw line break or other control character,
which would start a forged log line (CWE-117)."""

from __future__ import annotations

from typing import Final

__all__ = ["loggable"]

_MOST: Final = 300


def loggable(value: object) -> str:
    """`value` for a log message: as it is when every character of it is printable, else its repr (so that a line
    break appears as `\\n`); cut to a few hundred characters, so that one request cannot write a long line."""
    text = str(value)
    if not text.isprintable():
        text = repr(text)
    return text if len(text) <= _MOST else f"{text[: _MOST - 1]}…"
