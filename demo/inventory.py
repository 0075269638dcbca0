"""The demo shop's `inventory` endpoints: stock levels and adjustments."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, Path, Query
from fastapi.exceptions import RequestValidationError

from demo._responses import CONFLICT, FORBIDDEN, NOT_FOUND
from demo.auth import require_admin
from demo.dependencies import Pagination, StoreDep, paginate
from demo.models import StockAdjustmentReason, StockLevel, StockLevelPage

router = APIRouter(prefix="/inventory", tags=["inventory"])

ProductId = Annotated[int, Path(ge=1, description="The product's id.")]


@router.get("", summary="List stock levels")
async def list_stock_levels(
    store: StoreDep,
    page: Pagination,
    low_stock: Annotated[bool, Query(description="Keep only products at or below their reorder level.")] = False,
) -> StockLevelPage:
    """List the stock of every product by product id, a page at a time."""
    items, next_cursor = paginate(store.stock_levels(low_only=low_stock), page)
    return StockLevelPage(items=items, next_cursor=next_cursor)


@router.get("/{product_id}", summary="Get a product's stock level", responses=NOT_FOUND)
async def get_stock_level(store: StoreDep, product_id: ProductId) -> StockLevel:
    """Get how many units of one product are on hand."""
    return store.stock_level(product_id)


@router.post(
    "/{product_id}/adjustments",
    summary="Adjust a product's stock",
    dependencies=[Depends(require_admin)],
    responses=FORBIDDEN | NOT_FOUND | CONFLICT,
)
async def adjust_stock(
    store: StoreDep,
    product_id: ProductId,
    # One form field per parameter: a Pydantic model as the whole form needs FastAPI 0.113 or later.
    delta: Annotated[int, Form(ge=-1000, le=1000, description="Units to add; negative to remove. Must not be 0.")],
    reason: Annotated[StockAdjustmentReason, Form()],
) -> StockLevel:
    """Add or remove units of a product, sent as a URL-encoded form, e.g. after a delivery. Admins only.

    Stock cannot go below zero.
    """
    if delta == 0:
        raise RequestValidationError(
            [{"type": "value_error", "loc": ("body", "delta"), "msg": "Value error, must not be 0", "input": delta}]
        )
    return store.adjust_stock(product_id, delta, reason)
