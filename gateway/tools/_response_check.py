"""Check a function's 2xx JSON answer against the document with openapi-core before it becomes structured content.

Real APIs do not always answer what their document says; a client validates `structuredContent` against the
tool's `outputSchema` and fails the call when it does not match. The first answer of each kind (function,
status, media type) is checked whole; later ones only when they fail the output schema (`audited`).
openapi-core (the `strict` extra) is imported on the first check, never at start-up (importing it takes seconds),
and each function gets its own validator on its first call: a document of one path item and the whole
document's components, so nothing scans a big document's paths.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Mapping
from typing import Any

from catalog.model import Function
from gateway.extras import announce
from gateway.rest.request import HttpResponse
from gateway.validators import linear

__all__ = ["ResponseCheck"]

logger = logging.getLogger("gateway.tools.results")

#: Kinds of answer remembered as conforming (an API answering ever new media types cannot grow the set for ever).
_MAX_CONFORMED = 10_000
_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


class ResponseCheck:
    """Whether 2xx answers match the document; warns the operator once per function whose answers do not.

    On where the `strict` extra (openapi-core) is installed; without it every answer passes, and start-up says so.
    """

    def __init__(self, document: Mapping[str, Any] | None) -> None:
        on = document is not None and announce("strict", "checking answers against the document")
        self._document = document if on else None
        self._validators: dict[str, Any] = {}
        self._warned: set[str] = set()
        #: (function, status, media type) of answers that conformed: later ones are held to the output schema.
        self._conformed: set[tuple[str, int, str]] = set()
        self._lock = threading.Lock()

    def audited(self, function: Function, response: HttpResponse) -> bool:
        """True once an answer of `function` with `response`'s status and media type conformed to the document.

        openapi-core takes ~0.9 ms an answer on the demo (2.4 times the REST call itself), so it checks the first
        answer of each kind; the answers after it are held to the tool's output schema (the document's response
        schema as JSON Schema, what clients validate), and one that fails it is checked here again.
        """
        return (function.name, response.status, response.content_type) in self._conformed

    def conforms(self, function: Function, response: HttpResponse) -> bool:
        """True when the document describes `response` (status, media type and body) for `function`.

        Blocking (the first call imports openapi-core): run it in a worker thread.
        """
        if self._document is None or not function.method or function.composite is not None:
            return True
        try:
            problem = self._problem(function, response)
        except Exception:
            logger.exception("checking %s's answer against the document failed; it is sent as text", function.name)
            return False
        if problem is None:
            if len(self._conformed) < _MAX_CONFORMED:
                with self._lock:
                    self._conformed.add((function.name, response.status, response.content_type))
            return True
        with self._lock:
            first = function.name not in self._warned
            self._warned.add(function.name)
        if first:
            logger.warning(
                "%s answered what its document does not describe (%s %s: %s); the document is wrong for this "
                "function, so its answers go to agents as text, not structured content. Fix the response schema "
                "of operation %s in the document.",
                function.name,
                function.method,
                function.path,
                problem,
                function.operation_id or f"{function.method} {function.path}",
            )
        return False

    def _problem(self, function: Function, response: HttpResponse) -> str | None:
        from openapi_core.exceptions import OpenAPIError
        from openapi_core.testing import MockRequest, MockResponse

        api = self._validator(function)
        try:
            api.validate_response(
                MockRequest("http://localhost", function.method.lower(), function.path),
                MockResponse(response.body, status_code=response.status, content_type=response.content_type),
            )
        except OpenAPIError as error:
            details = [str(getattr(item, "message", item)) for item in getattr(error.__cause__, "schema_errors", ())]
            said = "; ".join(details[:3]) if details else str(error)
            return said[:500]
        return None

    def _validator(self, function: Function) -> Any:
        with self._lock:
            found = self._validators.get(function.name)
        if found is not None:
            return found
        from jsonschema_path import SchemaPath
        from openapi_core import OpenAPI
        from openapi_core.configurations import Config
        from openapi_core.validation.response.validators import V30ResponseDataValidator, V31ResponseDataValidator

        document = self._document or {}
        item = document["paths"][function.path]
        method = next(m for m in _METHODS if m == function.method.lower())
        single: dict[str, Any] = {key: value for key, value in item.items() if key not in _METHODS}
        single.pop("servers", None)
        single[method] = {key: value for key, value in item[method].items() if key != "servers"}
        version = str(document.get("openapi", "3.0.0"))
        # One path item, the whole components (shared, not copied), and a server the check's request matches.
        small = {
            "openapi": version,
            "info": document.get("info", {"title": "", "version": ""}),
            "servers": [{"url": "http://localhost"}],
            "paths": {function.path: single},
            "components": document.get("components", {}),
        }
        data_only = _linear_data(V30ResponseDataValidator if version.startswith("3.0") else V31ResponseDataValidator)
        # The document is not validated here (`catalog check --strict` does that): real ones often fail it.
        config = Config(spec_validator_cls=None, response_validator_cls=data_only)  # type: ignore[arg-type]
        api = OpenAPI(SchemaPath.from_dict(small), config=config)
        with self._lock:
            self._validators[function.name] = api
        return api


@functools.cache
def _linear_data(data_only: Any) -> Any:
    """openapi-core's response data validator `data_only`, its schema validators matching the document's patterns
    in linear time (`gateway.validators.linear`) rather than with Python's backtracking `re`."""
    from openapi_core.validation.schemas.factories import DialectSchemaValidatorsFactory, SchemaValidatorsFactory

    factory = data_only.schema_validators_factory
    if isinstance(factory, DialectSchemaValidatorsFactory):

        class _Dialects(DialectSchemaValidatorsFactory):
            def get_validator_cls(self, spec: Any, schema: Any) -> Any:
                return linear(super().get_validator_cls(spec, schema))

        linear_factory: SchemaValidatorsFactory = _Dialects(
            factory.schema_validator_cls, factory.default_jsonschema_dialect_id, factory.format_checker
        )
    else:
        linear_factory = SchemaValidatorsFactory(linear(factory.schema_validator_cls), factory.format_checker)
    return type(f"Linear{data_only.__name__}", (data_only,), {"schema_validators_factory": linear_factory})
