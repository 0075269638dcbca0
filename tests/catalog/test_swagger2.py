"""Converting Swagger 2.0 to OpenAPI 3.0.3: each part of a document, and the catalogs of converted documents."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from catalog.builder import build_catalog
from catalog.loading import load_document
from catalog.strict import spec_problems
from catalog.swagger2 import convert_swagger2
from tests.corpus import corpus_catalog

FIXTURES = Path(__file__).parent / "swagger2"


def fixture(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((FIXTURES / name).read_text(encoding="utf-8"))
    return loaded


def document(paths: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"swagger": "2.0", "info": {"title": "T", "version": "1"}, "paths": paths, **top}


def converted(name: str) -> dict[str, Any]:
    return convert_swagger2(fixture(name)).data


@pytest.mark.parametrize("name", ["shop.yaml", "forms.yaml", "security.yaml"])
def test_each_fixture_converts_to_a_valid_openapi_3_0_document_leaving_the_source_as_it_was(name: str) -> None:
    source = fixture(name)
    before = copy.deepcopy(source)
    data = convert_swagger2(source).data
    assert source == before
    assert data["openapi"] == "3.0.3"
    assert spec_problems(data) == []


@pytest.mark.parametrize(
    ("top", "servers"),
    [
        (
            {"host": "api.x.com", "basePath": "/v2/", "schemes": ["https", "http"]},
            ["https://api.x.com/v2", "http://api.x.com/v2"],
        ),
        ({"host": "api.x.com"}, ["//api.x.com"]),
        ({"basePath": "/api"}, ["/api"]),
        ({}, []),
    ],
)
def test_host_base_path_and_schemes_become_one_server_per_scheme(top: dict[str, Any], servers: list[str]) -> None:
    data = convert_swagger2(document({}, **top)).data
    assert [server["url"] for server in data.get("servers", [])] == servers


def test_shared_definitions_parameters_and_responses_move_under_components_with_their_refs() -> None:
    data = converted("shop.yaml")
    components = data["components"]
    assert set(components) == {"schemas", "parameters", "requestBodies", "responses"}
    assert components["parameters"]["OrderId"]["schema"] == {"type": "string", "format": "uuid"}
    assert components["parameters"]["OrderId"]["x-id-kind"] == "order"
    assert components["requestBodies"]["NewOrder"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/NewOrder"
    }
    assert components["responses"]["NotFound"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Error"
    }
    text = json.dumps(data)
    assert "#/definitions/" not in text and '"#/parameters/' not in text and '"#/responses/' not in text
    operation = data["paths"]["/orders/{order_id}"]["get"]
    assert operation["responses"]["404"] == {"$ref": "#/components/responses/NotFound"}
    assert data["paths"]["/orders/{order_id}"]["parameters"] == [{"$ref": "#/components/parameters/OrderId"}]


def test_a_body_parameter_becomes_a_request_body_per_consumed_type_keeping_description_and_extensions() -> None:
    data = converted("shop.yaml")
    body = data["paths"]["/orders/{order_id}"]["put"]["requestBody"]
    assert list(body["content"]) == ["application/json", "text/plain"]
    assert body["description"] == "The new order."
    assert body["x-body-note"] == "whole"
    assert "required" not in body
    assert "parameters" not in data["paths"]["/orders/{order_id}"]["put"]


def test_a_ref_to_a_shared_body_parameter_becomes_a_request_body_ref_when_the_media_types_match() -> None:
    data = converted("shop.yaml")
    assert data["paths"]["/orders"]["post"]["requestBody"] == {"$ref": "#/components/requestBodies/NewOrder"}
    source = fixture("shop.yaml")
    source["paths"]["/orders"]["post"]["consumes"] = ["application/xml"]
    inlined = convert_swagger2(source).data["paths"]["/orders"]["post"]["requestBody"]
    assert list(inlined["content"]) == ["application/xml"] and inlined["required"] is True


def test_a_body_without_any_consumes_is_json() -> None:
    paths = {"/a": {"post": {"parameters": [{"name": "b", "in": "body", "schema": {"type": "object"}}]}}}
    body = convert_swagger2(document(paths)).data["paths"]["/a"]["post"]["requestBody"]
    assert body == {"content": {"application/json": {"schema": {"type": "object"}}}}


def test_form_parameters_become_one_urlencoded_object_with_the_required_ones_listed() -> None:
    data = converted("forms.yaml")
    body = data["paths"]["/messages"]["post"]["requestBody"]
    assert body["required"] is True
    schema = body["content"]["application/x-www-form-urlencoded"]["schema"]
    assert schema["required"] == ["token", "channel"]
    assert list(schema["properties"]) == ["token", "channel", "text", "mentions", "urgent"]
    assert schema["properties"]["channel"] == {"type": "string", "x-field-kind": "channel"}
    assert schema["properties"]["token"]["description"] == "An API token."
    assert schema["properties"]["mentions"] == {"type": "array", "items": {"type": "string"}}


def test_file_fields_make_a_multipart_body_of_binary_strings() -> None:
    data = converted("forms.yaml")
    upload = data["paths"]["/files"]["post"]["requestBody"]["content"]["multipart/form-data"]["schema"]
    assert upload["properties"]["file"] == {"description": "The file.", "type": "string", "format": "binary"}
    avatar = data["paths"]["/avatars"]["post"]["requestBody"]["content"]
    assert list(avatar) == ["multipart/form-data"]


def test_path_level_parameters_stay_shared_and_path_level_form_fields_join_every_operation_body() -> None:
    data = converted("forms.yaml")
    item = data["paths"]["/channels/{channel_ids}/search"]
    assert [(p["name"], p["in"]) for p in item["parameters"]] == [("channel_ids", "path"), ("q", "query")]
    assert item["parameters"][0] == {
        "name": "channel_ids",
        "in": "path",
        "required": True,
        "schema": {"type": "array", "items": {"type": "integer"}},
        "style": "simple",
    }
    # As in swagger2openapi: the path's form field applies to every operation, GET included.
    assert item["get"]["requestBody"]["content"]["application/x-www-form-urlencoded"]["schema"]["properties"] == {
        "lang": {"type": "string", "enum": ["en", "fr"]}
    }
    form = item["post"]["requestBody"]["content"]["application/x-www-form-urlencoded"]["schema"]
    assert form["properties"] == {"lang": {"type": "string", "enum": ["en", "fr"]}, "name": {"type": "string"}}


@pytest.mark.parametrize(
    ("name", "style"),
    [
        ("tags", {"style": "spaceDelimited"}),
        ("ids", {"style": "pipeDelimited"}),
        ("sorts", {"style": "form", "explode": False}),
        ("X-Flags", {"style": "simple"}),
    ],
)
def test_collection_formats_become_style_and_explode(name: str, style: dict[str, Any]) -> None:
    operation = converted("forms.yaml")["paths"]["/channels/{channel_ids}/search"]["get"]
    (parameter,) = [p for p in operation["parameters"] if p["name"] == name]
    assert {key: parameter[key] for key in ("style", "explode") if key in parameter} == style
    assert "collectionFormat" not in parameter and parameter["schema"]["type"] == "array"


def test_multi_becomes_an_exploded_form_and_tsv_is_kept_as_an_extension_with_a_note() -> None:
    data = converted("shop.yaml")
    (status,) = [p for p in data["paths"]["/orders"]["get"]["parameters"] if p.get("name") == "status"]
    assert (status["style"], status["explode"]) == ("form", True)
    parameter = {"name": "t", "in": "query", "type": "array", "items": {"type": "string"}, "collectionFormat": "tsv"}
    conversion = convert_swagger2(document({"/a": {"get": {"parameters": [parameter]}}}))
    assert conversion.data["paths"]["/a"]["get"]["parameters"][0]["x-collectionFormat"] == "tsv"
    assert conversion.notes == (("#/paths/~1a/get/parameters/0/collectionFormat", conversion.notes[0][1]),)
    assert "tsv" in conversion.notes[0][1]


def test_parameter_value_fields_become_its_schema() -> None:
    data = converted("shop.yaml")
    limit = data["components"]["parameters"]["Limit"]
    assert limit == {
        "name": "limit",
        "in": "query",
        "schema": {"type": "integer", "default": 20, "maximum": 100, "minimum": 1},
    }


def test_responses_get_a_schema_per_produced_type_their_headers_schemas_and_files_become_binary() -> None:
    data = converted("shop.yaml")
    listed = data["paths"]["/orders"]["get"]["responses"]["200"]
    assert list(listed["content"]) == ["application/json"]
    assert listed["headers"]["X-Total-Count"] == {"description": "How many there are.", "schema": {"type": "integer"}}
    assert listed["headers"]["X-Next"]["schema"] == {"type": "array", "items": {"type": "string"}}
    one = data["paths"]["/orders/{order_id}"]["get"]["responses"]["200"]
    assert list(one["content"]) == ["application/json", "application/xml"]
    invoice = data["paths"]["/orders/{order_id}/invoice"]["get"]["responses"]["200"]
    assert invoice["content"] == {"application/pdf": {"schema": {"type": "string", "format": "binary"}}}
    assert data["paths"]["/orders/{order_id}/payments"]["post"]["responses"]["204"] == {"description": "Paid."}


def test_schemas_get_nullable_object_discriminators_and_keep_extensions() -> None:
    schemas = converted("shop.yaml")["components"]["schemas"]
    assert schemas["Error"]["properties"]["message"] == {"type": "string", "nullable": True}
    assert schemas["Payment"]["discriminator"] == {"propertyName": "kind"}
    assert schemas["NewOrder"]["x-entity"] == "order"
    assert schemas["Order"]["allOf"][0] == {"$ref": "#/components/schemas/NewOrder"}


def test_list_types_and_tuple_items_written_in_2_0_documents_become_open_api_3_0_forms() -> None:
    definitions = {
        "A": {"type": ["string", "null"]},
        "B": {"type": ["object", "array"], "items": {"type": "object"}},
        "C": {"type": "array", "items": [{"$ref": "#/definitions/A"}, {"type": "null"}]},
        "D": {"type": "object", "properties": {"id": {"type": "string", "required": True}}},
    }
    schemas = convert_swagger2(document({}, definitions=definitions)).data["components"]["schemas"]
    assert schemas["A"] == {"type": "string", "nullable": True}
    assert schemas["B"]["oneOf"] == [{"type": "object"}, {"type": "array", "items": {}}]
    assert schemas["C"]["items"] == {"anyOf": [{"$ref": "#/components/schemas/A"}, {"nullable": True}]}
    assert schemas["D"] == {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}


def test_security_definitions_become_security_schemes_with_oauth2_flows() -> None:
    schemes = converted("security.yaml")["components"]["securitySchemes"]
    assert schemes["basic"] == {"type": "http", "scheme": "basic", "description": "Username and password."}
    assert schemes["key"] == {"type": "apiKey", "name": "X-API-Key", "in": "header", "x-key-prefix": "sk_"}
    assert schemes["implicit"]["flows"] == {
        "implicit": {"authorizationUrl": "https://auth.example.com/authorize", "scopes": {"read": "Read things"}}
    }
    assert list(schemes["password"]["flows"]) == ["password"]
    assert schemes["application"]["flows"] == {
        "clientCredentials": {"tokenUrl": "https://auth.example.com/token", "scopes": {"admin": "Administer"}}
    }
    code = schemes["code"]["flows"]["authorizationCode"]
    assert (code["authorizationUrl"], code["tokenUrl"]) == (
        "https://auth.example.com/authorize",
        "https://auth.example.com/token",
    )


def test_an_operation_with_its_own_scheme_gets_its_own_server() -> None:
    data = converted("security.yaml")
    assert data["paths"]["/status"]["get"]["servers"] == [{"url": "http://api.example.com"}]
    assert "servers" not in data["paths"]["/things"]["get"]


def test_extensions_are_kept_at_every_level() -> None:
    data = converted("shop.yaml")
    assert data["x-shop-owner"] == "team-a"
    assert data["paths"]["/orders"]["post"]["x-rate-limit"] == 10
    (header,) = [p for p in data["paths"]["/orders"]["get"]["parameters"] if p.get("in") == "header"]
    assert header["x-header-note"] == "traced"


def test_refs_to_other_files_are_kept_with_a_note() -> None:
    paths = {"/a": {"get": {"responses": {"200": {"description": "ok", "schema": {"$ref": "defs.yaml#/Pet"}}}}}}
    conversion = convert_swagger2(document(paths))
    schema = conversion.data["paths"]["/a"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert schema == {"$ref": "defs.yaml#/Pet"}
    assert conversion.notes[0][0] == "#" and "1 `$ref`s name other files" in conversion.notes[0][1]


def test_converting_twice_gives_the_same_document() -> None:
    source = fixture("shop.yaml")
    assert json.dumps(convert_swagger2(source).data) == json.dumps(convert_swagger2(source).data)


# -- catalogs of converted documents ----------------------------------------------------------------------------


def test_the_slack_catalog_has_form_args_header_token_and_oauth_scopes() -> None:
    catalog = corpus_catalog("slack-web-swagger2.json")
    post = catalog.function("chat.post_message")
    assert post.body_content_type == "application/x-www-form-urlencoded"
    args = {arg.name: arg for arg in post.args}
    assert (args["token"].location, args["token"].required) == ("header", True)
    assert (args["channel"].location, args["channel"].required, args["channel"].body_property) == (
        "body",
        True,
        "channel",
    )
    assert args["text"].location == "body" and not args["text"].required
    assert post.oauth_scopes == (("chat:write:bot", "chat:write:user"),)
    upload = catalog.function("files.upload")
    assert {arg.name for arg in upload.args if arg.location == "body"} >= {"file", "content", "channels"}
    assert catalog.servers == ("https://slack.com/api",)


def test_the_uber_catalog_has_query_args_and_named_results() -> None:
    catalog = corpus_catalog("oai-uber-swagger2.json")
    price = catalog.function("estimates.get_estimates_price")
    assert [(arg.name, arg.location, arg.required) for arg in price.args] == [
        ("start_latitude", "query", True),
        ("start_longitude", "query", True),
        ("end_latitude", "query", True),
        ("end_longitude", "query", True),
    ]
    assert price.args[0].schema == {"type": "number", "format": "double"}
    assert price.returns == "PriceEstimate"
    assert catalog.servers == ("https://api.uber.com/v1",)


def test_a_fixture_catalog_has_a_json_body_a_multipart_upload_and_scoped_security() -> None:
    shop = build_catalog(load_document(FIXTURES / "shop.yaml"))
    place = next(f for f in shop.functions() if f.operation_id == "placeOrder")
    assert place.body_content_type == "application/json" and place.body_required
    assert [(a.name, a.location, a.required) for a in place.args] == [("items", "body", True), ("note", "body", False)]
    forms = build_catalog(load_document(FIXTURES / "forms.yaml"))
    upload = next(f for f in forms.functions() if f.operation_id == "uploadFile")
    assert upload.body_content_type == "multipart/form-data"
    assert [(a.name, a.schema) for a in upload.args] == [
        ("file", {"description": "The file.", "type": "string", "format": "binary"}),
        ("title", {"type": "string"}),
    ]
    secure = build_catalog(load_document(FIXTURES / "security.yaml"))
    things = next(f for f in secure.functions() if f.operation_id == "listThings")
    assert things.oauth_scopes == ()  # the API key alternative needs no scope
    create = next(f for f in secure.functions() if f.operation_id == "createThing")
    assert create.oauth_scopes == (("admin",), ("write",))
