"""The whole catalog as indented JSON in a stable order: what a CI check commits and diffs."""

from __future__ import annotations

import json
from typing import Any

from catalog.model import Arg, Catalog, Function, Term
from catalog.render import function_line, return_type, signature, type_of
from catalog.schemas import MAX_SCHEMA_DEPTH, TOO_DEEP

__all__ = ["SNAPSHOT_FORMAT", "catalog_snapshot", "dump_snapshot"]

#: Bumped when the layout of the snapshot changes, so a diff can say "format changed" instead of "API changed".
SNAPSHOT_FORMAT = 1


def catalog_snapshot(catalog: Catalog) -> dict[str, Any]:
    """The agent-facing catalog as plain JSON data; equal catalogs give equal data."""
    return {
        "format": SNAPSHOT_FORMAT,
        "title": catalog.title,
        "version": catalog.version,
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
    if function.request_content_types:
        data["request_content_types"] = list(function.request_content_types)
    if function.response_content_types:
        data["response_content_types"] = list(function.response_content_types)
    return data


def _arg(arg: Arg) -> dict[str, Any]:
    return {
        "name": arg.name,
        "in": arg.location,
        "required": arg.required,
        "type": type_of(arg.schema),
        "description": arg.description,
        "schema": _sorted(arg.schema),
    }


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
