"""The catalog builder's rules, each on a small document written for it."""

from __future__ import annotations

import json
import time
from typing import Any

import jsonschema
import pytest

from catalog._allof import MAX_MERGED_PROPERTIES
from catalog.builder import build_catalog
from catalog.errors import DocumentError, SchemaTooLargeError, UnknownNameError
from catalog.loading import load_document
from catalog.model import Catalog
from catalog.render import describe_function, explain_term, term_fields
from catalog.schemas import (
    MAX_CATALOG_INLINED_NODES,
    MAX_INLINED_NODES,
    MAX_SCHEMA_DEPTH,
    TOO_DEEP,
    TOO_LARGE,
    count_nodes,
)
from catalog.snapshot import catalog_snapshot, dump_snapshot


def catalog_of(paths: dict[str, Any], *, schemas: dict[str, Any] | None = None, **extra: Any) -> Catalog:
    document: dict[str, Any] = {"openapi": "3.1.0", "info": {"title": "T", "version": "1"}, "paths": paths}
    if schemas is not None:
        document["components"] = {"schemas": schemas}
    document.update(extra)
    return build_catalog(load_document(document))


def op(**fields: Any) -> dict[str, Any]:
    return {"responses": {"200": {"description": "ok"}}, **fields}


def test_modules_are_snake_case_tags_with_their_descriptions() -> None:
    catalog = catalog_of(
        {"/pets": {"get": op(operationId="listPets", tags=["Pet Store"])}},
        tags=[{"name": "Pet Store", "description": "Everything about pets"}],
    )
    assert [m.name for m in catalog.modules] == ["pet_store"]
    assert catalog.modules[0].description == "Everything about pets"
    assert catalog.function("pet_store.list_pets").path == "/pets"


def test_untagged_operations_group_by_first_meaningful_path_segment() -> None:
    catalog = catalog_of(
        {
            "/api/v1/customers": {"get": op(operationId="GetCustomers")},
            "/api/v1/customers/{id}": {"get": op(operationId="GetCustomer")},
            "/v2/charges": {"post": op(operationId="CreateCharge")},
            "/": {"get": op(operationId="root")},
        }
    )
    assert [m.name for m in catalog.modules] == ["charges", "customers", "root"]


def test_large_untagged_groups_split_by_sub_resource() -> None:
    paths: dict[str, Any] = {}
    for index in range(12):
        paths[f"/tenants/{{t}}/databases/{{d}}/collections/{{c}}/action{index}"] = {"post": op()}
        paths[f"/tenants/{{t}}/databases/{{d}}/thing{index}"] = {"get": op()}
    paths["/tenants/{t}"] = {"get": op(operationId="get_tenant")}
    catalog = catalog_of(paths)
    assert {m.name for m in catalog.modules} == {"collections", "databases", "tenants"}
    assert len(catalog.module("collections").functions) == 12


def test_fastapi_operation_ids_are_cleaned_of_their_route_suffix() -> None:
    catalog = catalog_of({"/items/{item_id}": {"get": op(operationId="read_item_items__item_id__get", tags=["items"])}})
    assert catalog.function("items.read_item").operation_id == "read_item_items__item_id__get"


def test_camel_case_and_slashed_operation_ids_become_snake_case_without_the_module_prefix() -> None:
    catalog = catalog_of(
        {
            "/repos/{owner}/{repo}/pulls": {"get": op(operationId="pulls/list-for-repo", tags=["pulls"])},
            "/users/me": {"get": op(operationId="getCurrentUser", tags=["users"])},
        }
    )
    assert {f.name for f in catalog.functions()} == {"pulls.list_for_repo", "users.get_current_user"}


def test_operations_without_operation_id_are_named_from_method_and_path() -> None:
    catalog = catalog_of({"/pets/{petId}": {"delete": op(tags=["pets"])}})
    assert [f.name for f in catalog.functions()] == ["pets.delete_pets_by_pet_id"]


