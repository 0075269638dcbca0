"""Loading documents: sources, parsing, versions, ref bundling, warnings, and every document of the corpus."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from datetime import date
from decimal import Decimal
from enum import Enum
from pathlib import Path
from textwrap import dedent
from typing import Any

import pytest
from fastapi import FastAPI

from catalog.errors import CatalogConfigError, DocumentError, FetchLimitError
from catalog.fetched import MAX_BYTES, Fetched, FetchLimits, Loading
from catalog.loading import Document, load_document

CORPUS = Path(os.environ.get("MCP_GATEWAY_CORPUS", Path(__file__).resolve().parents[3] / "shared" / "corpus" / "specs"))
DO_MULTIFILE = CORPUS / "digitalocean-public-v2.multifile" / "specification" / "DigitalOcean-public.v2.yaml"
DO_BUNDLED = CORPUS / "digitalocean-public-v2.bundled.yaml"
BIG = 1_000_000  # bytes; documents above this are marked slow

MINIMAL = "openapi: 3.0.3\ninfo: {title: T, version: '1'}\npaths: {}\n"


def write(root: Path, files: dict[str, str]) -> Path:
    """Write fixture files (dedented) under `root`; return the first one's path."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text).lstrip("\n"), encoding="utf-8")
    return root / next(iter(files))


def refs_in(node: Any) -> Iterator[str]:
    """Every string `$ref` in a tree (outside nothing: examples included)."""
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        for value in node.values():
            yield from refs_in(value)
    elif isinstance(node, list):
        for value in node:
            yield from refs_in(value)


def messages(document: Document) -> str:
    return "\n".join(f"{w.pointer} {w.message}" for w in document.warnings)


# -- sources -----------------------------------------------------------------------------------------------------


def test_yaml_file_loads_with_its_version_location_and_no_warnings(tmp_path: Path) -> None:
    path = write(tmp_path, {"api.yaml": MINIMAL})
    document = load_document(path)
    assert document.openapi == "3.0.3"
    assert document.location == str(path)
    assert document.data["info"]["title"] == "T"
    assert document.warnings == ()


def test_a_str_is_text_when_it_starts_with_a_brace_or_has_a_line_break_else_a_path(tmp_path: Path) -> None:
    assert load_document(MINIMAL).location == "<string>"
    assert load_document('  {"openapi": "3.1.0", "info": {"title": "T", "version": "1"}}').openapi == "3.1.0"
    path = write(tmp_path, {"api.yaml": MINIMAL})
    assert load_document(str(path)).location == str(path)


@pytest.mark.parametrize(("text", "what"), [("", "an empty string"), (" \n ", "an empty string"), ("[1, 2]", "a list")])
def test_an_empty_str_or_one_that_starts_a_json_list_is_read_as_text_not_a_path(text: str, what: str) -> None:
    with pytest.raises(DocumentError, match=what):
        load_document(text)


def test_a_missing_path_is_refused_and_a_str_that_may_be_text_says_how_a_str_is_read() -> None:
    with pytest.raises(DocumentError, match=r"^no file 'nowhere.yaml'; check the path$") as caught:
        load_document("nowhere.yaml")
    assert caught.value.location == "nowhere.yaml"
    with pytest.raises(DocumentError, match=r"no file 'openapi: 3.1.0'.*document text only when it starts with"):
        load_document("openapi: 3.1.0")


def test_a_directory_is_refused_with_a_hint_to_pass_the_entry_file(tmp_path: Path) -> None:
    with pytest.raises(DocumentError, match="is a directory; pass the document's entry file"):
        load_document(tmp_path)


def test_bytes_load_as_utf8_with_or_without_bom_and_as_utf16() -> None:
    assert load_document(MINIMAL.encode()).location == "<bytes>"
    assert load_document(b"\xef\xbb\xbf" + MINIMAL.encode()).openapi == "3.0.3"
    assert load_document(MINIMAL.encode("utf-16")).openapi == "3.0.3"


def test_bytes_that_are_not_utf8_are_refused() -> None:
    with pytest.raises(DocumentError, match="not valid utf-8"):
        load_document(b'{"openapi": "3.0.0", "x": "\xff"}')


def test_json_is_parsed_as_json_so_surrogate_pair_escapes_survive() -> None:
    text = '{"openapi": "3.1.0", "info": {"title": "\\ud83d\\ude80 launch", "version": "1"}}'
    assert load_document(text).data["info"]["title"] == "\U0001f680 launch"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("123456789012345678901234567890", 123456789012345678901234567890),  # past 64 bits: stays an integer
        ("18446744073709551615", 18446744073709551615),
        ("-9223372036854775809", -9223372036854775809),
        ("1.5", 1.5),
        ('"\\u00e9t\u00e9"', "\u00e9t\u00e9"),
        ('"\\ud800"', "\ud800"),  # a lone surrogate escape, as json.loads reads it
    ],
)
def test_json_bytes_read_every_value_as_the_standard_library_does(value: str, expected: object) -> None:
    text = f'{{"openapi": "3.1.0", "info": {{"title": "T", "version": "1"}}, "x-value": {value}}}'
    document = load_document(text.encode())
    assert document.data["x-value"] == expected
    assert type(document.data["x-value"]) is type(expected)


def test_json_bytes_with_nan_and_infinity_load_as_the_standard_library_reads_them() -> None:
    text = b'{"openapi": "3.1.0", "info": {"title": "T", "version": "1"}, "x-range": [NaN, Infinity, -Infinity]}'
    low, high, lowest = load_document(text).data["x-range"]
    assert low != low and high == float("inf") and lowest == float("-inf")


