"""TypeScript declarations of a catalog: small documents written for each shape, and tsc on the demo and the corpus."""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from catalog import load_catalog
from catalog.builder import build_catalog
from catalog.loading import load_document
from catalog.model import Catalog
from catalog.typescript import FILE_TYPE, declarations, type_name
from demo.app import create_app
from tests.corpus import corpus_catalog

TSC = Path(__file__).resolve().parents[2] / ".tools" / "bin" / "tsc"

ORDER = {
    "type": "object",
    "description": "A customer's order. Its */ ends no comment.",
    "required": ["id", "status"],
    "properties": {
        "id": {"type": "integer"},
        "status": {"type": "string", "enum": ["open", "paid"], "description": "Where the order is."},
        "note": {"type": "string", "nullable": True},
        "lines": {"type": "array", "items": {"$ref": "#/components/schemas/order-line"}},
        "tags": {"type": "object", "additionalProperties": {"type": "string"}},
        "x-trace-id": {"type": "string"},
    },
}
LINE = {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}, "required": ["sku"]}


def operation(operation_id: str, **fields: Any) -> dict[str, Any]:
    return {"operationId": operation_id, "tags": ["orders"], "responses": {"200": {"description": "ok"}}, **fields}


def catalog_of(paths: dict[str, Any], schemas: dict[str, Any] | None = None, openapi: str = "3.0.3") -> Catalog:
    document = {
        "openapi": openapi,
        "info": {"title": "T", "version": "1"},
        "paths": paths,
        "components": {"schemas": {"Order": ORDER, "order-line": LINE, **(schemas or {})}},
    }
    return build_catalog(load_document(document))