def test_ids_and_tags_without_a_latin_letter_name_nothing_so_the_route_names_the_function_and_module() -> None:
    catalog = catalog_of(
        {
            "/users/{id}": {"get": op(operationId="获取用户", tags=["用户"])},
            "/orders": {
                "get": op(operationId="$$$", tags=["订单"]),
                "post": op(operationId="créerCommande", tags=["订单"]),
            },
        }
    )
    assert [f.name for f in catalog.functions()] == [
        "orders.creer_commande",
        "orders.get_orders",
        "users.get_users_by_id",
    ]


def test_colliding_names_are_made_unique_and_stable() -> None:
    paths = {
        "/models": {"get": op(operationId="model_list_models_get", tags=["m"])},
        "/v1/models": {"get": op(operationId="model_list_v1_models_get", tags=["m"])},
        "/other": {"get": op(operationId="same", tags=["m"]), "post": op(operationId="same", tags=["m"])},
    }
    first = [f.name for f in catalog_of(paths).functions()]
    assert first == ["m.model_list", "m.model_list_v1", "m.same", "m.same_post"]
    assert [f.name for f in catalog_of(dict(reversed(paths.items()))).functions()] == first


def test_args_are_flat_parameters_then_body_properties() -> None:
    catalog = catalog_of(
        {
            "/orders/{order_id}": {
                "parameters": [{"name": "order_id", "in": "path", "schema": {"type": "string"}}],
                "patch": op(
                    operationId="update_order",
                    tags=["orders"],
                    parameters=[
                        {"name": "dry_run", "in": "query", "schema": {"type": "boolean"}},
                        {"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
                        {"name": "Accept", "in": "header", "schema": {"type": "string"}},
                    ],
                    requestBody={
                        "required": True,
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/OrderPatch"}}},
                    },
                ),
            }
        },
        schemas={
            "OrderPatch": {
                "type": "object",
                "required": ["status"],
                "properties": {
                    "id": {"type": "string", "readOnly": True},
                    "status": {"$ref": "#/components/schemas/Status"},
                    "note": {"type": "string", "description": "Free text"},
                },
            },
            "Status": {"type": "string", "enum": ["open", "closed"]},
        },
    )
    function = catalog.function("orders.update_order")
    assert [(a.name, a.location, a.required) for a in function.args] == [
        ("order_id", "path", True),
        ("dry_run", "query", False),
        ("X-Trace", "header", False),
        ("status", "body", True),
        ("note", "body", False),
    ]
    assert function.args[3].schema == {"$ref": "#/components/schemas/Status"}
    assert function.body_term == "OrderPatch"
    assert function.body_content_type == "application/json"
    assert catalog.term("OrderPatch").accepted_by == ("orders.update_order",)
    assert catalog.term("Status").accepted_by == ("orders.update_order",)


def test_operation_level_parameters_override_path_level_ones() -> None:
    catalog = catalog_of(
        {
            "/a/{id}": {
                "parameters": [{"name": "id", "in": "path", "description": "shared", "schema": {"type": "string"}}],
                "get": op(
                    operationId="get_a",
                    tags=["a"],
                    parameters=[{"name": "id", "in": "path", "required": True, "description": "own"}],
                ),
            }
        }
    )
    assert [a.description for a in catalog.function("a.get_a").args] == ["own"]


def test_body_colliding_with_a_parameter_becomes_one_body_argument() -> None:
    body = {"content": {"application/json": {"schema": {"type": "object", "properties": {"id": {"type": "string"}}}}}}
    catalog = catalog_of(
        {
            "/a/{id}": {
                "put": op(
                    operationId="put_a",
                    tags=["a"],
                    parameters=[{"name": "id", "in": "path", "schema": {"type": "string"}}],
                    requestBody=body,
                )
            }
        }
    )
    assert [(a.name, a.location) for a in catalog.function("a.put_a").args] == [("id", "path"), ("body", "body")]


def test_a_body_that_is_not_an_object_becomes_one_body_argument() -> None:
    body = {"content": {"application/json": {"schema": {"type": "array", "items": {"type": "integer"}}}}}
    catalog = catalog_of({"/a": {"post": op(operationId="post_a", tags=["a"], requestBody=body)}})
    (arg,) = catalog.function("a.post_a").args
    assert (arg.name, arg.schema) == ("body", {"type": "array", "items": {"type": "integer"}})


def test_the_same_arg_name_in_path_and_query_is_one_required_property() -> None:
    catalog = catalog_of(
        {
            "/a/{id}": {
                "get": op(
                    operationId="get_a",
                    tags=["a"],
                    parameters=[
                        {"name": "id", "in": "path", "schema": {"type": "string"}},
                        {"name": "id", "in": "query", "schema": {"type": "string"}},
                    ],
                )
            }
        }
    )
    schema = catalog.function("a.get_a").input_schema()
    assert list(schema["properties"]) == ["id"]
    assert schema["required"] == ["id"]


def test_returns_name_the_first_json_success_schema_and_record_content_types() -> None:
    catalog = catalog_of(
        {
            "/pets": {
                "get": {
                    "operationId": "list",
                    "tags": ["pets"],
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {
                                "application/json": {
                                    "schema": {"type": "array", "items": {"$ref": "#/components/schemas/Pet"}}
                                },
                                "text/csv": {},
                            },
                        },
                        "404": {"description": "nope"},
                    },
                }
            },
            "/pets/{id}/photo": {
                "get": {
                    "operationId": "photo",
                    "tags": ["pets"],
                    "responses": {"200": {"description": "ok", "content": {"image/png": {}}}},
                }
            },
        },
        schemas={"Pet": {"type": "object", "properties": {"name": {"type": "string"}}}},
    )
    listing = catalog.function("pets.list")
    assert listing.returns == "Pet"
    assert listing.response_content_types == ("application/json", "text/csv")
    assert catalog.term("Pet").returned_by == ("pets.list",)
    photo = catalog.function("pets.photo")
    assert (photo.returns, photo.return_schema, photo.response_content_types) == (None, None, ("image/png",))


