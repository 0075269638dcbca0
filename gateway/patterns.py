"""A document's regular expressions (`pattern`, `patternProperties` names), matched in time linear in the text.

They run on what callers send, so a backtracking engine would let a pattern such as `^(a+)+$` and a 30-character
argument hold the event loop for minutes: RE2 (`google-re2`) runs them instead, which cannot backtrack. JSON
Schema patterns are ECMA-262 regular expressions; one RE2 cannot compile (lookaround, backreferences) is not
checked by the gateway, never handed to Python's `re`: the API checks its own input.
"""

from __future__ import annotations

import functools
import logging
import re
from typing import Any, Final

import re2

__all__ = ["is_checked", "pattern_search"]

logger = logging.getLogger("gateway.patterns")

#: Patterns compiled and kept (a document has a few hundred at most; a cap all the same).
_CACHED: Final = 4096

_OPTIONS: Final = re2.Options()
_OPTIONS.log_errors = False  # RE2 would print why a pattern does not compile to stderr, through absl


#: An escape and what follows it: ECMA-262's `\uXXXX` is RE2's `\x{XXXX}`; other escapes pass as they are.
_ESCAPE: Final = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|.)", re.DOTALL)


def _in_re2(pattern: str) -> str:
    """`pattern` with ECMA-262's `\\uXXXX` escapes written as RE2 writes them (an escaped backslash stays one)."""
    return _ESCAPE.sub(lambda m: f"\\x{{{m[1]}}}" if m[1] else m[0], pattern)


@functools.lru_cache(maxsize=_CACHED)
def _compiled(pattern: str) -> Any:
    """RE2's compiled `pattern`, or None when RE2 cannot run it (said once, at info level)."""
    try:
        return re2.compile(_in_re2(pattern), _OPTIONS)
    except re2.error as error:
        why = error.args[0].decode("utf-8", "replace") if error.args and isinstance(error.args[0], bytes) else error
        logger.info(
            "the document's pattern %r is not checked by the gateway (%s): the gateway runs patterns only with "
            "RE2, which is linear in time but has no lookaround or backreferences; the API checks it itself",
            pattern,
            why,
        )
        return None


def pattern_search(pattern: str, text: str) -> bool | None:
    """Whether `pattern` matches anywhere in `text` (JSON Schema patterns are not anchored); None: not checked."""
    compiled = _compiled(pattern)
    if compiled is None:
        return None
    return compiled.search(text) is not None


def is_checked(pattern: str) -> bool:
    """Whether the gateway checks `pattern`: RE2 can run it."""
    return _compiled(pattern) is not None
