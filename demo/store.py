"""The demo shop's in-memory store: one per app, opened by the app's lifespan and seeded with fixed data.

Every method runs to completion without awaiting, so concurrent requests on one event loop never see half an update.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Final

from demo import _seed
from demo.errors import ConflictError, NotFoundError
from demo.models import (
    Category,
    Currency,
    Customer,
    CustomerCreate,
    CustomerUpdate,
    Order,
    OrderCreate,
    OrderItem,
    OrderStatus,
    OrderUpdate,
    Product,
    ProductCreate,
    ProductSort,
    ProductUpdate,
    StockAdjustmentReason,
    StockLevel,
    User,
)

__all__ = ["Store"]

# The only forward moves PATCH allows; cancelling has its own operation.
NEXT_STATUS: Final[dict[OrderStatus, OrderStatus]] = {
    OrderStatus.pending: OrderStatus.paid,
    OrderStatus.paid: OrderStatus.shipped,
    OrderStatus.shipped: OrderStatus.delivered,
}
CANCELLABLE: Final = frozenset({OrderStatus.pending, OrderStatus.paid})


def _utcnow() -> datetime:
    return datetime.now(UTC)


class Store:
    """The shop's users, catalogue, stock, customers and orders, held in memory."""

    def __init__(self, *, now: Callable[[], datetime] = _utcnow) -> None:
        self._now = now
        self.users: dict[int, User] = {u.id: u for u in _seed.USERS}
        self._categories = {cid: (name, parent) for cid, name, parent in _seed.CATEGORIES}
        self._products = {p.id: p.model_copy(deep=True) for p in _seed.PRODUCTS}
        self._stock = {s.product_id: s.model_copy(deep=True) for s in _seed.STOCK}
        self._images: dict[int, bytes] = {}
        self._customers = {c.id: c.model_copy(deep=True) for c in _seed.CUSTOMERS}
        self._orders = {o.id: o.model_copy(deep=True) for o in _seed.ORDERS}
        self._idempotency: dict[str, int] = {}
        # Ids are never reused, even after a delete.
        self._ids = {
            kind: itertools.count(max(records, default=0) + 1)
            for kind, records in (("customer", self._customers), ("product", self._products), ("order", self._orders))
        }

    # Customers

    def customers(self) -> list[Customer]:
        """Every customer, by id."""
        return sorted(self._customers.values(), key=lambda c: c.id)

    def customer(self, customer_id: int) -> Customer:
        """The customer with this id."""
        try:
            return self._customers[customer_id]
        except KeyError:
            raise NotFoundError("customer", customer_id, hint="call list_customers to find its id") from None

    def create_customer(self, new: CustomerCreate) -> Customer:
        """Add a customer; emails are unique."""
        self._check_email_free(new.email)
        customer = Customer(id=next(self._ids["customer"]), **new.model_dump())
        self._customers[customer.id] = customer
        return customer

    def update_customer(self, customer_id: int, changes: CustomerUpdate) -> Customer:
        """Apply the fields set in `changes`."""
        customer = self.customer(customer_id)
        if changes.email is not None and changes.email != customer.email:
            self._check_email_free(changes.email)
        updated = customer.model_copy(update=_set_fields(changes))
        self._customers[customer_id] = updated
        return updated

    def delete_customer(self, customer_id: int) -> None:
        """Remove a customer who has never ordered."""
        self.customer(customer_id)
        if any(o.customer_id == customer_id for o in self._orders.values()):
            raise ConflictError(
                f"customer {customer_id} has orders and cannot be deleted; "
                f"call list_customer_orders(customer_id={customer_id}) to see them"
            )
        del self._customers[customer_id]

    def _check_email_free(self, email: str) -> None:
        for other in self._customers.values():
            if other.email.lower() == email.lower():
                raise ConflictError(f"email {email!r} already belongs to customer {other.id}; call get_customer")

    # Catalogue

    def category_tree(self) -> list[Category]:
        """Top-level categories, each with its sub-categories nested inside."""

        def children(parent: int | None) -> list[Category]:
            return [
                Category(id=cid, name=name, children=children(cid))
                for cid, (name, parent_id) in sorted(self._categories.items())
                if parent_id == parent
            ]

        return children(None)

    def products(
        self, *, category_id: int | None, currency: Currency | None, sort: ProductSort = ProductSort.name
    ) -> list[Product]:
        """Products matching the filters; a category includes its sub-categories."""
        found: Iterable[Product] = self._products.values()
        if category_id is not None:
            within = self._subtree(category_id)
            found = (p for p in found if p.category_id in within)
        if currency is not None:
            found = (p for p in found if p.currency == currency)
        if sort is ProductSort.name:
            return sorted(found, key=lambda p: (p.name, p.id))
        return sorted(found, key=lambda p: (p.price_cents, p.id), reverse=sort is ProductSort.price_desc)

    def product(self, product_id: int) -> Product:
        """The product with this id."""
        try:
            return self._products[product_id]
        except KeyError:
            raise NotFoundError("product", product_id, hint="call list_products to find its id") from None

    def create_product(self, new: ProductCreate) -> Product:
        """Add a product, with no stock; SKUs are unique."""
        if any(p.sku == new.sku for p in self._products.values()):
            raise ConflictError(f"SKU {new.sku!r} is already taken; choose another")
        if new.category_id is not None:
            self._subtree(new.category_id)
        product = Product(id=next(self._ids["product"]), **new.model_dump())
        self._products[product.id] = product
        self._stock[product.id] = StockLevel(product_id=product.id, sku=product.sku, on_hand=0, reorder_level=5)
        return product

    def update_product(self, product_id: int, changes: ProductUpdate) -> Product:
        """Apply the fields set in `changes`; existing orders keep the old name and price."""
        product = self.product(product_id)
        if changes.category_id is not None:
            self._subtree(changes.category_id)
        updated = product.model_copy(update=_set_fields(changes))
        self._products[product_id] = updated
        return updated

    def delete_product(self, product_id: int) -> None:
        """Remove a product, its stock and its image; existing orders keep their lines."""
        self.product(product_id)
        del self._products[product_id]
        self._stock.pop(product_id, None)
        self._images.pop(product_id, None)

    def image(self, product_id: int) -> bytes | None:
        """The uploaded PNG of a product, or None when it has none."""
        self.product(product_id)
        return self._images.get(product_id)

    def set_image(self, product_id: int, png: bytes) -> None:
        """Replace the product's image."""
        self.product(product_id)
        self._images[product_id] = png

    def _subtree(self, category_id: int) -> set[int]:
        if category_id not in self._categories:
            raise NotFoundError("category", category_id, hint="call list_categories to see the category tree")
        found = {category_id}
        for cid, (_, parent) in sorted(self._categories.items()):
            if parent in found:
                found.add(cid)
        return found

    # Inventory

    def stock_levels(self, *, low_only: bool) -> list[StockLevel]:
        """Stock of every product, by product id; `low_only` keeps those at or below their reorder level."""
        levels = sorted(self._stock.values(), key=lambda s: s.product_id)
        return [s for s in levels if s.on_hand <= s.reorder_level] if low_only else levels

    def stock_level(self, product_id: int) -> StockLevel:
        """The stock of one product."""
        self.product(product_id)
        return self._stock[product_id]

    def adjust_stock(self, product_id: int, delta: int, reason: StockAdjustmentReason) -> StockLevel:
        """Add `delta` units (negative to remove) to the product's stock."""
        level = self.stock_level(product_id)
        if level.on_hand + delta < 0:
            raise ConflictError(
                f"cannot remove {-delta} units of product {product_id} ({reason}): only {level.on_hand} on hand"
            )
        updated = level.model_copy(update={"on_hand": level.on_hand + delta})
        self._stock[product_id] = updated
        return updated

    # Orders

    def orders(self, *, status: OrderStatus | None = None, customer_id: int | None = None) -> list[Order]:
        """Orders matching the filters, newest first."""
        found = [
            o
            for o in self._orders.values()
            if (status is None or o.status == status) and (customer_id is None or o.customer_id == customer_id)
        ]
        return sorted(found, key=lambda o: o.id, reverse=True)

    def order(self, order_id: int) -> Order:
        """The order with this id."""
        try:
            return self._orders[order_id]
        except KeyError:
            raise NotFoundError("order", order_id, hint="call list_orders to find its id") from None

    def create_order(self, new: OrderCreate, *, idempotency_key: str | None) -> Order:
        """Place an order, taking its units out of stock; a repeated idempotency key returns the first order."""
        if idempotency_key is not None and idempotency_key in self._idempotency:
            return self._orders[self._idempotency[idempotency_key]]
        customer = self.customer(new.customer_id)
        address = new.shipping_address or customer.shipping_address
        if address is None:
            raise ConflictError(
                f"customer {customer.id} has no shipping address; pass shipping_address or "
                f"call update_customer(customer_id={customer.id}) to set one"
            )
        wanted: dict[int, int] = {}
        for line in new.items:
            wanted[line.product_id] = wanted.get(line.product_id, 0) + line.quantity
        products = [self.product(pid) for pid in wanted]
        currencies = sorted({p.currency for p in products})
        if len(currencies) > 1:
            raise ConflictError(f"an order has one currency but its products are priced in {', '.join(currencies)}")
        for p in products:
            if self._stock[p.id].on_hand < wanted[p.id]:
                raise ConflictError(
                    f"only {self._stock[p.id].on_hand} units of product {p.id} ({p.sku}) in stock, "
                    f"{wanted[p.id]} requested"
                )
        for p in products:
            self.adjust_stock(p.id, -wanted[p.id], StockAdjustmentReason.correction)
        items = [
            OrderItem(product_id=p.id, product_name=p.name, quantity=wanted[p.id], unit_price_cents=p.price_cents)
            for p in products
        ]
        order = Order(
            id=next(self._ids["order"]),
            customer_id=customer.id,
            status=OrderStatus.pending,
            currency=currencies[0],
            items=items,
            total_cents=sum(i.quantity * i.unit_price_cents for i in items),
            shipping_address=address,
            note=new.note,
            created_at=self._now(),
        )
        self._orders[order.id] = order
        if idempotency_key is not None:
            self._idempotency[idempotency_key] = order.id
        return order

    def update_order(self, order_id: int, changes: OrderUpdate) -> Order:
        """Move the order to its next status, change its note, or change its address before it ships."""
        order = self.order(order_id)
        if changes.status is not None and changes.status != order.status:
            allowed = NEXT_STATUS.get(order.status)
            if changes.status != allowed:
                then = f"the only next status is {allowed.value!r}" if allowed else "it is final"
                raise ConflictError(
                    f"order {order_id} cannot go from {order.status.value!r} to {changes.status.value!r}: {then}"
                    + ("; call cancel_order to cancel it" if changes.status is OrderStatus.cancelled else "")
                )
        if changes.shipping_address is not None and order.status not in CANCELLABLE:
            raise ConflictError(f"order {order_id} is {order.status.value}; its shipping address can no longer change")
        updated = order.model_copy(update=_set_fields(changes))
        self._orders[order_id] = updated
        return updated

    def cancel_order(self, order_id: int) -> Order:
        """Cancel an order that has not shipped and put its units back in stock."""
        order = self.order(order_id)
        if order.status not in CANCELLABLE:
            raise ConflictError(
                f"order {order_id} is {order.status.value} and can no longer be cancelled; "
                "only pending or paid orders can"
            )
        for item in order.items:
            if item.product_id in self._stock:
                self.adjust_stock(item.product_id, item.quantity, StockAdjustmentReason.restock)
        updated = order.model_copy(update={"status": OrderStatus.cancelled})
        self._orders[order_id] = updated
        return updated


def _set_fields(changes: CustomerUpdate | ProductUpdate | OrderUpdate) -> dict[str, object]:
    """The fields the client sent, as model instances (not dicts), ready for `model_copy(update=...)`."""
    return {name: getattr(changes, name) for name in changes.model_fields_set}