def test_read_only_and_destructive_follow_the_method() -> None:
    catalog = catalog_of({"/a": {m: op(operationId=m, tags=["a"]) for m in ("get", "head", "post", "delete")}})
    marks = {f.function_name: (f.read_only, f.destructive) for f in catalog.functions()}
    assert marks == {"get": (True, False), "head": (True, False), "post": (False, False), "delete": (False, True)}


def test_input_schema_is_valid_2020_12_and_keeps_recursion_finite_through_defs() -> None:
    catalog = catalog_of(
        {
            "/nodes": {
                "post": op(
                    operationId="create",
                    tags=["nodes"],
                    requestBody={"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}}},
                )
            }
        },
        schemas={
            "Node": {
                "type": "object",
                "properties": {
                    "label": {"type": "string", "nullable": True},
                    "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
                },
            }
        },
        openapi="3.0.3",
    )
    schema = catalog.function("nodes.create").input_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert schema["$defs"]["Node"]["properties"]["label"]["type"] == ["string", "null"]
    assert schema["additionalProperties"] is False
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"label": None, "children": [{"children": []}]})
    assert not validator.is_valid({"children": [{"children": 3}]})
    assert not validator.is_valid({"unknown": 1})


def test_an_input_schema_over_the_node_cap_is_refused_clearly() -> None:
    properties = {f"p{i}": {"type": "object", "properties": {"x": {"type": "string"}}} for i in range(20)}
    document = {
        "openapi": "3.1.0",
        "info": {"title": "T", "version": "1"},
        "paths": {
            "/a": {
                "post": op(
                    operationId="big",
                    tags=["a"],
                    requestBody={
                        "content": {"application/json": {"schema": {"type": "object", "properties": properties}}}
                    },
                )
            }
        },
    }
    catalog = build_catalog(load_document(document), max_schema_nodes=30)
    with pytest.raises(SchemaTooLargeError, match=r"'a\.big' has \d+ nodes, over the cap of 30"):
        catalog.function("a.big").input_schema()


