"""What a function's view shows, read from the document: a table, a detail, or plain text, and a form of its args.

`view_of(function)` gives the `View` the static script (gateway/apps/static/view.js) renders: for a result that is
an array of objects (or an object holding one, such as `{items, next_cursor}`), a `table` with the columns of the
item schema and, when the function pages, how to ask for the next page (the cursor, page or offset argument, and
where a cursor's next value is in the result); for an object, a `detail` of its fields; for anything else,
`plain`. `args` describes the function's arguments for a form (types, choices, required marks, descriptions;
optional headers are `secondary`, which the form folds away unless the agent proposed a value).
Only names, titles and descriptions from the document go in, each cut short; the script shows them as text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, NotRequired, TypedDict

from catalog.model import Function

__all__ = ["Column", "Field", "Paging", "View", "view_of"]

Kind = Literal["table", "detail", "plain"]
Effect = Literal["read", "write", "destructive"]


class Column(TypedDict):
    """One column of a table, or one field of a detail: the property's name, its title and its JSON type."""

    name: str
    title: str
    type: str


class Paging(TypedDict):
    """How the function pages: `style` cursor, page or offset; `arg` the argument that asks for a page; `next`
    the path of the next cursor in the result, or else `last`, the field of the last row that is the next cursor
    (Stripe's `starting_after` takes the last object's `id`); `size` the page-size argument, if any."""

    style: Literal["cursor", "page", "offset"]
    arg: str
    next: list[str] | None
    last: NotRequired[str]
    size: str | None


class Field(TypedDict):
    """One argument of the form: its JSON type (`list` for an array of strings or numbers, typed one item a line,
    its items' type in `item` and their enum in `choices`; `json` for objects, other arrays and mixtures, typed as
    JSON text); `format` a string's (uuid, date, ...); `secondary` for an optional header or cookie (an API version,
    an idempotency key), seldom set by a person."""

    name: str
    title: str
    type: Literal["string", "integer", "number", "boolean", "list", "json"]
    required: bool
    nullable: bool
    secondary: bool
    description: str
    choices: NotRequired[list[Any]]
    default: NotRequired[Any]
    format: NotRequired[str]
    item: NotRequired[Literal["string", "integer", "number"]]


class View(TypedDict):
    """A function's view, as the static script reads it (JSON)."""

    function: str
    title: str
    kind: Kind
    effect: Effect
    rows: list[str] | None
    columns: list[Column]
    paging: Paging | None
    args: list[Field]
    tool: str | None


_MAX_COLUMNS: Final = 12
_MAX_FIELDS: Final = 40
_MAX_ARGS: Final = 60
_MAX_TEXT: Final = 300
_MAX_NAME: Final = 120
#: The most properties besides its rows an object has to be read as a page of rows.
_MAX_PAGE_EXTRAS: Final = 4
#: Properties that usually hold a page's rows, best first.
_ROWS: Final = ("items", "data", "results", "records", "entries", "rows", "values", "list", "content", "nodes")
_CURSOR_ARGS: Final = frozenset(
    {
        "cursor",
        "after",
        "page_token",
        "pagetoken",
        "next_token",
        "nexttoken",
        "starting_after",
        "continuation_token",
        "continuationtoken",
        "marker",
        "page_cursor",
    }
)
#: Cursor arguments that take the last row seen (its id), when the result names no next cursor.
_AFTER_ARGS: Final = frozenset({"starting_after", "after"})
_PAGE_ARGS: Final = frozenset({"page", "page_number", "pagenumber", "page_no"})
_OFFSET_ARGS: Final = frozenset({"offset", "skip", "start"})
_SIZE_ARGS: Final = (
    "limit",
    "per_page",
    "perpage",
    "page_size",
    "pagesize",
    "size",
    "max_results",
    "maxresults",
    "count",
    "top",
    "first",
)
#: Result properties that hold the next page's cursor, best first.
_NEXT: Final = (
    "next_cursor",
    "nextcursor",
    "next_page_token",
    "nextpagetoken",
    "next_token",
    "nexttoken",
    "next_marker",
    "nextmarker",
    "continuation_token",
    "continuationtoken",
    "end_cursor",
    "endcursor",
    "cursor",
    "next",
)
#: Objects a next cursor may sit in, one level down (`{"meta": {"next_cursor": ...}}`).
_NEXT_HOLDERS: Final = ("meta", "pagination", "page_info", "pageinfo", "paging", "links", "cursor")