def returning(schema: dict[str, Any]) -> dict[str, Any]:
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def orders_catalog() -> Catalog:
    body = {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "required": ["customer"],
                    "properties": {
                        "customer": {"type": "integer", "description": "Who orders."},
                        "lines": {"type": "array", "items": {"$ref": "#/components/schemas/order-line"}},
                        "payment": {
                            "oneOf": [
                                {"type": "object", "properties": {"card": {"type": "string"}}, "required": ["card"]},
                                {"type": "string", "enum": ["invoice"]},
                            ]
                        },
                    },
                }
            }
        },
    }
    return catalog_of(
        {
            "/orders": {
                "get": operation(
                    "listOrders",
                    summary="List orders",
                    parameters=[
                        {"name": "status", "in": "query", "schema": {"type": "string", "enum": ["open", "paid"]}},
                        {"name": "page-size", "in": "query", "schema": {"type": "integer"}},
                    ],
                    responses=returning({"type": "array", "items": {"$ref": "#/components/schemas/Order"}}),
                ),
                "post": operation(
                    "createOrder",
                    summary="Create an order",
                    requestBody=body,
                    responses=returning({"$ref": "#/components/schemas/Order"}),
                ),
            },
            "/orders/{id}": {
                "delete": operation(
                    "deleteOrder",
                    summary="Delete an order",
                    parameters=[{"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}],
                    responses={"204": {"description": "gone"}},
                )
            },
        }
    )


def test_each_function_is_a_method_of_its_module_with_an_argument_object_and_a_promised_result() -> None:
    text = declarations(orders_catalog()).text
    assert "declare const api: {\n  orders: {\n" in text
    assert "    list_orders(args?: {\n" in text  # no required argument: args may be left out
    assert '      status?: "open" | "paid";\n' in text
    assert '      "page-size"?: number;\n' in text  # not an identifier: quoted
    assert "    }): Promise<Order[]>;" in text
    assert "    create_order(args: {\n      /** Who orders. */\n      customer: number;\n" in text
    assert "      lines?: order_line[];\n" in text
    assert "    }): Promise<Order>;" in text
    assert "    delete_order(args: {\n      id: number;\n    }): Promise<void>;" in text


def test_summaries_and_marks_become_doc_comments() -> None:
    text = declarations(orders_catalog()).text
    assert "    /** List orders [read] */\n    list_orders(" in text
    assert "    /** Delete an order [destructive] */\n    delete_order(" in text


def test_named_schemas_become_interfaces_with_their_document_names_in_the_comment_when_renamed() -> None:
    text = declarations(orders_catalog()).text
    assert 'interface Order {\n  id: number;\n  /** Where the order is. */\n  status: "open" | "paid";\n' in text
    assert "  note?: string | null;\n" in text
    assert "  tags?: { [key: string]: string };\n" in text
    assert '  "x-trace-id"?: string;\n' in text
    assert "/** `order-line` */\ninterface order_line {\n  sku: string;\n  qty?: number;\n}" in text


def test_a_doc_comment_cannot_end_early() -> None:
    text = declarations(orders_catalog()).text
    assert "Its *\\/ ends no comment." in text
    assert "Its */ ends" not in text


def test_one_of_becomes_a_union() -> None:
    text = declarations(orders_catalog()).text
    assert '      payment?: {\n        card: string;\n      } | "invoice";\n' in text


def test_a_name_the_language_keeps_is_renamed_and_a_global_type_is_not_merged_with() -> None:
    error = {"type": "object", "properties": {"message": {"type": "integer"}}}
    catalog = catalog_of(
        {"/e": {"get": operation("getError", responses=returning({"$ref": "#/components/schemas/Error"}))}},
        {"Error": error, "string": {"type": "string"}, "2fa": {"type": "boolean"}},
    )
    assert type_name(catalog, "Error") == "Error_"
    assert type_name(catalog, "string") == "string_"
    assert type_name(catalog, "2fa") == "_2fa"
    assert "interface Error_ {" in declarations(catalog).text


def test_file_arguments_share_one_declared_file_type() -> None:
    upload = {
        "content": {
            "multipart/form-data": {
                "schema": {"type": "object", "properties": {"image": {"type": "string", "format": "binary"}}}
            }
        }
    }
    catalog = catalog_of({"/images": {"post": operation("upload", requestBody=upload)}})
    text = declarations(catalog).text
    assert text.startswith("/** A file: its bytes as base64, or its text;")
    assert f"\ntype {FILE_TYPE} =\n" in text
    assert f"      image?: {FILE_TYPE};\n" in text


def test_the_same_catalog_gives_the_same_text() -> None:
    first = declarations(orders_catalog()).text
    assert declarations(orders_catalog()).text == first


def test_a_size_budget_keeps_whole_functions_and_names_those_left_out() -> None:
    catalog = orders_catalog()
    whole = declarations(catalog)
    small = declarations(catalog, max_chars=len(whole.text) - 200)
    assert len(small.text) <= len(whole.text) - 200
    assert small.left_out and set(small.functions) | set(small.left_out) == set(whole.functions)
    for name in small.left_out:
        assert f"{name.split('.')[1]}(" not in small.text


def test_whole_modules_are_kept_or_left_out_together() -> None:
    catalog = corpus_catalog("stripe-spec3.yaml")
    cut = declarations(catalog, max_chars=24_000, whole_modules=True)
    assert len(cut.text) <= 24_000
    kept = {name.split(".")[0] for name in cut.functions}
    assert kept and not kept & {name.split(".")[0] for name in cut.left_out}


def test_a_function_too_large_for_the_budget_keeps_its_nearest_types_and_leaves_the_others_open() -> None:
    catalog = corpus_catalog("stripe-spec3.yaml")
    function = catalog.function("customers.get_customers_customer")
    cut = declarations(catalog, [function], max_chars=24_000)
    assert cut.functions == (function.name,)
    assert cut.open_types and len(cut.text) < 30_000
    assert f"type {type_name(catalog, cut.open_types[0])} = {{ [key: string]: unknown }};" in cut.text


@functools.cache
def demo_catalog() -> Catalog:
    return load_catalog(create_app(debug_routes=True))


def compile_declarations(tmp_path: Path, text: str) -> subprocess.CompletedProcess[str]:
    source = tmp_path / "api.d.ts"
    # A script using the API as declared: calls type-check against the declarations.
    source.write_text(text, encoding="utf-8")
    return subprocess.run(
        [str(TSC), "--noEmit", "--strict", "--lib", "es2023", "--target", "es2022", str(source)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


needs_tsc = pytest.mark.skipif(
    not TSC.exists() and not os.environ.get("CI"), reason=".tools/ has no tsc: run scripts/install-node-tools"
)


@needs_tsc
@pytest.mark.parametrize("name", ["demo", "github-api.github.com.json", "stripe-spec3.yaml"])
def test_tsc_compiles_the_declarations_strictly(tmp_path: Path, name: str) -> None:
    catalog = demo_catalog() if name == "demo" else corpus_catalog(name)
    compiled = compile_declarations(tmp_path, declarations(catalog).text)
    assert compiled.returncode == 0, compiled.stdout[:4000]


@needs_tsc
def test_tsc_checks_a_script_against_the_declarations(tmp_path: Path) -> None:
    text = declarations(demo_catalog()).text
    script = tmp_path / "script.ts"
    script.write_text(
        "async function main() {\n"
        "  const order = await api.orders.get_order({order_id: 1});\n"
        "  await api.orders.list_orders({status: 'teleported'});\n"
        "  return order.id;\n"
        "}\n"
    )
    compiled = compile_declarations(tmp_path, text)
    assert compiled.returncode == 0, compiled.stdout
    checked = subprocess.run(
        [str(TSC), "--noEmit", "--strict", "--lib", "es2023", str(tmp_path / "api.d.ts"), str(script)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert checked.returncode != 0
    assert "script.ts(3," in checked.stdout and "teleported" in checked.stdout
