"""Load an OpenAPI 3.0 or 3.1 (or Swagger 2.0) document into one JSON-compatible tree whose `$ref`s are all local.

`load_document` takes a file path, an http(s) URL, document text, bytes, a mapping or a FastAPI app. URLs, and
the other files and URLs that `$ref`s name, are read through the `fetch` callable the caller supplies (see
`catalog.fetched`): the catalog opens no connection itself. External-file, URL and OpenAPI 3.1
`$id`-relative refs are bundled into the tree the way `redocly bundle` does (see `catalog._bundle`), so a
multi-file API loads the same as its bundle. Real documents are often strictly invalid: what can still be
understood loads, and its problems come back as `Document.warnings`; what cannot (no `openapi` field, broken
JSON/YAML, a top level that is no mapping) raises `DocumentError` saying what, where and what to do. A Swagger 2.0
document is converted to OpenAPI 3.0.3 first (`catalog.swagger2`), with a warning that says so.

Documents whose refs are all local and resolvable (nearly all single-file documents) are not walked at all: the
parse collects the `$ref` values on the way, so GitHub's 13 MB document loads in about the time `json.loads`
takes.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, time
from decimal import Decimal
from enum import Enum
from pathlib import Path
from typing import Any, Protocol

from catalog._bundle import Bundler
from catalog._parse import RefScan, parse_text
from catalog._pointer import MISSING, join_pointer, lookup, split_fragment
from catalog._refs import MAX_REF_CHAIN
from catalog.errors import DocumentError
from catalog.fetched import Fetch, Fetched, Fetching, FetchLimits, looks_like_html, read_file, read_regular_file
from catalog.swagger2 import OPENAPI_VERSION, convert_swagger2

__all__ = ["Document", "DocumentWarning", "OpenAPIApp", "load_document"]

_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_VERSION = re.compile(r"3\.(\d+)(\.\d+)?(-[0-9A-Za-z.-]+)?")
_KNOWN_MINORS = (0, 1)


class OpenAPIApp(Protocol):
    """An app that builds its own OpenAPI document, as FastAPI does."""

    def openapi(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True, kw_only=True)
class DocumentWarning:
    """A problem in a document that loaded anyway: where (a JSON pointer, `#/...`) and what."""

    pointer: str
    message: str


@dataclass(frozen=True, kw_only=True)
class Document:
    """An OpenAPI 3.x document as one tree whose `$ref`s are all local (`#/components/...`, `#/paths/...`).

    The only refs left non-local are those that could not be resolved; each has a warning. Treat `data` as
    read-only: it may share subtrees with itself (a bundled file referenced twice) and with the mapping it was
    loaded from.
    """

    data: dict[str, Any]
    #: The document's `openapi` version string, e.g. '3.0.3' or '3.1.0'.
    openapi: str
    #: The path or URL it was read from, or '<string>', '<bytes>', '<dict>', '<app>'.
    location: str
    warnings: tuple[DocumentWarning, ...]


def load_document(
    source: str | os.PathLike[str] | bytes | Mapping[str, Any] | OpenAPIApp,
    *,
    location: str | None = None,
    fetch: Fetch = read_file,
    limits: FetchLimits | None = None,
) -> Document:
    """Load an OpenAPI 3.0/3.1 document (a Swagger 2.0 one converted first); raise DocumentError when it cannot be
    understood.

    `source` is one of:

    - a `str`: document text when, after leading whitespace, it starts with `{` or `[` or it contains a line break;
      otherwise an http(s) URL when it starts with `http://` or `https://`, else a file path;
    - an `os.PathLike`: a file path; `bytes`: document text;
    - a `Mapping`: the document itself, never mutated (and copied only when it must be changed);
    - an object with a callable `openapi()`, such as a FastAPI app: the mapping that method returns.

    JSON or YAML is told apart by content, not by file name; an HTML page is refused as one. `location` names
    the source in messages and, for text and mappings, is the base that relative `$ref`s resolve against (a
    path or URL). `fetch` reads a URL source and every other file or URL a `$ref` names; the default reads
    local files only (pass `gateway.fetch_document` for http(s)). A `$ref` may read a local file only in the
    folder of a document read from a file (or below it); all the fetches of one load together stay within
    `limits` (`FetchLimits()` by default: 600 s and 10,000 documents), else FetchLimitError.
    """
    limits = limits or FetchLimits()

    def fetching(base: str) -> Fetching:
        return Fetching(fetch, root=base, limits=limits)

    if isinstance(source, Mapping):
        return _load_tree(source, location or "<dict>", _base(location), owned=False, scan=None, fetch=fetching)
    if isinstance(source, bytes | bytearray):
        return _load_text(Fetched(content=bytes(source)), location or "<bytes>", _base(location), fetching)
    if isinstance(source, str):
        if not source.strip(" \t\r\n\ufeff"):
            raise DocumentError(
                "the document is an empty string (or only blanks); "
                "pass a file path, an http(s) URL or the document's text",
                location=location or "<string>",
            )
        if source.lstrip(" \t\r\n\ufeff").startswith(("{", "[")) or "\n" in source:
            return _load_text(source, location or "<string>", _base(location), fetching)
        if source.startswith(("http://", "https://")):
            root = fetching(source)
            return _load_text(root(source), location or source, source, lambda _: root)
        return _load_path(Path(source), location, fetching)
    if isinstance(source, os.PathLike):
        return _load_path(Path(source), location, fetching)
    if callable(getattr(source, "openapi", None)):
        tree = source.openapi()
        if not isinstance(tree, Mapping):
            raise DocumentError(
                f"the app's openapi() returned a {type(tree).__name__}, not a mapping", location=location or "<app>"
            )
        return _load_tree(tree, location or "<app>", _base(location), owned=False, scan=None, fetch=fetching)
    raise TypeError(  # pragma: no cover - the signature rules it out
        f"cannot load a document from {type(source).__name__!r}: pass a path, URL, text, bytes, a mapping or an "
        "app with openapi(); for another ASGI app use `await gateway.fetching.load_app_document(app)`"
    )


# -- sources ---------------------------------------------------------------------------------------------------


#: The fetches of one load, made for the URI its relative refs resolve against.
_Fetchings = Callable[[str], Fetching]


def _load_path(path: Path, location: str | None, fetch: _Fetchings) -> Document:
    shown = location or str(path)
    try:
        data = read_regular_file(path)
    except FileNotFoundError:
        # A name that ends like a document file was meant as a path; anything else may have been meant as text.
        meant = path.suffix.lower() in (".json", ".yaml", ".yml")
        why = "" if meant else " (a str is read as document text only when it starts with '{' or has a line break)"
        raise DocumentError(f"no file {str(path)!r}; check the path{why}", location=shown) from None
    except IsADirectoryError:
        raise DocumentError(
            f"{str(path)!r} is a directory; pass the document's entry file inside it (e.g. openapi.yaml)",
            location=shown,
        ) from None
    except OSError as exc:
        raise DocumentError(f"cannot read {str(path)!r}: {exc.strerror}", location=shown) from None
    return _load_text(Fetched(content=data), shown, path.absolute().as_uri(), fetch)


def _base(location: str | None) -> str:
    """The URI relative refs resolve against: a URL, a file path's URI, or "" (none) for '<string>' and such."""
    if not location or location.startswith("<"):
        return ""
    if location.startswith(("http://", "https://")):
        return location
    return Path(location).absolute().as_uri()