def view_of(function: Function, *, tool: str | None = None) -> View:
    """The view of `function`'s results and its argument form; `tool` is the promoted tool that calls it (None:
    the view calls it through call_function)."""
    result = _schema(function.result_schema(capped=False))
    kind: Kind = "plain"
    rows: list[str] | None = None
    columns: list[Column] = []
    paging: Paging | None = None
    if result is not None:
        found = _rows(result)
        if found is not None:
            rows, item = found
            kind, columns = "table", _columns(item, _MAX_COLUMNS)
            paging = _paging(function, result, item)
        elif _type(result) == "object":
            kind, columns = "detail", _columns(result, _MAX_FIELDS)
    return View(
        function=function.name,
        title=_cut(function.summary or function.name, _MAX_NAME),
        kind=kind,
        effect="read" if function.read_only else "destructive" if function.destructive else "write",
        rows=rows,
        columns=columns,
        paging=paging,
        args=_fields(function),
        tool=tool,
    )


def _schema(schema: Any) -> dict[str, Any] | None:
    """A standalone schema with its top-level `$ref` followed; its other refs are followed where the view looks
    (properties, items), so a large schema costs no more than the few levels read."""
    if not isinstance(schema, dict):
        return None
    return {**_resolved(schema, _defs(schema)), "$defs": _defs(schema)}


def _resolved(schema: Any, defs: Mapping[str, Any], depth: int = 0) -> dict[str, Any]:
    """`schema` with a top-level `$ref` into `defs` followed and a nullable `anyOf` (X or null) reduced to X."""
    if not isinstance(schema, dict) or depth > 8:
        return {}
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = defs.get(ref[len("#/$defs/") :])
        return {**_resolved(target, defs, depth + 1), **{k: v for k, v in schema.items() if k != "$ref"}}
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            kept = [option for option in options if not (isinstance(option, dict) and option.get("type") == "null")]
            if len(kept) == 1:
                rest = {k: v for k, v in schema.items() if k != key}
                return {**_resolved(kept[0], defs, depth + 1), **rest, "nullable": len(kept) < len(options)}
    return schema