def test_invalid_json_bytes_are_refused_at_the_line_and_column_of_the_mistake() -> None:
    with pytest.raises(DocumentError, match=r"invalid JSON in <bytes> at line 2, column 19"):
        load_document(b'{"openapi": "3.1.0",\n "info": {"title" "T"}, "paths": {}, "x": [1, 2]}')


def test_a_plain_mapping_is_neither_mutated_nor_copied() -> None:
    source: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": "T", "version": "1"},
        "paths": {"/a": {"get": {"responses": {"200": {"$ref": "#/components/responses/Ok"}}}}},
        "components": {"responses": {"Ok": {"description": "ok"}}},
    }
    before = json.dumps(source)
    document = load_document(source)
    assert document.location == "<dict>"
    assert document.data["paths"] is source["paths"]
    assert json.dumps(source) == before


def test_a_mapping_with_int_keys_and_dates_becomes_json_compatible_without_touching_the_original() -> None:
    source: dict[str, Any] = {
        "openapi": "3.0.0",
        "info": {"title": "T", "version": "1"},
        "paths": {"/a": {"get": {"responses": {200: {"description": "ok", "x-since": date(2024, 1, 2)}}}}},
    }
    data = load_document(source).data
    assert data["paths"]["/a"]["get"]["responses"] == {"200": {"description": "ok", "x-since": "2024-01-02"}}
    assert 200 in source["paths"]["/a"]["get"]["responses"]


def test_a_mapping_with_python_values_is_converted_and_one_json_cannot_hold_is_refused() -> None:
    class Color(Enum):
        RED = "red"

    source: dict[str, Any] = {"openapi": "3.0.0", "x-values": (Decimal("1.5"), Decimal(2), Color.RED, True)}
    assert load_document(source).data["x-values"] == [1.5, 2, "red", True]
    with pytest.raises(DocumentError, match="is a set, which JSON cannot hold") as caught:
        load_document({"openapi": "3.0.0", "x-tags": {"a": {1, 2}}})
    assert caught.value.pointer == "#/x-tags/a"


def test_a_mapping_path_item_ref_is_inlined_in_a_copy_not_in_the_callers_mapping() -> None:
    item = {"get": {"responses": {"200": {"description": "ok"}}}}
    source: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": "T", "version": "1"},
        "paths": {"/a": {"$ref": "#/components/pathItems/A"}},
        "components": {"pathItems": {"A": item}},
    }
    document = load_document(source)
    assert document.data["paths"]["/a"] == item
    assert source["paths"]["/a"] == {"$ref": "#/components/pathItems/A"}


def fastapi_app() -> FastAPI:
    app = FastAPI(title="Pets", version="1.0")

    @app.get("/pets/{pet_id}")
    def read_pet(pet_id: int) -> dict[str, int]:
        return {"id": pet_id}

    return app


def test_an_app_with_openapi_is_loaded_by_load_document() -> None:
    document = load_document(fastapi_app())
    assert document.location == "<app>"
    assert document.openapi.startswith("3.1")
    assert "/pets/{pet_id}" in document.data["paths"]


def test_a_url_document_and_its_relative_refs_are_read_through_the_fetch_given() -> None:
    files = {
        "https://api.example.com/v1/api.yaml": b"""
openapi: 3.0.0
info: {title: T, version: '1'}
paths:
  /a:
    get:
      responses:
        '200': {$ref: 'common/ok.yaml'}
        '201': {$ref: 'file:///etc/hostname'}
""",
        "https://api.example.com/v1/common/ok.yaml": b"description: fine\n",
    }
    asked: list[str] = []

    def fetch(uri: str, loading: Loading) -> Fetched:
        asked.append(uri)
        return Fetched(content=files[uri], media_type="application/yaml")

    document = load_document("https://api.example.com/v1/api.yaml", fetch=fetch)
    assert asked == ["https://api.example.com/v1/api.yaml", "https://api.example.com/v1/common/ok.yaml"]
    responses = document.data["paths"]["/a"]["get"]["responses"]
    assert responses["200"] == {"$ref": "#/components/responses/ok"}
    assert responses["201"] == {"$ref": "file:///etc/hostname"}
    assert "would read a local file" in messages(document)


def test_a_url_without_a_fetch_is_refused_saying_what_to_pass() -> None:
    with pytest.raises(DocumentError, match=r"reads only local files by itself; pass fetch="):
        load_document("https://api.example.com/openapi.json")


def test_a_web_page_is_called_an_html_page_not_a_document(tmp_path: Path) -> None:
    def fetch(uri: str, loading: Loading) -> Fetched:
        return Fetched(content=b"<!DOCTYPE html><html><body>docs</body></html>", media_type="text/html")

    with pytest.raises(DocumentError, match=r"is an HTML page, not an OpenAPI document; give the URL of the JSON"):
        load_document("https://example.com/docs", fetch=fetch)
    page = tmp_path / "docs.html"
    page.write_text("\n  <html lang=en><head></head></html>", encoding="utf-8")
    with pytest.raises(DocumentError, match=r"is an HTML page"):
        load_document(page)


# -- parsing -----------------------------------------------------------------------------------------------------


def test_yaml_response_codes_and_other_number_keys_become_strings() -> None:
    data = load_document(MINIMAL.replace("paths: {}", "paths: {/a: {get: {responses: {200: {description: ok}}}}}")).data
    assert list(data["paths"]["/a"]["get"]["responses"]) == ["200"]


def test_yaml_scalars_follow_yaml_1_2_so_off_and_dates_stay_strings() -> None:
    text = MINIMAL + "x-values: [on, off, yes, no, true, 2024-01-02, 12:30, 1e-05, 0x1F, ~]\n"
    assert load_document(text).data["x-values"] == [
        "on",
        "off",
        "yes",
        "no",
        True,
        "2024-01-02",
        "12:30",
        1e-05,
        31,
        None,
    ]


