"""Endpoints that misbehave on purpose, to test the gateway's error paths; only in `create_app(debug_routes=True)`."""

from __future__ import annotations

from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Query
from fastapi.responses import RedirectResponse, Response

router = APIRouter(prefix="/debug", tags=["debug"])

MAX_SLOW_SECONDS = 5.0
MAX_BIG_SIZE = 100_000
MAX_NESTING = 5_000


class BoomError(RuntimeError):
    """Raised by `GET /debug/boom` to stand for a bug in a handler."""


@router.get("/boom", summary="Raise an exception")
async def debug_boom() -> dict[str, str]:
    """Raise an unhandled exception, so the server answers 500."""
    raise BoomError("boom: this endpoint always fails")


@router.get("/slow", summary="Answer after a delay")
async def debug_slow(
    seconds: Annotated[float, Query(ge=0, le=MAX_SLOW_SECONDS, description="How long to wait.")] = 1.0,
) -> dict[str, float]:
    """Wait, then answer with how long it waited."""
    await anyio.sleep(seconds)
    return {"slept": seconds}


@router.get("/big", summary="Answer with a large list")
async def debug_big(
    size: Annotated[int, Query(ge=0, le=MAX_BIG_SIZE, description="How many items to return.")] = 10_000,
) -> list[dict[str, Any]]:
    """Answer with a JSON list of `size` small objects (about 40 bytes each)."""
    return [{"index": i, "label": f"item {i:06d}"} for i in range(size)]


@router.get("/nested", summary="Answer with deeply nested JSON")
async def debug_nested(
    levels: Annotated[int, Query(ge=1, le=MAX_NESTING, description="How many objects deep.")] = 300,
) -> Response:
    """Answer with `{"a": {"a": … 1}}`, `levels` objects deep (past ~1,000 Python's json cannot read it)."""
    return Response('{"a":' * levels + "1" + "}" * levels, media_type="application/json")


@router.get("/moved", summary="Answer with a redirect")
async def debug_moved() -> RedirectResponse:
    """Redirect to a download elsewhere, as archive endpoints do."""
    return RedirectResponse("https://downloads.example.com/archive.tar.gz", status_code=302)