def _defs(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    defs = schema.get("$defs")
    return defs if isinstance(defs, Mapping) else {}


def _type(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else None
    if isinstance(kind, str):
        return kind
    if "properties" in schema:
        return "object"
    if "items" in schema:
        return "array"
    if isinstance(schema.get("enum"), list):
        return "string"
    return "any"


def _object_items(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> dict[str, Any] | None:
    """The item schema of an array of objects, else None."""
    if _type(schema) != "array":
        return None
    item = _resolved(schema.get("items"), defs)
    return item if _type(item) == "object" and isinstance(item.get("properties"), Mapping) else None


def _rows(result: dict[str, Any]) -> tuple[list[str], dict[str, Any]] | None:
    """Where the rows are (a path of property names, [] for the result itself) and the schema of one row."""
    defs = _defs(result)
    item = _object_items(result, defs)
    if item is not None:
        return [], {**item, "$defs": defs}
    properties = result.get("properties")
    if _type(result) != "object" or not isinstance(properties, Mapping):
        return None
    arrays = {
        name: found
        for name, schema in properties.items()
        if (found := _object_items(_resolved(schema, defs), defs)) is not None
    }
    # A page wraps its rows in a few other properties (a cursor, a count); an object with more (an order and its
    # lines) is a detail.
    if not arrays or len(properties) - 1 > _MAX_PAGE_EXTRAS:
        return None
    best = next((name for name in _ROWS for candidate in arrays if candidate.lower() == name), None)
    if best is None and len(arrays) != 1:
        return None
    name = next(candidate for candidate in arrays if best is None or candidate.lower() == best)
    return [name], {**arrays[name], "$defs": defs}


def _columns(schema: Mapping[str, Any], most: int) -> list[Column]:
    defs = _defs(schema)
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    columns = []
    for name, raw in list(properties.items())[:most]:
        prop = _resolved(raw, defs)
        title = _own_title(raw)
        columns.append(
            Column(
                name=_cut(str(name), _MAX_NAME),
                title=_cut(title if isinstance(title, str) and title else str(name), _MAX_NAME),
                type=_type(prop),
            )
        )
    return columns


def _paging(function: Function, result: Mapping[str, Any], item: Mapping[str, Any]) -> Paging | None:
    # Query arguments, or body ones (Prefect's `POST /flows/filter` takes offset and limit in its body).
    names = {arg.name.lower(): arg.name for arg in function.args if arg.location in ("query", "body")}
    size = next((names[name] for name in _SIZE_ARGS if name in names), None)
    for lowered, name in names.items():
        if lowered in _CURSOR_ARGS:
            paging = Paging(style="cursor", arg=name, next=_next_cursor(result), size=size)
            properties = item.get("properties")
            if paging["next"] is None and lowered in _AFTER_ARGS and isinstance(properties, Mapping):
                if "id" in properties:
                    paging["last"] = "id"
            return paging
    for lowered, name in names.items():
        if lowered in _PAGE_ARGS:
            return Paging(style="page", arg=name, next=None, size=size)
    for lowered, name in names.items():
        if lowered in _OFFSET_ARGS:
            return Paging(style="offset", arg=name, next=None, size=size)
    return None


def _next_cursor(result: Mapping[str, Any]) -> list[str] | None:
    """The path of the next page's cursor in the result: a top-level property, or one inside `meta` and the like."""
    defs = _defs(result)
    properties = result.get("properties")
    if not isinstance(properties, Mapping):
        return None
    lowered = {str(name).lower(): str(name) for name in properties}
    for name in _NEXT:
        if name in lowered:
            return [lowered[name]]
    for holder in _NEXT_HOLDERS:
        if holder in lowered:
            inner = _resolved(properties[lowered[holder]], defs).get("properties")
            if isinstance(inner, Mapping):
                inner_names = {str(name).lower(): str(name) for name in inner}
                for name in _NEXT:
                    if name in inner_names:
                        return [lowered[holder], inner_names[name]]
    return None


def _fields(function: Function) -> list[Field]:
    schema = _schema(function.input_schema(capped=False))
    if schema is None:
        return []
    defs = _defs(schema)
    properties = schema.get("properties")
    required = schema.get("required")
    needed = set(required) if isinstance(required, list) else set()
    if not isinstance(properties, Mapping):
        return []
    listed = list(properties.items())[:_MAX_ARGS]
    secondary = _secondary(function)
    return [
        _field(str(name), _resolved(raw, defs), name in needed, name in secondary, _own_title(raw), defs)
        for name, raw in listed
    ]


def _secondary(function: Function) -> frozenset[str]:
    """The names of the optional arguments that only go in headers (or cookies): the request's plumbing, such as
    Prefect's `x-prefect-api-version` on every operation, not what the call is about."""
    plumbing = {arg.name for arg in function.args if arg.location in ("header", "cookie") and not arg.required}
    other = {arg.name for arg in function.args if arg.location not in ("header", "cookie") or arg.required}
    return frozenset(plumbing - other)


def _own_title(schema: Any) -> str | None:
    """A property's own title; not the title of the type it refers to (`OrderStatus` would name a column badly)."""
    title = schema.get("title") if isinstance(schema, Mapping) else None
    return title if isinstance(title, str) and title else None


def _field(
    name: str, schema: Mapping[str, Any], required: bool, secondary: bool, title: str | None, defs: Mapping[str, Any]
) -> Field:
    kind = _type(schema)
    items = _resolved(schema.get("items"), defs) if kind == "array" else {}
    item = _type(items) if items and "properties" not in items else None
    if item in ("string", "integer", "number"):
        kind, schema = "list", {**items, **{k: v for k, v in schema.items() if k not in ("enum", "format")}}
    field = Field(
        name=_cut(name, _MAX_NAME),
        title=_cut(title if isinstance(title, str) and title else name, _MAX_NAME),
        type=kind if kind in ("string", "integer", "number", "boolean", "list") else "json",  # type: ignore[typeddict-item]
        required=required,
        nullable=bool(schema.get("nullable")),
        secondary=secondary and not required,
        description=_cut(str(schema.get("description") or ""), _MAX_TEXT),
    )
    if kind == "list":
        field["item"] = item  # type: ignore[typeddict-item]
    choices = schema.get("enum")
    if isinstance(choices, list) and choices and all(isinstance(choice, str | int | float) for choice in choices):
        field["choices"] = [_cut(c, _MAX_NAME) if isinstance(c, str) else c for c in choices[:100]]
    if "default" in schema and _small(schema["default"]):
        field["default"] = schema["default"]
    form = schema.get("format")
    if isinstance(form, str):
        field["format"] = _cut(form, 40)
    return field


def _small(value: Any) -> bool:
    return value is None or isinstance(value, bool | int | float) or (isinstance(value, str) and len(value) <= 200)


def _cut(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"