def test_a_yaml_key_given_twice_is_a_warning_naming_it_and_its_line() -> None:
    text = MINIMAL.replace("paths: {}\n", "paths:\n  /a: {get: {}}\n  /a: {post: {}}\n")
    document = load_document(text)
    assert list(document.data["paths"]["/a"]) == ["post"]
    (warning,) = [w.message for w in document.warnings if "twice" in w.message]
    line = text.splitlines().index("  /a: {post: {}}") + 1
    assert (
        warning
        == f"the key '/a' is given twice in one mapping (line {line}); only the later value is read, merge the two"
    )


def test_yaml_merge_keys_merge_with_explicit_keys_winning() -> None:
    text = MINIMAL + "x-base: &base {a: 1, b: 2}\nx-derived: {<<: *base, b: 3}\n"
    assert load_document(text).data["x-derived"] == {"a": 1, "b": 3}


def test_invalid_json_is_refused_with_line_and_column() -> None:
    with pytest.raises(DocumentError, match=r"invalid JSON in <string> at line 2, column 16"):
        load_document('{"openapi": "3.0.0",\n  "info": [1, 2}')


def test_text_that_starts_like_json_but_is_yaml_loads_with_a_warning() -> None:
    document = load_document("{openapi: 3.1.0, info: {title: T, version: '1'}}")
    assert document.openapi == "3.1.0"
    assert "not valid JSON (line 1, column 2" in messages(document)


def test_invalid_yaml_is_refused_with_line_and_column() -> None:
    with pytest.raises(DocumentError, match=r"invalid YAML in <string> at line 4, column 3"):
        load_document("openapi: 3.0.0\ninfo:\n  - a\n  b: c\n")


