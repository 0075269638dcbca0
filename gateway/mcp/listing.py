"""What resources/list, prompts/list and completion/complete share: pages behind opaque cursors, prefix completion."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, TypeVar

from gateway.errors import RequestError

__all__ = ["COMPLETION_CAP", "PAGE_SIZE", "Completion", "complete", "page"]

#: How many entries one resources/list or prompts/list page holds.
PAGE_SIZE: Final = 100
#: MCP 2025-11-25 server/utilities/completion: at most 100 values per response.
COMPLETION_CAP: Final = 100
_CURSOR_PREFIX: Final = "offset:"

T = TypeVar("T")


def _cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"{_CURSOR_PREFIX}{offset}".encode()).decode().rstrip("=")


def _offset(cursor: str, total: int) -> int:
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        text = ""
    number = text.removeprefix(_CURSOR_PREFIX)
    if not text.startswith(_CURSOR_PREFIX) or not number.isdigit() or int(number) > total:
        # MCP 2025-11-25 server/utilities/pagination: an invalid cursor is -32602.
        raise RequestError(
            f"invalid cursor {cursor!r}: pass the nextCursor of the previous page as it came, or none to start over",
            data={"cursor": cursor},
        )
    return int(number)


def page(items: Sequence[T], cursor: str | None, size: int = PAGE_SIZE) -> tuple[Sequence[T], str | None]:
    """The page of `items` that `cursor` points at (the first without one), and the cursor of the next, if any."""
    start = _offset(cursor, len(items)) if cursor is not None else 0
    end = start + size
    return items[start:end], (_cursor(end) if end < len(items) else None)


@dataclass(frozen=True, kw_only=True)
class Completion:
    """The values completion/complete answers: at most COMPLETION_CAP, with the total and whether more exist."""

    values: tuple[str, ...]
    total: int
    has_more: bool


def complete(candidates: Iterable[str], prefix: str) -> Completion:
    """The candidates that start with `prefix` (case-insensitive), then those with a dotted or underscored part that
    does (`get_o` finds `orders.get_order`), in the candidates' order, capped at COMPLETION_CAP."""
    wanted = prefix.casefold()
    first: list[str] = []
    later: list[str] = []
    for candidate in dict.fromkeys(candidates):
        folded = candidate.casefold()
        if folded.startswith(wanted):
            first.append(candidate)
        elif wanted and any(
            folded[index + 1 :].startswith(wanted) for index, char in enumerate(folded) if char in "._-/"
        ):
            later.append(candidate)
    found = first + later
    return Completion(values=tuple(found[:COMPLETION_CAP]), total=len(found), has_more=len(found) > COMPLETION_CAP)