def _load_text(source: str | Fetched, location: str, base: str, fetch: _Fetchings) -> Document:
    """Parse document text; `Fetched` bytes (a file, a URL, bytes given) are first checked for a web page."""
    text: str | bytes
    if isinstance(source, Fetched):
        if looks_like_html(source):
            raise DocumentError(
                f"{location} is an HTML page, not an OpenAPI document; give the URL of the JSON or YAML document "
                "(API docs pages link it, often as openapi.json or openapi.yaml)",
                location=location,
            )
        text = source.content
    elif source[:512].lstrip("\ufeff \t\r\n").lower().startswith(("<!doctype html", "<html")):
        raise DocumentError(
            f"{location} is an HTML page, not an OpenAPI document; give the JSON or YAML document",
            location=location,
        )
    else:
        text = source
    tree, scan = parse_text(text, location)
    return _load_tree(tree, location, base, owned=True, scan=scan, fetch=fetch)


def _load_tree(
    tree: Any, location: str, base: str, *, owned: bool, scan: RefScan | None, fetch: _Fetchings
) -> Document:
    if tree is None:
        raise DocumentError(f"{location} is empty; expected an OpenAPI 3.x document", location=location)
    if not isinstance(tree, Mapping):
        raise DocumentError(
            f"the top level of {location} is a {_json_type(tree)}, not a mapping; an OpenAPI document is a "
            "mapping with an `openapi` field",
            location=location,
        )
    warnings = [DocumentWarning(pointer="#", message=note) for note in scan.notes] if scan else []
    if "openapi" not in tree and "swagger" in tree:
        tree, scan, owned = _convert_swagger(tree, location, scan, warnings)
    openapi, minor = _check_version(tree, location, warnings)
    if scan is None:
        tree, scan, owned = _adopt(tree, location)
    try:
        if _needs_bundling(tree, scan):
            if not owned:
                tree, owned = _jsonify(tree, location), True
            Bundler(
                tree,
                root_uri=base,
                schema_ids=minor >= 1,
                warn=lambda pointer, message: warnings.append(DocumentWarning(pointer=pointer, message=message)),
                fetch=fetch(base),
            ).bundle()
        data = _check_structure(dict(tree) if not owned else tree, openapi, warnings)
    except RecursionError:
        raise DocumentError(
            f"{location} is nested too deeply to read (over ~{sys.getrecursionlimit() // 2} levels)", location=location
        ) from None
    return Document(data=data, openapi=openapi, location=location, warnings=tuple(dict.fromkeys(warnings)))


