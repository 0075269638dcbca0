"""The document's own validation errors, by openapi-spec-validator, each at its JSON pointer (`catalog check --strict`).

The gateway never requires a valid document (many real ones are not); this is for operators who want to know.
openapi-spec-validator is imported on use only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from catalog._pointer import escape_token

__all__ = ["SpecProblem", "spec_problems"]


@dataclass(frozen=True, kw_only=True)
class SpecProblem:
    """One validation error: where (a JSON pointer into the document, '' for the root) and what."""

    pointer: str
    message: str


def spec_problems(document: Mapping[str, Any], *, limit: int = 1000) -> list[SpecProblem]:
    """Up to `limit` validation errors of an OpenAPI 3.0/3.1 `document` (empty when it is valid).

    When the validator itself cannot finish (a `$ref` it cannot resolve), that is the last problem listed.
    """
    from jsonschema_path import SchemaPath
    from openapi_spec_validator import OpenAPIV30SpecValidator, OpenAPIV31SpecValidator

    version = str(document.get("openapi", ""))
    validator_class = OpenAPIV30SpecValidator if version.startswith("3.0") else OpenAPIV31SpecValidator
    problems: list[SpecProblem] = []
    try:
        for error in validator_class(SchemaPath.from_dict(dict(document))).iter_errors():
            pointer = "".join(f"/{escape_token(str(part))}" for part in error.absolute_path)
            problems.append(SpecProblem(pointer=pointer, message=error.message))
            if len(problems) >= limit:
                break
    except Exception as error:  # the validator's own failure is one more thing the operator should know
        problems.append(
            SpecProblem(pointer="", message=f"the validator could not go on: {type(error).__name__}: {error}")
        )
    return problems
