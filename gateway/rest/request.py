"""The REST request a function call becomes, and the answer: serialization by the catalog's data, no sending.

Where each argument goes is catalog data (`Arg.location`, `style`, `explode`); this module only serializes
(OpenAPI 3.1 §4.8.12.4 style values). The transports in `gateway.rest.transports` send what it builds.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final
from urllib.parse import quote, unquote

from catalog.errors import shown
from catalog.model import Arg, Function
from catalog.schemas import is_binary
from gateway.errors import ArgumentError

__all__ = ["HttpResponse", "RestRequest", "build_request", "encoded_body", "request_target"]

_FORM = "application/x-www-form-urlencoded"
_MULTIPART = "multipart/form-data"
#: A path segment of dots only.
_DOTS: Final = re.compile(r"^\.{1,2}$")
#: A media type with optional parameters, as a file part's Content-Type may carry (RFC 9110 §8.3.1).
_MEDIA_TYPE: Final = re.compile(r"^[\w.+-]+/[\w.+-]+(\s*;\s*[\w.+-]+=(\"[^\"\r\n]*\"|[\w.+-]+))*$", re.ASCII)
#: Control characters (tab aside), which no header value may hold.
_CONTROL: Final = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


@dataclass(frozen=True, kw_only=True)
class RestRequest:
    """The REST request a function call becomes (credentials are added when it is sent)."""

    method: str
    path: str
    query: tuple[tuple[str, str], ...] = ()
    headers: tuple[tuple[str, str], ...] = ()
    content: bytes | None = None
    content_type: str | None = None
    files: tuple[tuple[str, tuple[str, bytes, str]], ...] = ()
    data: tuple[tuple[str, str], ...] = ()
    #: The base URL of the function's own server, which upstream calls go to instead of the upstream (see
    #: `Function.server`); None for most.
    base: str | None = None


@dataclass(frozen=True, kw_only=True)
class HttpResponse:
    """What the REST API answered."""

    status: int
    reason: str
    headers: Mapping[str, str]
    body: bytes
    #: True when the app raised while answering in-process: its error status is the API's own failure.
    raised: bool = False

    @property
    def content_type(self) -> str:
        """The media type without parameters, lower-case ('' when absent)."""
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()

    @property
    def is_json(self) -> bool:
        """True when the media type says JSON (`application/json`, `…+json`)."""
        media = self.content_type
        return media == "application/json" or media.endswith("+json")

    @property
    def text(self) -> str:
        """The body as UTF-8 text, undecodable bytes replaced."""
        return self.body.decode("utf-8", "replace")

    def json(self) -> Any:
        """The body as JSON data; ValueError when it is not JSON, or nested deeper than Python reads."""
        try:
            return json.loads(self.body)
        except RecursionError:
            raise ValueError("the JSON is nested too deeply to read") from None


def build_request(function: Function, args: Mapping[str, Any]) -> RestRequest:
    """The REST request for validated `args`; ArgumentError when a value cannot be serialized where it goes."""
    path = function.path
    query: list[tuple[str, str]] = []
    headers: list[tuple[str, str]] = []
    cookies: list[str] = []
    body_values: dict[str, Any] = {}
    whole_body: Any = _MISSING
    for arg in function.args:
        if arg.name not in args:
            continue
        value = args[arg.name]
        if arg.location == "path":
            path = path.replace("{" + arg.name + "}", _checked_segment(arg, _path_value(arg, value)))
        elif arg.location == "query":
            query.extend(_query_pairs(arg, value))
        elif arg.location == "header":
            headers.append((arg.name, _header_text(arg, _simple(value, explode=arg.exploded))))
        elif arg.location == "cookie":
            cookies.append(f"{arg.name}={_header_text(arg, _simple(value, explode=False), cookie=True)}")
        elif arg.body_property is not None:
            body_values[arg.body_property] = value
        else:
            whole_body = value
    if cookies:
        headers.append(("cookie", "; ".join(cookies)))
    if whole_body is _MISSING and not body_values and function.body_required and _flattened(function):
        # A required body whose fields are all optional: the API wants the object even when it is empty.
        body_values = {}
        return _with_body(function, path, tuple(query), tuple(headers), body_values)
    if function.body_content_type is None or (whole_body is _MISSING and not body_values):
        return RestRequest(
            method=function.method, path=path, query=tuple(query), headers=tuple(headers), base=function.server
        )
    body = body_values if whole_body is _MISSING else whole_body
    return _with_body(function, path, tuple(query), tuple(headers), body)


_MISSING: Any = object()


def _flattened(function: Function) -> bool:
    """True when the body is an object whose properties are the function's args (not one whole-body arg)."""
    return any(arg.location == "body" and arg.body_property is not None for arg in function.args)


