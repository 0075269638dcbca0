"""Suggestions for a function name that is not in the catalog: what the caller most likely meant.

An agent calls a function by a misspelt name, by the name a vendor's SDK gives the call (those often follow the
path: `customers.listPaymentMethods`), or by its route (`GET /repos/{owner}/{repo}`). The closest functions are
a slip of a function's name (with the other near spellings), else the functions at that route, the functions whose
names, paths and summaries share the name's words, and the nearest spellings, in that order.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import Final
from urllib.parse import urlsplit

from catalog._search_text import words
from catalog.model import Catalog, Function

__all__ = ["closest_functions", "unknown_function"]

#: A spelling at least this close to a function's name is a slip of that name, ahead of everything else.
_SLIP: Final = 0.85
#: A spelling at least this close is still worth naming, after the functions that share its words.
_NEAR: Final = 0.6
_METHODS: Final = frozenset({"get", "put", "post", "delete", "options", "head", "patch", "trace"})
_PARAM: Final = re.compile(r"^\{[^}]*\}$")
_CAMEL: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
#: How many leading segments of a route may be the server's base path rather than the document's.
_BASE_SEGMENTS: Final = 2
#: The longest name read: a name is short, and the time to compare one grows with its length.
_LONGEST: Final = 160


def closest_functions(catalog: Catalog, name: str, *, limit: int = 5) -> tuple[Function, ...]:
    """The functions of `catalog` that `name` most likely means, best first, at most `limit`; none when nothing
    is close. Deterministic."""
    from catalog.search import SearchIndex

    text = name.strip()[:_LONGEST]
    functions = catalog.functions()
    if not text or not functions:
        return ()
    by_name = {function.name.casefold(): function for function in functions}
    for function in functions:  # a name without its module (`list_pulls`) is compared with names without theirs
        by_name.setdefault(function.function_name.casefold(), function)
    spelt: dict[Function, float] = {}
    for spelling in _spellings(text):
        for match in difflib.get_close_matches(spelling, list(by_name), n=limit, cutoff=_NEAR):
            ratio = difflib.SequenceMatcher(None, spelling, match).ratio()
            spelt[by_name[match]] = max(ratio, spelt.get(by_name[match], 0.0))
    ranked = sorted(spelt.items(), key=lambda pair: (-pair[1], pair[0].name))
    found: list[Function] = [function for function, ratio in ranked if ratio >= _SLIP]
    at_route = _at_route(functions, text)
    if at_route:
        return tuple(dict.fromkeys([*found, *at_route]))[:limit]
    near = [function for function, ratio in ranked if ratio < _SLIP]
    said = " ".join(words(text.replace("_", " ").replace(".", " ").replace("/", " ")))
    if said and not found:  # a slip of a name is what was meant; no need to guess by words
        # The functions that share its words, leaving room for the nearest other spelling.
        found += SearchIndex(catalog).rank(said, limit=limit - 1 if near else limit)
    found += near
    return tuple(dict.fromkeys(found))[:limit]


def _spellings(text: str) -> list[str]:
    """`text` as a catalog name might be spelt: as given, in snake_case (`listForOrg` → `list_for_org`), and its
    last two dotted parts (`octokit.rest.repos.listForOrg` → `repos.list_for_org`)."""
    snake = _CAMEL.sub("_", text).replace("-", "_").casefold()
    parts = snake.split(".")
    return list(dict.fromkeys([text.casefold(), snake, ".".join(parts[-2:])]))


def _at_route(functions: tuple[Function, ...], text: str) -> list[Function]:
    """The functions whose route `text` names (`GET /repos/{owner}/{repo}`, `/repos/octo/hello`, a full URL):
    the method, when given, must be theirs; each segment must be theirs or fill one of their parameters."""
    method, _, rest = text.partition(" ")
    if method.casefold() not in _METHODS:
        method, rest = "", text
    rest = rest.strip()
    if "/" not in rest:
        return []
    path = urlsplit(rest).path if "://" in rest else rest.split("?", 1)[0]
    wanted = [segment for segment in path.split("/") if segment]
    found: list[Function] = []
    for function in functions:
        if method and function.method.casefold() != method.casefold():
            continue
        segments = [segment for segment in function.path.split("/") if segment]
        # A route under the server's base path (`/v1` in the URL, not in the document's paths) matches too.
        skipped = len(wanted) - len(segments)
        if not segments or not 0 <= skipped <= _BASE_SEGMENTS:
            continue
        pairs = list(zip(wanted[skipped:], segments, strict=True))
        literal = [mine == theirs for mine, theirs in pairs if not _PARAM.match(theirs)]
        if literal and all(literal):
            found.append(function)
    # The most literal segments first (`/repos/{owner}/{repo}/pulls` before `/repos/{owner}/{repo}/{path}`), then
    # the read: a route said without a method is most often one to read.
    return sorted(
        found,
        key=lambda function: (
            sum(1 for part in function.path.split("/") if _PARAM.match(part)),
            function.method.casefold() != "get",
        ),
    )


def unknown_function(catalog: Catalog, name: str, suggestions: Sequence[str], *, hint: str | None = None) -> str:
    """What an agent reads when it names a function `catalog` does not have: the closest few (`suggestions`)
    with their one-line signatures, then `hint` (by default, where to look for others)."""
    from catalog.errors import shown
    from catalog.render import function_line

    lines = [function_line(catalog.function(each)) for each in suggestions if catalog.has_function(each)]
    closest = "".join(f"\n- {line}" for line in lines)
    if closest:
        return (
            f"Unknown function {shown(name)}. The closest:{closest}\n{hint or 'Call search_functions to find others.'}"
        )
    return f"Unknown function {shown(name)}. {hint or 'Call search_functions to find functions.'}"
