"""Where a document says its API lives: the server URL calls go to when the operator names none."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["first_absolute_server"]


def first_absolute_server(servers: Iterable[str]) -> str | None:
    """The first absolute http(s) URL among a document's resolved server URLs (variables at their defaults,
    relative ones joined to the document's URL), or None when there is none."""
    return next((url for url in servers if url.startswith(("http://", "https://")) and "{" not in url), None)