def _with_body(
    function: Function,
    path: str,
    query: tuple[tuple[str, str], ...],
    headers: tuple[tuple[str, str], ...],
    body: Any,
) -> RestRequest:
    media = function.body_content_type or "application/json"
    lowered = media.lower()
    base = RestRequest(method=function.method, path=path, query=query, headers=headers, base=function.server)
    if lowered.startswith(_FORM):
        pairs = _form_pairs("", body) if isinstance(body, Mapping) else [("body", _scalar(body))]
        encoded = "&".join(f"{quote(k, safe='[]')}={quote(v, safe='')}" for k, v in pairs)
        return replace(base, content=encoded.encode(), content_type=_FORM)
    if lowered.startswith(_MULTIPART):
        if not isinstance(body, Mapping):
            raise ArgumentError("the multipart body must be an object of form fields", args=("body",))
        data: list[tuple[str, str]] = []
        files: list[tuple[str, tuple[str, bytes, str]]] = []
        for name, value in body.items():
            field = _field_schema(function, name)
            if isinstance(value, list) and (is_binary(_items(field)) or any(_is_file(item) for item in value)):
                files.extend((name, _file(name, item, _media(_items(field)))) for item in value)
            elif _is_file(value) or is_binary(field):
                files.append((name, _file(name, value, _media(field))))
            elif isinstance(value, list):
                data.extend((name, _scalar(item)) for item in value)
            else:
                data.append((name, _scalar(value)))
        return replace(base, data=tuple(data), files=tuple(files))
    if "json" in lowered:
        return replace(base, content=json.dumps(body, ensure_ascii=False).encode(), content_type=media)
    if lowered.startswith("text/"):
        return replace(base, content=_scalar(body).encode(), content_type=media)
    _, content, sent_type = _file("body", body, media)
    return replace(base, content=content, content_type=sent_type)


def _is_file(value: Any) -> bool:
    return (
        isinstance(value, Mapping)
        and ("base64" in value or "text" in value)
        and set(value)
        <= {
            "base64",
            "text",
            "filename",
            "content_type",
        }
    )


def _field_schema(function: Function, name: str) -> Mapping[str, Any]:
    """The document's schema of body field `name` (refs resolved by the catalog), or {}."""
    for arg in function.args:
        if arg.body_property == name and isinstance(arg.schema, Mapping):
            return arg.schema
    return {}


