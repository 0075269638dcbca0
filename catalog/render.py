"""What an agent reads: one-line signatures, function descriptions and term explanations, in a TypeScript-like notation.

Tools, snapshots and the reference page all render through here, so they agree to the character.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any
from weakref import WeakKeyDictionary

from catalog._allof import MAX_MERGED_PROPERTIES, AllOfProperties
from catalog._html import plain_text
from catalog._refs import RefResolver
from catalog.errors import UnknownNameError
from catalog.model import Arg, Catalog, Function, Module, Term
from catalog.schemas import is_binary, is_file_schema

__all__ = [
    "FILE_HINT",
    "LINE_CHARS",
    "describe_function",
    "describe_functions",
    "explain_term",
    "function_line",
    "module_line",
    "return_type",
    "signature",
    "term_fields",
    "term_part",
    "type_of",
]

_MAX_ENUM = 8
_MAX_INLINE_PROPERTIES = 6
#: The longest search hit line: one readable line, whatever the signature.
LINE_CHARS = 200
_MAX_LINE_ARGS = 6
_MAX_DESCRIPTION = 1200
_LOCATION_WORDS = {"path": "path", "query": "query", "header": "header", "cookie": "cookie", "body": "body"}


def type_of(schema: Any, *, depth: int = 0) -> str:
    """A compact TypeScript-like type for a schema: `Order[]`, `"open" | "closed"`, `{id: string, tags?: string[]}`."""
    if not isinstance(schema, Mapping) or not schema:
        return "any"
    name = RefResolver.schema_name(schema)
    if name is not None:
        return name
    if isinstance(schema.get("$ref"), str):
        return "any"
    if "const" in schema:
        return _literal(schema["const"])
    nullable = schema.get("nullable") is True
    rendered = _type_core(schema, depth)
    if nullable and not rendered.endswith("| null"):
        rendered = f"{rendered} | null"
    return rendered


def _type_core(schema: Mapping[str, Any], depth: int) -> str:
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        values = [_literal(value) for value in enum[:_MAX_ENUM]]
        if len(enum) > _MAX_ENUM:
            values.append(f"… {len(enum) - _MAX_ENUM} more")
        return " | ".join(values)
    for combinator, joiner in (("oneOf", " | "), ("anyOf", " | "), ("allOf", " & ")):
        parts = schema.get(combinator)
        if isinstance(parts, list) and parts:
            rendered = list(dict.fromkeys(_wrap(type_of(part, depth=depth + 1)) for part in parts))
            if joiner == " & ":
                rendered = [part for part in rendered if part != "any"] or ["any"]
            if joiner == " | " and "null" in rendered and len(rendered) > 1:
                rendered = [part for part in rendered if part != "null"] + ["null"]
            return joiner.join(rendered)
    kind = schema.get("type")
    if isinstance(kind, list):
        others = [k for k in kind if k != "null"]
        base = " | ".join(_scalar(schema, k, depth) for k in others) if others else "null"
        return f"{base} | null" if "null" in kind and others else base
    if isinstance(kind, str):
        return _scalar(schema, kind, depth)
    if isinstance(schema.get("properties"), Mapping):
        return _scalar(schema, "object", depth)
    if isinstance(schema.get("items"), Mapping):
        return _scalar(schema, "array", depth)
    return "any"


def _scalar(schema: Mapping[str, Any], kind: str, depth: int) -> str:
    if kind == "array":
        return f"{_wrap(type_of(schema.get('items'), depth=depth + 1))}[]"
    if kind == "object":
        properties = schema.get("properties")
        if isinstance(properties, Mapping) and properties:
            if depth >= 2:
                return "object"
            listed = schema.get("required")
            required: list[Any] = listed if isinstance(listed, list) else []
            fields = [
                f"{name}{'' if name in required else '?'}: {type_of(value, depth=depth + 1)}"
                for name, value in list(properties.items())[:_MAX_INLINE_PROPERTIES]
            ]
            if len(properties) > _MAX_INLINE_PROPERTIES:
                fields.append("…")
            return "{" + ", ".join(fields) + "}"
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping) and extra:
            return f"{{[key: string]: {type_of(extra, depth=depth + 1)}}}"
        return "object"
    if is_file_schema(schema) or (kind in ("string", "file") and is_binary(schema)):
        return "file"
    fmt = schema.get("format")
    if kind == "string" and isinstance(fmt, str) and fmt:
        return f"string<{fmt}>"
    if kind in ("integer", "number") and isinstance(fmt, str) and fmt in ("int32", "int64", "float", "double"):
        return kind
    return kind


def _wrap(rendered: str) -> str:
    return f"({rendered})" if (" | " in rendered or " & " in rendered) and not rendered.startswith("{") else rendered


def _literal(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _arg_text(arg: Arg) -> str:
    return f"{arg.name}{'' if arg.required else '?'}: {type_of(arg.schema)}"


def _unique_args(function: Function) -> list[Arg]:
    seen: dict[str, Arg] = {}
    for arg in function.args:
        if arg.name not in seen or (arg.required and not seen[arg.name].required):
            seen[arg.name] = arg
    return list(seen.values())


def return_type(function: Function) -> str:
    """The rendered result type: a term, a type, a media type for non-JSON results, or `void`."""
    if function.return_schema is not None:
        return type_of(function.return_schema)
    media = [m for m in function.response_content_types if not m.startswith("application/json")]
    if media:
        return f"binary<{media[0]}>" if not media[0].startswith("text/") else "string"
    return "void"


def signature(function: Function, *, compact: bool = False) -> str:
    """`module.fn(arg: type, opt?: type) -> Result`; compact keeps the required args and a few optional ones."""
    args = _unique_args(function)
    if compact and len(args) > _MAX_LINE_ARGS:
        required = [arg for arg in args if arg.required]
        optional = [arg for arg in args if not arg.required]
        room = max(_MAX_LINE_ARGS - len(required), 0)
        shown = required + optional[:room]
        hidden = len(args) - len(shown)
        rendered = [_arg_text(arg) for arg in shown] + ([f"…{hidden} more"] if hidden else [])
    else:
        rendered = [_arg_text(arg) for arg in args]
    return f"{function.name}({', '.join(rendered)}) -> {return_type(function)}"


def _marks(function: Function) -> str:
    marks = ["read" if function.read_only else "destructive" if function.destructive else "write"]
    if function.deprecated:
        marks.append("deprecated")
    return " ".join(f"[{mark}]" for mark in marks)


#: Each function's line, made once: a catalog never changes, and search renders its hits' lines on every query.
_LINES: WeakKeyDictionary[Function, str] = WeakKeyDictionary()


def function_line(function: Function) -> str:
    """One dense line that starts with the full function name: signature — summary [read|write|destructive].

    At most `LINE_CHARS` characters: a longer signature or summary (a union of forty types) is cut with "…",
    the marks kept.
    """
    line = _LINES.get(function)
    if line is None:
        line = _LINES[function] = _function_line(function)
    return line


def _function_line(function: Function) -> str:
    marks = _marks(function)
    head = f"{signature(function, compact=True)} — {function.summary}"
    room = LINE_CHARS - len(marks) - 1
    if len(head) > room:
        head = head[: room - 1].rstrip() + "…"
    return f"{head} {marks}"


def module_line(module: Module) -> str:
    """`name (N functions) — description's first line`."""
    count = len(module.functions)
    description = _first_line(module.description)
    text = f"{module.name} ({count} function{'s' if count != 1 else ''})"
    return f"{text} — {description}" if description else text


def describe_function(catalog: Catalog, function: Function) -> str:
    """Everything needed to call one function: signature, HTTP route, marks, args with places, result, terms."""
    lines = [signature(function)]
    route = f"{function.method} {function.path}" if function.method else "composite"
    body = f" · body as {function.body_content_type}" if function.body_content_type else ""
    lines.append(f"  {route} · {_marks(function)}{body}")
    if function.summary and function.summary != route:  # without one, the builder makes it the route, said above
        lines.append(f"  {function.summary}")
    description = function.description.strip()
    rest = description[len(function.summary) :]
    if function.summary and description.startswith(function.summary) and rest[:1] in ("", " ", "\n", "\t"):
        # The summary is the description's first sentence (the document gave none): the rest, once.
        description = rest.strip()
    if description and description != function.summary:
        if len(description) > _MAX_DESCRIPTION:
            description = description[: _MAX_DESCRIPTION - 1].rstrip() + "…"
        lines.extend("  " + line if line else "" for line in description.splitlines())
    if function.args:
        lines.append("  Args:")
        lines.extend("    " + _arg_detail(arg) for arg in function.args)
        if any(_takes_file(arg.schema) for arg in function.args):
            lines.append(f"  {FILE_HINT}")
    result = return_type(function)
    lines.append(f"  Returns: {result}")
    terms = _terms_used(catalog, function)
    if terms:
        lines.append(f"  Terms: {', '.join(terms)} (explain_term gives their fields)")
    return "\n".join(lines)


def describe_functions(catalog: Catalog, functions: Iterable[Function]) -> str:
    """Several functions, separated by a blank line."""
    return "\n\n".join(describe_function(catalog, function) for function in functions)


def _arg_detail(arg: Arg) -> str:
    facts = [_LOCATION_WORDS[arg.location], "required" if arg.required else "optional"]
    schema = arg.schema
    if isinstance(schema, Mapping):
        if "default" in schema:
            facts.append(f"default {_literal(schema['default'])}")
        for key, label in (("minimum", "min"), ("maximum", "max"), ("maxLength", "max length"), ("pattern", "pattern")):
            if key in schema:
                facts.append(f"{label} {_bound(schema[key])}")
        if schema.get("deprecated") is True:
            facts.append("deprecated")
    text = f"{arg.name}: {type_of(schema)} ({', '.join(facts)})"
    description = _first_line(arg.description, limit=240)
    return f"{text} — {description}" if description else text


#: How to pass a `file` argument, said once in each description that has one.
FILE_HINT = (
    'A file is {"base64": "<the bytes, base64>"} or {"text": "<content>"}, with optional "filename" and '
    '"content_type"; an array of files takes several.'
)


def _takes_file(schema: Any) -> bool:
    if not isinstance(schema, Mapping):
        return False
    if is_file_schema(schema) or (schema.get("type") in ("string", "file") and is_binary(schema)):
        return True
    items = schema.get("items")
    return isinstance(items, Mapping) and _takes_file(items)


def _bound(value: Any) -> str:
    """A bound as written for people: `0`, not `0.0` (JSON does not tell 0 from 0.0; FastAPI writes `ge=0` as 0.0)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return str(value)


