"""The demo shop's wire schemas: what its endpoints accept and return."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.json_schema import SkipJsonSchema

__all__ = [
    "Address",
    "Category",
    "Currency",
    "Customer",
    "CustomerCreate",
    "CustomerPage",
    "CustomerUpdate",
    "Order",
    "OrderCreate",
    "OrderItem",
    "OrderItemCreate",
    "OrderPage",
    "OrderStatus",
    "OrderUpdate",
    "Problem",
    "Product",
    "ProductCreate",
    "ProductPage",
    "ProductSort",
    "ProductUpdate",
    "Role",
    "StockAdjustmentReason",
    "StockLevel",
    "StockLevelPage",
    "User",
]

Cents = Annotated[int, Field(ge=0, description="Amount in the currency's minor unit (cents), e.g. 2500 for 25.00.")]
Name = Annotated[str, Field(min_length=1, max_length=120)]
Email = Annotated[
    str, Field(pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$", max_length=254, json_schema_extra={"format": "email"})
]


def _omit_default(schema: dict[str, Any]) -> None:
    """Drop `default: null` from a PATCH field's schema: omitting the field keeps the value, null is not allowed."""
    schema.pop("default", None)


class Role(StrEnum):
    """What a user may do: admins manage the catalogue and inventory, members place and manage orders."""

    admin = "admin"
    member = "member"


class Currency(StrEnum):
    """ISO 4217 currency code."""

    EUR = "EUR"
    USD = "USD"
    GBP = "GBP"


class OrderStatus(StrEnum):
    """Where an order is in its life: pending → paid → shipped → delivered, or cancelled before shipping."""

    pending = "pending"
    paid = "paid"
    shipped = "shipped"
    delivered = "delivered"
    cancelled = "cancelled"


class ProductSort(StrEnum):
    """Order in which products are listed."""

    name = "name"
    price_asc = "price_asc"
    price_desc = "price_desc"


class StockAdjustmentReason(StrEnum):
    """Why stock on hand changed."""

    restock = "restock"
    damaged = "damaged"
    correction = "correction"


class User(BaseModel):
    """A person who signs in to the shop's back office with an API key."""

    model_config = ConfigDict(frozen=True)

    id: int
    name: str
    email: Email
    role: Role


class Address(BaseModel):
    """A postal address."""

    line1: str = Field(min_length=1, max_length=200, description="Street and house number.")
    line2: str | None = Field(default=None, max_length=200, description="Apartment, suite or floor, if any.")
    city: str = Field(min_length=1, max_length=100)
    postal_code: str = Field(min_length=1, max_length=20)
    country: str = Field(pattern=r"^[A-Z]{2}$", description="ISO 3166-1 alpha-2 country code, e.g. 'FR'.")


class Customer(BaseModel):
    """Someone who buys from the shop."""

    id: int
    name: str
    email: Email
    phone: str | None = Field(description="Phone number in E.164 format, or null when unknown.")
    shipping_address: Address | None = Field(description="Default address orders ship to, or null when unset.")


class CustomerCreate(BaseModel):
    """The fields of a new customer."""

    name: Name
    email: Email = Field(description="Must not belong to another customer.")
    phone: str | None = Field(default=None, pattern=r"^\+[1-9][0-9]{6,14}$", description="E.164, e.g. '+33142685300'.")
    shipping_address: Address | None = None


class CustomerUpdate(BaseModel):
    """Changes to a customer; omitted fields keep their value, null clears a nullable field."""

    name: Name | SkipJsonSchema[None] = Field(default=None, json_schema_extra=_omit_default)
    email: Email | SkipJsonSchema[None] = Field(default=None, json_schema_extra=_omit_default)
    phone: str | None = Field(default=None, pattern=r"^\+[1-9][0-9]{6,14}$", description="E.164; null clears it.")
    shipping_address: Address | None = Field(default=None, description="Null clears the default address.")

    @field_validator("name", "email", mode="after")
    @classmethod
    def _not_null(cls, value: str | None) -> str:
        if value is None:
            raise ValueError("may not be null; omit the field to keep its current value")
        return value


class CustomerPage(BaseModel):
    """One page of customers."""

    items: list[Customer]
    next_cursor: str | None = Field(description="Pass as `cursor` to get the next page; null on the last page.")