def _items(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    items = schema.get("items")
    return items if isinstance(items, Mapping) else {}


def _media(schema: Mapping[str, Any]) -> str:
    media = schema.get("contentMediaType")
    return media if isinstance(media, str) and _MEDIA_TYPE.match(media) else "application/octet-stream"


def _file(name: str, value: Any, default_type: str) -> tuple[str, bytes, str]:
    """A file (name, bytes, media type) from `{base64|text, filename?, content_type?}` or a string (its UTF-8 text)."""
    if isinstance(value, str):
        return (name, value.encode(), default_type)
    if isinstance(value, Mapping):
        filename = str(value.get("filename") or name)
        content_type = str(value.get("content_type") or default_type)
        if not _MEDIA_TYPE.match(content_type):
            raise ArgumentError(
                f"argument {name!r}: content_type must be a media type such as 'image/png', not {shown(content_type)}",
                args=(name,),
            )
        if "base64" in value:
            try:
                return (filename, base64.b64decode(str(value["base64"]), validate=True), content_type)
            except (binascii.Error, ValueError) as error:
                raise ArgumentError(
                    f"argument {name!r}: 'base64' is not valid base64 ({error})", args=(name,)
                ) from None
        if "text" in value:
            return (filename, str(value["text"]).encode(), content_type)
    raise ArgumentError(
        f"argument {name!r} is a file: pass a string, or an object {{base64 or text, filename?, content_type?}}",
        args=(name,),
    )


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return json.dumps(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _simple(value: Any, *, explode: bool) -> str:
    """OpenAPI `simple` style: arrays comma-joined; objects `k,v,k,v` (or `k=v,k=v` exploded)."""
    if isinstance(value, list):
        return ",".join(_scalar(item) for item in value)
    if isinstance(value, Mapping):
        if explode:
            return ",".join(f"{k}={_scalar(v)}" for k, v in value.items())
        return ",".join(f"{k},{_scalar(v)}" for k, v in value.items())
    return _scalar(value)


def _header_text(arg: Arg, text: str, *, cookie: bool = False) -> str:
    """`text` when it can travel in a header as it is; ArgumentError for what would break or forge one."""
    # A line break would start another header, a `;` another cookie; HTTP header values are ASCII.
    forbidden = _CONTROL.search(text) or not text.isascii() or (cookie and ";" in text)
    if forbidden:
        where = "a cookie" if cookie else "a header"
        raise ArgumentError(
            f"argument {arg.name!r} goes in {where}: use printable ASCII text"
            + (" without ';'" if cookie else "")
            + f", not {shown(text)}",
            args=(arg.name,),
        )
    return text


def _checked_segment(arg: Arg, encoded: str) -> str:
    """`encoded` unless, decoded however often a server may decode it, it holds a dot-segment; ArgumentError then.

    RFC 3986 §6.2.2.2 and the WHATWG URL standard read `%2E%2E` as `..`, and servers that route on a
    normalized URL (nginx, many frameworks) then resolve it: `/tenants/{tenant}/reports` with tenant `..`
    would reach `/reports` with the caller's credentials. No encoding of a dot-segment is safe, so none is sent.
    """
    decoded = encoded
    for _ in range(_DECODINGS):
        once = unquote(decoded)
        if once == decoded:
            break
        decoded = once
    if any(_DOTS.match(piece) for piece in re.split(r"[/\\]", decoded)):
        raise ArgumentError(
            f"argument {arg.name!r} would make a path segment '.' or '..', which servers resolve to another "
            "path; pass the identifier itself",
            args=(arg.name,),
        )
    return encoded


#: How many rounds of percent-decoding a path value is checked through (`%252E` is `%2E` once decoded).
_DECODINGS: Final = 4


def _path_value(arg: Arg, value: Any) -> str:
    style, explode = arg.style_used, arg.exploded
    if style == "simple":
        encoded = quote(_simple(value, explode=explode), safe=",=")
        if not encoded:
            raise ArgumentError(f"argument {arg.name!r} fills a path segment: it cannot be empty", args=(arg.name,))
        return encoded
    if style == "label":
        return "." + quote(_simple(value, explode=explode), safe=",=").replace(",", "." if explode else ",")
    if style == "matrix":
        if isinstance(value, list) and explode:
            return "".join(f";{arg.name}={quote(_scalar(v), safe='')}" for v in value)
        if isinstance(value, Mapping) and explode:
            return "".join(f";{quote(str(k), safe='')}={quote(_scalar(v), safe='')}" for k, v in value.items())
        return f";{arg.name}={quote(_simple(value, explode=explode), safe=',')}"
    return quote(_simple(value, explode=explode), safe=",=")


def _query_pairs(arg: Arg, value: Any) -> list[tuple[str, str]]:
    style, explode = arg.style_used, arg.exploded
    if style == "deepObject" and isinstance(value, Mapping):
        return _form_pairs(arg.name, value)
    if isinstance(value, list):
        if explode:
            return [(arg.name, _scalar(item)) for item in value]
        separator = {"spaceDelimited": " ", "pipeDelimited": "|"}.get(style, ",")
        return [(arg.name, separator.join(_scalar(item) for item in value))]
    if isinstance(value, Mapping):
        if explode:
            return [(str(k), _scalar(v)) for k, v in value.items()]
        return [(arg.name, ",".join(f"{k},{_scalar(v)}" for k, v in value.items()))]
    return [(arg.name, _scalar(value))]


def _form_pairs(prefix: str, value: Any) -> list[tuple[str, str]]:
    """Nested objects and arrays as `a[b][0]=c` pairs, the convention form-encoded APIs (Stripe) read."""
    if isinstance(value, Mapping):
        pairs: list[tuple[str, str]] = []
        for key, item in value.items():
            pairs.extend(_form_pairs(f"{prefix}[{key}]" if prefix else str(key), item))
        return pairs
    if isinstance(value, list):
        if all(not isinstance(item, Mapping | list) for item in value):
            return [(prefix, _scalar(item)) for item in value] if prefix else []
        pairs = []
        for index, item in enumerate(value):
            pairs.extend(_form_pairs(f"{prefix}[{index}]", item))
        return pairs
    return [(prefix, _scalar(value))]


def request_target(request: RestRequest, prefix: str) -> bytes:
    """The request target (RFC 9112 §3.2: path and query) under the base path `prefix`, percent-encoded."""
    path = prefix.rstrip("/") + request.path
    if request.query:
        path += "?" + "&".join(f"{quote(k, safe='[]')}={quote(v, safe='')}" for k, v in request.query)
    return path.encode()


def encoded_body(request: RestRequest) -> tuple[bytes, str | None]:
    """The body bytes and their Content-Type: multipart fields and files encoded (RFC 7578), else as built."""
    if request.data or request.files:
        return _multipart(request.data, request.files)
    return request.content or b"", request.content_type


def _multipart(
    data: Sequence[tuple[str, str]], files: Sequence[tuple[str, tuple[str, bytes, str]]]
) -> tuple[bytes, str]:
    """A multipart/form-data body (RFC 7578): one part per field, then one per file, under a random boundary."""
    boundary = secrets.token_hex(16)
    parts: list[bytes] = []
    for name, value in data:
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{_quoted(name)}"\r\n\r\n'.encode())
        parts.append(value.encode() + b"\r\n")
    for name, (filename, content, content_type) in files:
        parts.append(
            f"--{boundary}\r\nContent-Disposition: form-data; "
            f'name="{_quoted(name)}"; filename="{_quoted(filename)}"\r\nContent-Type: {content_type}\r\n\r\n'.encode()
        )
        parts.append(content + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def _quoted(text: str) -> str:
    """A name or file name inside a quoted Content-Disposition parameter (RFC 7578 §4.2, as browsers escape)."""
    return text.replace("\\", "\\\\").replace('"', "%22").replace("\r", "%0D").replace("\n", "%0A")