def test_yaml_aliases_that_expand_without_bound_are_refused() -> None:
    lines = ["openapi: 3.0.0", "a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 8)]
    with pytest.raises(DocumentError, match=r"aliases .* expand to more than"):
        load_document("\n".join(lines) + "\n")


def test_a_document_nested_beyond_reason_or_containing_itself_is_refused_not_crashed() -> None:
    with pytest.raises(DocumentError, match="nested too deeply"):
        load_document('{"openapi": "3.0.0", "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    looped: dict[str, Any] = {"openapi": "3.0.0"}
    looped["x-self"] = looped
    with pytest.raises(DocumentError, match="nested too deeply or contains itself"):
        load_document(looped)


@pytest.mark.parametrize(
    ("text", "what"),
    [("", "is empty"), ("- a\n- b\n", "is a list, not a mapping"), ('"just text"', "is a string, not a mapping")],
)
def test_a_document_that_is_no_mapping_is_refused(text: str, what: str) -> None:
    with pytest.raises(DocumentError, match=what):
        load_document(text.encode())


# -- versions ----------------------------------------------------------------------------------------------------


def test_swagger_2_is_converted_to_openapi_3_with_a_note_first() -> None:
    document = load_document(CORPUS / "oai-uber-swagger2.json")
    assert document.openapi == "3.0.3"
    assert document.data["servers"] == [{"url": "https://api.uber.com/v1"}]
    assert "#/components/schemas/Product" in json.dumps(document.data)
    assert [w.pointer for w in document.warnings] == ["#/swagger"]
    assert "converted in-process to OpenAPI 3.0.3 (5 operations)" in document.warnings[0].message


def test_a_swagger_2_mapping_with_python_values_is_converted_without_changing_it() -> None:
    source = {
        "swagger": "2.0",
        "info": {"title": "T", "version": date(2024, 1, 2)},
        "paths": {"/a": {"get": {"responses": {"200": {"description": "ok", "schema": {"$ref": "#/definitions/A"}}}}}},
        "definitions": {"A": {"type": "string"}},
    }
    before = repr(source)
    document = load_document(source)
    assert repr(source) == before
    assert document.data["info"]["version"] == "2024-01-02"
    schema = document.data["paths"]["/a"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert schema == {"$ref": "#/components/schemas/A"}


def test_a_swagger_2_number_version_is_converted_with_a_warning_to_quote_it() -> None:
    document = load_document("swagger: 2.0\ninfo: {title: T, version: '1'}\npaths: {}\n")
    assert document.openapi == "3.0.3"
    assert "write it as the string '2.0'" in document.warnings[0].message


def test_a_swagger_version_other_than_2_0_is_refused_with_how_to_convert() -> None:
    with pytest.raises(DocumentError, match=r"swagger: '1\.2'.*npx swagger2openapi.*Swagger Editor") as caught:
        load_document("swagger: '1.2'\ninfo: {title: T, version: '1'}\n")
    assert caught.value.pointer == "#/swagger"


def test_a_document_without_openapi_field_is_refused_pointing_at_it() -> None:
    with pytest.raises(DocumentError, match="no `openapi` field") as caught:
        load_document("info: {title: T}\npaths: {}\n")
    assert caught.value.pointer == "#/openapi"


@pytest.mark.parametrize("version", ["'three'", "'4.0.0'", "{a: 1}", "'2.0'"])
def test_a_garbled_or_unsupported_openapi_version_is_refused(version: str) -> None:
    with pytest.raises(DocumentError, match=r"OpenAPI|openapi|Swagger") as caught:
        load_document(f"openapi: {version}\ninfo: {{title: T, version: '1'}}\n")
    assert caught.value.pointer == "#/openapi"


def test_a_future_3_minor_loads_with_a_warning() -> None:
    document = load_document(MINIMAL.replace("3.0.3", "3.2.0"))
    assert document.openapi == "3.2.0"
    assert [w.pointer for w in document.warnings] == ["#/openapi"]
    assert "read as 3.1" in document.warnings[0].message


def test_a_numeric_or_patchless_version_loads_with_a_warning() -> None:
    assert load_document(MINIMAL.replace("3.0.3", "3.1")).openapi == "3.1"
    assert "patch" in messages(load_document(MINIMAL.replace("3.0.3", "'3.1'")))
    assert "write it as a string" in messages(load_document(MINIMAL.replace("3.0.3", "3.1")))


# -- external refs -----------------------------------------------------------------------------------------------


def test_external_schemas_and_parameters_become_components_named_like_redocly(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "api.yaml": """
                openapi: 3.0.0
                info: {title: T, version: '1'}
                paths:
                  /apps:
                    get:
                      parameters: [{$ref: 'shared/parameters.yml#/app_id'}]
                      responses:
                        '200':
                          description: ok
                          content:
                            application/json:
                              schema: {$ref: 'models/app.yml'}
            """,
            "shared/parameters.yml": "app_id: {name: app_id, in: query, schema: {type: string}}\n",
            "models/app.yml": "type: object\nproperties:\n  owner: {$ref: 'owner.yml'}\n",
            "models/owner.yml": "type: string\n",
        },
    )
    data = load_document(path).data
    operation = data["paths"]["/apps"]["get"]
    assert operation["parameters"] == [{"$ref": "#/components/parameters/app_id"}]
    assert operation["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/app"
    }
    assert data["components"]["schemas"] == {
        "owner": {"type": "string"},
        "app": {"type": "object", "properties": {"owner": {"$ref": "#/components/schemas/owner"}}},
    }
    assert set(refs_in(data)) <= {
        "#/components/parameters/app_id",
        "#/components/schemas/app",
        "#/components/schemas/owner",
    }


def test_a_name_taken_by_different_content_gets_a_suffix_and_equal_content_shares_it(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "api.yaml": """
                openapi: 3.0.0
                info: {title: T, version: '1'}
                paths: {}
                components:
                  schemas:
                    Region: {type: string}
                  parameters:
                    a: {$ref: 'a/parameters.yml#/region'}
                    b: {$ref: 'b/parameters.yml#/region'}
                    c: {$ref: 'c/parameters.yml#/region'}
                x-uses:
                  - {$ref: 'a/region.yml'}
            """,
            "a/parameters.yml": "region: {name: region, in: query, schema: {$ref: 'region.yml'}}\n",
            "b/parameters.yml": "region: {name: region, in: query, schema: {$ref: 'region.yml'}}\n",
            "c/parameters.yml": "region: {name: region, in: path, required: true, schema: {$ref: '../a/region.yml'}}\n",
            "a/region.yml": "type: string\nenum: [nyc1, sfo1]\n",
            "b/region.yml": "type: string\nenum: [nyc1, sfo1]\n",
        },
    )
    data = load_document(path).data
    schemas = data["components"]["schemas"]
    assert list(schemas) == ["Region", "region"]  # a/ and b/region.yml are equal: one component
    parameters = data["components"]["parameters"]
    assert parameters["a"]["schema"] == parameters["b"]["schema"] == {"$ref": "#/components/schemas/region"}
    assert parameters["c"]["in"] == "path"
    assert data["x-uses"] == [{"type": "string", "enum": ["nyc1", "sfo1"]}]


def test_clashing_external_names_are_suffixed_2_3_in_walk_order(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "api.yaml": """
                openapi: 3.0.0
                info: {title: T, version: '1'}
                paths:
                  /a: {get: {parameters: [{$ref: 'a.yml#/id'}], responses: {default: {description: x}}}}
                  /b: {get: {parameters: [{$ref: 'b.yml#/id'}], responses: {default: {description: x}}}}
                  /c: {get: {parameters: [{$ref: 'c.yml#/id'}, {$ref: 'a.yml#/id'}], responses: {}}}
            """,
            "a.yml": "id: {name: a, in: query}\n",
            "b.yml": "id: {name: b, in: query}\n",
            "c.yml": "id: {name: c, in: query}\n",
        },
    )
    data = load_document(path).data
    assert {name: p["name"] for name, p in data["components"]["parameters"].items()} == {
        "id": "a",
        "id-2": "b",
        "id-3": "c",
    }
    assert data["paths"]["/c"]["get"]["parameters"] == [
        {"$ref": "#/components/parameters/id-3"},
        {"$ref": "#/components/parameters/id"},
    ]


def test_operation_level_refs_and_info_description_refs_are_inlined(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "spec/api.yaml": """
                openapi: 3.0.0
                info:
                  title: T
                  version: '1'
                  description: {$ref: 'description.yml#/introduction'}
                paths:
                  /pets:
                    get: {$ref: 'resources/pets/list.yml'}
                  /owners: {$ref: 'resources/owners.yml'}
            """,
            "spec/description.yml": "introduction: |\n  Hello.\n",
            "spec/resources/pets/list.yml": """
                operationId: pets_list
                responses:
                  '200': {$ref: '../../shared/responses/ok.yml'}
            """,
            "spec/resources/owners.yml": "get: {operationId: owners_list, responses: {}}\n",
            "spec/shared/responses/ok.yml": "description: ok\n",
        },
    )
    data = load_document(path).data
    assert data["info"]["description"] == "Hello.\n"
    assert data["paths"]["/pets"]["get"] == {
        "operationId": "pets_list",
        "responses": {"200": {"$ref": "#/components/responses/ok"}},
    }
    assert data["paths"]["/owners"] == {"get": {"operationId": "owners_list", "responses": {}}}


