"""The bundled demo shop API, driven over HTTP in-process with its lifespan run as a server would."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from jsonschema import Draft202012Validator
from starlette.testclient import TestClient

from demo import ADMIN_KEY, DEMO_KEYS, MEMBER_KEY, create_app
from demo._png import SIGNATURE, thumbnail

ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}
MEMBER = {"Authorization": f"Bearer {MEMBER_KEY}"}
NEW_ORDER = {"customer_id": 1, "items": [{"product_id": 1, "quantity": 2}, {"product_id": 5, "quantity": 1}]}


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(create_app()) as client:
        yield client


@pytest.fixture
def debug_client() -> Iterator[TestClient]:
    with TestClient(create_app(debug_routes=True), raise_server_exceptions=False) as client:
        yield client


def _operations(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [op for item in document["paths"].values() for op in item.values()]


# Authentication


def test_a_request_without_an_api_key_is_a_401_with_a_bearer_challenge(client: TestClient) -> None:
    response = client.get("/orders")

    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert "Authorization: Bearer <key>" in response.json()["detail"]


def test_an_unknown_api_key_is_a_401(client: TestClient) -> None:
    response = client.get("/users/me", headers={"Authorization": "Bearer demo-key-mallory"})

    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert "unknown API key" in response.json()["detail"]


@pytest.mark.parametrize("key", sorted(DEMO_KEYS))
@pytest.mark.parametrize("header", ["Authorization", "X-API-Key"])
def test_get_current_user_returns_the_caller_of_each_demo_key_sent_either_way(
    client: TestClient, key: str, header: str
) -> None:
    value = f"Bearer {key}" if header == "Authorization" else key

    response = client.get("/users/me", headers={header: value})

    assert response.status_code == 200
    assert response.json() == DEMO_KEYS[key].model_dump(mode="json")
    assert set(response.json()) == {"id", "name", "email", "role"}


def test_the_demo_keys_sign_in_as_an_admin_and_a_member() -> None:
    assert DEMO_KEYS[ADMIN_KEY].role == "admin"
    assert DEMO_KEYS[MEMBER_KEY].role == "member"


def test_a_member_is_refused_an_admin_operation_with_a_403(client: TestClient) -> None:
    response = client.post("/products", headers=MEMBER, json={"sku": "MUG-XL", "name": "XL mug", "price_cents": 1500})

    assert response.status_code == 403
    assert "admin role" in response.json()["detail"]


# Reads


def test_get_order_returns_the_order_with_its_items_and_address(client: TestClient) -> None:
    response = client.get("/orders/1", headers=MEMBER)

    assert response.status_code == 200
    order = response.json()
    assert order["status"] == "delivered"
    assert order["currency"] == "EUR"
    assert order["total_cents"] == sum(i["quantity"] * i["unit_price_cents"] for i in order["items"])
    assert set(order["shipping_address"]) == {"line1", "line2", "city", "postal_code", "country"}


def test_list_orders_pages_through_every_order_newest_first(client: TestClient) -> None:
    ids: list[int] = []
    params: dict[str, str | int] = {"limit": 4}
    while True:
        page = client.get("/orders", headers=MEMBER, params=params).json()
        assert len(page["items"]) <= 4
        ids += [order["id"] for order in page["items"]]
        if page["next_cursor"] is None:
            break
        params["cursor"] = page["next_cursor"]

    assert ids == list(range(15, 0, -1))


def test_list_orders_filters_by_a_status_enum(client: TestClient) -> None:
    page = client.get("/orders", headers=MEMBER, params={"status": "shipped"}).json()

    assert page["items"]
    assert {order["status"] for order in page["items"]} == {"shipped"}


def test_list_customer_orders_combines_a_path_and_query_parameters(client: TestClient) -> None:
    first = client.get("/customers/4/orders", headers=MEMBER, params={"limit": 1}).json()
    delivered = client.get("/customers/4/orders", headers=MEMBER, params={"status": "delivered"}).json()

    assert [(o["id"], o["customer_id"]) for o in first["items"]] == [(11, 4)]
    assert first["next_cursor"] is not None
    assert [(o["id"], o["status"]) for o in delivered["items"]] == [(1, "delivered")]
    assert delivered["next_cursor"] is None


def test_list_customers_searches_names_and_emails(client: TestClient) -> None:
    page = client.get("/customers", headers=MEMBER, params={"q": "HOPPER"}).json()

    assert [c["name"] for c in page["items"]] == ["Grace Hopper"]


def test_list_stock_levels_can_keep_only_low_stock(client: TestClient) -> None:
    page = client.get("/inventory", headers=MEMBER, params={"low_stock": True}).json()

    assert [(s["sku"], s["on_hand"]) for s in page["items"]] == [("MUG-CERAMIC", 2), ("GIFT-25-GBP", 4)]


def test_list_users_is_for_admins_only(client: TestClient) -> None:
    assert [u["role"] for u in client.get("/users", headers=ADMIN).json()] == ["admin", "member", "member"]
    assert client.get("/users", headers=MEMBER).status_code == 403


def test_list_products_sorts_and_filters_by_category_subtree(client: TestClient) -> None:
    page = client.get("/products", headers=MEMBER, params={"category_id": 1, "sort": "price_desc"}).json()

    prices = [p["price_cents"] for p in page["items"]]
    assert prices == sorted(prices, reverse=True)
    assert {p["category_id"] for p in page["items"]} == {3, 4, 5}


def test_list_categories_nests_children_recursively(client: TestClient) -> None:
    tree = client.get("/categories", headers=MEMBER).json()

    apparel = next(c for c in tree if c["name"] == "Apparel")
    tops = next(c for c in apparel["children"] if c["name"] == "Tops")
    assert [c["name"] for c in tops["children"]] == ["T-shirts", "Hoodies"]
    assert all(c["children"] == [] for c in tops["children"])


def test_get_product_image_is_a_png(client: TestClient) -> None:
    response = client.get("/products/1/image", headers=MEMBER, params={"size": 16})

    assert response.status_code == 200
    assert response.headers["content-type"] == "image/png"
    assert response.content.startswith(SIGNATURE)
    assert response.content == thumbnail("TEE-BLK-M", 16)


def test_get_order_invoice_is_plain_text(client: TestClient) -> None:
    response = client.get("/orders/1/invoice", headers=MEMBER)

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    assert response.text.startswith("INVOICE #00001\n")
    assert "86.00 EUR" in response.text


# Writes


def test_create_order_returns_201_and_takes_its_units_out_of_stock(client: TestClient) -> None:
    before = client.get("/inventory/1", headers=MEMBER).json()["on_hand"]

    response = client.post("/orders", headers=MEMBER, json=NEW_ORDER)

    assert response.status_code == 201
    order = response.json()
    assert (order["id"], order["status"], order["total_cents"]) == (16, "pending", 2 * 2500 + 1400)
    assert order["shipping_address"]["city"] == "London"
    assert client.get("/inventory/1", headers=MEMBER).json()["on_hand"] == before - 2
    assert client.get("/orders/16", headers=MEMBER).json() == order


def test_repeating_an_idempotency_key_returns_the_first_order(client: TestClient) -> None:
    headers = MEMBER | {"Idempotency-Key": "retry-1"}

    first = client.post("/orders", headers=headers, json=NEW_ORDER).json()
    second = client.post("/orders", headers=headers, json=NEW_ORDER).json()

    assert first == second
    assert len(client.get("/orders", headers=MEMBER, params={"limit": 100}).json()["items"]) == 16


def test_ordering_more_than_is_in_stock_is_a_409(client: TestClient) -> None:
    response = client.post(
        "/orders", headers=MEMBER, json={"customer_id": 1, "items": [{"product_id": 6, "quantity": 3}]}
    )

    assert response.status_code == 409
    assert "only 2 units of product 6" in response.json()["detail"]


def test_patch_order_moves_it_to_its_next_status_only(client: TestClient) -> None:
    moved = client.patch("/orders/3", headers=MEMBER, json={"status": "shipped", "note": "Gift wrap"})
    skipped = client.patch("/orders/4", headers=MEMBER, json={"status": "delivered"})

    assert moved.status_code == 200
    assert (moved.json()["status"], moved.json()["note"]) == ("shipped", "Gift wrap")
    assert skipped.status_code == 409
    assert "the only next status is 'paid'" in skipped.json()["detail"]


def test_cancelling_a_shipped_order_is_a_409_and_a_pending_one_restocks(client: TestClient) -> None:
    stock_before = client.get("/inventory/5", headers=MEMBER).json()["on_hand"]

    shipped = client.post("/orders/2/cancel", headers=MEMBER)
    pending = client.post("/orders/4/cancel", headers=MEMBER)

    assert shipped.status_code == 409
    assert "can no longer be cancelled" in shipped.json()["detail"]
    assert pending.json()["status"] == "cancelled"
    assert client.get("/inventory/5", headers=MEMBER).json()["on_hand"] == stock_before + 2


def test_customer_lifecycle_create_update_clear_and_delete(client: TestClient) -> None:
    created = client.post("/customers", headers=MEMBER, json={"name": "Radia Perlman", "email": "radia@example.org"})
    customer_id = created.json()["id"]

    updated = client.patch(f"/customers/{customer_id}", headers=MEMBER, json={"phone": "+15555550100"})
    cleared = client.patch(f"/customers/{customer_id}", headers=MEMBER, json={"phone": None})
    deleted = client.delete(f"/customers/{customer_id}", headers=ADMIN)

    assert created.status_code == 201
    assert created.json()["phone"] is None
    assert updated.json()["phone"] == "+15555550100"
    assert cleared.json() == created.json()
    assert deleted.status_code == 204
    assert client.get(f"/customers/{customer_id}", headers=MEMBER).status_code == 404


def test_a_duplicate_customer_email_is_a_409(client: TestClient) -> None:
    response = client.post(
        "/customers", headers=MEMBER, json={"name": "Ada Again", "email": "ADA.lovelace@example.org"}
    )

    assert response.status_code == 409


def test_deleting_a_customer_with_orders_is_a_409(client: TestClient) -> None:
    response = client.delete("/customers/1", headers=ADMIN)

    assert response.status_code == 409
    assert "list_customer_orders" in response.json()["detail"]


def test_an_admin_creates_updates_and_deletes_a_product(client: TestClient) -> None:
    new = {"sku": "MUG-XL", "name": "XL mug", "price_cents": 1500, "category_id": 7}

    created = client.post("/products", headers=ADMIN, json=new)
    product_id = created.json()["id"]
    updated = client.patch(f"/products/{product_id}", headers=ADMIN, json={"price_cents": 1600})
    deleted = client.delete(f"/products/{product_id}", headers=ADMIN)

    assert created.status_code == 201
    assert created.json() | {"id": 0} == new | {"id": 0, "currency": "EUR", "description": None}
    assert updated.json()["price_cents"] == 1600
    assert deleted.status_code == 204
    assert client.get(f"/products/{product_id}", headers=ADMIN).status_code == 404


def test_an_admin_uploads_a_png_as_multipart_and_it_is_served_back(client: TestClient) -> None:
    png = thumbnail("custom", 8)

    uploaded = client.put("/products/2/image", headers=ADMIN, files={"file": ("mug.png", png, "image/png")})
    not_png = client.put("/products/2/image", headers=ADMIN, files={"file": ("mug.gif", b"GIF89a", "image/gif")})

    assert uploaded.status_code == 204
    assert not_png.status_code == 415
    assert client.get("/products/2/image", headers=MEMBER).content == png


def test_adjust_stock_takes_a_url_encoded_form(client: TestClient) -> None:
    response = client.post("/inventory/6/adjustments", headers=ADMIN, data={"delta": "10", "reason": "restock"})
    too_many = client.post("/inventory/6/adjustments", headers=ADMIN, data={"delta": "-100", "reason": "damaged"})

    assert response.status_code == 200
    assert response.json()["on_hand"] == 12
    assert too_many.status_code == 409


def test_an_adjustment_of_zero_units_is_a_422_on_delta(client: TestClient) -> None:
    response = client.post("/inventory/6/adjustments", headers=ADMIN, data={"delta": "0", "reason": "restock"})

    assert response.status_code == 422
    assert [e["loc"] for e in response.json()["detail"]] == [["body", "delta"]]
    assert client.get("/inventory/6", headers=MEMBER).json()["on_hand"] == 2


# Errors


def test_an_unknown_id_is_a_404_whose_detail_names_the_call_to_make(client: TestClient) -> None:
    response = client.get("/orders/999", headers=MEMBER)

    assert response.status_code == 404
    assert response.json() == {"detail": "order 999 not found; call list_orders to find its id"}


def test_an_invalid_body_is_fastapis_422_naming_the_field(client: TestClient) -> None:
    response = client.post("/orders", headers=MEMBER, json={"customer_id": 1, "items": []})

    assert response.status_code == 422
    assert [e["loc"] for e in response.json()["detail"]] == [["body", "items"]]


def test_null_for_a_field_that_cannot_be_cleared_is_a_422(client: TestClient) -> None:
    response = client.patch("/orders/4", headers=MEMBER, json={"status": None})

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "status"]


def test_a_forged_cursor_is_a_422_on_the_cursor_parameter(client: TestClient) -> None:
    response = client.get("/orders", headers=MEMBER, params={"cursor": "not-a-cursor"})

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["query", "cursor"]


def test_a_request_without_the_lifespan_is_a_503_that_says_so() -> None:
    client = TestClient(create_app())  # not entered: the lifespan never runs

    response = client.get("/orders", headers=MEMBER)

    assert response.status_code == 503
    assert "lifespan has not run" in response.json()["detail"]


@pytest.mark.anyio
async def test_asgi_transport_without_the_lifespan_gets_the_503_too() -> None:
    transport = httpx2.ASGITransport(app=create_app())
    async with httpx2.AsyncClient(transport=transport, base_url="http://demo") as client:
        response = await client.get("/users", headers=ADMIN)

    assert response.status_code == 503


def test_the_store_closes_when_the_lifespan_ends() -> None:
    client = TestClient(create_app())
    with client:
        assert client.get("/orders/1", headers=MEMBER).status_code == 200

    assert client.get("/orders/1", headers=MEMBER).status_code == 503


def test_each_app_has_its_own_store() -> None:
    with TestClient(create_app()) as first, TestClient(create_app()) as second:
        first.post("/orders/4/cancel", headers=MEMBER)

        assert first.get("/orders/4", headers=MEMBER).json()["status"] == "cancelled"
        assert second.get("/orders/4", headers=MEMBER).json()["status"] == "pending"


# The OpenAPI document


def test_the_document_is_openapi_3_1_with_described_tags_and_security_schemes() -> None:
    document = create_app().openapi()

    assert document["openapi"].startswith("3.1.")
    assert [(t["name"], bool(t["description"])) for t in document["tags"]] == [
        (name, True) for name in ("customers", "products", "orders", "inventory", "users")
    ]
    schemes = document["components"]["securitySchemes"]
    assert (schemes["HTTPBearer"]["type"], schemes["HTTPBearer"]["scheme"]) == ("http", "bearer")
    assert (schemes["APIKeyHeader"]["type"], schemes["APIKeyHeader"]["in"]) == ("apiKey", "header")
    assert schemes["APIKeyHeader"]["name"] == "X-API-Key"


def test_every_operation_has_a_clean_id_a_declared_tag_a_summary_and_security() -> None:
    document = create_app().openapi()
    tags = {t["name"] for t in document["tags"]}
    operations = _operations(document)

    ids = [op["operationId"] for op in operations]
    assert len(ids) == len(set(ids))
    assert {"get_current_user", "list_orders", "get_order", "create_order", "get_product_image"} <= set(ids)
    for op in operations:
        assert op["operationId"].replace("_", "").isalpha() and op["operationId"].islower()
        assert len(op["tags"]) == 1 and op["tags"][0] in tags
        assert op["summary"] and op["description"]
        assert op["security"] == [{"HTTPBearer": []}, {"APIKeyHeader": []}]


def test_every_component_schema_is_valid_json_schema_2020_12() -> None:
    schemas = create_app().openapi()["components"]["schemas"]

    for schema in schemas.values():
        Draft202012Validator.check_schema(schema)
    assert schemas["Category"]["properties"]["children"]["items"] == {"$ref": "#/components/schemas/Category"}
    assert {"OrderStatus", "Currency", "Order", "OrderItem", "Address"} <= set(schemas)


def test_the_document_declares_the_image_text_form_multipart_and_header_shapes() -> None:
    paths = create_app().openapi()["paths"]

    assert "image/png" in paths["/products/{product_id}/image"]["get"]["responses"]["200"]["content"]
    assert "text/plain" in paths["/orders/{order_id}/invoice"]["get"]["responses"]["200"]["content"]
    assert "multipart/form-data" in paths["/products/{product_id}/image"]["put"]["requestBody"]["content"]
    assert (
        "application/x-www-form-urlencoded"
        in paths["/inventory/{product_id}/adjustments"]["post"]["requestBody"]["content"]
    )
    assert [(p["name"], p["in"]) for p in paths["/orders"]["post"]["parameters"]] == [("Idempotency-Key", "header")]


# Debug routes


def test_debug_routes_exist_only_when_asked_for() -> None:
    assert not any(path.startswith("/debug") for path in create_app().openapi()["paths"])
    debug_document = create_app(debug_routes=True).openapi()
    assert {"/debug/boom", "/debug/slow", "/debug/big"} <= set(debug_document["paths"])
    assert "debug" in {t["name"] for t in debug_document["tags"]}


def test_debug_boom_is_a_500(debug_client: TestClient) -> None:
    assert debug_client.get("/debug/boom").status_code == 500


def test_debug_slow_waits_and_refuses_long_waits(debug_client: TestClient) -> None:
    assert debug_client.get("/debug/slow", params={"seconds": 0.01}).json() == {"slept": 0.01}
    assert debug_client.get("/debug/slow", params={"seconds": 60}).status_code == 422


def test_debug_big_returns_as_many_items_as_asked(debug_client: TestClient) -> None:
    response = debug_client.get("/debug/big", params={"size": 5000})

    assert len(response.json()) == 5000
    assert len(response.content) > 150_000
