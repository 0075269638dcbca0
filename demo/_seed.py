"""The demo shop's fixed starting data: the same users, catalogue, customers and orders on every start."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from demo.models import (
    Address,
    Currency,
    Customer,
    Order,
    OrderItem,
    OrderStatus,
    Product,
    Role,
    StockLevel,
    User,
)

USERS = (
    User(id=1, name="Alice Martin", email="alice@example.com", role=Role.admin),
    User(id=2, name="Bob Okafor", email="bob@example.com", role=Role.member),
    User(id=3, name="Carol Diaz", email="carol@example.com", role=Role.member),
)

# (id, name, parent_id): a three-level tree.
CATEGORIES = (
    (1, "Apparel", None),
    (2, "Tops", 1),
    (3, "T-shirts", 2),
    (4, "Hoodies", 2),
    (5, "Headwear", 1),
    (6, "Drinkware", None),
    (7, "Mugs", 6),
    (8, "Stationery", None),
    (9, "Notebooks", 8),
    (10, "Stickers", 8),
)

_EUR, _USD, _GBP = Currency.EUR, Currency.USD, Currency.GBP
PRODUCTS = tuple(
    Product(id=i, sku=sku, name=name, description=description, price_cents=price, currency=cur, category_id=cat)
    for i, (sku, name, description, price, cur, cat) in enumerate(
        (
            ("TEE-BLK-M", "Black logo T-shirt, M", "Organic cotton, 180 g/m², printed in Lyon.", 2500, _EUR, 3),
            ("TEE-WHT-L", "White logo T-shirt, L", "Organic cotton, 180 g/m², printed in Lyon.", 2500, _EUR, 3),
            ("HOOD-GRY-M", "Grey zip hoodie, M", "Brushed fleece with a full-length zip.", 5900, _EUR, 4),
            ("CAP-NVY", "Navy baseball cap", None, 1900, _EUR, 5),
            ("MUG-ENAMEL", "Enamel camp mug", "Steel with a white enamel coat, 300 ml.", 1400, _EUR, 7),
            ("MUG-CERAMIC", "Ceramic mug, 350 ml", "Dishwasher safe.", 1200, _EUR, 7),
            ("NB-A5-DOT", "A5 dotted notebook", "192 pages of 100 g/m² paper.", 1100, _EUR, 9),
            ("NB-A5-LINE", "A5 lined notebook", "192 pages of 100 g/m² paper.", 1100, _EUR, 9),
            ("STK-PACK-10", "Sticker pack of 10", "Matte vinyl, weatherproof.", 600, _EUR, 10),
            ("STK-HOLO", "Holographic sticker", None, 300, _EUR, 10),
            ("TEE-BLK-M-US", "Black logo T-shirt, M (US store)", "Sold and shipped from the US store.", 2800, _USD, 3),
            ("GIFT-25-GBP", "Gift card, £25", "Delivered by email.", 2500, _GBP, None),
        ),
        start=1,
    )
)

STOCK = tuple(StockLevel(product_id=p.id, sku=p.sku, on_hand=(p.id * 7) % 40, reorder_level=5) for p in PRODUCTS)

_CUSTOMERS = (
    (
        "Ada Lovelace",
        "+442079460000",
        Address(line1="12 St James's Square", city="London", postal_code="SW1Y 4JH", country="GB"),
    ),
    (
        "Grace Hopper",
        "+12025550143",
        Address(line1="1 Navy Yard", line2="Building 3", city="Washington", postal_code="20374", country="US"),
    ),
    ("Alan Turing", None, Address(line1="78 High Street", city="Wilmslow", postal_code="SK9 1AA", country="GB")),
    (
        "Marie Curie",
        "+33142685300",
        Address(line1="11 rue Pierre et Marie Curie", city="Paris", postal_code="75005", country="FR"),
    ),
    ("Emmy Noether", None, Address(line1="Bunsenstraße 3", city="Göttingen", postal_code="37073", country="DE")),
    (
        "Srinivasa Ramanujan",
        "+914424567890",
        Address(line1="18 Sarangapani Street", city="Kumbakonam", postal_code="612001", country="IN"),
    ),
    (
        "Hedy Lamarr",
        "+43153400",
        Address(line1="Döblinger Hauptstraße 5", line2="Top 7", city="Vienna", postal_code="1190", country="AT"),
    ),
    (
        "Katherine Johnson",
        "+17575550199",
        Address(line1="21 Langley Boulevard", city="Hampton", postal_code="23681", country="US"),
    ),
    (
        "Edsger Dijkstra",
        None,
        Address(line1="Plantage Muidergracht 24", city="Amsterdam", postal_code="1018 TV", country="NL"),
    ),
    (
        "Barbara Liskov",
        "+16175550120",
        Address(line1="32 Vassar Street", city="Cambridge", postal_code="02139", country="US"),
    ),
    ("Tim Berners-Lee", None, None),
    ("Margaret Hamilton", "+16175550187", None),
)
CUSTOMERS = tuple(
    Customer(
        id=i,
        name=name,
        email=f"{name.split()[0].lower()}.{name.split()[-1].lower()}@example.org",
        phone=phone,
        shipping_address=address,
    )
    for i, (name, phone, address) in enumerate(_CUSTOMERS, start=1)
)

_STATUSES = (
    OrderStatus.delivered,
    OrderStatus.delivered,
    OrderStatus.shipped,
    OrderStatus.paid,
    OrderStatus.pending,
    OrderStatus.cancelled,
)
_START = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)


def _order(i: int) -> Order:
    """Seed order `i`: customers 1-10 (those with an address), EUR products only, statuses in rotation."""
    customer = CUSTOMERS[(i * 3) % 10]
    lines = [(PRODUCTS[(i + k * 4) % 10], 1 + (i + k) % 3) for k in range(1 + i % 3)]
    items = [
        OrderItem(product_id=p.id, product_name=p.name, quantity=q, unit_price_cents=p.price_cents) for p, q in lines
    ]
    if customer.shipping_address is None:
        raise RuntimeError(f"seed customer {customer.id} has no shipping address to order to")
    return Order(
        id=i,
        customer_id=customer.id,
        status=_STATUSES[i % len(_STATUSES)],
        currency=Currency.EUR,
        items=items,
        total_cents=sum(item.quantity * item.unit_price_cents for item in items),
        shipping_address=customer.shipping_address,
        note="Please leave the parcel with the concierge." if i % 5 == 0 else None,
        created_at=_START + timedelta(days=i * 2, hours=i % 7),
    )


ORDERS = tuple(_order(i) for i in range(1, 16))
