"""Build the demo shop: a small REST API over an in-memory store that the app's lifespan opens."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute

from demo import customers, debug, inventory, orders, products, users
from demo._responses import UNAUTHORIZED
from demo.auth import current_user
from demo.errors import ConflictError, NotFoundError
from demo.store import Store

__all__ = ["create_app"]

DESCRIPTION = """\
The back office of a small online shop that sells T-shirts, mugs and notebooks.

Authenticate every call with an API key, as `Authorization: Bearer <key>` or `X-API-Key: <key>`.
Lists are paginated: pass `limit`, then the `next_cursor` of each page as `cursor` until it is null.
Amounts are integers in the currency's minor unit (cents). Errors come as JSON with a `detail` message.
"""

TAGS = [
    {"name": "customers", "description": "People who buy from the shop, with their contact details and addresses."},
    {"name": "products", "description": "The catalogue: products, their category tree and their images."},
    {"name": "orders", "description": "Orders placed by customers, from pending to delivered or cancelled."},
    {"name": "inventory", "description": "Units on hand for each product, and adjustments after deliveries or losses."},
    {"name": "users", "description": "Back-office users and their roles; `get_current_user` says who is calling."},
]
DEBUG_TAG = {"name": "debug", "description": "Endpoints that fail, stall or answer at length on purpose, for tests."}


def _operation_id(route: APIRoute) -> str:
    """Each operation's id is its handler's name, e.g. `list_orders`."""
    return route.name


def create_app(*, debug_routes: bool = False) -> FastAPI:
    """A new demo shop app with its own store, opened and seeded when its lifespan starts.

    `debug_routes` adds the `debug` endpoints (`/debug/boom`, `/debug/slow`, `/debug/big`), which need no API key.
    """

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.store = Store()
        try:
            yield
        finally:
            del app.state.store

    app = FastAPI(
        title="Demo Shop API",
        version="1.0.0",
        summary="Customers, products, orders and inventory of a small online shop.",
        description=DESCRIPTION,
        openapi_tags=[*TAGS, DEBUG_TAG] if debug_routes else TAGS,
        lifespan=lifespan,
        generate_unique_id_function=_operation_id,
        separate_input_output_schemas=False,
    )
    for module in (customers, products, orders, inventory, users):
        app.include_router(
            module.router,
            dependencies=[Depends(current_user)],
            responses=UNAUTHORIZED,
            generate_unique_id_function=_operation_id,
        )
    if debug_routes:
        app.include_router(debug.router, generate_unique_id_function=_operation_id)

    @app.exception_handler(NotFoundError)
    async def not_found(request: Request, exc: NotFoundError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=404)

    @app.exception_handler(ConflictError)
    async def conflict(request: Request, exc: ConflictError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=409)

    return app
