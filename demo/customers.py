"""The demo shop's `customers` endpoints."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query

from demo._responses import CONFLICT, FORBIDDEN, NOT_FOUND
from demo.auth import require_admin
from demo.dependencies import Pagination, StoreDep, paginate
from demo.models import Customer, CustomerCreate, CustomerPage, CustomerUpdate, OrderPage, OrderStatus

router = APIRouter(prefix="/customers", tags=["customers"])

CustomerId = Annotated[int, Path(ge=1, description="The customer's id.")]


@router.get("", summary="List customers")
async def list_customers(
    store: StoreDep,
    page: Pagination,
    q: Annotated[
        str | None, Query(min_length=1, description="Keep customers whose name or email contains this text.")
    ] = None,
) -> CustomerPage:
    """List customers by id, a page at a time, optionally filtered by name or email."""
    found = store.customers()
    if q is not None:
        needle = q.casefold()
        found = [c for c in found if needle in c.name.casefold() or needle in c.email.casefold()]
    items, next_cursor = paginate(found, page)
    return CustomerPage(items=items, next_cursor=next_cursor)


@router.post("", summary="Create a customer", status_code=201, responses=CONFLICT)
async def create_customer(store: StoreDep, customer: CustomerCreate) -> Customer:
    """Create a customer. The email must not belong to another customer."""
    return store.create_customer(customer)


@router.get("/{customer_id}", summary="Get a customer", responses=NOT_FOUND)
async def get_customer(store: StoreDep, customer_id: CustomerId) -> Customer:
    """Get one customer by id."""
    return store.customer(customer_id)


@router.patch("/{customer_id}", summary="Update a customer", responses=NOT_FOUND | CONFLICT)
async def update_customer(store: StoreDep, customer_id: CustomerId, changes: CustomerUpdate) -> Customer:
    """Change some of a customer's fields; fields left out keep their value."""
    return store.update_customer(customer_id, changes)


@router.delete(
    "/{customer_id}",
    summary="Delete a customer",
    status_code=204,
    # FastAPI before 0.117 reads `-> None` under `from __future__ import annotations` as a NoneType body model
    # and refuses it on a 204; saying there is none works on every release.
    response_model=None,
    dependencies=[Depends(require_admin)],
    responses=FORBIDDEN | NOT_FOUND | CONFLICT,
)
async def delete_customer(store: StoreDep, customer_id: CustomerId) -> None:
    """Delete a customer who has never placed an order. Admins only."""
    store.delete_customer(customer_id)


@router.get("/{customer_id}/orders", summary="List a customer's orders", responses=NOT_FOUND)
async def list_customer_orders(
    store: StoreDep,
    customer_id: CustomerId,
    page: Pagination,
    status: Annotated[OrderStatus | None, Query(description="Keep only orders in this status.")] = None,
) -> OrderPage:
    """List one customer's orders, newest first, optionally only those in one status."""
    store.customer(customer_id)
    items, next_cursor = paginate(store.orders(status=status, customer_id=customer_id), page)
    return OrderPage(items=items, next_cursor=next_cursor)
