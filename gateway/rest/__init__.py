"""Calling the REST API: the dispatcher that checks a function's arguments and builds its HTTP request from catalog
data, the credentials made from the caller's token, and the transports that send it (the ASGI app in-process, or
an upstream over HTTP), with route checks and document fetching.

Nothing here knows MCP: a call is a catalog `Function`, its arguments and a `RestContext`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gateway._lazy import lazy_exports

if TYPE_CHECKING:
    from gateway.rest.dispatcher import CallOutcome, Dispatcher, decode_body

__all__ = ["CallOutcome", "Dispatcher", "decode_body"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "gateway.rest.dispatcher": (
            "CallOutcome",
            "Dispatcher",
            "decode_body",
        ),
    },
    globals(),
)
