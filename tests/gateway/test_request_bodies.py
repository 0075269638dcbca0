"""Calls with a body, built by `build_request` and sent by the dispatcher to a real Starlette app: what the app
receives for JSON, form-urlencoded, multipart, text and raw-binary bodies, alongside header and cookie arguments."""

from __future__ import annotations

import json
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from catalog.builder import build_catalog
from catalog.loading import load_document
from gateway.errors import ArgumentError
from gateway.requests import RestContext
from gateway.rest.dispatcher import Dispatcher
from gateway.rest.transports import AsgiTransport

pytestmark = pytest.mark.anyio

OK = {"200": {"description": "ok"}}
OBJECT = {"type": "object"}
STRINGS = {"type": "array", "items": {"type": "string"}}


def _body(media: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {"content": {media: {"schema": {"type": "object", "properties": properties}}}}


DOCUMENT: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Bodies", "version": "1"},
    "paths": {
        "/notes": {
            "post": {
                "operationId": "createNote",
                "parameters": [
                    {"name": "x-trace", "in": "header", "schema": {"type": "string"}},
                    {"name": "draft", "in": "query", "schema": {"type": "boolean"}},
                    {"name": "x-tags", "in": "header", "schema": STRINGS},
                    {"name": "x-point", "in": "header", "explode": True, "schema": OBJECT},
                    {"name": "session", "in": "cookie", "schema": {"type": "string"}},
                    {"name": "theme", "in": "cookie", "schema": {"type": "string"}},
                ],
                "requestBody": {"required": True, **_body("application/json", {"title": {"type": "string"}})},
                "responses": OK,
            }
        },
        "/form": {
            "get": {"operationId": "readForm", "responses": OK},
            "post": {
                "operationId": "sendForm",
                "parameters": [{"name": "x-trace", "in": "header", "schema": {"type": "string"}}],
                "requestBody": _body(
                    "application/x-www-form-urlencoded",
                    {
                        "name": {"type": "string"},
                        "tags": STRINGS,
                        "address": OBJECT,
                        "lines": {"type": "array", "items": OBJECT},
                        "active": {"type": "boolean"},
                        "count": {"type": "integer"},
                    },
                ),
                "responses": OK,
            },
        },
        "/upload": {
            "post": {
                "operationId": "upload",
                "parameters": [{"name": "session", "in": "cookie", "schema": {"type": "string"}}],
                "requestBody": _body(
                    "multipart/form-data",
                    {
                        "note": {"type": "string"},
                        "tags": STRINGS,
                        "count": {"type": "integer"},
                        'say "hi"': {},
                        "attachment": {},
                        "labels": {"type": "array"},
                    },
                ),
                "responses": OK,
            }
        },
        "/raw": {
            "put": {
                "operationId": "putRaw",
                "parameters": [{"name": "x-trace", "in": "header", "schema": {"type": "string"}}],
                "requestBody": {"content": {"application/octet-stream": {"schema": {"type": "string"}}}},
                "responses": OK,
            }
        },
        "/form-text": {
            "post": {
                "operationId": "sendFormText",
                "requestBody": {"content": {"application/x-www-form-urlencoded": {"schema": {"type": "string"}}}},
                "responses": OK,
            }
        },
        "/multipart-text": {
            "post": {
                "operationId": "sendMultipartText",
                "requestBody": {"content": {"multipart/form-data": {"schema": {"type": "string"}}}},
                "responses": OK,
            }
        },
        "/text": {
            "put": {
                "operationId": "putText",
                "requestBody": {"content": {"text/plain": {"schema": {"type": "string"}}}},
                "responses": OK,
            }
        },
    },
}


async def echo(request: Request) -> Response:
    """What arrived: the headers, the cookies, the raw body and, for form bodies, the fields in order."""
    body = await request.body()
    fields: list[list[str]] | None = None
    if request.headers.get("content-type", "").startswith(("multipart/", "application/x-www-form-urlencoded")):
        async with request.form() as form:
            fields = [[key, value if isinstance(value, str) else "<file>"] for key, value in form.multi_items()]
    return JSONResponse(
        {
            "method": request.method,
            "query": request.scope["query_string"].decode(),
            "headers": dict(request.headers),
            "cookies": dict(request.cookies),
            "body": body.decode("latin-1"),
            "fields": fields,
        }
    )


APP = Starlette(routes=[Route(path, echo, methods=["GET", "POST", "PUT"]) for path in DOCUMENT["paths"]])
DISPATCHER = Dispatcher(build_catalog(load_document(DOCUMENT)), AsgiTransport(APP), timeout=10)


async def received(name: str, args: dict[str, Any]) -> dict[str, Any]:
    outcome = await DISPATCHER.call(DISPATCHER.function(name), args, RestContext())
    assert outcome.response is not None and outcome.response.status == 200
    seen = json.loads(outcome.response.body)
    assert isinstance(seen, dict)
    return seen


async def test_a_call_with_a_json_body_also_sends_its_header_and_cookie_arguments() -> None:
    seen = await received(
        "notes.create_note",
        {"title": "héllo", "draft": True, "x-trace": "abc-1", "x-tags": ["a", "b"], "session": "s1", "theme": "dark"},
    )
    assert seen["method"] == "POST"
    assert seen["body"].encode("latin-1").decode() == '{"title": "héllo"}'
    assert seen["query"] == "draft=true"
    assert seen["headers"]["content-type"] == "application/json"
    assert (seen["headers"]["x-trace"], seen["headers"]["x-tags"]) == ("abc-1", "a,b")
    assert seen["headers"]["cookie"] == "session=s1; theme=dark"
    assert seen["cookies"] == {"session": "s1", "theme": "dark"}


