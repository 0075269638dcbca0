"""The thesaurus of search: the everyday words and jargon people use for the words APIs use.

`search_thesaurus.txt` holds one API word a line with what people say for it (`droplet: server, vm, virtual
machine`). A query word that an API does not use is read as the API words the thesaurus gives for it, so "what
servers do I have" finds droplets where the API says droplet. The index decides which words an API uses; this
module only reads the table and finds its phrases in a query.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from importlib import resources
from typing import Final

from catalog._search_text import STOPWORDS, stem, words

__all__ = ["related"]

_FILE: Final = "search_thesaurus.txt"
#: The longest phrase of the table, in words that are not stopwords.
_LONGEST: Final = 3


@functools.cache
def _table() -> dict[tuple[str, ...], frozenset[str]]:
    """What people say (stems, stopwords left out) → the stems of the API words it stands for."""
    found: dict[tuple[str, ...], set[str]] = {}
    text = resources.files("catalog").joinpath(_FILE).read_text(encoding="utf-8")
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        word, _, alternatives = line.partition(":")
        api_word = _key(word)
        if len(api_word) != 1:
            continue
        for alternative in alternatives.split(","):
            key = _key(alternative)
            if key and len(key) <= _LONGEST and key != api_word:
                found.setdefault(key, set()).add(api_word[0])
    return {key: frozenset(stems) for key, stems in found.items()}


def _key(text: str) -> tuple[str, ...]:
    return tuple(stem(word) for word in words(text.lower()) if word not in STOPWORDS)


def related(stems: Sequence[str]) -> dict[str, frozenset[str]]:
    """For the stems of a query in order (stopwords left out), the API words each may stand for.

    A phrase of the table ("virtual machine") counts for its last word; a single word for itself.
    """
    table = _table()
    found: dict[str, set[str]] = {}
    for end in range(len(stems)):
        for length in range(1, min(_LONGEST, end + 1) + 1):
            key = tuple(stems[end - length + 1 : end + 1])
            if key in table:
                found.setdefault(stems[end], set()).update(table[key])
    return {word: frozenset(api_words - {word}) for word, api_words in found.items() if api_words - {word}}