def test_the_node_cap_bounds_what_a_tool_advertises_not_what_can_be_called() -> None:
    properties = {f"p{i}": {"type": "string"} for i in range(40)}
    body = {"content": {"application/json": {"schema": {"type": "object", "properties": properties}}}}
    document = {
        "openapi": "3.1.0",
        "info": {"title": "T", "version": "1"},
        "paths": {"/a": {"post": op(requestBody=body)}},
    }
    function = build_catalog(load_document(document), max_schema_nodes=30).function("a.post_a")
    with pytest.raises(SchemaTooLargeError):
        function.input_schema()
    assert len(function.input_schema(capped=False)["properties"]) == 40


def nested_text(levels: int) -> str:
    """A schema nested `levels` objects deep, as JSON text (json.dumps itself would exhaust the stack)."""
    return '{"type": "object", "properties": {"x": ' * levels + '{"type": "string"}' + "}}" * levels


def test_schemas_nested_past_the_depth_cap_are_cut_there_and_never_exhaust_the_stack() -> None:
    # 450 levels: deep enough to exhaust Python's stack in any recursive walk, shallow enough for json to parse.
    body = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Deep"}}}}
    result = {"200": {"description": "ok", "content": {"application/json": {"schema": "DEEP"}}}}
    document = {
        "openapi": "3.0.3",
        "info": {"title": "T", "version": "1"},
        "paths": {"/a": {"post": {"requestBody": body, "responses": result}}},
        "components": {"schemas": {"Deep": "DEEP"}},
    }
    text = json.dumps(document).replace('"DEEP"', nested_text(450))
    catalog = build_catalog(load_document(text))
    function = catalog.function("a.post_a")
    schema = function.input_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    level: Any = schema["properties"]["x"]  # the body's one property, flattened into an argument
    depth = 0
    while "properties" in level:
        level, depth = level["properties"]["x"], depth + 1
    assert (depth, level) == (MAX_SCHEMA_DEPTH + 1, TOO_DEEP)
    assert json.loads(dump_snapshot(catalog_snapshot(catalog)))["terms"][0]["name"] == "Deep"
    assert describe_function(catalog, function).startswith("a.post_a(")
    assert explain_term(catalog, catalog.term("Deep")).startswith("Deep")


def fan_out(levels: int) -> dict[str, Any]:
    """Schemas L0..L<levels> under `x-defs` (not named components, so refs to them are inlined), each with 8
    properties that refer to the next: inlined in full, L0 is 8**levels strings."""
    defs: dict[str, Any] = {
        f"L{i}": {"type": "object", "properties": {f"p{j}": {"$ref": f"#/x-defs/L{i + 1}"} for j in range(8)}}
        for i in range(levels)
    }
    defs[f"L{levels}"] = {"type": "string"}
    return defs


def posting(schema: dict[str, Any]) -> dict[str, Any]:
    return op(requestBody={"content": {"application/json": {"schema": schema}}})


def test_refs_that_repeat_a_schema_at_every_level_build_a_bounded_schema_and_say_what_they_left_out() -> None:
    # 8**6 = 262,144 strings inlined in full (a 2 KB document; each level more is 8 times that).
    catalog = catalog_of({"/items": {"post": posting({"$ref": "#/x-defs/L0"})}}, **{"x-defs": fan_out(6)})
    function = catalog.function("items.post_items")
    schema = function.input_schema(capped=False)
    assert MAX_INLINED_NODES < count_nodes(schema) < 2 * MAX_INLINED_NODES
    assert schema["properties"]["p7"] == TOO_LARGE  # the budget went to p0..p6, depth first
    jsonschema.Draft202012Validator.check_schema(schema)
    assert [(w.pointer, w.message) for w in catalog.warnings] == [
        (
            "#/paths/~1items/post",
            "items.post_items: inlining $ref '#/x-defs/L1' (and the refs inside it) would build more schema nodes "
            "than one function's 10,000; the parts past that are left out of its arguments and result (they accept "
            "anything). Make the schemas that refs repeat named components (#/components/schemas/...), which are "
            "referenced instead of copied",
        )
    ]
    with pytest.raises(SchemaTooLargeError):
        function.input_schema()  # too large to advertise as a tool, as any schema over the node cap
    assert describe_function(catalog, function).startswith("items.post_items(")