def test_ref_siblings_stay_beside_a_component_ref_and_win_when_inlined(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "api.yaml": """
                openapi: 3.1.0
                info: {title: T, version: '1'}
                paths:
                  /a:
                    get:
                      $ref: 'op.yml'
                      summary: Overridden
                      responses:
                        '200':
                          description: ok
                          content:
                            application/json:
                              schema: {$ref: 'pet.yml', description: The pet}
            """,
            "op.yml": "summary: Original\noperationId: a\n",
            "pet.yml": "type: object\ndescription: A pet\n",
        },
    )
    operation = load_document(path).data["paths"]["/a"]["get"]
    assert operation["summary"] == "Overridden"
    assert operation["operationId"] == "a"
    schema = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert schema == {"$ref": "#/components/schemas/pet", "description": "The pet"}


def test_pointer_escapes_and_percent_encoding_resolve_in_external_files(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "api.yaml": """
                openapi: 3.0.0
                info: {title: T, version: '1'}
                paths:
                  /a:
                    get:
                      responses:
                        '200': {$ref: 'other.yaml#/paths/~1pets~1%7Bid%7D/get/responses/200'}
                        '201': {$ref: 'other.yaml#/x-odd/a~0b'}
            """,
            "other.yaml": """
                paths:
                  /pets/{id}:
                    get:
                      responses:
                        '200': {description: found}
                x-odd:
                  a~b: {description: tilde}
            """,
        },
    )
    document = load_document(path)
    responses = document.data["components"]["responses"]
    assert responses == {"200": {"description": "found"}, "a~b": {"description": "tilde"}}
    assert document.data["paths"]["/a"]["get"]["responses"]["201"] == {"$ref": "#/components/responses/a~0b"}
    assert document.warnings == ()


def test_local_refs_with_escapes_load_untouched_without_warnings() -> None:
    text = MINIMAL.replace("paths: {}", "paths:\n  /a/{id}: {get: {responses: {}}}") + (
        "x-link: {$ref: '#/paths/~1a~1%7Bid%7D/get'}\n"
    )
    document = load_document(text)
    assert document.data["x-link"] == {"$ref": "#/paths/~1a~1%7Bid%7D/get"}
    assert document.warnings == ()


def test_discriminator_mappings_to_files_become_component_refs(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "api.yaml": """
                openapi: 3.0.0
                info: {title: T, version: '1'}
                paths: {}
                components:
                  schemas:
                    Action:
                      oneOf: [{$ref: 'actions.yml#/assign'}]
                      discriminator:
                        propertyName: type
                        mapping: {assign: 'actions.yml#/assign', local: '#/components/schemas/Action'}
            """,
            "actions.yml": """
                base:
                  discriminator:
                    propertyName: type
                    mapping: {assign: '#/assign'}
                assign: {type: object, properties: {type: {type: string}}}
            """,
        },
    )
    action = load_document(path).data["components"]["schemas"]["Action"]
    assert action["oneOf"] == [{"$ref": "#/components/schemas/assign"}]
    assert action["discriminator"]["mapping"] == {
        "assign": "#/components/schemas/assign",
        "local": "#/components/schemas/Action",
    }


def test_json_documents_find_escaped_external_refs_and_report_refs_that_are_no_strings(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "api.json": """
                {"openapi": "3.0.0", "info": {"title": "T", "version": "1"},
                 "components": {"schemas": {
                    "A": {"$ref": "defs.json#\\/defs\\/a"},
                    "B": {"$ref": null},
                    "C": {"properties": {"$ref": {"type": "string"}}}}}}
            """,
            "defs.json": '{"defs": {"a": {"type": "integer"}}}',
        },
    )
    document = load_document(path)
    schemas = document.data["components"]["schemas"]
    assert schemas["A"] == {"type": "integer"}
    assert schemas["C"] == {"properties": {"$ref": {"type": "string"}}}
    assert [w.pointer for w in document.warnings] == ["#/components/schemas/B", "#/paths"]


def test_a_markdown_description_ref_is_inlined_as_text(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "api.yaml": "openapi: 3.1.0\ninfo: {title: T, version: '1', description: {$ref: intro.md}}\n",
            "intro.md": "# Welcome\n",
        },
    )
    assert load_document(path).data["info"]["description"] == "# Welcome\n"


def test_text_without_a_location_cannot_read_local_files_through_refs() -> None:
    text = MINIMAL.replace("paths: {}", "x-secret: {$ref: 'file:///etc/hostname'}")
    document = load_document(text)
    assert document.data["x-secret"] == {"$ref": "file:///etc/hostname"}
    assert [w.pointer for w in document.warnings if "would read a local file" in w.message] == ["#/x-secret"]


def test_relative_refs_in_text_without_location_are_warned_and_resolve_with_location(tmp_path: Path) -> None:
    write(tmp_path, {"ok.yaml": "description: fine\n"})
    text = MINIMAL.replace("paths: {}", "paths: {/a: {get: {responses: {'200': {$ref: ok.yaml}}}}}")
    without = load_document(text)
    assert "has no location" in messages(without)
    assert without.warnings[0].pointer == "#/paths/~1a/get/responses/200"
    located = load_document(text, location=str(tmp_path / "api.yaml"))
    assert located.warnings == ()
    assert located.data["components"]["responses"]["ok"] == {"description": "fine"}


# -- what refs may read ------------------------------------------------------------------------------------------

DESCRIBED = "openapi: 3.1.0\ninfo: {{title: T, version: '1', description: {{$ref: '{ref}'}}}}\n"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_ref_to_a_named_pipe_is_refused_at_once_instead_of_waiting_for_a_writer(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.md")
    path = write(tmp_path, {"api.yaml": DESCRIBED.format(ref="pipe.md")})
    document = load_document(path)
    assert document.data["info"]["description"] == {"$ref": "pipe.md"}
    assert "is not a regular file (a device, pipe or socket)" in messages(document)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_named_pipe_given_as_the_document_is_refused_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "api.yaml")
    with pytest.raises(DocumentError, match=r"is not a regular file \(a device, pipe or socket\)"):
        load_document(tmp_path / "api.yaml")


