"""What the agent reads about one function or term, on a small document written for it."""

from __future__ import annotations

from typing import Any

from catalog._html import plain_text
from catalog.builder import build_catalog
from catalog.loading import load_document
from catalog.model import Catalog
from catalog.render import describe_function, explain_term

ORDER = {
    "type": "object",
    "description": "A customer's order.",
    "required": ["id", "status"],
    "properties": {
        "id": {"type": "integer"},
        "status": {"type": "string", "enum": ["open", "paid"], "description": "Where the order is."},
    },
}


def catalog_of(operation: dict[str, Any]) -> Catalog:
    document = {
        "openapi": "3.1.0",
        "info": {"title": "T", "version": "1"},
        "paths": {"/orders/{id}": {"patch": operation}},
        "components": {"schemas": {"Order": ORDER}},
    }
    return build_catalog(load_document(document))


def test_describe_gives_signature_route_marks_args_with_places_result_and_terms() -> None:
    catalog = catalog_of(
        {
            "operationId": "updateOrder",
            "tags": ["orders"],
            "summary": "Update an order",
            "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}],
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {"schema": {"type": "object", "properties": {"note": {"type": "string"}}}}
                },
            },
            "responses": {
                "200": {
                    "description": "ok",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Order"}}},
                }
            },
        }
    )
    text = describe_function(catalog, catalog.function("orders.update_order"))
    assert text.splitlines() == [
        "orders.update_order(id: integer, note?: string) -> Order",
        "  PATCH /orders/{id} · [write] · body as application/json",
        "  Update an order",
        "  Args:",
        "    id: integer (path, required)",
        "    note: string (body, optional)",
        "  Returns: Order",
        "  Terms: Order (explain_term gives their fields)",
    ]


def test_describe_does_not_repeat_the_route_as_a_summary_when_the_document_gives_none() -> None:
    catalog = catalog_of({"responses": {"204": {"description": "done"}}})
    (function,) = catalog.functions()
    lines = describe_function(catalog, function).splitlines()
    assert lines[1] == "  PATCH /orders/{id} · [write]"
    assert sum("/orders/{id}" in line for line in lines) == 1


def test_explain_gives_fields_with_types_enums_and_descriptions() -> None:
    catalog = catalog_of({"responses": {"200": {"description": "ok"}}})
    assert explain_term(catalog, catalog.term("order")).splitlines() == [
        "Order — A customer's order.",
        "  Fields:",
        "    id: integer",
        '    status: "open" | "paid" — Where the order is.',
    ]


def test_html_descriptions_read_as_text_and_the_first_sentence_is_said_once() -> None:
    description = (
        "<p>Expires a <code>Session</code>.</p>\n<p>After that, customers can&rsquo;t pay:</p>"
        "<ul><li>it is final</li><li>see <a href='https://x'>the guide</a></li></ul>"
    )
    catalog = catalog_of({"description": description, "responses": {"204": {"description": "done"}}})
    (function,) = catalog.functions()
    assert function.summary == "Expires a Session."
    assert describe_function(catalog, function).splitlines()[2:6] == [
        "  Expires a Session.",
        "  After that, customers can\u2019t pay:",
        "",
        "  - it is final",
    ]


def test_text_without_html_tags_is_left_as_written() -> None:
    markdown = "Use `<owner>/<repo>` & see <https://docs.example.com>."
    assert plain_text(markdown) == markdown
    assert plain_text("a <b>bold</b> &amp; <i>true</i> claim") == "a bold & true claim"
