"""Request dependencies shared by the demo shop's routers: the store and pagination."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, TypeVar

from fastapi import Depends, HTTPException, Query, Request, status
from fastapi.exceptions import RequestValidationError

from demo.store import Store

__all__ = ["PageRequest", "Pagination", "StoreDep", "get_store", "paginate"]

T = TypeVar("T")


def get_store(request: Request) -> Store:
    """The app's store; 503 when the app's lifespan has not opened it."""
    store: Store | None = getattr(request.app.state, "store", None)
    if store is None:
        raise HTTPException(
            status.HTTP_503_SERVICE_UNAVAILABLE,
            detail="the demo store is not open: the app's lifespan has not run; "
            "serve the app with a server that runs lifespans (or enter `with TestClient(app)`)",
        )
    return store


StoreDep = Annotated[Store, Depends(get_store)]


@dataclass(frozen=True, kw_only=True)
class PageRequest:
    """Which slice of a list the client asked for."""

    limit: int
    offset: int


def _encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"offset:{offset}".encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> int:
    try:
        kind, _, value = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode().partition(":")
        offset = int(value)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        offset = -1
        kind = ""
    if kind != "offset" or offset < 0:
        raise RequestValidationError(
            [
                {
                    "type": "value_error",
                    "loc": ("query", "cursor"),
                    "msg": "Invalid cursor; pass a next_cursor from a previous page unchanged, or omit it",
                    "input": cursor,
                }
            ]
        )
    return offset


def page_request(
    limit: Annotated[int, Query(ge=1, le=100, description="How many items to return, 1 to 100.")] = 20,
    cursor: Annotated[
        str | None, Query(description="The `next_cursor` of the previous page; omit it for the first page.")
    ] = None,
) -> PageRequest:
    """Read `limit` and `cursor` from the query string."""
    return PageRequest(limit=limit, offset=0 if cursor is None else _decode_cursor(cursor))


Pagination = Annotated[PageRequest, Depends(page_request)]


def paginate(items: Sequence[T], page: PageRequest) -> tuple[list[T], str | None]:
    """The requested slice of `items` and the cursor of the next page, None on the last one."""
    end = page.offset + page.limit
    return list(items[page.offset : end]), _encode_cursor(end) if end < len(items) else None