def test_a_ref_to_a_directory_is_warned_and_left(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    path = write(tmp_path, {"api.yaml": DESCRIBED.format(ref="models")})
    document = load_document(path)
    assert document.data["info"]["description"] == {"$ref": "models"}
    assert "Is a directory" in messages(document)


def test_a_file_larger_than_the_cap_is_refused_as_a_ref_and_as_the_document(tmp_path: Path) -> None:
    with (tmp_path / "huge.md").open("wb") as huge:
        huge.truncate(MAX_BYTES + 1)  # sparse: nothing is written, the file still reads as that many bytes
    path = write(tmp_path, {"api.yaml": DESCRIBED.format(ref="huge.md")})
    document = load_document(path)
    assert document.data["info"]["description"] == {"$ref": "huge.md"}
    assert "is larger than 64 MiB, the most one document file may hold" in messages(document)
    with pytest.raises(DocumentError, match=r"is larger than 64 MiB"):
        load_document(tmp_path / "huge.md")


def test_a_file_of_exactly_the_cap_is_read_whole(tmp_path: Path) -> None:
    text = MINIMAL.encode()
    (tmp_path / "api.yaml").write_bytes(text + b" " * (MAX_BYTES - len(text)))
    assert load_document(tmp_path / "api.yaml").openapi == "3.0.3"


def test_refs_read_files_in_the_documents_folder_and_below_and_refuse_the_rest(tmp_path: Path) -> None:
    (tmp_path / "secret.md").write_text("hunter2\n", encoding="utf-8")
    outside = tmp_path / "secret.md"
    path = write(
        tmp_path / "api",
        {
            "openapi.yaml": f"""
                openapi: 3.1.0
                info: {{title: T, version: '1', description: {{$ref: models/intro.md}}}}
                paths:
                  /a:
                    get:
                      summary: {{$ref: '../secret.md'}}
                      description: {{$ref: '{outside}'}}
                      x-uri: {{$ref: '{outside.as_uri()}'}}
                      x-deeper: {{$ref: 'models/deeper.yaml'}}
                      responses: {{'200': {{description: ok}}}}
            """,
            "models/intro.md": "Welcome\n",
            "models/deeper.yaml": "within: {$ref: '../models/intro.md'}\nescape: {$ref: '../../secret.md'}\n",
        },
    )
    document = load_document(path)
    assert document.data["info"]["description"] == "Welcome\n"
    operation = document.data["paths"]["/a"]["get"]
    assert operation["summary"] == {"$ref": "../secret.md"}
    assert operation["description"] == {"$ref": str(outside)}
    assert operation["x-uri"] == {"$ref": outside.as_uri()}
    assert operation["x-deeper"]["within"] == "Welcome\n"
    assert "hunter2" not in json.dumps(document.data)
    # The first ref to the file says why; the others refer to that warning.
    assert [w.pointer for w in document.warnings] == [
        "#/paths/~1a/get/summary",
        "#/paths/~1a/get/description",
        "#/paths/~1a/get/x-uri",
        "#/paths/~1a/get/x-deeper/escape",
    ]
    assert f"{str(outside)!r} is outside {str(tmp_path / 'api')!r}, the folder of the document" in messages(document)
    assert "a document's refs read only files in its folder and below it" in messages(document)


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="symbolic links")
def test_a_symbolic_link_in_the_folder_to_a_file_outside_it_is_refused(tmp_path: Path) -> None:
    (tmp_path / "secret.md").write_text("hunter2\n", encoding="utf-8")
    path = write(tmp_path / "api", {"openapi.yaml": DESCRIBED.format(ref="intro.md")})
    (tmp_path / "api" / "intro.md").symlink_to(tmp_path / "secret.md")
    document = load_document(path)
    assert document.data["info"]["description"] == {"$ref": "intro.md"}
    assert "is outside" in messages(document)


def test_text_with_a_location_reads_files_only_in_that_locations_folder(tmp_path: Path) -> None:
    write(tmp_path, {"secret.md": "hunter2\n", "api/intro.md": "Welcome\n"})
    located = str(tmp_path / "api" / "openapi.yaml")
    assert load_document(DESCRIBED.format(ref="intro.md"), location=located).data["info"]["description"] == "Welcome\n"
    document = load_document(DESCRIBED.format(ref="../secret.md"), location=located)
    assert document.data["info"]["description"] == {"$ref": "../secret.md"}
    assert "is outside" in messages(document)


def chained(tmp_path: Path, count: int) -> Path:
    """A document whose description refs part1.md, ..., whose last part is text: `count` files besides it."""
    files = {"api.yaml": DESCRIBED.format(ref="part1.yaml")}
    for index in range(1, count):
        files[f"part{index}.yaml"] = f"$ref: part{index + 1}.yaml\n"
    files[f"part{count}.yaml"] = "'the end'\n"
    return write(tmp_path, files)


def test_a_load_that_would_fetch_more_documents_than_its_limit_fails_saying_so(tmp_path: Path) -> None:
    path = chained(tmp_path, 5)
    assert load_document(path, limits=FetchLimits(documents=5)).data["info"]["description"] == "the end"
    with pytest.raises(
        FetchLimitError, match=r"would fetch more than 4 documents .* FetchLimits\(documents="
    ) as raised:
        load_document(path, limits=FetchLimits(documents=4))
    assert raised.value.location == str(path)


