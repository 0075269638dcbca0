"""`build_request`: arguments become the REST request OpenAPI describes (OAS 3.1 §4.8.12.4 style examples), and
values that would change which request is sent are refused."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from catalog.builder import build_catalog
from catalog.loading import load_document
from catalog.model import Function
from gateway.errors import ArgumentError
from gateway.rest.request import HttpResponse, RestRequest, build_request, encoded_body, request_target

COLORS = ["blue", "black", "brown"]
RGB = {"R": 100, "G": 200, "B": 150}


def function_with(parameter: dict[str, Any], *, path: str = "/things/{color}") -> Function:
    document = {
        "openapi": "3.1.0",
        "info": {"title": "T", "version": "1"},
        "paths": {path: {"get": {"operationId": "get", "parameters": [parameter], "responses": {"200": {}}}}},
    }
    return build_catalog(load_document(document)).functions()[0]


def request_for(parameter: dict[str, Any], value: Any) -> RestRequest:
    return build_request(function_with({"name": "color", "required": True, **parameter}), {"color": value})


@pytest.mark.parametrize(
    ("style", "explode", "value", "segment"),
    [
        ("simple", False, "blue", "blue"),
        ("simple", False, COLORS, "blue,black,brown"),
        ("simple", False, RGB, "R,100,G,200,B,150"),
        ("simple", True, RGB, "R=100,G=200,B=150"),
        ("label", False, "blue", ".blue"),
        ("label", False, COLORS, ".blue,black,brown"),
        ("label", True, COLORS, ".blue.black.brown"),
        ("label", False, RGB, ".R,100,G,200,B,150"),
        ("label", True, RGB, ".R=100.G=200.B=150"),
        ("matrix", False, "blue", ";color=blue"),
        ("matrix", False, COLORS, ";color=blue,black,brown"),
        ("matrix", True, COLORS, ";color=blue;color=black;color=brown"),
        ("matrix", False, RGB, ";color=R,100,G,200,B,150"),
        ("matrix", True, RGB, ";R=100;G=200;B=150"),
    ],
)
def test_path_styles_serialize_as_the_openapi_table_says(style: str, explode: bool, value: Any, segment: str) -> None:
    request = request_for({"in": "path", "style": style, "explode": explode, "schema": {}}, value)
    assert request.path == f"/things/{segment}"


@pytest.mark.parametrize(
    ("style", "explode", "value", "query"),
    [
        ("form", True, "blue", [("color", "blue")]),
        ("form", False, COLORS, [("color", "blue,black,brown")]),
        ("form", True, COLORS, [("color", "blue"), ("color", "black"), ("color", "brown")]),
        ("form", False, RGB, [("color", "R,100,G,200,B,150")]),
        ("form", True, RGB, [("R", "100"), ("G", "200"), ("B", "150")]),
        ("spaceDelimited", False, COLORS, [("color", "blue black brown")]),
        ("pipeDelimited", False, COLORS, [("color", "blue|black|brown")]),
        ("deepObject", True, RGB, [("color[R]", "100"), ("color[G]", "200"), ("color[B]", "150")]),
    ],
)
def test_query_styles_serialize_as_the_openapi_table_says(
    style: str, explode: bool, value: Any, query: list[tuple[str, str]]
) -> None:
    function = function_with(
        {"name": "color", "in": "query", "style": style, "explode": explode, "schema": {}}, path="/things"
    )
    assert list(build_request(function, {"color": value}).query) == query


@pytest.mark.parametrize(
    ("style", "value"),
    [
        ("simple", ".."),
        ("simple", "."),
        ("simple", "%2E%2E"),
        ("simple", ".%2e"),
        ("simple", "%252E%252e"),
        ("simple", "a/../b"),
        ("simple", "a\\..\\b"),
        ("label", ""),
        ("label", "."),
    ],
)
def test_a_path_value_that_would_be_a_dot_segment_is_refused(style: str, value: Any) -> None:
    # RFC 3986 §6.2.2.2: behind a server that normalizes, any encoding of '..' climbs to another route.
    with pytest.raises(ArgumentError) as refused:
        request_for({"in": "path", "style": style, "schema": {}}, value)
    assert str(refused.value) == (
        "argument 'color' would make a path segment '.' or '..', which servers resolve to another path; "
        "pass the identifier itself"
    )
    assert refused.value.arg_names == ("color",)


@pytest.mark.parametrize(("value", "segment"), [("...", "..."), ("a.b", "a.b"), (".hidden", ".hidden"), ("..a", "..a")])
def test_dots_inside_a_path_value_pass_as_they_are(value: str, segment: str) -> None:
    assert request_for({"in": "path", "schema": {"type": "string"}}, value).path == f"/things/{segment}"


def test_an_empty_path_value_is_refused_rather_than_calling_the_collection() -> None:
    with pytest.raises(ArgumentError, match="argument 'color' fills a path segment: it cannot be empty") as refused:
        request_for({"in": "path", "schema": {"type": "string"}}, "")
    assert refused.value.arg_names == ("color",)


@pytest.mark.parametrize("value", ["a\r\nX-Admin: 1", "tab\tis fine but not\x00", "ü"])
def test_a_header_value_that_would_forge_or_break_a_header_is_refused(value: str) -> None:
    with pytest.raises(ArgumentError) as refused:
        request_for({"in": "header", "schema": {"type": "string"}}, value)
    assert str(refused.value).startswith("argument 'color' goes in a header: use printable ASCII text, not ")
    assert refused.value.arg_names == ("color",)


def test_a_header_value_with_a_tab_passes_as_it_is() -> None:
    assert request_for({"in": "header", "schema": {"type": "string"}}, "a\tb").headers == (("color", "a\tb"),)


def test_a_cookie_value_cannot_add_a_cookie() -> None:
    with pytest.raises(ArgumentError) as refused:
        request_for({"in": "cookie", "schema": {"type": "string"}}, "x; admin=1")
    assert str(refused.value).startswith(
        "argument 'color' goes in a cookie: use printable ASCII text without ';', not "
    )
    assert refused.value.arg_names == ("color",)
    assert request_for({"in": "cookie", "schema": {"type": "string"}}, "x").headers == (("cookie", "color=x"),)


def test_a_required_body_whose_fields_are_all_optional_is_sent_as_an_empty_object() -> None:
    document = {
        "openapi": "3.1.0",
        "info": {"title": "T", "version": "1"},
        "paths": {
            "/runs/list": {
                "post": {
                    "operationId": "list_runs",
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {"type": "object", "properties": {"limit": {"type": "integer"}}}
                            }
                        },
                    },
                    "responses": {"200": {}},
                }
            }
        },
    }
    (function,) = build_catalog(load_document(document)).functions()
    request = build_request(function, {})
    assert (request.content, request.content_type) == (b"{}", "application/json")
    assert build_request(function, {"limit": 5}).content == b'{"limit": 5}'


def test_a_query_array_without_style_or_explode_repeats_the_name_for_each_item() -> None:
    # OAS 3.1 §4.8.12.4: the default query style is form, and form defaults to explode=true.
    function = function_with({"name": "color", "in": "query", "schema": {"type": "array"}}, path="/things")
    assert list(build_request(function, {"color": COLORS}).query) == [("color", c) for c in COLORS]


def test_a_query_array_with_explode_false_is_one_comma_joined_value() -> None:
    function = function_with(
        {"name": "color", "in": "query", "explode": False, "schema": {"type": "array"}}, path="/things"
    )
    assert list(build_request(function, {"color": COLORS}).query) == [("color", "blue,black,brown")]


def test_a_query_object_without_explode_spreads_its_keys_into_the_query() -> None:
    function = function_with({"name": "color", "in": "query", "schema": {"type": "object"}}, path="/things")
    assert list(build_request(function, {"color": {"R": 1, "on": True}}).query) == [("R", "1"), ("on", "true")]


def test_a_space_delimited_array_without_explode_is_joined_by_spaces() -> None:
    # Only form defaults to explode=true; every other style defaults to false.
    function = function_with({"name": "color", "in": "query", "style": "spaceDelimited", "schema": {}}, path="/things")
    assert list(build_request(function, {"color": COLORS}).query) == [("color", "blue black brown")]


def test_query_values_with_reserved_characters_are_percent_encoded_in_the_target() -> None:
    function = function_with({"name": "q", "in": "query", "schema": {"type": "string"}}, path="/things")
    request = build_request(function, {"q": "a&b=c d/é"})
    assert request_target(request, "/api/") == b"/api/things?q=a%26b%3Dc%20d%2F%C3%A9"


def test_matrix_keys_and_values_that_need_escaping_are_percent_encoded() -> None:
    exploded = request_for({"in": "path", "style": "matrix", "explode": True, "schema": {}}, {"a;b": "c=d", "e f": "g"})
    assert exploded.path == "/things/;a%3Bb=c%3Dd;e%20f=g"
    items = request_for({"in": "path", "style": "matrix", "explode": True, "schema": {}}, ["x;y", "z/w"])
    assert items.path == "/things/;color=x%3By;color=z%2Fw"
    slashes = request_for({"in": "path", "style": "matrix", "explode": True, "schema": {}}, {"a/b": "c/d"})
    assert slashes.path == "/things/;a%2Fb=c%2Fd"
    joined = request_for({"in": "path", "style": "matrix", "schema": {}}, ["x;y", "z/w"])
    assert joined.path == "/things/;color=x%3By,z%2Fw"


def test_label_values_that_need_escaping_are_percent_encoded() -> None:
    request = request_for({"in": "path", "style": "label", "explode": True, "schema": {}}, ["a b", "c/d"])
    assert request.path == "/things/.a%20b.c%2Fd"


def test_a_simple_path_value_with_reserved_characters_is_percent_encoded() -> None:
    assert request_for({"in": "path", "schema": {}}, "a/b?c#d").path == "/things/a%2Fb%3Fc%23d"


def test_scalars_are_written_as_json_writes_them() -> None:
    function = function_with({"name": "v", "in": "query", "schema": {}}, path="/things")
    values = [True, False, None, 3, 1.5, [{"k": "é", "n": [1, 2]}]]
    written = [build_request(function, {"v": value}).query for value in values]
    assert [dict(pairs)["v"] for pairs in written] == ["true", "false", "", "3", "1.5", '{"k":"é","n":[1,2]}']


def test_a_path_style_the_table_does_not_list_is_serialized_as_simple() -> None:
    request = request_for({"in": "path", "style": "form", "schema": {}}, {"a b": "c/d", "e": 1})
    assert request.path == "/things/a%20b,c%2Fd,e,1"


def test_a_call_with_a_body_goes_to_its_operations_own_server() -> None:
    document = {
        "openapi": "3.1.0",
        "info": {"title": "T", "version": "1"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": {
            "/files": {
                "post": {
                    "operationId": "upload",
                    "servers": [{"url": "https://uploads.example.com"}],
                    "requestBody": {
                        "content": {"application/json": {"schema": {"type": "object", "properties": {"n": {}}}}}
                    },
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }
    function = build_catalog(load_document(document)).functions()[0]
    assert function.server is not None
    assert build_request(function, {"n": 1}).base == function.server
    assert build_request(function, {}).base == function.server


# Bodies: which values go as files, and how every part is named and typed


def operation_with(request_body: dict[str, Any], parameters: list[dict[str, Any]] | None = None) -> Function:
    operation: dict[str, Any] = {"operationId": "send", "requestBody": request_body, "responses": {"200": {}}}
    if parameters:
        operation["parameters"] = parameters
    document = {"openapi": "3.1.0", "info": {"title": "T", "version": "1"}, "paths": {"/send": {"post": operation}}}
    return build_catalog(load_document(document)).functions()[0]


def multipart(properties: dict[str, Any]) -> Function:
    schema = {"type": "object", "properties": properties}
    return operation_with({"content": {"multipart/form-data": {"schema": schema}}})


BINARY = {"type": "string", "format": "binary"}


def test_a_cookie_object_is_written_unexploded_whatever_the_document_says() -> None:
    # OAS 3.1 §4.8.12.4: cookies are `form` style, whose exploded objects would be cookies of their own.
    request = request_for({"in": "cookie", "explode": True, "schema": {"type": "object"}}, RGB)
    assert request.headers == (("cookie", "color=R,100,G,200,B,150"),)


def test_a_required_empty_body_keeps_the_query_arguments_beside_it() -> None:
    body = {"type": "object", "properties": {"limit": {"type": "integer"}}}
    function = operation_with(
        {"required": True, "content": {"application/json": {"schema": body}}},
        [{"name": "dry_run", "in": "query", "schema": {"type": "boolean"}}],
    )
    request = build_request(function, {"dry_run": True})
    assert (request.query, request.content) == ((("dry_run", "true"),), b"{}")


def test_a_required_whole_body_that_is_not_an_object_is_never_made_up() -> None:
    array = {"type": "array", "items": {"type": "integer"}}
    function = operation_with({"required": True, "content": {"application/json": {"schema": array}}})
    assert build_request(function, {}).content is None
    assert build_request(function, {"body": [1, 2]}).content == b"[1, 2]"


def test_a_binary_field_given_a_string_goes_as_a_file_named_after_the_field() -> None:
    request = build_request(multipart({"report": BINARY}), {"report": "raw text"})
    assert (request.files, request.data) == ((("report", ("report", b"raw text", "application/octet-stream")),), ())


def test_an_array_of_binary_items_given_strings_is_one_file_part_each() -> None:
    function = multipart({"scans": {"type": "array", "items": {**BINARY, "contentMediaType": "image/png"}}})
    request = build_request(function, {"scans": ["a", "b"]})
    assert request.files == (("scans", ("scans", b"a", "image/png")), ("scans", ("scans", b"b", "image/png")))


def test_file_objects_go_as_files_even_where_the_document_does_not_say_binary() -> None:
    function = multipart({"note": {}, "attachments": {"type": "array", "items": {}}})
    note = {"text": "hi", "filename": "a.txt", "content_type": "text/plain"}
    attachments = [{"base64": "aGk=", "filename": "b.bin"}, {"text": "x"}]
    request = build_request(function, {"note": note, "attachments": attachments})
    assert request.files == (
        ("note", ("a.txt", b"hi", "text/plain")),
        ("attachments", ("b.bin", b"hi", "application/octet-stream")),
        ("attachments", ("attachments", b"x", "application/octet-stream")),
    )
    assert request.data == ()


@pytest.mark.parametrize(
    "value",
    [
        {"filename": "a.txt"},  # neither base64 nor text
        {"text": "hi", "size": 2},  # a key no file object has
        {"content_type": "text/plain"},
    ],
)
def test_an_object_that_is_not_a_file_object_is_a_plain_field(value: dict[str, Any]) -> None:
    request = build_request(multipart({"meta": {"type": "object"}}), {"meta": value})
    assert request.files == ()
    assert request.data == (("meta", json.dumps(value, separators=(",", ":"))),)


def test_a_file_object_with_both_forms_is_still_a_file_and_its_base64_wins() -> None:
    value = {"base64": "aGk=", "text": "ignored", "filename": "f", "content_type": "text/plain"}
    request = build_request(multipart({"f": {}}), {"f": value})
    assert request.files == (("f", ("f", b"hi", "text/plain")),)


@pytest.mark.parametrize(
    ("media", "sent"),
    [("image/png", "image/png"), ("text/plain; charset=utf-8", "text/plain; charset=utf-8"), ("not a type", None)],
)
def test_a_documented_content_media_type_is_the_parts_type_when_it_is_one(media: str, sent: str | None) -> None:
    request = build_request(multipart({"f": {**BINARY, "contentMediaType": media}}), {"f": {"text": "x"}})
    assert request.files[0][1][2] == (sent or "application/octet-stream")


def test_a_file_objects_bad_content_type_or_shape_is_refused_naming_the_argument() -> None:
    function = multipart({"f": BINARY})
    with pytest.raises(ArgumentError) as bad_type:
        build_request(function, {"f": {"text": "x", "content_type": "image/png\r\nX-Evil: 1"}})
    with pytest.raises(ArgumentError) as bad_shape:
        build_request(function, {"f": 42})
    assert str(bad_type.value).startswith("argument 'f': content_type must be a media type such as 'image/png', not ")
    assert "X-Evil: 1" in str(bad_type.value)
    assert bad_type.value.arg_names == ("f",)
    assert str(bad_shape.value) == (
        "argument 'f' is a file: pass a string, or an object {base64 or text, filename?, content_type?}"
    )
    assert bad_shape.value.arg_names == ("f",)


def test_base64_with_characters_outside_its_alphabet_is_refused_not_skipped() -> None:
    with pytest.raises(ArgumentError) as refused:
        build_request(multipart({"f": BINARY}), {"f": {"base64": "aGk=!!"}})
    assert str(refused.value).startswith("argument 'f': 'base64' is not valid base64 (")
    assert refused.value.arg_names == ("f",)


def test_a_raw_binary_body_that_cannot_be_read_blames_the_body() -> None:
    function = operation_with({"content": {"application/octet-stream": {"schema": BINARY}}})
    with pytest.raises(ArgumentError) as refused:
        build_request(function, {"body": {"base64": "***"}})
    assert str(refused.value).startswith("argument 'body': 'base64' is not valid base64 (")
    assert refused.value.arg_names == ("body",)


def test_a_text_body_that_is_a_number_or_an_object_is_sent_as_its_json_text() -> None:
    function = operation_with({"content": {"text/plain": {"schema": {}}}})
    assert build_request(function, {"body": 5}).content == b"5"
    assert build_request(function, {"body": {"k": "é"}}).content == '{"k":"é"}'.encode()


def test_an_exploded_object_in_a_path_style_the_table_does_not_list_keeps_its_key_value_pairs() -> None:
    request = request_for({"in": "path", "style": "form", "explode": True, "schema": {}}, RGB)
    assert request.path == "/things/R=100,G=200,B=150"


def test_multipart_parts_have_a_fresh_32_digit_boundary_and_escaped_names() -> None:
    request = RestRequest(method="POST", path="/send", files=(('a\\b\r\n"c', ('x\\y"\n.txt', b"!", "text/plain")),))
    first, content_type = encoded_body(request)
    second, other_type = encoded_body(request)
    boundary = content_type.partition("boundary=")[2] if content_type else ""
    assert re.fullmatch(r"[0-9a-f]{32}", boundary)
    assert other_type != content_type
    assert b'name="a\\\\b%0D%0A%22c"; filename="x\\\\y%22%0A.txt"\r\n' in first
    assert second.count(b"Content-Disposition") == 1


def test_a_json_answer_nested_past_what_python_reads_is_a_value_error_saying_so() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    answer = HttpResponse(status=200, reason="OK", headers={"content-type": "application/json"}, body=deep)
    with pytest.raises(ValueError, match=r"^the JSON is nested too deeply to read$"):
        answer.json()


def test_the_target_prefix_loses_only_its_trailing_slashes() -> None:
    assert request_target(RestRequest(method="GET", path="/things"), "/apiX//") == b"/apiX/things"