def _terms_used(catalog: Catalog, function: Function) -> list[str]:
    names: list[str] = []
    for schema in [arg.schema for arg in function.args] + [function.return_schema]:
        for name in _named_refs(schema):
            if name not in names:
                names.append(name)
    return names


def _named_refs(schema: Any) -> Iterable[str]:
    if isinstance(schema, Mapping):
        name = RefResolver.schema_name(schema)
        if name is not None:
            yield name
            return
        for value in schema.values():
            yield from _named_refs(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _named_refs(value)


def explain_term(catalog: Catalog, term: Term) -> str:
    """A term: its description, aliases, fields with types, and the functions that accept and return it."""
    lines = [f"{term.name}" + (f" — {_first_line(term.description)}" if term.description else "")]
    rest = term.description.strip().split("\n", 1)[1].strip() if "\n" in term.description.strip() else ""
    if rest:
        lines.extend("  " + line if line else "" for line in rest[:_MAX_DESCRIPTION].splitlines())
    if term.aliases:
        lines.append(f"  Aliases: {', '.join(term.aliases)}")
    if term.schema is not None:
        lines.extend(_schema_lines(catalog, term.schema))
    if term.accepted_by:
        lines.append(f"  Accepted by: {', '.join(term.accepted_by)}")
    if term.returned_by:
        lines.append(f"  Returned by: {', '.join(term.returned_by)}")
    return "\n".join(lines)


def term_fields(catalog: Catalog, term: Term) -> list[str]:
    """The names of the fields explain_term lists for `term`, in order (none for a term without properties)."""
    if term.schema is None:
        return []
    merged = _merging(catalog).of(term.schema)
    return list(merged[0]) if merged is not None else []


def term_part(catalog: Catalog, name: str) -> Term | None:
    """The field a dotted name points into a term (`invoice.lines`, `invoice.lines.data`) as a term, else None.

    Term names may hold dots themselves (`issuing.authorization`): the longest term name that prefixes `name`
    wins. Each step goes into a field of the schema so far (through allOf, and into an array's items).
    """
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            term = catalog.term(".".join(parts[:cut]))
        except UnknownNameError:
            continue
        schema: Any = term.schema
        description = ""
        merging = _merging(catalog)
        for field_name in parts[cut:]:
            schema = _field_schema(catalog, merging, schema, field_name)
            if schema is None:
                return None
            description = str(schema.get("description") or "") if isinstance(schema, Mapping) else ""
        return Term(name=f"{term.name}.{'.'.join(parts[cut:])}", description=description, schema=schema)
    return None


def _field_schema(catalog: Catalog, merging: AllOfProperties, schema: Any, field_name: str) -> Mapping[str, Any] | None:
    resolver = catalog.resolver
    for _ in range(8):  # into an array's items, a few levels at most
        resolved, _ = resolver.deref(schema) if resolver is not None else (schema, None)
        if not isinstance(resolved, Mapping) or not isinstance(resolved.get("items"), Mapping):
            break
        schema = resolved["items"]
    merged = merging.of(schema)
    found = merged[0].get(field_name) if merged is not None else None
    return found if isinstance(found, Mapping) else None


def _schema_lines(catalog: Catalog, schema: Mapping[str, Any]) -> list[str]:
    merged = _merging(catalog).of(schema)
    if merged is None:
        return [f"  Fields: (not listed: merging its allOf parts copies over {MAX_MERGED_PROPERTIES:,} properties)"]
    properties, required = merged
    lines: list[str] = []
    if properties:
        lines.append("  Fields:")
        for name, value in properties.items():
            resolved = value if isinstance(value, Mapping) else {}
            flags = []
            if name in required:
                flags.append("required")
            if resolved.get("readOnly") is True:
                flags.append("read-only")
            if resolved.get("deprecated") is True:
                flags.append("deprecated")
            text = f"    {name}{'' if name in required else '?'}: {type_of(value)}"
            if flags and flags != ["required"]:
                text += f" ({', '.join(flags)})"
            description = _first_line(plain_text(str(resolved.get("description") or "")), limit=200)
            lines.append(f"{text} — {description}" if description else text)
        return lines
    for combinator, label in (("oneOf", "One of"), ("anyOf", "Any of")):
        parts = schema.get(combinator)
        if isinstance(parts, list) and parts:
            lines.append(f"  {label}: {' | '.join(type_of(part) for part in parts)}")
            return lines
    lines.append(f"  Type: {type_of(schema)}")
    return lines


def _merging(catalog: Catalog) -> AllOfProperties:
    """The merge of properties through allOf that explaining one term (or one dotted name) uses throughout."""
    return AllOfProperties(catalog.resolver, objects_only=False)


def _first_line(text: str, *, limit: int = 160) -> str:
    line = " ".join(text.strip().split("\n", 1)[0].split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
