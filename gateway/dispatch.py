"""Turn a function call into the REST request and send it: in-process to an ASGI app, or over HTTP upstream.

Where each argument goes is catalog data (`Arg.location`, `style`, `explode`); this module only serializes
(OpenAPI 3.1 §4.8.12.4 style values) and sends.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final
from urllib.parse import quote, unquote

import anyio
import httpx2

from catalog.errors import shown
from catalog.model import Arg, Function
from gateway.errors import ArgumentError, ToolError

__all__ = ["HttpResponse", "RestRequest", "Transport", "build_request"]

_FORM = "application/x-www-form-urlencoded"
_MULTIPART = "multipart/form-data"
_IN_PROCESS_HOST: Final = "rest.internal"
#: A path segment of dots only.
_DOTS: Final = re.compile(r"^\.{1,2}$")
#: Control characters (tab aside), which no header value may hold.
_CONTROL: Final = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
#: What httpx2's client would add; no Accept-Encoding, so the app answers uncompressed bytes.
_IN_PROCESS_HEADERS: Final = (
    (b"accept", b"*/*"),
    (b"user-agent", f"python-httpx2/{httpx2.__version__}".encode()),
)
_BODY_METHODS: Final = frozenset({"POST", "PUT", "PATCH"})


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
            path = path.replace("{" + arg.name + "}", _path_value(arg, value))
        elif arg.location == "query":
            query.extend(_query_pairs(arg, value))
        elif arg.location == "header":
            headers.append((arg.name, _header_text(arg, _simple(value, explode=bool(arg.explode)))))
        elif arg.location == "cookie":
            cookies.append(f"{arg.name}={_header_text(arg, _simple(value, explode=False), cookie=True)}")
        elif arg.body_property is not None:
            body_values[arg.body_property] = value
        else:
            whole_body = value
    if cookies:
        headers.append(("cookie", "; ".join(cookies)))
    # A value that makes a whole segment "." or ".." would be a dot-segment, which HTTP clients resolve:
    # /files/{name}/content with name ".." would call /content. Escaped, it stays the value.
    path = "/".join(_DOTS.sub(lambda match: "%2E" * len(match.group()), segment) for segment in path.split("/"))
    if function.body_content_type is None or (whole_body is _MISSING and not body_values):
        return RestRequest(
            method=function.method, path=path, query=tuple(query), headers=tuple(headers), base=function.server
        )
    body = body_values if whole_body is _MISSING else whole_body
    return _with_body(function, path, tuple(query), tuple(headers), body)


_MISSING: Any = object()


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
            if _is_file(value) or _binary_field(function, name):
                files.append((name, _file(name, value)))
            elif isinstance(value, list):
                data.extend((name, _scalar(item)) for item in value)
            else:
                data.append((name, _scalar(value)))
        return replace(base, data=tuple(data), files=tuple(files))
    if "json" in lowered:
        return replace(base, content=json.dumps(body, ensure_ascii=False).encode(), content_type=media)
    if lowered.startswith("text/"):
        return replace(base, content=_scalar(body).encode(), content_type=media)
    return replace(base, content=_file("body", body)[1], content_type=media)


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


def _binary_field(function: Function, name: str) -> bool:
    for arg in function.args:
        if arg.body_property == name:
            schema = arg.schema
            return isinstance(schema, Mapping) and (
                schema.get("format") in ("binary", "base64") or "contentMediaType" in schema
            )
    return False


def _file(name: str, value: Any) -> tuple[str, bytes, str]:
    """A file part from `{base64|text, filename?, content_type?}` or a plain string (sent as its UTF-8 text)."""
    if isinstance(value, str):
        return (name, value.encode(), "application/octet-stream")
    if isinstance(value, Mapping):
        filename = str(value.get("filename") or name)
        content_type = str(value.get("content_type") or "application/octet-stream")
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


def _path_value(arg: Arg, value: Any) -> str:
    style = arg.style or "simple"
    explode = bool(arg.explode)
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
    style = arg.style or "form"
    explode = arg.explode if arg.explode is not None else style == "form"
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


class Transport:
    """Sends RestRequests to an ASGI app in-process or to an upstream base URL over one pooled client.

    In-process, the request is handed to the app as one ASGI call (no HTTP client in between): an exception
    the app raises propagates to the caller, and the app sees what httpx2's ASGITransport would show it
    (Host `rest.internal`, client 127.0.0.1), less Accept-Encoding, so bodies come back uncompressed.
    """

    def __init__(self, *, app: Any = None, upstream: str | None = None, timeout: float = 30.0) -> None:
        if (app is None) == (upstream is None):
            raise ValueError("give exactly one of app or upstream")
        self.in_process = app is not None
        #: Lifespan state of the wrapped app (ASGI lifespan spec 2.0), copied into every request's scope.
        self.state: dict[str, Any] | None = None
        self._app = app
        if app is not None:
            transport: httpx2.AsyncBaseTransport = httpx2.ASGITransport(app=app, raise_app_exceptions=True)
            base_url = f"http://{_IN_PROCESS_HOST}"
        else:
            transport = httpx2.AsyncHTTPTransport(retries=0)
            base_url = str(upstream).rstrip("/")
        self._client = httpx2.AsyncClient(
            transport=transport, base_url=base_url, timeout=timeout, follow_redirects=False
        )

    async def send(self, request: RestRequest, headers: Sequence[tuple[str, str]]) -> HttpResponse:
        """Send `request` with the extra `headers` (credentials last, so an argument never overrides them)."""
        all_headers = httpx2.Headers(list(request.headers))
        for name, value in headers:
            all_headers[name] = value
        if request.content_type is not None:
            all_headers["content-type"] = request.content_type
        if self._app is not None:
            return await self._send_in_process(self._app, request, all_headers)
        base = httpx2.URL(request.base) if request.base else self._client.base_url
        url = base.copy_with(raw_path=_raw_path(base, request))
        try:
            response = await self._client.request(
                request.method,
                url,
                headers=all_headers,
                content=request.content,
                data=dict(_group(request.data)) if request.data or request.files else None,
                files=list(request.files) or None,
            )
        except httpx2.TimeoutException:
            where = str(base).rstrip("/")
            raise ToolError(f"the API at {where} did not answer in time; retry later or ask for less") from None
        except httpx2.TransportError as error:
            # Not the API's answer: the gateway could not reach it (wrong --upstream or servers, API down).
            reason, where = str(error) or type(error).__name__, str(base).rstrip("/")
            raise ToolError(
                f"could not reach the API at {where} ({reason}); retry later, and if it persists the gateway's "
                "upstream URL may be wrong"
            ) from None
        return HttpResponse(
            status=response.status_code,
            reason=response.reason_phrase,
            headers={k.lower(): v for k, v in response.headers.items()},
            body=response.content,
        )

    async def _send_in_process(self, app: Any, request: RestRequest, headers: httpx2.Headers) -> HttpResponse:
        content = request.content or b""
        if request.data or request.files:
            # Form and multipart bodies are encoded by httpx2 (boundary and all), as for an upstream call.
            encoded = httpx2.Request(
                request.method,
                f"http://{_IN_PROCESS_HOST}/",
                data=dict(_group(request.data)),
                files=list(request.files) or None,
            )
            content = encoded.read()
            headers.setdefault("content-type", encoded.headers["content-type"])
        raw_headers = [(name.lower(), value) for name, value in headers.raw]
        present = {name for name, _ in raw_headers}
        if b"host" not in present:
            raw_headers.append((b"host", _IN_PROCESS_HOST.encode()))
        raw_headers.extend(item for item in _IN_PROCESS_HEADERS if item[0] not in present)
        if (content or request.method in _BODY_METHODS) and b"content-length" not in present:
            raw_headers.append((b"content-length", str(len(content)).encode()))
        raw_path = _raw_path(httpx2.URL(), request)
        path, _, query = raw_path.partition(b"?")
        scope: dict[str, Any] = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": request.method,
            "headers": raw_headers,
            "scheme": "http",
            "path": unquote(path.decode("ascii")),
            "raw_path": path,
            "query_string": query,
            "server": (_IN_PROCESS_HOST, None),
            "client": ("127.0.0.1", 123),
            "root_path": "",
        }
        if self.state is not None:
            scope["state"] = dict(self.state)
        return await _call_app(app, scope, content, head=request.method == "HEAD")

    async def aclose(self) -> None:
        """Close pooled connections."""
        await self._client.aclose()


async def _call_app(app: Any, scope: dict[str, Any], content: bytes, *, head: bool) -> HttpResponse:
    """One ASGI HTTP exchange with `app` (ASGI 3.0 HTTP spec): the body in one message, the answer collected."""
    body_sent = False
    complete = anyio.Event()
    status: int | None = None
    response_headers: list[tuple[bytes, bytes]] = []
    parts: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal body_sent
        if not body_sent:
            body_sent = True
            return {"type": "http.request", "body": content, "more_body": False}
        # ASGI: after the body, receive() blocks until the client goes away, i.e. once the answer is complete.
        await complete.wait()
        return {"type": "http.disconnect"}

    async def send(message: Mapping[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
            response_headers.extend(message.get("headers", ()))
        elif message["type"] == "http.response.body":
            chunk = message.get("body", b"")
            if chunk and not head:
                parts.append(chunk)
            if not message.get("more_body", False):
                complete.set()

    await app(scope, receive, send)
    if status is None or not complete.is_set():
        raise RuntimeError("the app returned without sending a complete HTTP response")
    folded: dict[str, str] = {}
    for raw_name, raw_value in response_headers:
        name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
        folded[name] = f"{folded[name]}, {value}" if name in folded else value
    return HttpResponse(
        status=status, reason=httpx2.codes.get_reason_phrase(status), headers=folded, body=b"".join(parts)
    )


def _group(pairs: Sequence[tuple[str, str]]) -> dict[str, str | list[str]]:
    grouped: dict[str, str | list[str]] = {}
    for key, value in pairs:
        if key in grouped:
            existing = grouped[key]
            grouped[key] = [*existing, value] if isinstance(existing, list) else [existing, value]
        else:
            grouped[key] = value
    return grouped


def _raw_path(base: httpx2.URL, request: RestRequest) -> bytes:
    prefix = base.raw_path.decode().rstrip("/")
    path = prefix + request.path
    if request.query:
        path += "?" + "&".join(f"{quote(k, safe='[]')}={quote(v, safe='')}" for k, v in request.query)
    return path.encode()
