"""The whole catalog as indented JSON in a stable order: what a CI check commits and diffs."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from catalog.model import Arg, Catalog, Function, Term
from catalog.render import function_line, return_type, signature, type_of
from catalog.schemas import MAX_SCHEMA_DEPTH, TOO_DEEP

__all__ = ["SNAPSHOT_FORMAT", "catalog_snapshot", "dump_snapshot", "server_url"]

#: Bumped when the layout of the snapshot changes, so a diff can say "format changed" instead of "API changed".
#: 2 added where calls go and who may make them: the servers, each function's own server and security, and each
#: argument's style and explode when they are not its location's defaults.
SNAPSHOT_FORMAT = 2


def catalog_snapshot(catalog: Catalog) -> dict[str, Any]:
    """The agent-facing catalog as plain JSON data; equal catalogs give equal data."""
    return {
        "format": SNAPSHOT_FORMAT,
        "title": catalog.title,
        "version": catalog.version,
        "servers": [server_url(url) for url in catalog.servers],
        "modules": [
            {
                "name": module.name,
                "description": module.description,
                "functions": [_function(function) for function in module.functions],
            }
            for module in catalog.modules
        ],
        "terms": [_term(term) for term in catalog.terms],
    }


def dump_snapshot(data: dict[str, Any]) -> str:
    """Serialize snapshot data the one way snapshots are written: sorted keys where order is not meaning, 2 spaces."""
    return json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def _function(function: Function) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": function.name,
        "line": function_line(function),
        "signature": signature(function),
        "summary": function.summary,
        "description": function.description,
        "method": function.method,
        "path": function.path,
        "args": [_arg(arg) for arg in function.args],
        "returns": return_type(function),
        "read_only": function.read_only,
        "destructive": function.destructive,
        "deprecated": function.deprecated,
        "composite": function.is_composite,
    }
    if function.server is not None:
        data["server"] = server_url(function.server)
    if function.security:
        data["security"] = [
            {scheme: list(scopes) for scheme, scopes in requirement} for requirement in function.security
        ]
    if function.request_content_types:
        data["request_content_types"] = list(function.request_content_types)
    if function.response_content_types:
        data["response_content_types"] = list(function.response_content_types)
    return data


def server_url(url: str) -> str:
    """A server URL as a snapshot records it: as the catalog resolved it, without user name, password, query or
    fragment (calls are not sent with the query; credentials are never written down)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


def _arg(arg: Arg) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": arg.name,
        "in": arg.location,
        "required": arg.required,
        "type": type_of(arg.schema),
        "description": arg.description,
        "schema": _sorted(arg.schema),
    }
    if not arg.default_serialization:
        # Only where it is not the location's default, so documents that rely on the defaults say nothing.
        data["style"] = arg.style_used
        data["explode"] = arg.exploded
    return data


def _term(term: Term) -> dict[str, Any]:
    data: dict[str, Any] = {"name": term.name, "description": term.description}
    if term.aliases:
        data["aliases"] = list(term.aliases)
    if term.schema is not None:
        data["schema"] = _sorted(term.schema)
    data["accepted_by"] = list(term.accepted_by)
    data["returned_by"] = list(term.returned_by)
    return data


def _sorted(value: Any, depth: int = 0) -> Any:
    """Schemas with keys sorted, so the same schema written in another key order snapshots the same.

    Values nested more than twice MAX_SCHEMA_DEPTH levels (a schema level is two: `properties`, then the
    property) are cut, as the catalog cuts the schemas it converts.
    """
    if depth > 2 * MAX_SCHEMA_DEPTH and isinstance(value, dict | list):
        return dict(TOO_DEEP)
    if isinstance(value, dict):
        return {key: _sorted(value[key], depth + 1) for key in sorted(value, key=str)}
    if isinstance(value, list):
        return [_sorted(item, depth + 1) for item in value]
    return value
