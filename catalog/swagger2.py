"""Convert a Swagger 2.0 (OpenAPI 2) document into an OpenAPI 3.0.3 one, in process, the way `swagger2openapi` does.

`convert_swagger2` is pure: it reads a parsed document and returns a new tree (the input is never changed), plus
notes on what could not be carried over losslessly. What moves where:

- `host`, `basePath`, `schemes` become `servers` (`//host/base` when no scheme is given: the document's own);
- `definitions`, `parameters`, `responses`, `securityDefinitions` become `components.schemas`, `.parameters`,
  `.responses`, `.securitySchemes`; shared `body` parameters become `components.requestBodies`, and shared
  `formData` parameters are merged into each form body that lists them;
- per operation, the `body` parameter becomes `requestBody` with one content entry per `consumes` type
  (application/json when none), the `formData` parameters one object schema under `multipart/form-data` (when
  `consumes` names it, or a `file` parameter needs it) or `application/x-www-form-urlencoded`; each other
  parameter's `type`, `format`, `items`, `enum` and bounds become its `schema`, and `collectionFormat` its
  `style`/`explode`; a response `schema` becomes one content entry per `produces` type (application/json when none);
- in schemas `x-nullable` becomes `nullable`, `type: file` becomes a binary string, a string `discriminator` an
  object, and (as swagger2openapi `--patch` does) a list `type` or `items` becomes `oneOf` / `anyOf`;
- every local `$ref` is rewritten to the new place; `x-` extensions are kept where they were.

Refs to other files are kept as written: what they point at is not converted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import unquote

from catalog._pointer import join_pointer

__all__ = ["OPENAPI_VERSION", "Conversion", "convert_swagger2"]

#: The OpenAPI version a converted document declares.
OPENAPI_VERSION: Final = "3.0.3"

_METHODS = ("get", "put", "post", "delete", "options", "head", "patch")
#: Swagger 2.0 parameter and header fields that describe the value, and so move into the OpenAPI 3 `schema`.
_VALUE_FIELDS = (
    "type",
    "format",
    "items",
    "default",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "enum",
    "multipleOf",
)
_FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
_DEFAULT_MEDIA = "application/json"
#: Swagger 2.0 oauth2 `flow` → OpenAPI 3 `flows` key.
_FLOWS = {
    "implicit": "implicit",
    "password": "password",
    "application": "clientCredentials",
    "accessCode": "authorizationCode",
}
#: Where shared things moved: Swagger 2.0 ref prefix → OpenAPI 3 prefix.
_MOVED = {
    "#/definitions/": "#/components/schemas/",
    "#/parameters/": "#/components/parameters/",
    "#/responses/": "#/components/responses/",
}
#: JSON Schema keywords whose value is one schema, and those whose value is a list or a mapping of schemas.
_ONE_SCHEMA = ("additionalProperties", "not", "items")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf")
_SCHEMA_MAPS = ("properties", "patternProperties", "definitions")


@dataclass(frozen=True, kw_only=True)
class Conversion:
    """A converted document and what could not be carried over as it was: (JSON pointer, message) pairs."""

    data: dict[str, Any]
    notes: tuple[tuple[str, str], ...]

    @property
    def operations(self) -> int:
        """How many operations the converted document has."""
        paths = self.data.get("paths")
        items = paths.values() if isinstance(paths, Mapping) else ()
        return sum(1 for item in items if isinstance(item, Mapping) for method in _METHODS if method in item)


def convert_swagger2(swagger: Mapping[str, Any]) -> Conversion:
    """The OpenAPI 3.0.3 form of a parsed Swagger 2.0 document; `swagger` itself is left as it was."""
    return _Converter(swagger).convert()


class _Converter:
    def __init__(self, swagger: Mapping[str, Any]) -> None:
        self.swagger = swagger
        self.notes: list[tuple[str, str]] = []
        self.consumes = _media_list(swagger.get("consumes"))
        self.produces = _media_list(swagger.get("produces"))
        shared = swagger.get("parameters")
        self.shared_parameters: Mapping[str, Any] = shared if isinstance(shared, Mapping) else {}
        #: Names of shared parameters that carry a body (they become components.requestBodies).
        self.body_parameters = {
            name
            for name, parameter in self.shared_parameters.items()
            if isinstance(parameter, Mapping) and parameter.get("in") in ("body", "formData")
        }
        self.external_refs = 0

    def note(self, pointer: tuple[str, ...], message: str) -> None:
        self.notes.append((join_pointer(pointer), message))

    def convert(self) -> Conversion:
        source = self.swagger
        data: dict[str, Any] = {"openapi": OPENAPI_VERSION}
        for key in ("info", "tags", "externalDocs"):
            if key in source:
                data[key] = _copy(source[key])
        servers = self.servers(source.get("schemes"))
        if servers:
            data["servers"] = servers
        if "security" in source:
            data["security"] = _copy(source["security"])
        paths = source.get("paths")
        if isinstance(paths, Mapping):
            data["paths"] = {
                route: self.path_item(item, route) if not route.startswith("x-") else self.refs(item)
                for route, item in paths.items()
            }
        elif paths is not None:
            data["paths"] = _copy(paths)
        components = self.components()
        if components:
            data["components"] = components
        data.update({key: self.refs(value) for key, value in source.items() if key.startswith("x-")})
        if self.external_refs:
            self.note(
                (),
                f"{self.external_refs} `$ref`s name other files; they are kept as written, and what they point at "
                "is read as OpenAPI 3 without conversion",
            )
        return Conversion(data=data, notes=tuple(self.notes))

    # -- document level ------------------------------------------------------------------------------------

    def servers(self, schemes: Any) -> list[dict[str, Any]]:
        """Swagger 2.0 §4.3 `host` + `basePath` once per scheme (none given: the document's own scheme)."""
        host, base = self.swagger.get("host"), self.swagger.get("basePath")
        base = base.rstrip("/") if isinstance(base, str) else ""
        if isinstance(host, str) and host:
            listed = [s for s in schemes if isinstance(s, str)] if isinstance(schemes, list) and schemes else [""]
            return [{"url": f"{scheme + ':' if scheme else ''}//{host}{base}"} for scheme in listed]
        if base:
            return [{"url": base}]
        return []

    def components(self) -> dict[str, Any]:
        source = self.swagger
        components: dict[str, Any] = {}
        definitions = source.get("definitions")
        if isinstance(definitions, Mapping):
            components["schemas"] = {
                name: self.schema(schema, ("definitions", name)) for name, schema in definitions.items()
            }
        parameters: dict[str, Any] = {}
        bodies: dict[str, Any] = {}
        for name, parameter in self.shared_parameters.items():
            pointer = ("parameters", name)
            if name not in self.body_parameters:
                parameters[name] = self.parameter(parameter, pointer)
            elif parameter.get("in") == "body":
                bodies[name] = self.body(parameter, self.consumes, pointer)
        if parameters:
            components["parameters"] = parameters
        if bodies:
            components["requestBodies"] = bodies
        responses = source.get("responses")
        if isinstance(responses, Mapping):
            components["responses"] = {
                name: self.response(response, self.produces, ("responses", name))
                for name, response in responses.items()
            }
        schemes = source.get("securityDefinitions")
        if isinstance(schemes, Mapping):
            components["securitySchemes"] = {
                name: self.security_scheme(scheme, ("securityDefinitions", name)) for name, scheme in schemes.items()
            }
        return components

    def security_scheme(self, scheme: Any, pointer: tuple[str, ...]) -> Any:
        """Swagger 2.0 §4.3.8: basic → http basic, apiKey as it is, oauth2's one `flow` → OpenAPI 3 `flows`."""
        if not isinstance(scheme, Mapping):
            return _copy(scheme)
        kind = scheme.get("type")
        converted: dict[str, Any] = {}
        if kind == "basic":
            converted = {"type": "http", "scheme": "basic"}
        elif kind == "apiKey":
            converted = {key: _copy(scheme[key]) for key in ("type", "name", "in") if key in scheme}
        elif kind == "oauth2":
            flow = scheme.get("flow")
            name = _FLOWS.get(flow) if isinstance(flow, str) else None
            if name is None:
                self.note((*pointer, "flow"), f"oauth2 flow {flow!r} is none of {sorted(_FLOWS)}; read as implicit")
                name = "implicit"
            urls = {key: _copy(scheme[key]) for key in ("authorizationUrl", "tokenUrl") if key in scheme}
            converted = {"type": "oauth2", "flows": {name: {**urls, "scopes": _copy(scheme.get("scopes", {}))}}}
        else:
            self.note((*pointer, "type"), f"security scheme type {kind!r} is none of basic, apiKey, oauth2; kept")
            converted = {key: _copy(value) for key, value in scheme.items() if not key.startswith("x-")}
        if "description" in scheme:
            converted["description"] = _copy(scheme["description"])
        return converted | _extensions(scheme, self.refs)

    # -- paths and operations -----------------------------------------------------------------------------

    def path_item(self, item: Any, route: str) -> Any:
        if not isinstance(item, Mapping):
            return _copy(item)
        pointer = ("paths", route)
        shared = _list(item.get("parameters"))
        converted: dict[str, Any] = {}
        for key, value in item.items():
            if key in _METHODS:
                converted[key] = self.operation(value, shared, (*pointer, key))
            elif key == "parameters":
                kept = self.plain_parameters(value, (*pointer, key)) if isinstance(value, list) else _copy(value)
                if kept:
                    converted[key] = kept
            elif key == "$ref":
                converted[key] = self.ref(value)
            else:
                converted[key] = self.refs(value)
        return converted

    def operation(self, operation: Any, shared: list[Any], pointer: tuple[str, ...]) -> Any:
        if not isinstance(operation, Mapping):
            return _copy(operation)
        own = _list(operation.get("parameters"))
        consumes = _media_list(operation.get("consumes"), self.consumes)
        produces = _media_list(operation.get("produces"), self.produces)
        converted: dict[str, Any] = {}
        for key, value in operation.items():
            if key in ("consumes", "produces", "schemes"):
                continue
            if key == "parameters":
                kept = self.plain_parameters(value, (*pointer, key)) if isinstance(value, list) else _copy(value)
                if kept:
                    converted[key] = kept
                continue
            if key == "responses" and isinstance(value, Mapping):
                converted[key] = {
                    code: self.response(response, produces, (*pointer, key, str(code)))
                    for code, response in value.items()
                }
                continue
            converted[key] = self.refs(value)
        body = self.request_body(shared, own, consumes, pointer)
        if body is not None:
            converted["requestBody"] = body
        schemes = operation.get("schemes")
        schemes = [s for s in schemes if isinstance(s, str)] if isinstance(schemes, list) else []
        listed = self.swagger.get("schemes")
        if set(schemes) - {s for s in (listed if isinstance(listed, list) else []) if isinstance(s, str)}:
            servers = self.servers(schemes)
            if servers:
                converted["servers"] = servers
        return converted

    def plain_parameters(self, parameters: list[Any], pointer: tuple[str, ...]) -> list[Any]:
        """The parameters that stay parameters (path, query, header), converted; body and form ones are left out."""
        kept = []
        for index, parameter in enumerate(parameters):
            if self.carries_body(parameter):
                continue
            if isinstance(parameter, Mapping) and isinstance(parameter.get("$ref"), str):
                kept.append({"$ref": self.ref(parameter["$ref"])})
            else:
                kept.append(self.parameter(parameter, (*pointer, str(index))))
        return kept

    def carries_body(self, parameter: Any) -> bool:
        resolved = self.resolve_parameter(parameter)
        return isinstance(resolved, Mapping) and resolved.get("in") in ("body", "formData")

    def resolve_parameter(self, parameter: Any) -> Any:
        """A parameter, or the shared parameter its local `#/parameters/...` ref names."""
        if isinstance(parameter, Mapping) and isinstance(parameter.get("$ref"), str):
            ref: str = parameter["$ref"]
            if ref.startswith("#/parameters/"):
                return self.shared_parameters.get(_unescape(ref[len("#/parameters/") :]))
        return parameter

    def request_body(
        self, shared: list[Any], own: list[Any], consumes: list[str], pointer: tuple[str, ...]
    ) -> dict[str, Any] | None:
        """The operation's body and form parameters (its own over the path's, by name and place) as a requestBody."""
        chosen: dict[tuple[Any, Any], tuple[Any, Any, tuple[str, ...]]] = {}
        for level, parameters in (("path", shared), ("operation", own)):
            base = pointer[:-1] if level == "path" else pointer
            for index, raw in enumerate(parameters):
                parameter = self.resolve_parameter(raw)
                if not isinstance(parameter, Mapping):
                    continue
                where_written = (*base, "parameters", str(index))
                chosen[(parameter.get("name"), parameter.get("in"))] = (raw, parameter, where_written)
        bodies = [entry for (_, place), entry in chosen.items() if place == "body"]
        form = [entry for (_, place), entry in chosen.items() if place == "formData"]
        if len(bodies) > 1:
            self.note(pointer, f"{len(bodies)} body parameters; Swagger 2.0 allows one, the first is used")
        if bodies and form:
            self.note(pointer, "both body and formData parameters; the body parameter is used, the form ones dropped")
        if bodies:
            raw, parameter, where = bodies[0]
            ref = raw.get("$ref") if isinstance(raw, Mapping) else None
            if isinstance(ref, str) and ref.startswith("#/parameters/") and consumes == self.consumes:
                return {"$ref": self.ref(ref)}
            return self.body(parameter, consumes, where)
        if form:
            return self.form_body(form, consumes)
        return None

    def body(self, parameter: Mapping[str, Any], consumes: list[str], pointer: tuple[str, ...]) -> dict[str, Any]:
        """Swagger 2.0 §4.3.6 `in: body` → an OpenAPI 3 requestBody, one content entry per consumed media type."""
        schema = self.schema(parameter.get("schema", {}), (*pointer, "schema"))
        body: dict[str, Any] = {}
        if "description" in parameter:
            body["description"] = _copy(parameter["description"])
        body["content"] = {media: {"schema": _copy(schema)} for media in consumes or [_DEFAULT_MEDIA]}
        if parameter.get("required") is True:
            body["required"] = True
        return body | _extensions(parameter, self.refs)

    def form_body(self, form: list[tuple[Any, Any, tuple[str, ...]]], consumes: list[str]) -> dict[str, Any]:
        """`in: formData` parameters → one object schema under a form media type (Swagger 2.0 §4.3.6)."""
        has_file = any(parameter.get("type") == "file" for _, parameter, _ in form)
        multipart = "multipart/form-data" in consumes or (
            has_file and "application/x-www-form-urlencoded" not in consumes
        )
        media = "multipart/form-data" if multipart else "application/x-www-form-urlencoded"
        properties: dict[str, Any] = {}
        required: list[str] = []
        for _, parameter, pointer in form:
            name = str(parameter.get("name"))
            value = self.value_schema(parameter, pointer)
            if "description" in parameter:
                value = {"description": _copy(parameter["description"]), **value}
            properties[name] = value | _extensions(parameter, self.refs)
            if parameter.get("required") is True:
                required.append(name)
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        body: dict[str, Any] = {"content": {media: {"schema": schema}}}
        if required:
            body["required"] = True
        return body

    def parameter(self, parameter: Any, pointer: tuple[str, ...]) -> Any:
        """A path, query or header parameter (Swagger 2.0 §4.3.6): its value fields become a `schema`."""
        if not isinstance(parameter, Mapping):
            return _copy(parameter)
        if isinstance(parameter.get("$ref"), str):
            return {"$ref": self.ref(parameter["$ref"])}
        place = parameter.get("in")
        converted: dict[str, Any] = {}
        for key, value in parameter.items():
            if key in _VALUE_FIELDS or key in ("collectionFormat", "x-nullable", "schema"):
                continue
            converted[key] = self.refs(value)
        if place == "path":
            converted["required"] = True  # Swagger 2.0 §4.3.6: required, and must be true, for path parameters.
        converted["schema"] = self.value_schema(parameter, pointer)
        converted.update(self.style(parameter, pointer))
        return converted

    def value_schema(self, parameter: Mapping[str, Any], pointer: tuple[str, ...]) -> dict[str, Any]:
        """The JSON Schema of a non-body parameter, header or `items`: its type, format, bounds, enum and items."""
        if isinstance(parameter.get("schema"), Mapping):  # not Swagger 2.0, but written by some generators
            schema: dict[str, Any] = self.schema(parameter["schema"], (*pointer, "schema"))
            return schema
        schema = {}
        for key in _VALUE_FIELDS:
            if key not in parameter:
                continue
            if key == "items":
                items = parameter["items"]
                schema["items"] = (
                    self.value_schema(items, (*pointer, "items"))
                    if isinstance(items, Mapping) and "$ref" not in items
                    else self.schema(items, (*pointer, "items"))
                )
            else:
                schema[key] = _copy(parameter[key])
        if schema.get("type") == "file":
            schema["type"], schema["format"] = "string", "binary"
        if schema.get("type") == "array" and "items" not in schema:
            schema["items"] = {}
        if isinstance(parameter.get("x-nullable"), bool):
            schema["nullable"] = parameter["x-nullable"]
        return schema

    def style(self, parameter: Mapping[str, Any], pointer: tuple[str, ...]) -> dict[str, Any]:
        """OpenAPI 3 `style`/`explode` for a Swagger 2.0 `collectionFormat` (csv when an array names none)."""
        if parameter.get("type") != "array":
            return {}
        place = parameter.get("in")
        form = parameter.get("collectionFormat", "csv")
        if form == "multi":
            if place == "query":
                return {"style": "form", "explode": True}
        elif form == "csv":
            return {"style": "form", "explode": False} if place == "query" else {"style": "simple"}
        elif form == "ssv" and place == "query":
            return {"style": "spaceDelimited"}
        elif form == "pipes" and place == "query":
            return {"style": "pipeDelimited"}
        self.note(
            (*pointer, "collectionFormat"),
            f"collectionFormat {form!r} in {place!r} has no OpenAPI 3 style; kept as x-collectionFormat",
        )
        return {"x-collectionFormat": form}

    def response(self, response: Any, produces: list[str], pointer: tuple[str, ...]) -> Any:
        """A response (Swagger 2.0 §4.3.17): its schema under each produced media type, its headers with schemas."""
        if not isinstance(response, Mapping):
            return _copy(response)
        if isinstance(response.get("$ref"), str):
            return {"$ref": self.ref(response["$ref"])}
        converted: dict[str, Any] = {"description": _copy(response.get("description", ""))}
        content: dict[str, Any] = {}
        if "schema" in response:
            schema = self.schema(response["schema"], (*pointer, "schema"))
            content = {media: {"schema": _copy(schema)} for media in produces or [_DEFAULT_MEDIA]}
        examples = response.get("examples")
        if isinstance(examples, Mapping):
            for media, example in examples.items():
                content.setdefault(media, {})["example"] = _copy(example)
        headers = response.get("headers")
        if isinstance(headers, Mapping):
            converted["headers"] = {
                name: self.header(header, (*pointer, "headers", name)) for name, header in headers.items()
            }
        if content:
            converted["content"] = content
        return converted | _extensions(response, self.refs)

    def header(self, header: Any, pointer: tuple[str, ...]) -> Any:
        if not isinstance(header, Mapping):
            return _copy(header)
        converted = {
            key: self.refs(value)
            for key, value in header.items()
            if key not in _VALUE_FIELDS and key not in ("collectionFormat", "x-nullable")
        }
        converted["schema"] = self.value_schema(header, pointer)
        form = header.get("collectionFormat", "csv")
        if header.get("type") == "array" and form != "csv":
            self.note((*pointer, "collectionFormat"), f"collectionFormat {form!r} of a header has no OpenAPI 3 style")
            converted["x-collectionFormat"] = form
        return converted

    # -- schemas and refs ----------------------------------------------------------------------------------

    def schema(self, schema: Any, pointer: tuple[str, ...]) -> Any:
        """A Swagger 2.0 Schema Object as an OpenAPI 3.0 one (refs rewritten, 2.0-only forms replaced)."""
        if not isinstance(schema, Mapping):
            return _copy(schema)
        converted: dict[str, Any] = {}
        for key, value in schema.items():
            if key == "$ref":
                converted[key] = self.ref(value)
            elif key in _ONE_SCHEMA and key != "items":
                converted[key] = self.schema(value, (*pointer, key))
            elif key == "items":
                converted[key] = self.items(value, (*pointer, key))
            elif key in _SCHEMA_LISTS and isinstance(value, list):
                converted[key] = [self.schema(part, (*pointer, key, str(i))) for i, part in enumerate(value)]
            elif key in _SCHEMA_MAPS and isinstance(value, Mapping):
                converted[key] = {name: self.schema(part, (*pointer, key, name)) for name, part in value.items()}
            elif key in ("example", "default", "enum", "x-example", "x-examples"):
                converted[key] = _copy(value)
            elif key == "x-nullable" and isinstance(value, bool):
                converted["nullable"] = value
            elif key == "discriminator" and isinstance(value, str):
                converted[key] = {"propertyName": value}
            else:
                converted[key] = self.refs(value)
        self.fix_type(converted)
        self.lift_required(converted)
        return converted

    def items(self, items: Any, pointer: tuple[str, ...]) -> Any:
        """`items`; a list of schemas (JSON Schema tuple form, not allowed in 2.0 but written) becomes `anyOf`."""
        if not isinstance(items, list):
            return self.schema(items, pointer)
        if not items:
            return {}
        if len(items) == 1:
            return self.schema(items[0], (*pointer, "0"))
        return {"anyOf": [self.schema(part, (*pointer, str(i))) for i, part in enumerate(items)]}

    @staticmethod
    def fix_type(schema: dict[str, Any]) -> None:
        """`type: file` → a binary string; a list `type` → one type or `oneOf`, its "null" → `nullable`."""
        kind = schema.get("type")
        if isinstance(kind, list):
            types = [t for t in kind if isinstance(t, str)]
            if "null" in types:
                schema["nullable"] = True
            types = [t for t in types if t != "null"]
            del schema["type"]
            if len(types) == 1:
                schema["type"] = types[0]
            elif types:
                # OAS 3.0 §4.7.24.1: `items` must be present when the type is array.
                schema["oneOf"] = [{"type": t, "items": {}} if t == "array" else {"type": t} for t in types]
        elif kind == "null":
            del schema["type"]
            schema["nullable"] = True
        elif kind == "file":
            schema["type"], schema["format"] = "string", "binary"
        if schema.get("type") == "array" and "items" not in schema:
            schema["items"] = {}

    @staticmethod
    def lift_required(schema: dict[str, Any]) -> None:
        """`required: true` written on a property (a common 2.0 mistake) → the property named in `required`."""
        properties = schema.get("properties")
        if not isinstance(properties, dict):
            return
        named = [name for name, part in properties.items() if isinstance(part, dict) and part.get("required") is True]
        for name, part in properties.items():
            if isinstance(part, dict) and isinstance(part.get("required"), bool):
                properties[name] = {key: value for key, value in part.items() if key != "required"}
        if named:
            listed = _list(schema.get("required"))
            schema["required"] = [*listed, *(name for name in named if name not in listed)]

    def ref(self, ref: Any) -> Any:
        """A `$ref` pointed at where its target moved; refs to other files are counted and kept."""
        if not isinstance(ref, str):
            return _copy(ref)
        if not ref.startswith("#"):
            self.external_refs += 1
            return ref
        for old, new in _MOVED.items():
            if ref.startswith(old):
                rest = ref[len(old) :]
                if old == "#/parameters/" and _unescape(rest) in self.body_parameters:
                    return "#/components/requestBodies/" + rest
                return new + rest
        return ref

    def refs(self, node: Any) -> Any:
        """A copy of `node` with every `$ref` inside rewritten (extensions and other free-form values)."""
        if isinstance(node, Mapping):
            return {
                key: self.ref(value) if key == "$ref" and isinstance(value, str) else self.refs(value)
                for key, value in node.items()
            }
        if isinstance(node, list):
            return [self.refs(item) for item in node]
        return node


def _list(value: Any) -> list[Any]:
    """`value` when it is a list, else an empty one."""
    return value if isinstance(value, list) else []


def _media_list(value: Any, fallback: Iterable[str] = ()) -> list[str]:
    """A `consumes`/`produces` list, deduplicated; `fallback` when it is absent or not a list of strings."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return list(fallback)
    return list(dict.fromkeys(item for item in value if isinstance(item, str)))


def _extensions(node: Mapping[str, Any], rewrite: Callable[[Any], Any]) -> dict[str, Any]:
    """The `x-` fields of `node` (Swagger 2.0 §4.2.2), refs inside rewritten."""
    return {key: rewrite(value) for key, value in node.items() if isinstance(key, str) and key.startswith("x-")}


def _unescape(token: str) -> str:
    """One JSON-pointer token as written in a ref fragment (RFC 6901 §4, percent-decoded as URIs are)."""
    return unquote(token).replace("~1", "/").replace("~0", "~")


def _copy(node: Any) -> Any:
    """A deep copy of JSON data."""
    if isinstance(node, Mapping):
        return {key: _copy(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_copy(item) for item in node]
    return node