def _json_type(value: Any) -> str:
    return "list" if isinstance(value, list) else "string" if isinstance(value, str) else type(value).__name__


# -- version ---------------------------------------------------------------------------------------------------


def _convert_swagger(
    tree: Mapping[str, Any], location: str, scan: RefScan | None, warnings: list[DocumentWarning]
) -> tuple[dict[str, Any], RefScan, bool]:
    """A Swagger 2.0 document converted to OpenAPI 3.0.3, a warning saying so first; DocumentError for another
    `swagger` version."""
    version = tree["swagger"]
    if version != "2.0" and not (isinstance(version, float) and version == 2.0):
        raise _swagger_error(version, location, "#/swagger")
    if scan is None:
        tree, _, _ = _adopt(tree, location)  # JSON-compatible before converting
    try:
        conversion = convert_swagger2(tree)
    except RecursionError:
        raise DocumentError(
            f"{location} is nested too deeply to read (over ~{sys.getrecursionlimit() // 2} levels)", location=location
        ) from None
    as_number = " (written as a number; write it as the string '2.0')" if isinstance(version, float) else ""
    warnings[:0] = [
        DocumentWarning(
            pointer="#/swagger",
            message=f"a Swagger 2.0 document{as_number}, converted in-process to OpenAPI {OPENAPI_VERSION} "
            f"({conversion.operations} operations); `npx swagger2openapi` writes a converted copy to review or edit",
        ),
        *(DocumentWarning(pointer=pointer, message=message) for pointer, message in conversion.notes),
    ]
    converted = RefScan()
    _scan_tree(conversion.data, converted)
    return conversion.data, converted, True


def _check_version(tree: Mapping[str, Any], location: str, warnings: list[DocumentWarning]) -> tuple[str, int]:
    """The `openapi` string and its minor version; DocumentError for a missing or unknown one."""
    if "openapi" not in tree:
        if "swagger" in tree:
            raise _swagger_error(tree["swagger"], location, "#/swagger")
        raise DocumentError(
            f"{location} has no `openapi` field, so it is not an OpenAPI 3 document; add the version it follows "
            "at the top level (e.g. `openapi: 3.1.0`)",
            pointer="#/openapi",
            location=location,
        )
    value = tree["openapi"]
    if isinstance(value, float) and value in (3.0, 3.1):
        warnings.append(
            DocumentWarning(pointer="#/openapi", message=f"openapi is the number {value}; write it as a string")
        )
        value = f"{value:.1f}"
    if not isinstance(value, str):
        raise DocumentError(
            f"`openapi` in {location} is {value!r}; it must be a version string such as '3.1.0'",
            pointer="#/openapi",
            location=location,
        )
    match = _VERSION.fullmatch(value)
    if match is None:
        if value.startswith("2"):
            raise DocumentError(
                f"`openapi` in {location} is {value!r}; a Swagger 2.0 document says `swagger: '2.0'` instead "
                "(it is then converted to OpenAPI 3), an OpenAPI 3 one a version such as '3.1.0'",
                pointer="#/openapi",
                location=location,
            )
        raise DocumentError(
            f"unsupported OpenAPI version {value!r} in {location}; this loader reads OpenAPI 3.0.x and 3.1.x",
            pointer="#/openapi",
            location=location,
        )
    if match[2] is None:
        warnings.append(
            DocumentWarning(pointer="#/openapi", message=f"openapi {value!r} lacks the patch number (e.g. '3.1.0')")
        )
    minor = int(match[1])
    if minor not in _KNOWN_MINORS:
        warnings.append(
            DocumentWarning(
                pointer="#/openapi",
                message=f"OpenAPI {value} is newer than the 3.0 and 3.1 this loader knows; it is read as 3.1, "
                "and features added since are ignored",
            )
        )
    return value, minor