def test_functions_that_repeat_one_fan_out_share_the_catalog_budget_and_each_says_it_was_cut() -> None:
    paths = {f"/items{i:02}": {"post": posting({"$ref": "#/x-defs/L0"})} for i in range(15)}
    catalog = catalog_of(paths, **{"x-defs": fan_out(5)})
    # count_nodes also counts each `properties` mapping: at most one more per schema node.
    built = [sum(count_nodes(arg.schema) for arg in function.args) for function in catalog.functions()]
    assert sum(built) < 2 * MAX_CATALOG_INLINED_NODES
    assert MAX_INLINED_NODES < built[0] < 2 * MAX_INLINED_NODES
    assert built[-1] == 8  # p0..p7, each TOO_LARGE
    assert len(catalog.warnings) == 15
    assert "than one function's 10,000" in catalog.warnings[0].message
    assert "than the catalog's 100,000" in catalog.warnings[-1].message


def test_a_named_schema_whose_unnamed_refs_fan_out_converts_to_a_bounded_schema() -> None:
    result = {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/x-defs/Named"}}}}}
    catalog = catalog_of(
        {"/items": {"get": {"responses": result}}},
        schemas={"Big": {"type": "object", "properties": {"a": {"$ref": "#/x-defs/L0"}}}},
        **{"x-defs": {**fan_out(6), "Named": {"$ref": "#/components/schemas/Big"}}},
    )
    schema = catalog.function("items.get_items").result_schema(capped=False)
    assert schema is not None
    assert MAX_INLINED_NODES < count_nodes(schema) < 2 * MAX_INLINED_NODES
    jsonschema.Draft202012Validator.check_schema(schema)


def allof_fan_out(width: int, levels: int) -> dict[str, Any]:
    """Component schemas L0..L<levels>, each an allOf of `width` refs to the next; L<levels> has one property `a`.
    Walked without remembering what it merged, L0 takes width**levels steps."""
    schemas: dict[str, Any] = {
        f"L{i}": {"allOf": [{"$ref": f"#/components/schemas/L{i + 1}"}] * width} for i in range(levels)
    }
    schemas[f"L{levels}"] = {"type": "object", "properties": {"a": {"type": "string"}}}
    return schemas


def test_a_wide_allof_fan_out_splits_into_arguments_and_explains_in_bounded_time() -> None:
    started = time.perf_counter()
    catalog = catalog_of(
        {"/items": {"post": posting({"$ref": "#/components/schemas/L0"})}}, schemas=allof_fan_out(16, 8)
    )
    explained = explain_term(catalog, catalog.term("L0"))
    elapsed = time.perf_counter() - started
    assert [arg.name for arg in catalog.function("items.post_items").args] == ["a"]
    assert "    a?: string" in explained.splitlines()
    assert term_fields(catalog, catalog.term("L0")) == ["a"]
    assert elapsed < 2  # 16**8 steps (hours) before each merge was remembered; milliseconds now


def test_allof_parts_nested_deeper_than_eight_levels_are_left_out_of_the_merged_properties() -> None:
    catalog = catalog_of(
        {"/items": {"post": posting({"$ref": "#/components/schemas/L0"})}}, schemas=allof_fan_out(2, 9)
    )
    assert [arg.name for arg in catalog.function("items.post_items").args] == ["body"]
    assert term_fields(catalog, catalog.term("L0")) == []
    assert term_fields(catalog, catalog.term("L1")) == ["a"]


def test_an_allof_that_would_copy_too_many_properties_keeps_the_body_whole_and_says_so() -> None:
    # Each of 600 parts repeats Big's 600 properties: merging copies 360,000, over MAX_MERGED_PROPERTIES.
    big = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(600)}}
    parts = {f"C{i}": {"allOf": [{"$ref": "#/components/schemas/Big"}]} for i in range(600)}
    whole = {"allOf": [{"$ref": f"#/components/schemas/C{i}"} for i in range(600)]}
    started = time.perf_counter()
    catalog = catalog_of(
        {"/items": {"post": posting({"$ref": "#/components/schemas/Whole"})}},
        schemas={"Big": big, **parts, "Whole": whole},
    )
    explained = explain_term(catalog, catalog.term("Whole"))
    elapsed = time.perf_counter() - started
    assert 360_000 > MAX_MERGED_PROPERTIES
    assert [arg.name for arg in catalog.function("items.post_items").args] == ["body"]
    assert [(w.pointer, w.message) for w in catalog.warnings] == [
        (
            "#/paths/~1items/post",
            "POST /items: merging the allOf parts of its request body would copy more than the catalog's 200,000 "
            "properties, so the body is one `body` argument, not one argument per property. Give its schema fewer "
            "allOf parts, each listed once",
        )
    ]
    assert "  Fields: (not listed: merging its allOf parts copies over 200,000 properties)" in explained.splitlines()
    assert term_fields(catalog, catalog.term("Whole")) == []
    assert len(term_fields(catalog, catalog.term("C0"))) == 600
    assert elapsed < 5


