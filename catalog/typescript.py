"""TypeScript declarations of the API as a script calls it: `api.<module>.<function>(args)` and what it returns.

`declarations(catalog)` gives `declare const api: {...}` with one method per function of the catalog (a caller's
view is a catalog): its argument object from the function's arguments (required or optional), its result from
the result schema, and JSDoc from summaries and descriptions; then an interface or type alias for each named
schema the functions reach. Enums become unions of literals, `oneOf`/`anyOf` unions, `allOf` intersections,
`additionalProperties` index signatures. Names that are not identifiers are quoted (members) or spelled with `_`
(types, with the schema's own name in their comment, as explain_term knows it).

Each function's and named schema's text is made once; a size budget (`max_chars`) keeps whole functions (or
whole modules) until it is spent and names those left out, so the text stays valid TypeScript when cut.
Deterministic: the same catalog gives the same text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import unquote
from weakref import WeakKeyDictionary

from catalog._html import plain_text
from catalog.model import Catalog, Function
from catalog.schemas import SchemaSpace, is_file_schema

__all__ = ["FILE_TYPE", "Declarations", "declarations", "type_name"]

#: The type of a file argument, declared once where a function takes one.
FILE_TYPE: Final = "ApiFile"
_FILE_DECLARATION: Final = (
    "/** A file: its bytes as base64, or its text; with an optional file name and media type. */\n"
    f"type {FILE_TYPE} =\n"
    "  | { base64: string; filename?: string; content_type?: string }\n"
    "  | { text: string; filename?: string; content_type?: string };"
)
#: Enums longer than this are their base type (a union of 250 country codes helps nobody).
_MAX_ENUM: Final = 64
#: Inline object types nested deeper than this are `{ [key: string]: unknown }` (named schemas start again at 0).
_MAX_DEPTH: Final = 6
#: Members an inline or named object type lists; past it an index signature stands for the rest.
_MAX_PROPERTIES: Final = 150
#: Characters of a member's doc comment and of a function's description.
_MEMBER_DOC: Final = 120
_FUNCTION_DOC: Final = 240
_IDENTIFIER: Final = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_NOT_IN_TYPE_NAME: Final = re.compile(r"[^A-Za-z0-9_$]")
_DEFS: Final = "#/$defs/"
#: Words a type cannot be named: JavaScript's reserved words and TypeScript's own type names.
_RESERVED: Final = frozenset(
    "break case catch class const continue debugger default delete do else enum export extends false finally for "
    "function if import in instanceof new null return super switch this throw true try typeof var void while with "
    "implements interface let package private protected public static yield any unknown never string number "
    "boolean bigint symbol object undefined type as async await declare keyof infer is module namespace readonly "
    "require global asserts abstract satisfies accessor out".split()
)
#: Global names of the ES library a top-level type would merge with or shadow (`interface Error` would merge).
_GLOBALS: Final = frozenset(
    "Object Function String Number Boolean Symbol BigInt Array ReadonlyArray Promise PromiseLike Record Partial "
    "Required Readonly Pick Omit Exclude Extract NonNullable Parameters ConstructorParameters ReturnType "
    "InstanceType Awaited Uppercase Lowercase Capitalize Uncapitalize ThisType ThisParameterType "
    "OmitThisParameter NoInfer Error EvalError RangeError ReferenceError SyntaxError TypeError URIError "
    "AggregateError Date RegExp RegExpMatchArray RegExpExecArray Math JSON Map Set WeakMap WeakSet WeakRef "
    "ReadonlyMap ReadonlySet FinalizationRegistry Proxy ProxyHandler Reflect ArrayBuffer SharedArrayBuffer "
    "ArrayBufferLike ArrayBufferView DataView Int8Array Uint8Array Uint8ClampedArray Int16Array Uint16Array "
    "Int32Array Uint32Array Float32Array Float64Array BigInt64Array BigUint64Array Atomics Intl Iterator "
    "Iterable IterableIterator IteratorResult IteratorYieldResult IteratorReturnResult AsyncIterator "
    "AsyncIterable AsyncIterableIterator Generator GeneratorFunction AsyncGenerator AsyncGeneratorFunction "
    "PropertyKey PropertyDescriptor PropertyDescriptorMap TemplateStringsArray ArrayLike ConcatArray "
    "TypedPropertyDescriptor PromiseConstructorLike PromiseSettledResult PromiseFulfilledResult "
    "PromiseRejectedResult CallableFunction NewableFunction IArguments ClassDecorator PropertyDecorator "
    "MethodDecorator ParameterDecorator WeakKey Disposable AsyncDisposable DisposableStack AsyncDisposableStack "
    "SuppressedError NaN Infinity globalThis eval parseInt parseFloat isNaN isFinite decodeURI "
    "decodeURIComponent encodeURI encodeURIComponent escape unescape api call callAll console "
    f"{FILE_TYPE}".split()
)


@dataclass(frozen=True, kw_only=True)
class Declarations:
    """Declarations of some functions: the TypeScript text, which functions it declares and which it left out
    (over the size budget), and the named schemas it declares only as open objects to stay within it."""

    text: str
    functions: tuple[str, ...]
    left_out: tuple[str, ...] = ()
    open_types: tuple[str, ...] = ()


def declarations(
    catalog: Catalog,
    functions: Iterable[Function] | None = None,
    *,
    max_chars: int | None = None,
    whole_modules: bool = False,
) -> Declarations:
    """TypeScript declarations of `functions` (all of `catalog`'s by default), within `max_chars` characters.

    Functions are kept in catalog order while they fit with every type they reach, whole modules at a time with
    `whole_modules`; the others are left out. When not even the first fits, it is kept with as many of its types
    as fit, the rest declared as open objects (`open_types`).
    """
    chosen = list(catalog.functions() if functions is None else dict.fromkeys(functions))
    typer = _typer(catalog.space)
    units: list[list[Function]]
    if whole_modules:
        by_module: dict[str, list[Function]] = {}
        for function in chosen:
            by_module.setdefault(function.module, []).append(function)
        units = list(by_module.values())
    else:
        units = [[function] for function in chosen]
    kept: list[Function] = []
    modules: set[str] = set()
    left_out: list[str] = []
    types: set[str] = set()
    opened: frozenset[str] = frozenset()
    files = False
    size = len(_frame(typer, [], False))
    for unit in units:
        new = typer.reach(unit) - types
        own = sum(len(typer.function(function).text) + 1 for function in unit)
        own += sum(len(_member_key(module)) + 10 for module in {function.module for function in unit} - modules)
        needs_files = not files and (
            any(typer.function(function).file for function in unit) or any(typer.named(name).file for name in new)
        )
        own += len(_FILE_DECLARATION) + 2 if needs_files else 0
        cost = own + sum(len(typer.named(name).text) + 2 for name in new)
        if max_chars is not None and size + cost > max_chars:
            if kept or whole_modules:
                left_out.extend(function.name for function in unit)
                continue
            # Not even the first function fits with all its types: its nearest types, the others left open.
            new, opened = _fit_types(typer, unit, max_chars - size - own)
            cost = max_chars - size
        kept.extend(unit)
        modules.update(function.module for function in unit)
        types |= new
        files = files or needs_files
        size += cost
    return _assemble(typer, kept, types, opened, left_out)


def type_name(catalog: Catalog, schema_name: str) -> str:
    """The TypeScript name the declarations give the named schema `schema_name`."""
    return _typer(catalog.space).names.get(schema_name, _NOT_IN_TYPE_NAME.sub("_", schema_name))


def _fit_types(typer: _Typer, unit: Sequence[Function], room: int) -> tuple[set[str], frozenset[str]]:
    """The types of `unit` kept whole within `room` characters, nearest first, and those declared open (the types
    the kept ones mention that did not fit; what only open types mention is not needed)."""
    queue = sorted({name for function in unit for name in typer.function(function).refs})
    frontier = set(queue)
    kept: set[str] = set()
    used = sum(_open_cost(typer, name) for name in frontier)
    position = 0
    while position < len(queue):
        name = queue[position]
        position += 1
        part = typer.named(name)
        fresh = sorted(part.refs - kept - frontier)
        cost = len(part.text) + 2 - _open_cost(typer, name) + sum(_open_cost(typer, ref) for ref in fresh)
        if used + cost > room:
            continue
        used += cost
        kept.add(name)
        frontier.discard(name)
        frontier.update(fresh)
        queue.extend(fresh)
    return kept | frontier, frozenset(frontier)


def _open_cost(typer: _Typer, name: str) -> int:
    return len(_open_type(typer, name)) + 2


def _assemble(
    typer: _Typer, kept: Sequence[Function], types: set[str], opened: frozenset[str], left_out: Sequence[str]
) -> Declarations:
    file_used = any(typer.function(function).file for function in kept) or any(
        typer.named(name).file for name in types if name not in opened
    )
    parts = [_frame(typer, kept, file_used)]
    named = sorted(types, key=lambda name: (typer.names[name], name))
    parts.extend(_open_type(typer, name) if name in opened else typer.named(name).text for name in named)
    return Declarations(
        text="\n\n".join(parts) + "\n",
        functions=tuple(function.name for function in kept),
        left_out=tuple(left_out),
        open_types=tuple(sorted(opened)),
    )


def _open_type(typer: _Typer, name: str) -> str:
    doc = f"/** `{_escape(name)}`: left open to keep within the size limit. */"
    return f"{doc}\ntype {typer.names[name]} = {{ [key: string]: unknown }};"


def _frame(typer: _Typer, kept: Sequence[Function], file_used: bool) -> str:
    """`declare const api` with the modules of `kept`, and the file type when a function takes files."""
    modules: dict[str, list[Function]] = {}
    for function in kept:
        modules.setdefault(function.module, []).append(function)
    lines = ["declare const api: {"]
    for module, functions in modules.items():
        lines.append(f"  {_member_key(module)}: {{")
        lines.extend(typer.function(function).text for function in functions)
        lines.append("  };")
    lines.append("};")
    text = "\n".join(lines)
    return f"{_FILE_DECLARATION}\n\n{text}" if file_used else text


@dataclass(frozen=True, slots=True)
class _Part:
    """One declaration's text, the named schemas it mentions, and whether it takes a file."""

    text: str
    refs: frozenset[str]
    file: bool = False


class _Typer:
    """Renders the functions and named schemas of one schema space, each once."""

    def __init__(self, space: SchemaSpace | None) -> None:
        self.space = space
        self.names = _type_names(space.resolver.schemas if space is not None else {})
        self._functions: WeakKeyDictionary[Function, _Part] = WeakKeyDictionary()
        self._named: dict[str, _Part] = {}

    def reach(self, functions: Sequence[Function]) -> set[str]:
        """Every named schema the functions mention, directly or through other named schemas."""
        found: set[str] = set()
        pending = [name for function in functions for name in self.function(function).refs]
        while pending:
            name = pending.pop()
            if name not in found:
                found.add(name)
                pending.extend(self.named(name).refs)
        return found

    def function(self, function: Function) -> _Part:
        """The function's member of its module: JSDoc, then `name(args: {...}): Promise<Result>;`."""
        part = self._functions.get(function)
        if part is None:
            part = self._functions[function] = self._function(function)
        return part

    def named(self, name: str) -> _Part:
        """The declaration of the named schema `name`: an interface for an object, else a type alias."""
        part = self._named.get(name)
        if part is None:
            part = self._named[name] = self._declare(name)
        return part

    def _function(self, function: Function) -> _Part:
        render = _Render(self)
        doc = _function_doc(function)
        properties, required, defs = self._arguments(function)
        render.defs = defs
        optional = not required
        if properties:
            members = render.members(properties, required, depth=1, indent="      ")
            args = "{\n" + members + "\n    }"
        else:
            args = "{}"
        result = render.result(function)
        head = f"    {_member_key(function.function_name)}(args{'?' if optional else ''}: {args}): Promise<{result}>;"
        return _Part(text=_doc_block(doc, "    ") + head, refs=frozenset(render.refs), file=render.file)

    def _arguments(self, function: Function) -> tuple[dict[str, Any], set[str], Mapping[str, Any]]:
        """The argument object's properties (converted schemas), required names, and local `$defs`."""
        if function.composite is not None:
            schema = function.composite.input_schema
            return _mapping(schema.get("properties")), _required(schema), _mapping(schema.get("$defs"))
        properties: dict[str, Any] = {}
        required: set[str] = set()
        for arg in function.args:
            if arg.name not in properties:
                converted = self._convert(arg.schema)
                if arg.description and "description" not in converted:
                    converted = {**converted, "description": arg.description}
                properties[arg.name] = converted
            if arg.required or arg.location == "path":
                required.add(arg.name)
        return properties, required, {}

    def _convert(self, schema: Any) -> dict[str, Any]:
        if self.space is None:
            return dict(schema) if isinstance(schema, Mapping) else {}
        converted, _ = self.space.convert(schema)
        return converted

    def _declare(self, name: str) -> _Part:
        render = _Render(self)
        schema: Mapping[str, Any] = self.space.component(name)[0] if self.space is not None else {}
        ts_name = self.names.get(name, _NOT_IN_TYPE_NAME.sub("_", name))
        doc = _schema_doc(schema, name=name)
        if ts_name != name:
            doc = f"`{name}`" + (f": {doc}" if doc else "")
        head = _doc_block(doc, "")
        if _is_plain_object(schema):
            properties = schema["properties"]
            members = render.members(properties, _required(schema), depth=0, indent="  ")
            body = f"interface {ts_name} {{\n{members}\n}}" if members else f"interface {ts_name} {{}}"
        else:
            body = f"type {ts_name} = {render.type(schema, 0, '')};"
        return _Part(text=head + body, refs=frozenset(render.refs), file=render.file)


class _Render:
    """Renders converted JSON Schemas as TypeScript types, noting the named schemas they mention."""

    def __init__(self, typer: _Typer) -> None:
        self.typer = typer
        self.refs: set[str] = set()
        self.file = False
        #: A composite's own `$defs` (its schemas are not the document's): rendered inline, depth-bounded.
        self.defs: Mapping[str, Any] = {}

    def result(self, function: Function) -> str:
        if function.composite is not None:
            schema = function.composite.output_schema
            if schema is None:
                return "unknown"
            self.defs = _mapping(schema.get("$defs"))
            return self.type(schema, 1, "    ")
        if function.return_schema is not None:
            return self.type(self.typer._convert(function.return_schema), 1, "    ")
        media = [m for m in function.response_content_types if not m.startswith("application/json")]
        if media:
            return "string" if media[0].startswith("text/") else "unknown"
        return "void"

    def members(
        self,
        properties: Mapping[str, Any],
        required: set[str],
        *,
        depth: int,
        indent: str,
    ) -> str:
        """An object type's members, one per line with their doc comments, at `indent`."""
        lines: list[str] = []
        items = list(properties.items())
        for name, value in items[:_MAX_PROPERTIES]:
            schema = value if isinstance(value, Mapping) else {}
            doc = _schema_doc(schema, limit=_MEMBER_DOC, name=str(name))
            flags = []
            if schema.get("deprecated") is True:
                flags.append("@deprecated")
            if schema.get("readOnly") is True:
                flags.append("read-only")
            if flags:
                doc = f"{doc} ({', '.join(flags)})" if doc else ", ".join(flags)
            mark = "" if name in required else "?"
            rendered = self.type(value, depth + 1, indent)
            if doc:
                lines.append(f"{indent}/** {_escape(doc)} */")
            lines.append(f"{indent}{_member_key(str(name))}{mark}: {rendered};")
        if len(items) > _MAX_PROPERTIES:
            lines.append(f"{indent}/** {len(items) - _MAX_PROPERTIES} more properties, not listed here. */")
            lines.append(f"{indent}[key: string]: unknown;")
        return "\n".join(lines)

    def type(self, schema: Any, depth: int, indent: str) -> str:
        """The TypeScript type of a converted schema (`unknown` where it says nothing)."""
        if schema is True or not isinstance(schema, Mapping):
            return "never" if schema is False else "unknown"
        rendered = self._type(schema, depth, indent)
        return rendered

    def _type(self, schema: Mapping[str, Any], depth: int, indent: str) -> str:
        ref = schema.get("$ref")
        if isinstance(ref, str):
            return self._ref(ref, depth, indent)
        if "const" in schema:
            return _literal(schema["const"])
        if is_file_schema(schema):
            self.file = True
            return FILE_TYPE
        enum = schema.get("enum")
        if isinstance(enum, list) and enum and len(enum) <= _MAX_ENUM:
            return " | ".join(dict.fromkeys(_literal(value) for value in enum))
        base = self._base(schema, depth, indent)
        for combinator in ("oneOf", "anyOf"):
            parts = schema.get(combinator)
            if isinstance(parts, list) and parts:
                rendered = [self.type(part, depth + 1, indent) for part in parts]
                if all(part == "unknown" for part in rendered):
                    continue  # constraint-only parts ({required: [...]}): the base type says it all
                union = "unknown" if "unknown" in rendered else " | ".join(dict.fromkeys(map(_wrap, rendered)))
                base = union if base is None else f"{_wrap(base)} & ({union})"
        parts = schema.get("allOf")
        if isinstance(parts, list) and parts:
            rendered = [self.type(part, depth + 1, indent) for part in parts]
            rendered = [part for part in dict.fromkeys(rendered) if part != "unknown"]
            if rendered:
                joined = " & ".join(map(_wrap, rendered))
                base = joined if base is None else f"{_wrap(base)} & {joined}"
        return base if base is not None else "unknown"

    def _ref(self, ref: str, depth: int, indent: str) -> str:
        if not ref.startswith(_DEFS):
            return "unknown"
        name = unquote(ref[len(_DEFS) :]).replace("~1", "/").replace("~0", "~")
        local = self.defs.get(name)
        if isinstance(local, Mapping):
            return self.type(local, depth + 1, indent) if depth < _MAX_DEPTH else "unknown"
        if name in self.typer.names:
            self.refs.add(name)
            return self.typer.names[name]
        return "unknown"

    def _base(self, schema: Mapping[str, Any], depth: int, indent: str) -> str | None:
        """The type `type` (and properties or items) says, or None when it says none."""
        kind = schema.get("type")
        if isinstance(kind, list):
            kinds = [k for k in kind if isinstance(k, str)]
            if not kinds:
                return None
            rendered = [self._kind(schema, k, depth, indent) for k in kinds]
            return " | ".join(dict.fromkeys(rendered))
        if isinstance(kind, str):
            return self._kind(schema, kind, depth, indent)
        if isinstance(schema.get("properties"), Mapping) or isinstance(schema.get("additionalProperties"), Mapping):
            return self._kind(schema, "object", depth, indent)
        if isinstance(schema.get("items"), Mapping) or isinstance(schema.get("prefixItems"), list):
            return self._kind(schema, "array", depth, indent)
        return None

    def _kind(self, schema: Mapping[str, Any], kind: str, depth: int, indent: str) -> str:
        if kind in ("integer", "number"):
            return "number"
        if kind in ("string", "boolean", "null"):
            return kind
        if kind == "file":
            self.file = True
            return FILE_TYPE
        if kind == "array":
            prefix = schema.get("prefixItems")
            if isinstance(prefix, list) and prefix:
                items = [self.type(part, depth + 1, indent) for part in prefix]
                rest = schema.get("items")
                if isinstance(rest, Mapping) and rest:
                    items.append(f"...{_wrap(self.type(rest, depth + 1, indent))}[]")
                return f"[{', '.join(items)}]"
            return f"{_wrap(self.type(schema.get('items'), depth + 1, indent))}[]"
        if kind == "object":
            return self._object(schema, depth, indent)
        return "unknown"

    def _object(self, schema: Mapping[str, Any], depth: int, indent: str) -> str:
        properties = schema.get("properties")
        extra = schema.get("additionalProperties")
        if depth > _MAX_DEPTH:
            return "{ [key: string]: unknown }"
        index = None
        if isinstance(extra, Mapping) and extra:
            index = f"{{ [key: string]: {self.type(extra, depth + 1, indent)} }}"
        if isinstance(properties, Mapping) and properties:
            members = self.members(properties, _required(schema), depth=depth, indent=indent + "  ")
            literal = f"{{\n{members}\n{indent}}}"
            # An index signature beside properties must fit them all: an intersection keeps both as written.
            return f"{literal} & {index}" if index is not None else literal
        if index is not None:
            return index
        if extra is False:
            return "{}"
        return "{ [key: string]: unknown }"


def _mapping(value: Any) -> dict[str, Any]:
    return {str(key): item for key, item in value.items()} if isinstance(value, Mapping) else {}


def _required(schema: Mapping[str, Any]) -> set[str]:
    listed = schema.get("required")
    return {name for name in listed if isinstance(name, str)} if isinstance(listed, list) else set()


def _is_plain_object(schema: Mapping[str, Any]) -> bool:
    """An object with properties and nothing an interface cannot say (no unions, no index signature, no null)."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or not properties:
        return False
    if schema.get("type") not in (None, "object"):
        return False
    if isinstance(schema.get("additionalProperties"), Mapping) and schema["additionalProperties"]:
        return False
    return not any(key in schema for key in ("oneOf", "anyOf", "allOf", "enum", "const", "$ref"))


#: Type names given per schema space (a catalog without one has no named schemas).
_TYPERS: WeakKeyDictionary[SchemaSpace, _Typer] = WeakKeyDictionary()
_NO_SPACE: list[_Typer] = []


def _typer(space: SchemaSpace | None) -> _Typer:
    if space is None:
        if not _NO_SPACE:
            _NO_SPACE.append(_Typer(None))
        return _NO_SPACE[0]
    typer = _TYPERS.get(space)
    if typer is None:
        typer = _TYPERS[space] = _Typer(space)
    return typer


def _type_names(schemas: Mapping[str, Any]) -> dict[str, str]:
    """A distinct TypeScript identifier for each schema name, in sorted order: `simple-user` → `simple_user`."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for name in sorted(schemas, key=str):
        base = _NOT_IN_TYPE_NAME.sub("_", str(name)) or "_"
        if base[0].isdigit():
            base = f"_{base}"
        if base in _RESERVED or base in _GLOBALS:
            base = f"{base}_"
        chosen, count = base, 1
        while chosen in taken:
            count += 1
            chosen = f"{base}_{count}"
        taken.add(chosen)
        names[str(name)] = chosen
    return names


def _member_key(name: str) -> str:
    """A member name as written in a type: as is when an identifier (but `new`, which would start a construct
    signature), else a quoted string."""
    return name if _IDENTIFIER.fullmatch(name) and name != "new" else json.dumps(name, ensure_ascii=False)


def _literal(value: Any) -> str:
    """A JSON value as a literal type (an object or array reads as an object or tuple type of literals)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _wrap(rendered: str) -> str:
    """`rendered` in parentheses when it is a union or intersection, which an array suffix would bind into."""
    return f"({rendered})" if _has_operator(rendered) else rendered


def _has_operator(rendered: str) -> bool:
    """Whether `|` or `&` joins types at the top level of `rendered` (outside brackets and string literals)."""
    depth = 0
    position = 0
    while position < len(rendered):
        char = rendered[position]
        if char == '"':
            position += 1
            while position < len(rendered) and rendered[position] != '"':
                position += 2 if rendered[position] == "\\" else 1
        elif char == "/" and rendered.startswith("/**", position):
            end = rendered.find("*/", position)
            position = len(rendered) if end < 0 else end + 1
        elif char in "{[(<":
            depth += 1
        elif char in "}])>":
            depth -= 1
        elif char in "|&" and depth == 0:
            return True
        position += 1
    return False


def _function_doc(function: Function) -> str:
    """The summary (or the description it begins) with the function's mark, then the rest of the description."""
    marks = "read" if function.read_only else "destructive" if function.destructive else "write"
    summary = " ".join(plain_text(function.summary).split())
    description = " ".join(plain_text(function.description).split())
    if description.startswith(summary):
        # The summary is the description's start (the builder makes it so when the document has none).
        summary, description = description, ""
    lines = [f"{_cut(summary, _FUNCTION_DOC)} [{marks}]" if summary else f"[{marks}]"]
    if description:
        lines.append(_cut(description, _FUNCTION_DOC))
    if function.deprecated:
        lines.append("@deprecated")
    return "\n".join(lines)


def _schema_doc(schema: Mapping[str, Any], *, limit: int = _FUNCTION_DOC, name: str = "") -> str:
    """The first paragraph of the description, else a title that says more than the member's name."""
    text = schema.get("description")
    if not isinstance(text, str) or not text.strip():
        title = schema.get("title")
        if not isinstance(title, str) or title.replace(" ", "_").casefold() == name.casefold():
            return ""
        text = title
    paragraph = plain_text(text).strip().split("\n\n", 1)[0]
    return _cut(" ".join(paragraph.split()), limit)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _escape(text: str) -> str:
    """Doc text that cannot end its comment early."""
    return text.replace("*/", "*\\/")


def _doc_block(doc: str, indent: str) -> str:
    if not doc:
        return ""
    lines = _escape(doc).split("\n")
    if len(lines) == 1:
        return f"{indent}/** {lines[0]} */\n"
    body = "\n".join(f"{indent} * {line}" if line else f"{indent} *" for line in lines)
    return f"{indent}/**\n{body}\n{indent} */\n"