def _swagger_error(version: Any, location: str, pointer: str) -> DocumentError:
    name = Path(location).name if not location.startswith("<") else "swagger.json"
    return DocumentError(
        f"{location} says `swagger: {version!r}`; only Swagger '2.0' (converted in-process), OpenAPI 3.0 and 3.1 "
        f"are read. Convert it first, e.g. `npx swagger2openapi {name} -o openapi.yaml`, or open it in the Swagger "
        "Editor (editor.swagger.io) and choose Edit > Convert to OpenAPI 3, then load the result",
        pointer=pointer,
        location=location,
    )


# -- refs ------------------------------------------------------------------------------------------------------


def _needs_bundling(tree: Mapping[str, Any], scan: RefScan) -> bool:
    """Whether any ref is non-local, broken, part of a cycle or starts a chain of more than MAX_REF_CHAIN refs; if
    none is, the tree needs no walk at all."""
    if scan.irregular:
        return True
    for ref in scan.values:
        tokens = split_fragment(ref[1:]) if ref.startswith("#") else None
        if tokens is None:
            return True
        target = lookup(tree, tokens)
        seen = {ref}
        while isinstance(target, dict) and isinstance(target.get("$ref"), str):
            following = target["$ref"]
            if following in seen or not following.startswith("#") or len(seen) >= MAX_REF_CHAIN:
                return True  # the bundler leaves it as it is, with a warning
            seen.add(following)
            tokens = split_fragment(following[1:])
            target = MISSING if tokens is None else lookup(tree, tokens)
        if target is MISSING:
            return True
    return False


def _adopt(tree: Mapping[str, Any], location: str) -> tuple[dict[str, Any], RefScan, bool]:
    """Scan a caller's mapping for refs; copy it (JSON-compatible) only when it is not plain JSON data."""
    scan = RefScan()
    try:
        plain = isinstance(tree, dict) and _scan_tree(tree, scan)
    except RecursionError:
        raise DocumentError(f"{location} is nested too deeply or contains itself", location=location) from None
    if plain:
        return tree, scan, False  # type: ignore[return-value]
    copy = _jsonify(tree, location)
    _scan_tree(copy, scan)
    return copy, scan, True


def _scan_tree(node: Any, scan: RefScan) -> bool:
    """Collect `$ref` values into `scan`; False when some key or value is not plain JSON data."""
    if isinstance(node, dict):
        ref = node.get("$ref", MISSING)
        if isinstance(ref, str):
            scan.values.add(ref)
        elif ref is not MISSING and not isinstance(ref, dict):
            scan.irregular = True
        plain = True
        for key, value in node.items():
            plain = isinstance(key, str) and _scan_tree(value, scan) and plain
        return plain
    if isinstance(node, list):
        return all([_scan_tree(item, scan) for item in node])  # noqa: C419 - scan every item
    return node is None or isinstance(node, str | int | float)


