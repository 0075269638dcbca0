"""What a catalog snapshot records of where calls go and who may make them: the servers, each function's own
server and security, and each argument's style where it is not its location's default."""

from __future__ import annotations

import json
from typing import Any

from catalog.builder import build_catalog
from catalog.loading import load_document
from catalog.snapshot import SNAPSHOT_FORMAT, catalog_snapshot, dump_snapshot


def snapshot_of(document: dict[str, Any], location: str | None = None) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        dump_snapshot(catalog_snapshot(build_catalog(load_document(document, location=location))))
    )
    return data


def document(**fields: Any) -> dict[str, Any]:
    operation: dict[str, Any] = {
        "operationId": "listPets",
        "tags": ["pets"],
        "responses": {"200": {"description": "ok"}},
    }
    operation.update(fields.pop("operation", {}))
    return {
        "openapi": "3.1.0",
        "info": {"title": "T", "version": "1"},
        "paths": {"/pets": {"get": operation}},
        **fields,
    }


def only_function(snapshot: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = snapshot["modules"][0]["functions"][0]
    return found


def test_the_servers_are_recorded_as_resolved_without_credentials_or_query() -> None:
    snapshot = snapshot_of(
        document(
            servers=[
                {"url": "https://{region}.api.example.com/v1", "variables": {"region": {"default": "eu"}}},
                {"url": "https://user:secret@mirror.example.com/v1?key=k#top"},
                {"url": "/v2"},
                {"url": "//cdn.example.net/v1"},
            ]
        ),
        location="https://docs.example.org/openapi.json",
    )
    assert snapshot["format"] == SNAPSHOT_FORMAT == 2
    assert snapshot["servers"] == [
        "https://eu.api.example.com/v1",
        "https://mirror.example.com/v1",
        "https://docs.example.org/v2",
        "https://cdn.example.net/v1",
    ]
    assert "secret" not in json.dumps(snapshot)


def test_a_function_with_a_server_of_its_own_records_it_and_others_do_not() -> None:
    own = snapshot_of(
        document(
            servers=[{"url": "https://api.example.com"}],
            operation={"servers": [{"url": "https://uploads.example.com"}]},
        )
    )
    assert only_function(own)["server"] == "https://uploads.example.com"
    shared = snapshot_of(
        document(
            servers=[{"url": "https://api.example.com"}], operation={"servers": [{"url": "https://api.example.com"}]}
        )
    )
    assert "server" not in only_function(shared)


def test_each_function_records_the_security_it_requires_with_schemes_and_scopes_sorted() -> None:
    schemes = {
        "oauth": {"type": "oauth2", "flows": {"clientCredentials": {"tokenUrl": "https://x/token", "scopes": {}}}},
        "key": {"type": "apiKey", "in": "header", "name": "X-Key"},
    }
    snapshot = snapshot_of(
        document(
            components={"securitySchemes": schemes},
            security=[{"key": []}],
            operation={"security": [{"oauth": ["write", "admin"], "key": []}, {"key": []}]},
        )
    )
    assert only_function(snapshot)["security"] == [{"key": []}, {"key": [], "oauth": ["admin", "write"]}]
    inherited = snapshot_of(document(components={"securitySchemes": schemes}, security=[{"key": []}]))
    assert only_function(inherited)["security"] == [{"key": []}]
    public = snapshot_of(
        document(components={"securitySchemes": schemes}, security=[{"key": []}], operation={"security": []})
    )
    assert "security" not in only_function(public)


def test_an_argument_records_its_style_only_where_it_is_not_its_locations_default() -> None:
    parameters = [
        {"name": "plain", "in": "query", "schema": {"type": "array", "items": {"type": "string"}}},
        {"name": "spelled", "in": "query", "style": "form", "explode": True, "schema": {"type": "string"}},
        {"name": "filter", "in": "query", "style": "deepObject", "explode": True, "schema": {"type": "object"}},
        {"name": "tags", "in": "query", "explode": False, "schema": {"type": "array", "items": {"type": "string"}}},
        {"name": "X-Ids", "in": "header", "explode": True, "schema": {"type": "array", "items": {"type": "string"}}},
    ]
    args = {
        arg["name"]: arg for arg in only_function(snapshot_of(document(operation={"parameters": parameters})))["args"]
    }
    assert "style" not in args["plain"] and "explode" not in args["plain"]
    assert "style" not in args["spelled"]
    assert (args["filter"]["style"], args["filter"]["explode"]) == ("deepObject", True)
    assert (args["tags"]["style"], args["tags"]["explode"]) == ("form", False)
    assert (args["X-Ids"]["style"], args["X-Ids"]["explode"]) == ("simple", True)
