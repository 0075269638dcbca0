"""catalog.swagger2 against the reference converter, swagger2openapi (`--patch`), on real and hand-written documents.

Both conversions are reduced to what the catalog reads (operations, parameters with their schemas and styles,
request body media types and schemas, response schemas, component schemas, security schemes, servers) and must
agree there. Known harmless differences are normalised away, each for the reason given in `_REFERENCE_QUIRKS`.
`scripts/install-node-tools` installs swagger2openapi under `.tools/`; without it these tests skip (not in CI).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
import yaml

from catalog.swagger2 import convert_swagger2
from tests.corpus import CORPUS

REPO = Path(__file__).resolve().parents[2]
SWAGGER2OPENAPI = REPO / ".tools" / "bin" / "swagger2openapi"
FIXTURES = Path(__file__).parent / "swagger2"
DOCUMENTS = [
    CORPUS / "oai-uber-swagger2.json",
    CORPUS / "slack-web-swagger2.json",
    FIXTURES / "shop.yaml",
    FIXTURES / "forms.yaml",
    FIXTURES / "security.yaml",
]
_METHODS = ("get", "put", "post", "delete", "options", "head", "patch")

pytestmark = pytest.mark.skipif(
    not SWAGGER2OPENAPI.exists() and not os.environ.get("CI"),
    reason=".tools/ has no swagger2openapi: run scripts/install-node-tools",
)

#: What swagger2openapi does differently, harmlessly for the catalog (applied to its output only).
Quirk = Callable[[dict[str, Any], dict[str, Any]], None]
_REFERENCE_QUIRKS: dict[str, Quirk] = {}


def _quirk(
    function: Callable[[dict[str, Any], dict[str, Any]], None],
) -> Callable[[dict[str, Any], dict[str, Any]], None]:
    _REFERENCE_QUIRKS[function.__name__] = function
    return function


@_quirk
def any_media_type_for_responses_without_produces(summary: dict[str, Any], source: dict[str, Any]) -> None:
    """With no `produces` anywhere it lists a response schema under `*/*`; Swagger 2.0 names no default and we
    follow the issue's choice of application/json, which is what such APIs send and what the catalog decodes."""
    for operation in summary["operations"].values():
        for content in operation["responses"].values():
            if "*/*" in content:
                content["application/json"] = content.pop("*/*")


@_quirk
def body_required_only_from_the_first_form_field(summary: dict[str, Any], source: dict[str, Any]) -> None:
    """It sets a form body's `required` from the first formData field only (later ones merge their schema, not
    the flag); we require the body when any field is required, as the fields' own `required` list says."""
    for operation in summary["operations"].values():
        body = operation["body"]
        if body and any(schema.get("required") for schema in body["content"].values()):
            body["required"] = True


@_quirk
def urlencoded_files_when_nothing_is_consumed(summary: dict[str, Any], source: dict[str, Any]) -> None:
    """A form with a `file` field and no `consumes` goes under application/x-www-form-urlencoded there; a file
    can only be sent as multipart/form-data (Swagger 2.0 §4.3.6 names the two), so we choose multipart."""
    for name, operation in summary["operations"].items():
        method, route = name.split(" ", 1)
        written = source["paths"][route][method.lower()]
        content = (operation["body"] or {}).get("content", {})
        form = content.get("application/x-www-form-urlencoded", {})
        binary = any(part.get("format") == "binary" for part in form.get("properties", {}).values())
        if binary and not written.get("consumes", source.get("consumes")):
            content["multipart/form-data"] = content.pop("application/x-www-form-urlencoded")


def reference(path: Path) -> dict[str, Any]:
    run = subprocess.run(
        [str(SWAGGER2OPENAPI), "--patch", str(path)], capture_output=True, text=True, check=False, timeout=120
    )
    assert run.returncode == 0, run.stderr[-2000:]
    converted: dict[str, Any] = json.loads(run.stdout)
    return converted


def ours(path: Path) -> dict[str, Any]:
    return convert_swagger2(yaml.safe_load(path.read_text(encoding="utf-8"))).data


def summary(document: dict[str, Any]) -> dict[str, Any]:
    """What the catalog reads of an OpenAPI 3.0 document, refs to parameters, bodies and responses inlined and refs
    to schemas kept by name (both converters keep the Swagger 2.0 definition names)."""

    def resolve(node: Any) -> Any:
        while isinstance(node, dict) and isinstance(node.get("$ref"), str):
            target: Any = document
            for token in node["$ref"][2:].split("/"):
                target = target[unquote(token).replace("~1", "/").replace("~0", "~")]
            node = target
        return node

    operations: dict[str, Any] = {}
    for route, item in document.get("paths", {}).items():
        shared = {(p["name"], p["in"]): p for p in map(resolve, item.get("parameters", []))}
        for method in _METHODS:
            if method not in item:
                continue
            operation = item[method]
            parameters = dict(shared) | {(p["name"], p["in"]): p for p in map(resolve, operation.get("parameters", []))}
            body = resolve(operation.get("requestBody"))
            operations[f"{method.upper()} {route}"] = {
                "parameters": {
                    f"{place} {name}": {
                        "required": parameter.get("required") is True,
                        "schema": schema(parameter.get("schema")),
                        "style": parameter.get("style", {"query": "form", "header": "simple", "path": "simple"}[place]),
                        "explode": parameter.get("explode", place == "query" and "style" not in parameter),
                        "description": parameter.get("description"),
                        "extensions": extensions(parameter),
                    }
                    for (name, place), parameter in parameters.items()
                },
                "body": body
                and {
                    "required": body.get("required") is True,
                    "description": body.get("description"),
                    "content": {media: schema(value.get("schema")) for media, value in body["content"].items()},
                    "extensions": extensions(body),
                },
                "responses": {
                    str(code): {
                        media: schema(value.get("schema"))
                        for media, value in resolve(response).get("content", {}).items()
                        if "schema" in value
                    }
                    for code, response in operation.get("responses", {}).items()
                },
                "headers": {
                    str(code): {name: schema(resolve(header).get("schema")) for name, header in headers.items()}
                    for code, response in operation.get("responses", {}).items()
                    if (headers := resolve(response).get("headers"))
                },
                "security": operation.get("security"),
                "extensions": extensions(operation),
            }
    components = document.get("components", {})
    return {
        "servers": [server["url"] for server in document.get("servers", [])],
        "security": document.get("security"),
        "operations": operations,
        "schemas": {name: schema(value) for name, value in components.get("schemas", {}).items()},
        "securitySchemes": components.get("securitySchemes", {}),
        "extensions": extensions(document),
    }


def schema(node: Any) -> Any:
    """A schema with its examples dropped (both keep them, in different places)."""
    if isinstance(node, dict):
        return {key: schema(value) for key, value in node.items() if key not in ("example", "examples")}
    if isinstance(node, list):
        return [schema(item) for item in node]
    return node


def extensions(node: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in node.items() if key.startswith("x-")}


@pytest.mark.parametrize("path", DOCUMENTS, ids=[path.name for path in DOCUMENTS])
def test_the_conversion_agrees_with_swagger2openapi_on_what_the_catalog_reads(path: Path) -> None:
    source = yaml.safe_load(path.read_text(encoding="utf-8"))
    expected = summary(reference(path))
    for quirk in _REFERENCE_QUIRKS.values():
        quirk(expected, source)
    got = summary(ours(path))
    assert got["operations"].keys() == expected["operations"].keys()
    for name, operation in expected["operations"].items():
        assert got["operations"][name] == operation, name
    assert got == expected