def test_terms_are_found_by_exact_name_then_case_insensitively_by_name_or_alias() -> None:
    from catalog.composite import Concept

    document = {
        "openapi": "3.1.0",
        "info": {"title": "T", "version": "1"},
        "paths": {},
        "components": {"schemas": {"Order": {"type": "object", "description": "A purchase."}}},
    }
    catalog = build_catalog(
        load_document(document),
        concepts={
            "Order": Concept(text="A purchase placed by a customer.", aliases=["pedido"]),
            "SKU": Concept(text="Stock unit."),
        },
    )
    assert catalog.term("Order").description == "A purchase placed by a customer."
    assert catalog.term("PEDIDO").name == "Order"
    assert catalog.term("sku").name == "SKU"
    with pytest.raises(UnknownNameError) as error:
        catalog.term("Ordr")
    assert error.value.suggestions == ("Order",)


def test_unknown_function_names_suggest_the_closest() -> None:
    catalog = catalog_of({"/pets": {"get": op(operationId="listPets", tags=["pets"])}})
    with pytest.raises(UnknownNameError) as error:
        catalog.function("pets.list_pet")
    assert error.value.suggestions == ("pets.list_pets",)


def test_tool_names_replace_the_dot_and_unpromotable_names_are_reported() -> None:
    catalog = catalog_of(
        {
            "/a": {
                "get": op(
                    operationId="fine",
                    tags=["a"],
                    parameters=[{"name": "page[size]", "in": "query", "schema": {"type": "integer"}}],
                )
            },
            "/b": {"get": op(operationId="x" * 70, tags=["a"])},
        }
    )
    assert catalog.function("a.fine").tool_name == "a-fine"
    problems = catalog.unpromotable()
    assert set(problems) == {"a.fine", "a." + "x" * 70}
    assert "page[size]" in problems["a.fine"]


def test_paths_that_are_not_a_mapping_are_refused_with_the_place() -> None:
    with pytest.raises(DocumentError) as error:
        build_catalog(load_document({"openapi": "3.0.0", "info": {"title": "T", "version": "1"}, "paths": []}))
    assert error.value.pointer == "#/paths"