def test_a_load_past_its_deadline_fails_saying_so_and_fetches_nothing_more() -> None:
    text = MINIMAL.replace("paths: {}", "x-a: {$ref: a.yaml}\nx-b: {$ref: b.yaml}\nx-c: {$ref: c.yaml}")
    asked: list[str] = []

    def slow(uri: str, loading: Loading) -> Fetched:
        """Answers each ref only once the load's deadline has passed, as a slow server would."""
        asked.append(uri)
        assert loading.root == "https://api.example.com/openapi.yaml"
        if uri != loading.root:
            time.sleep(max(0.0, loading.deadline - time.monotonic()) + 0.01)
        return Fetched(content=text.encode() if uri == loading.root else b"{}")

    with pytest.raises(FetchLimitError, match=r"took longer than 0.25 s, .* FetchLimits\(seconds="):
        load_document("https://api.example.com/openapi.yaml", fetch=slow, limits=FetchLimits(seconds=0.25))
    assert asked == ["https://api.example.com/openapi.yaml", "https://api.example.com/a.yaml"]


@pytest.mark.parametrize("limits", [{"seconds": 0}, {"seconds": -1.0}, {"documents": 0}, {"documents": 2.5}])
def test_fetch_limits_refuse_values_that_allow_nothing(limits: dict[str, Any]) -> None:
    with pytest.raises(CatalogConfigError, match=r"FetchLimits\.(seconds|documents) must be"):
        FetchLimits(**limits)


# -- OpenAPI 3.1 $id -------------------------------------------------------------------------------------------


def test_id_relative_refs_are_rewritten_to_local_pointers() -> None:
    text = """
        openapi: 3.1.0
        info: {title: T, version: '1'}
        components:
          schemas:
            Pet:
              properties:
                details: {$ref: /schemas/details}
                detailsId: {$ref: '/schemas/details#details_id'}
                nested: {$ref: '/schemas/details#/properties/id'}
            Details:
              $id: /schemas/details
              properties:
                id: {type: integer, $anchor: details_id}
                self: {$ref: '#details_id'}
    """
    document = load_document(dedent(text))
    schemas = document.data["components"]["schemas"]
    assert schemas["Pet"]["properties"] == {
        "details": {"$ref": "#/components/schemas/Details"},
        "detailsId": {"$ref": "#/components/schemas/Details/properties/id"},
        "nested": {"$ref": "#/components/schemas/Details/properties/id"},
    }
    assert schemas["Details"]["properties"]["self"] == {"$ref": "#/components/schemas/Details/properties/id"}
    assert document.warnings == ()


def test_petstore_31_id_ref_resolves_and_its_empty_ref_is_explained() -> None:
    document = load_document(CORPUS / "swagger-petstore-v31.yaml")
    properties = document.data["components"]["schemas"]["Pet"]["properties"]
    assert properties["petDetailsId"] == {"$ref": "#/components/schemas/PetDetails/properties/id"}
    assert [w.pointer for w in document.warnings] == ["#/components/schemas/Pet/properties/petDetails"]
    assert "unquoted # starts a comment" in document.warnings[0].message


# -- broken refs -------------------------------------------------------------------------------------------------


def test_missing_files_and_pointers_are_warned_where_they_occur_and_left(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "api.yaml": """
                openapi: 3.0.0
                info: {title: T, version: '1'}
                paths:
                  /a:
                    get:
                      responses:
                        '200': {$ref: 'gone.yaml'}
                        '201': {$ref: 'here.yaml#/nothing'}
                        '202': {$ref: '#/components/responses/Nothing'}
                        '203': {$ref: 'here.yaml#/bad'}
            """,
            "here.yaml": "bad: {description: x, headers: {X: {$ref: 'gone.yaml'}}}\n",
        },
    )
    document = load_document(path)
    responses = document.data["paths"]["/a"]["get"]["responses"]
    assert responses["200"] == {"$ref": "gone.yaml"}
    assert responses["201"] == {"$ref": "here.yaml#/nothing"}
    assert responses["202"] == {"$ref": "#/components/responses/Nothing"}
    assert responses["203"] == {"$ref": "#/components/responses/bad"}
    by_pointer = {w.pointer: w.message for w in document.warnings}
    assert "does not exist" in by_pointer["#/paths/~1a/get/responses/200"]
    assert "points at nothing" in by_pointer["#/paths/~1a/get/responses/201"]
    assert "points at nothing" in by_pointer["#/paths/~1a/get/responses/202"]
    assert by_pointer["#/paths/~1a/get/responses/203/headers/X"].startswith("in here.yaml#/bad/headers/X: ")


def test_reference_cycles_are_warned_and_left_instead_of_hanging(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "api.yaml": """
                openapi: 3.0.0
                info: {title: T, version: '1'}
                paths: {}
                components:
                  schemas:
                    A: {$ref: '#/components/schemas/B'}
                    B: {$ref: '#/components/schemas/A'}
                    C: {$ref: 'c.yaml'}
            """,
            "c.yaml": "$ref: 'd.yaml'\n",
            "d.yaml": "$ref: 'c.yaml'\n",
        },
    )
    document = load_document(path)
    schemas = document.data["components"]["schemas"]
    assert schemas["A"] == {"$ref": "#/components/schemas/B"}
    assert schemas["C"] == {"$ref": "c.yaml"}
    cycles = [w.pointer for w in document.warnings if "cycle" in w.message]
    assert cycles == ["#/components/schemas/C", "#/components/schemas/A", "#/components/schemas/B"]


def chain_document(links: int) -> str:
    """A document whose schemas S0 -> S1 -> ... -> S<links> are a chain of local refs ending in a string."""
    schemas = {f"S{i}": {"$ref": f"#/components/schemas/S{i + 1}"} for i in range(links)}
    schemas[f"S{links}"] = {"type": "string"}
    info = {"title": "T", "version": "1"}
    return json.dumps({"openapi": "3.0.3", "info": info, "paths": {}, "components": {"schemas": schemas}})