def _jsonify(node: Any, location: str, pointer: tuple[str, ...] = ()) -> Any:
    """A JSON-compatible deep copy: string keys, lists for sequences, ISO text for dates, values of enums."""
    if isinstance(node, Mapping):
        return {_json_key(key): _jsonify(value, location, (*pointer, str(key))) for key, value in node.items()}
    if isinstance(node, list | tuple):
        return [_jsonify(item, location, (*pointer, str(index))) for index, item in enumerate(node)]
    if node is None or isinstance(node, str | int | float):
        return node.value if isinstance(node, Enum) else node
    if isinstance(node, datetime | date | time):
        return node.isoformat()
    if isinstance(node, Enum):
        return _jsonify(node.value, location, pointer)
    if isinstance(node, Decimal):
        return int(node) if node == node.to_integral_value() else float(node)
    raise DocumentError(
        f"the value at {join_pointer(pointer)} of {location} is a {type(node).__name__}, which JSON cannot hold; "
        "convert it to a string, number, boolean, null, list or mapping",
        pointer=join_pointer(pointer),
        location=location,
    )


def _json_key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool) or key is None:
        return {True: "true", False: "false", None: "null"}[key]
    if isinstance(key, datetime | date | time):
        return key.isoformat()
    return str(key.value if isinstance(key, Enum) else key)


# -- structure -------------------------------------------------------------------------------------------------


def _check_structure(data: dict[str, Any], openapi: str, warnings: list[DocumentWarning]) -> dict[str, Any]:
    """Cheap checks of the OpenAPI skeleton, reported as warnings; path items and operations given as local refs
    are inlined (copying, never mutating, a caller's containers), so the builder finds them in place."""

    def warn(pointer: tuple[str, ...], message: str) -> None:
        warnings.append(DocumentWarning(pointer=join_pointer(pointer), message=message))

    if not isinstance(data.get("info"), dict):
        warn(("info",), "the document has no `info` mapping (title, version)")
    paths = data.get("paths")
    if paths is None:
        if openapi.startswith("3.0"):
            warn(("paths",), "the document has no `paths`; OpenAPI 3.0 requires them")
    elif not isinstance(paths, dict):
        warn(("paths",), f"`paths` is a {_json_type(paths)}, not a mapping; no operation can be read")
    else:
        new_paths = dict(paths)
        for route, item in paths.items():
            if route.startswith("x-"):
                continue
            if not route.startswith("/"):
                warn(("paths", route), f"path {route!r} does not start with '/'")
            new_paths[route] = _check_path_item(data, item, ("paths", route), warn)
        if any(new_paths[route] is not paths[route] for route in paths):
            data["paths"] = new_paths
    for key, kind in (("components", "mapping"), ("webhooks", "mapping")):
        if key in data and not isinstance(data[key], dict):
            warn((key,), f"`{key}` is a {_json_type(data[key])}, not a {kind}; it is ignored")
    components = data.get("components")
    if isinstance(components, dict):
        for section, group in components.items():
            if not isinstance(group, dict) and not section.startswith("x-"):
                warn(("components", section), f"`components.{section}` is a {_json_type(group)}, not a mapping")
    return data


def _check_path_item(
    data: dict[str, Any], item: Any, pointer: tuple[str, ...], warn: Callable[[tuple[str, ...], str], None]
) -> Any:
    item = _inline_local(data, item)
    if not isinstance(item, dict):
        warn(pointer, f"the path item is a {_json_type(item)}, not a mapping of operations")
        return item
    new_item = dict(item)
    for method in _METHODS:
        if method not in item:
            continue
        operation = new_item[method] = _inline_local(data, item[method])
        if not isinstance(operation, dict):
            warn((*pointer, method), f"the {method.upper()} operation is a {_json_type(operation)}, not a mapping")
        elif "parameters" in operation and not isinstance(operation["parameters"], list):
            warn((*pointer, method, "parameters"), "`parameters` is not a list; it is ignored")
    if "parameters" in item and not isinstance(item["parameters"], list):
        warn((*pointer, "parameters"), "`parameters` is not a list; it is ignored")
    changed = any(new_item[key] is not item[key] for key in item)
    return new_item if changed else item


def _inline_local(data: dict[str, Any], value: Any) -> Any:
    """A path item or operation written as a local ref, replaced by (a copy of) its target with the siblings."""
    for _ in range(16):
        ref = value.get("$ref") if isinstance(value, dict) else None
        if not isinstance(ref, str) or not ref.startswith("#"):
            return value
        tokens = split_fragment(ref[1:])
        target = MISSING if tokens is None else lookup(data, tokens)
        if target is MISSING or not isinstance(target, dict):
            return value  # already reported by the bundler
        value = {**target, **{k: v for k, v in value.items() if k != "$ref"}}
    return value