def test_server_urls_take_their_variables_defaults_and_resolve_against_the_documents_url() -> None:
    servers = [
        {"url": "https://{region}.example.com/v{version}", "variables": {"region": {"default": "eu"}, "version": {}}},
        {"url": "/v1"},
    ]
    document = {"openapi": "3.1.0", "info": {"title": "T", "version": "1"}, "paths": {}, "servers": servers}
    assert build_catalog(load_document(document)).servers == ("https://eu.example.com/v{version}", "/v1")
    fetched = build_catalog(load_document(document, location="https://api.example.com/docs/openapi.json"))
    assert fetched.servers == ("https://eu.example.com/v{version}", "https://api.example.com/v1")


def test_a_path_parameter_the_operation_forgot_to_declare_is_a_required_string_with_a_warning() -> None:
    user = {"name": "userId", "in": "path", "required": True, "schema": {"type": "integer"}}
    catalog = catalog_of({"/users/{userId}/posts/{post_id}": {"get": op(operationId="getPost", parameters=[user])}})
    function = catalog.function("users.get_post")
    assert [(a.name, a.location, a.required, a.schema) for a in function.args] == [
        ("userId", "path", True, {"type": "integer"}),
        ("post_id", "path", True, {"type": "string"}),
    ]
    assert [w.message for w in catalog.warnings] == [
        "path parameter {post_id} is not declared; it is read as a required string"
    ]


def test_webhooks_are_left_out_with_a_warning_saying_why() -> None:
    hook = {"post": op()}
    catalog = catalog_of({"/a": {"get": op()}}, webhooks={"order.paid": hook, "order.shipped": hook})
    assert [f.name for f in catalog.functions()] == ["a.get_a"]
    assert [(w.pointer, w.message) for w in catalog.warnings] == [
        ("#/webhooks", "2 webhook(s) left out: a webhook is a request the API sends, not a function to call")
    ]


def test_broken_operations_and_refs_are_warnings_not_failures() -> None:
    catalog = catalog_of(
        {
            "/a": {"get": "nonsense", "post": op(operationId="ok", tags=["a"], parameters=[{"$ref": "#/nowhere"}])},
        }
    )
    assert [f.name for f in catalog.functions()] == ["a.ok"]
    pointers = {w.pointer for w in catalog.warnings}
    assert "#/paths/~1a/get" in pointers
    assert "#/paths/~1a/post/parameters/0" in pointers


def test_order_is_deterministic_whatever_the_document_order() -> None:
    paths = {f"/r{i}": {"get": op(operationId=f"op{i}", tags=[f"t{i % 3}"])} for i in range(10)}
    forward = catalog_of(paths)
    backward = catalog_of(dict(reversed(paths.items())))
    assert [f.name for f in forward.functions()] == [f.name for f in backward.functions()]
    assert [m.name for m in forward.modules] == ["t0", "t1", "t2"]