def test_a_chain_of_64_local_refs_is_followed_and_a_longer_one_is_left_with_a_warning_naming_it() -> None:
    assert load_document(chain_document(64)).warnings == ()
    document = load_document(chain_document(66))
    assert [(w.pointer, w.message) for w in document.warnings] == [
        (
            f"#/components/schemas/S{i}",
            f"$ref '#/components/schemas/S{i + 1}' starts a chain of more than 64 refs (its 65th target is "
            f"<document>#/components/schemas/S{i + 65}); left as it is: point it at the chain's end",
        )
        for i in (0, 1)
    ]
    assert document.data["components"]["schemas"]["S0"] == {"$ref": "#/components/schemas/S1"}


def test_recursive_schemas_across_files_bundle_finitely(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "api.yaml": """
                openapi: 3.0.0
                info: {title: T, version: '1'}
                paths: {}
                x-root: {$ref: 'node.yaml'}
                components:
                  schemas:
                    Tree: {type: object, properties: {root: {$ref: 'node.yaml'}}}
            """,
            "node.yaml": "type: object\nproperties:\n  children: {type: array, items: {$ref: 'list.yaml#/item'}}\n",
            "list.yaml": "item: {$ref: 'node.yaml'}\n",
        },
    )
    document = load_document(path)
    schemas = document.data["components"]["schemas"]
    assert schemas["node"]["properties"]["children"]["items"] == {"$ref": "#/components/schemas/node"}
    assert schemas["Tree"]["properties"]["root"] == {"$ref": "#/components/schemas/node"}
    assert document.warnings == ()


def test_a_markdown_ref_inside_an_extension_is_left_with_a_warning() -> None:
    document = load_document(CORPUS / "redocly-train-travel.yaml")
    assert document.data["x-topics"][0]["content"] == {"$ref": "./docs/getting-started.md"}
    assert [w.pointer for w in document.warnings] == ["#/x-topics/0/content"]


# -- structure ---------------------------------------------------------------------------------------------------


def test_structural_problems_are_warnings_and_the_data_is_kept() -> None:
    text = """
        openapi: 3.0.0
        info: {title: T, version: '1'}
        paths:
          pets: {get: {responses: {}}}
          /owners: {get: [not, a, mapping], parameters: {a: 1}}
          /shops: just text
        components: []
    """
    document = load_document(dedent(text))
    assert document.data["paths"]["/owners"]["get"] == ["not", "a", "mapping"]
    assert {w.pointer for w in document.warnings} == {
        "#/paths/pets",
        "#/paths/~1owners/get",
        "#/paths/~1owners/parameters",
        "#/paths/~1shops",
        "#/components",
    }


def test_a_30_document_without_paths_warns_but_a_31_one_does_not() -> None:
    assert "no `paths`" in messages(load_document("openapi: 3.0.0\ninfo: {title: T, version: '1'}\n"))
    assert load_document("openapi: 3.1.0\ninfo: {title: T, version: '1'}\nwebhooks: {}\n").warnings == ()


# -- the corpus --------------------------------------------------------------------------------------------------


def corpus_documents() -> list[Any]:
    files = sorted(p for p in CORPUS.iterdir() if p.suffix in (".json", ".yaml"))
    return [pytest.param(p, id=p.name, marks=[pytest.mark.slow] if p.stat().st_size > BIG else []) for p in files]


@pytest.mark.parametrize("path", corpus_documents())
def test_every_corpus_document_loads_with_local_refs(path: Path) -> None:
    document = load_document(path)
    assert document.openapi.startswith(("3.0", "3.1"))
    nonlocal_refs = set(re.findall(r'"\$ref": "([^#"][^"]*)"', json.dumps(document.data)))
    assert all(any(repr(ref) in w.message for w in document.warnings) for ref in nonlocal_refs)


def comparable(node: Any) -> Any:
    """A tree for comparing bundles: example values dropped (data), numbers as floats (JS rounds 2**64-1)."""
    if isinstance(node, dict):
        return {k: comparable(v) for k, v in node.items() if k not in ("example", "examples")}
    if isinstance(node, list):
        return [comparable(v) for v in node]
    if isinstance(node, int | float) and not isinstance(node, bool):
        return float(node)
    return node


@pytest.mark.slow
def test_digitalocean_multifile_tree_loads_the_same_as_its_redocly_bundle() -> None:
    multifile = load_document(DO_MULTIFILE)
    bundled = load_document(DO_BUNDLED)
    assert multifile.warnings == bundled.warnings == ()
    mine, theirs = multifile.data, bundled.data
    assert mine.keys() == theirs.keys()
    for section in theirs["components"]:
        assert list(mine["components"][section]) == list(theirs["components"][section]), section
    assert mine["paths"] == theirs["paths"]
    assert {k: v for k, v in mine.items() if k != "components"} == {
        k: v for k, v in theirs.items() if k != "components"
    }
    assert comparable(mine["components"]) == comparable(theirs["components"])
    assert all(ref.startswith("#/") for ref in refs_in(mine))


@pytest.mark.parametrize("offset", [65_533, 65_534, 65_535, 65_536, 65_537])
def test_non_ascii_text_anywhere_in_a_big_json_document_is_read_as_written(tmp_path: Path, offset: int) -> None:
    # JSON is parsed from ASCII-escaped chunks of 64 KiB; the title's characters straddle the first chunk's end.
    title = "\u00dcn\u00efcode API \U0001f600 \u2014 \u00df"
    head = '{"openapi": "3.0.3", "paths": {}, "info": {"version": "1", "x-padding": "'
    middle = '", "title": "'
    padding = "p" * (offset - len(head) - len(middle))
    text = f'{head}{padding}{middle}{title}"}}}}'
    assert text.encode().index(title.encode()) == offset
    path = tmp_path / "big.json"
    path.write_bytes(text.encode())
    assert load_document(str(path)).data["info"]["title"] == title
