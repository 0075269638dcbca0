"""The documents the gateway reads for the catalog: URLs through its HTTP client, an app's own schema route
in-process.

The catalog opens no connection (see `catalog.fetched`); the gateway hands it `fetch_document`, which reads
`file:` URIs as the catalog would and http(s) URLs with `httpx2` (imported on first use, so that catalog
commands on files do not load it), within a deadline.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import unquote, urlsplit

from catalog.errors import DocumentError
from catalog.fetched import MAX_BYTES, Fetch, Fetched, Loading, read_file
from catalog.loading import Document, OpenAPIApp, load_document

__all__ = ["FETCH_TIMEOUT", "fetch_document", "http_fetch", "load_app_document"]

#: How long fetching one document may take, from connecting to the last byte.
FETCH_TIMEOUT = 10.0
_ACCEPT = "application/json, application/yaml;q=0.9, */*;q=0.5"


def http_fetch(timeout: float = FETCH_TIMEOUT) -> Fetch:
    """A fetch for the catalog that gives up on a URL after `timeout` seconds, saying so."""
    if not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")

    def fetch(uri: str, loading: Loading) -> Fetched:
        return fetch_document(uri, loading, timeout=timeout)

    return fetch


def fetch_document(uri: str, loading: Loading | None = None, *, timeout: float = FETCH_TIMEOUT) -> Fetched:
    """The bytes and media type at a `file:` or `http(s):` URI; DocumentError saying why when it cannot be read.

    An http(s) URL that does not answer within `timeout` seconds (connect, answer and body together) fails
    with a message saying so; one that would go past the deadline of its `loading` fails with
    `loading.overtime()`. Redirects are followed; bodies over MAX_BYTES are refused.
    """
    scheme = urlsplit(uri).scheme
    if scheme not in ("http", "https"):
        return read_file(uri, loading)
    import httpx2

    loading = loading or Loading(root=uri)
    now = time.monotonic()
    deadline = min(now + timeout, loading.deadline)
    if deadline <= now:
        raise loading.overtime()
    too_slow = (
        loading.overtime()
        if deadline == loading.deadline
        else DocumentError(
            f"{uri!r} did not answer within {timeout:g} s; check the URL, that the server is up and reachable from "
            "here, or download the document and load the file",
            location=uri,
        )
    )
    try:
        with (
            httpx2.Client(timeout=httpx2.Timeout(deadline - now), follow_redirects=True) as client,
            client.stream("GET", uri, headers={"Accept": _ACCEPT}) as response,
        ):
            if response.status_code != 200:
                raise DocumentError(
                    f"fetching {uri!r} failed with HTTP {response.status_code} {response.reason_phrase}; check the URL",
                    location=uri,
                )
            parts: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > MAX_BYTES:
                    raise DocumentError(
                        f"{uri!r} is larger than {MAX_BYTES // (1024 * 1024)} MiB; download it and load the file",
                        location=uri,
                    )
                parts.append(chunk)
                if time.monotonic() > deadline:
                    raise too_slow
            media_type = response.headers.get("content-type")
    except httpx2.TimeoutException:
        raise too_slow from None
    except httpx2.HTTPError as error:
        raise DocumentError(
            f"cannot fetch {uri!r}: {error or type(error).__name__}; check the URL and the network", location=uri
        ) from None
    return Fetched(content=b"".join(parts), media_type=media_type)


async def load_app_document(app: Any, *, path: str = "/openapi.json", timeout: float = FETCH_TIMEOUT) -> Document:
    """Load the document of an app: its `openapi()` when it has one (FastAPI), else the body of `GET path`.

    The GET is one in-process ASGI exchange (no socket); enter the app's lifespan first when it builds its
    routes there.
    """
    import anyio

    from gateway.rest._asgi import asgi_exchange

    if callable(getattr(app, "openapi", None)):
        openapi_app: OpenAPIApp = app
        return load_document(openapi_app, location="<app>")
    raw_path, _, query = path.partition("?")
    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": unquote(raw_path),
        "raw_path": raw_path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [(b"host", b"localhost"), (b"accept", _ACCEPT.encode())],
        "client": ("127.0.0.1", 0),
        "server": ("localhost", 80),
        "state": {},
    }
    try:
        with anyio.fail_after(timeout):
            answer = await asgi_exchange(app, scope, max_bytes=MAX_BYTES)
    except TimeoutError:
        raise DocumentError(f"GET {path} on the app did not finish within {timeout:g} s", location="<app>") from None
    if answer.error is not None and answer.status is None:
        raise DocumentError(
            f"GET {path} on the app raised {type(answer.error).__name__}: {answer.error}", location="<app>"
        )
    if answer.truncated:
        raise DocumentError(f"GET {path} on the app answered more than {MAX_BYTES} bytes", location="<app>")
    if answer.status != 200:
        raise DocumentError(
            f"GET {path} on the app answered HTTP {answer.status}, not 200; pass path= the route that serves its "
            "OpenAPI document",
            location="<app>",
        )
    return load_document(answer.body, location="<app>")