@pytest.mark.parametrize(
    "header",
    [
        "Host",
        "Content-Length",
        "Transfer-Encoding",
        "Connection",
        "Keep-Alive",
        "Upgrade",
        "TE",
        "Trailer",
        "Proxy-Auth",
    ],
)
def test_header_parameters_that_frame_the_request_or_address_a_hop_are_dropped_with_a_warning(header: str) -> None:
    parameters = [
        {"name": header, "in": "header", "schema": {"type": "string"}},
        {"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
    ]
    catalog = catalog_of({"/things": {"get": op(operationId="list", tags=["things"], parameters=parameters)}})
    assert [arg.name for arg in catalog.function("things.list").args] == ["X-Trace"]
    (warning,) = catalog.warnings
    assert warning.pointer == "#/paths/~1things/get/parameters/0"
    assert f"header parameter {header!r} is left out" in warning.message


# OAuth scopes from the document's security requirements

SCHEMES: dict[str, Any] = {
    "oauth": {
        "type": "oauth2",
        "flows": {"clientCredentials": {"tokenUrl": "https://auth.example/token", "scopes": {"a": "", "b": ""}}},
    },
    "oidc": {"type": "openIdConnect", "openIdConnectUrl": "https://auth.example/.well-known/openid-configuration"},
    "key": {"type": "apiKey", "in": "header", "name": "X-Key"},
    "shared": {"$ref": "#/components/securitySchemes/oauth"},
}


def scopes_of(operation_security: Any = None, *, document_security: Any = None) -> tuple[tuple[str, ...], ...]:
    """The scopes of the one function of a document with `SCHEMES`, whose operation has `operation_security`
    (left out when None) and the document `document_security` (left out when None)."""
    fields: dict[str, Any] = {"operationId": "list", "tags": ["things"]}
    if operation_security is not None:
        fields["security"] = operation_security
    extra: dict[str, Any] = {"components": {"securitySchemes": SCHEMES}}
    if document_security is not None:
        extra["security"] = document_security
    return catalog_of({"/things": {"get": op(**fields)}}, **extra).function("things.list").oauth_scopes


def test_a_function_needs_the_oauth_scopes_of_its_operations_security_requirement() -> None:
    assert scopes_of([{"oauth": ["b", "a", "a"]}]) == (("a", "b"),)


def test_without_security_of_its_own_a_function_needs_the_scopes_of_the_documents_requirement() -> None:
    assert scopes_of(document_security=[{"oauth": ["a"]}]) == (("a",),)
    assert scopes_of([{"oauth": ["b"]}], document_security=[{"oauth": ["a"]}]) == (("b",),)


def test_a_function_without_security_anywhere_needs_no_scope() -> None:
    assert scopes_of() == ()


def test_an_operation_with_an_empty_security_list_is_public_whatever_the_document_requires() -> None:
    assert scopes_of([], document_security=[{"oauth": ["a"]}]) == ()


def test_an_api_key_beside_an_oauth_scheme_in_one_requirement_still_needs_the_oauth_scopes() -> None:
    assert scopes_of([{"key": [], "oauth": ["a"]}]) == (("a",),)


def test_two_alternative_requirements_give_two_scope_sets_either_of_which_will_do() -> None:
    assert scopes_of([{"oauth": ["b"]}, {"oauth": ["a", "b"]}, {"oauth": ["b"]}]) == (("a", "b"), ("b",))


@pytest.mark.parametrize(
    "security",
    [
        [{"key": []}],  # an API key needs no scope
        [{"oauth": ["a"]}, {"key": []}],  # the key is an alternative to the scope
        [{"oauth": ["a"]}, {}],  # an empty requirement: anonymous access is allowed
        [{"oauth": []}],  # oauth2 without scopes
        [{"oauth": [""]}],  # an empty scope name is no scope
        [{"nowhere": ["a"]}],  # a scheme the document does not define
        [{"oauth": "a"}],  # scopes that are not a list
        [{"oauth": [1, None]}],  # scopes that are not strings
    ],
)
def test_a_requirement_that_can_be_met_without_a_scope_means_the_function_needs_none(security: Any) -> None:
    assert scopes_of(security) == ()


def test_open_id_connect_schemes_and_schemes_given_by_ref_count_as_oauth() -> None:
    assert scopes_of([{"oidc": ["openid", "profile"]}]) == (("openid", "profile"),)
    assert scopes_of([{"shared": ["a"]}]) == (("a",),)
    assert scopes_of([{"oidc": ["openid"], "shared": ["a"]}]) == (("a", "openid"),)


def test_requirements_that_are_not_objects_are_skipped_and_security_that_is_not_a_list_is_none() -> None:
    assert scopes_of(["oauth", {"oauth": ["a"]}]) == (("a",),)
    assert scopes_of({"oauth": ["a"]}) == ()


def test_without_security_schemes_no_requirement_names_an_oauth_scheme() -> None:
    function = catalog_of({"/things": {"get": op(operationId="list", tags=["things"], security=[{"oauth": ["a"]}])}})
    assert function.function("things.list").oauth_scopes == ()
    odd = catalog_of(
        {"/things": {"get": op(operationId="list", tags=["things"], security=[{"oauth": ["a"]}])}},
        components={"securitySchemes": ["oauth"]},
    )
    assert odd.function("things.list").oauth_scopes == ()