class Category(BaseModel):
    """A product category; categories nest to any depth."""

    id: int
    name: str
    children: list[Category] = Field(description="Sub-categories, each with its own children.")


class Product(BaseModel):
    """Something the shop sells."""

    id: int
    sku: str = Field(description="Stock keeping unit, unique across products.")
    name: str
    description: str | None
    price_cents: Cents
    currency: Currency
    category_id: int | None = Field(description="The category the product is listed under, or null.")


class ProductCreate(BaseModel):
    """The fields of a new product."""

    sku: str = Field(pattern=r"^[A-Z0-9-]{3,32}$", description="Unique stock keeping unit, e.g. 'TEE-BLK-M'.")
    name: Name
    description: str | None = Field(default=None, max_length=2000)
    price_cents: Cents
    currency: Currency = Currency.EUR
    category_id: int | None = Field(default=None, description="An id from list_categories, or null.")


class ProductUpdate(BaseModel):
    """Changes to a product; omitted fields keep their value, null clears a nullable field."""

    name: Name | SkipJsonSchema[None] = Field(default=None, json_schema_extra=_omit_default)
    description: str | None = Field(default=None, max_length=2000)
    price_cents: Cents | SkipJsonSchema[None] = Field(default=None, json_schema_extra=_omit_default)
    category_id: int | None = None

    @field_validator("name", "price_cents", mode="after")
    @classmethod
    def _not_null(cls, value: str | int | None) -> str | int:
        if value is None:
            raise ValueError("may not be null; omit the field to keep its current value")
        return value


class ProductPage(BaseModel):
    """One page of products."""

    items: list[Product]
    next_cursor: str | None = Field(description="Pass as `cursor` to get the next page; null on the last page.")


class StockLevel(BaseModel):
    """How many units of a product the warehouse holds."""

    product_id: int
    sku: str
    on_hand: int = Field(ge=0, description="Units on the shelf and not yet promised to an order.")
    reorder_level: int = Field(ge=0, description="Restock when on_hand falls to this level or below.")


class StockLevelPage(BaseModel):
    """One page of stock levels."""

    items: list[StockLevel]
    next_cursor: str | None = Field(description="Pass as `cursor` to get the next page; null on the last page.")


class OrderItemCreate(BaseModel):
    """One line of a new order."""

    product_id: int = Field(description="An id from list_products.")
    quantity: int = Field(ge=1, le=100)


class OrderItem(BaseModel):
    """One line of an order, with the product's name and price as they were when the order was placed."""

    product_id: int
    product_name: str
    quantity: int
    unit_price_cents: Cents


class Order(BaseModel):
    """A customer's order."""

    id: int
    customer_id: int
    status: OrderStatus
    currency: Currency
    items: list[OrderItem]
    total_cents: Cents
    shipping_address: Address
    note: str | None = Field(description="Free-text instructions from the customer, or null.")
    created_at: datetime


class OrderCreate(BaseModel):
    """A new order; its currency is that of its products, which must all share one."""

    customer_id: int = Field(description="An id from list_customers.")
    items: list[OrderItemCreate] = Field(min_length=1, max_length=50)
    shipping_address: Address | None = Field(
        default=None, description="Where to ship; defaults to the customer's shipping address."
    )
    note: str | None = Field(default=None, max_length=500)


class OrderUpdate(BaseModel):
    """Changes to an order; omitted fields keep their value. To cancel, call cancel_order instead."""

    status: OrderStatus | SkipJsonSchema[None] = Field(
        default=None,
        json_schema_extra=_omit_default,
        description="The next status: pending → paid → shipped → delivered.",
    )
    note: str | None = Field(default=None, max_length=500, description="Null clears the note.")
    shipping_address: Address | SkipJsonSchema[None] = Field(
        default=None, json_schema_extra=_omit_default, description="Only while the order has not shipped."
    )

    @field_validator("status", "shipping_address", mode="after")
    @classmethod
    def _not_null(cls, value: OrderStatus | Address | None) -> OrderStatus | Address:
        if value is None:
            raise ValueError("may not be null; omit the field to keep its current value")
        return value


class OrderPage(BaseModel):
    """One page of orders."""

    items: list[Order]
    next_cursor: str | None = Field(description="Pass as `cursor` to get the next page; null on the last page.")


class Problem(BaseModel):
    """What went wrong, and usually which call to make next."""

    detail: str
