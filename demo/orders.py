"""The demo shop's `orders` endpoints."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Path, Query
from fastapi.responses import PlainTextResponse

from demo._responses import CONFLICT, NOT_FOUND, ok
from demo.dependencies import Pagination, StoreDep, paginate
from demo.models import Order, OrderCreate, OrderPage, OrderStatus, OrderUpdate

router = APIRouter(prefix="/orders", tags=["orders"])

OrderId = Annotated[int, Path(ge=1, description="The order's id.")]


@router.get("", summary="List orders")
async def list_orders(
    store: StoreDep,
    page: Pagination,
    status: Annotated[OrderStatus | None, Query(description="Keep only orders in this status.")] = None,
    customer_id: Annotated[int | None, Query(description="Keep only this customer's orders.")] = None,
) -> OrderPage:
    """List orders, newest first, a page at a time."""
    items, next_cursor = paginate(store.orders(status=status, customer_id=customer_id), page)
    return OrderPage(items=items, next_cursor=next_cursor)


@router.post("", summary="Place an order", status_code=201, responses=NOT_FOUND | CONFLICT)
async def create_order(
    store: StoreDep,
    order: OrderCreate,
    idempotency_key: Annotated[
        str | None,
        Header(
            alias="Idempotency-Key",
            max_length=64,
            description="Any unique string; retrying with the same key returns the first order instead of a new one.",
        ),
    ] = None,
) -> Order:
    """Place a pending order for a customer. Its units are taken out of stock; 409 when there are too few."""
    return store.create_order(order, idempotency_key=idempotency_key)


@router.get("/{order_id}", summary="Get an order", responses=NOT_FOUND)
async def get_order(store: StoreDep, order_id: OrderId) -> Order:
    """Get one order by id, with its items and shipping address."""
    return store.order(order_id)


@router.patch("/{order_id}", summary="Update an order", responses=NOT_FOUND | CONFLICT)
async def update_order(store: StoreDep, order_id: OrderId, changes: OrderUpdate) -> Order:
    """Move an order to its next status, change its note, or change its address before it ships."""
    return store.update_order(order_id, changes)


@router.post("/{order_id}/cancel", summary="Cancel an order", responses=NOT_FOUND | CONFLICT)
async def cancel_order(store: StoreDep, order_id: OrderId) -> Order:
    """Cancel a pending or paid order and put its units back in stock; 409 once it has shipped."""
    return store.cancel_order(order_id)


@router.get(
    "/{order_id}/invoice",
    summary="Get an order's invoice",
    response_class=PlainTextResponse,
    responses=ok("The invoice as plain text.", "text/plain") | NOT_FOUND,
)
async def get_order_invoice(store: StoreDep, order_id: OrderId) -> str:
    """Get a plain-text invoice for an order, ready to print or email."""
    order = store.order(order_id)
    customer = store.customer(order.customer_id)  # customers with orders cannot be deleted
    lines = [
        f"INVOICE #{order.id:05d}",
        f"Date: {order.created_at:%Y-%m-%d}",
        f"Customer: {customer.name} (#{customer.id})",
        f"Status: {order.status.value}",
        "",
    ]
    lines += [
        f"{item.quantity:>3} x {item.product_name:<40} {_money(item.quantity * item.unit_price_cents, order.currency)}"
        for item in order.items
    ]
    lines += ["", f"{'Total':<46} {_money(order.total_cents, order.currency)}"]
    return "\n".join(lines) + "\n"


def _money(cents: int, currency: str) -> str:
    return f"{cents // 100:>7}.{cents % 100:02d} {currency}"