async def test_a_header_object_with_explode_is_sent_as_key_equals_value_pairs() -> None:
    seen = await received("notes.create_note", {"title": "t", "x-point": {"x": 1, "y": "two"}})
    assert seen["headers"]["x-point"] == "x=1,y=two"


async def test_a_required_body_is_sent_as_an_empty_object_next_to_a_header_argument() -> None:
    seen = await received("notes.create_note", {"x-trace": "only-header"})
    assert (json.loads(seen["body"]), seen["headers"]["x-trace"]) == ({}, "only-header")


async def test_a_form_body_sends_arrays_as_repeated_fields_and_nested_objects_in_brackets() -> None:
    seen = await received(
        "form.send_form",
        {
            "name": "a b&c=d/e",
            "tags": ["x", "y"],
            "address": {"city": "Paris", "geo": {"lat": 1.5}},
            "lines": [{"sku": "A1", "qty": 2}, {"sku": "B2", "qty": 1}],
            "active": True,
            "count": 3,
            "x-trace": "form-trace",
        },
    )
    assert seen["headers"]["content-type"] == "application/x-www-form-urlencoded"
    assert seen["headers"]["x-trace"] == "form-trace"
    assert seen["body"].startswith("name=a%20b%26c%3Dd%2Fe&tags=x&tags=y&address[city]=Paris&")
    assert seen["fields"] == [
        ["name", "a b&c=d/e"],
        ["tags", "x"],
        ["tags", "y"],
        ["address[city]", "Paris"],
        ["address[geo][lat]", "1.5"],
        ["lines[0][sku]", "A1"],
        ["lines[0][qty]", "2"],
        ["lines[1][sku]", "B2"],
        ["lines[1][qty]", "1"],
        ["active", "true"],
        ["count", "3"],
    ]


async def test_a_form_body_with_only_an_empty_array_sends_no_field() -> None:
    seen = await received("form.send_form", {"tags": [], "active": False})
    assert seen["fields"] == [["active", "false"]]


async def test_a_multipart_body_sends_each_text_field_and_each_array_item_as_a_part() -> None:
    seen = await received("upload.upload", {"note": 'hi "there"', "tags": ["a", "b"], "count": 7, "session": "s9"})
    assert seen["headers"]["content-type"].startswith("multipart/form-data; boundary=")
    assert seen["fields"] == [["note", 'hi "there"'], ["tags", "a"], ["tags", "b"], ["count", "7"]]
    assert seen["cookies"] == {"session": "s9"}


async def test_a_file_given_to_a_multipart_field_the_document_leaves_untyped_is_sent_as_a_file_part() -> None:
    seen = await received("upload.upload", {"attachment": {"base64": "AAE=", "filename": "a.bin"}, "note": "n"})
    assert seen["fields"] == [["note", "n"], ["attachment", "<file>"]]
    assert 'name="attachment"; filename="a.bin"' in seen["body"]
    assert "Content-Type: application/octet-stream\r\n\r\n\x00\x01\r\n" in seen["body"]


async def test_a_multipart_array_whose_document_gives_no_items_sends_each_item_as_a_text_part() -> None:
    seen = await received("upload.upload", {"labels": ["red", 2]})
    assert seen["fields"] == [["labels", "red"], ["labels", "2"]]


async def test_a_raw_binary_body_is_sent_as_the_strings_bytes_with_the_documented_media_type() -> None:
    seen = await received("raw.put_raw", {"body": "GIF89a\u00e9", "x-trace": "raw-trace"})
    assert seen["headers"]["content-type"] == "application/octet-stream"
    assert seen["body"].encode("latin-1") == "GIF89a\u00e9".encode()
    assert seen["headers"]["x-trace"] == "raw-trace"


async def test_a_text_body_is_sent_as_the_text_itself() -> None:
    seen = await received("text.put_text", {"body": "line one\nline two"})
    assert (seen["headers"]["content-type"], seen["body"]) == ("text/plain", "line one\nline two")


async def test_a_post_without_body_arguments_sends_an_empty_body_of_length_zero() -> None:
    seen = await received("form.send_form", {"x-trace": "nothing-else"})
    assert (seen["body"], seen["fields"], "content-type" in seen["headers"]) == ("", None, False)
    assert seen["headers"]["content-length"] == "0"


async def test_a_get_has_no_content_length_and_the_gateway_accepts_anything_as_itself() -> None:
    seen = await received("form.read_form", {})
    assert seen["method"] == "GET" and "content-length" not in seen["headers"]
    assert (seen["headers"]["accept"], seen["headers"]["user-agent"]) == ("*/*", "mcp-gateway")


async def test_a_body_is_sent_with_its_length_in_bytes() -> None:
    seen = await received("text.put_text", {"body": "é"})
    assert seen["headers"]["content-length"] == "2"


async def test_a_form_body_that_is_one_value_is_sent_as_the_field_body() -> None:
    seen = await received("form_text.send_form_text", {"body": "a b/c"})
    assert (seen["body"], seen["fields"]) == ("body=a%20b%2Fc", [["body", "a b/c"]])


async def test_a_multipart_body_that_is_not_an_object_is_refused_naming_the_body() -> None:
    with pytest.raises(ArgumentError) as refused:
        await received("multipart_text.send_multipart_text", {"body": "text"})
    assert (str(refused.value), refused.value.arg_names) == (
        "the multipart body must be an object of form fields",
        ("body",),
    )
