"""Errors of the catalog package.

CatalogError
├── DocumentError          the document cannot be understood (points at the place)
│   └── FetchLimitError    loading it would fetch for longer, or more documents, than FetchLimits allow
├── SchemaTooLargeError    a function's JSON Schema is over the node cap
├── UnknownNameError       no function, module or term by that name (lists the closest)
├── CatalogConfigError     a composite or concept the project registered is wrong
└── SemanticModelError     the `semantic` extra's model cannot be used (missing, or not the file it should be)
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "CatalogConfigError",
    "CatalogError",
    "DocumentError",
    "FetchLimitError",
    "SchemaTooLargeError",
    "SemanticModelError",
    "UnknownNameError",
    "shown",
]

#: How much of a name a caller gave an error message quotes.
_SHOWN_CHARS = 100


def shown(name: str) -> str:
    """`name` quoted for an error message, cut short when long: names come from callers, and an error must not
    send a megabyte back."""
    if len(name) <= _SHOWN_CHARS:
        return repr(name)
    return f"{name[:_SHOWN_CHARS]!r}… ({len(name):,} characters)"


class CatalogError(Exception):
    """Root of every error the catalog raises."""


class DocumentError(CatalogError):
    """The document cannot be understood; the message says what is wrong, where, and what to do."""

    def __init__(self, message: str, *, pointer: str = "#", location: str = "<document>") -> None:
        super().__init__(message)
        self.pointer = pointer
        self.location = location


class FetchLimitError(DocumentError):
    """Loading a document would fetch for longer, or more documents, than its `FetchLimits` allow: the whole load
    fails (an unreadable ref alone is a warning)."""


class SchemaTooLargeError(CatalogError):
    """A JSON Schema has more nodes than the configured cap."""

    def __init__(self, message: str, *, nodes: int, limit: int) -> None:
        super().__init__(message)
        self.nodes = nodes
        self.limit = limit


class UnknownNameError(CatalogError, LookupError):
    """No function, module or term has this name; `suggestions` holds the closest names."""

    def __init__(self, message: str, *, name: str, suggestions: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.name = name
        self.suggestions = tuple(suggestions)

    def __str__(self) -> str:
        return str(self.args[0])


class CatalogConfigError(CatalogError):
    """A composite, concept or option given by the project is invalid."""


class SemanticModelError(CatalogError):
    """Semantic ranking was asked for but its model cannot be used; the message names the file and the fix."""
