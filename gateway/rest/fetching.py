"""The documents the gateway reads for the catalog: URLs through its HTTP client, an app's own schema route
in-process.

The catalog opens no connection (see `catalog.fetched`); the gateway hands it `fetch_document`, which reads
`file:` URIs as the catalog would and http(s) URLs with `httpx2` (imported on first use, so that catalog
commands on files do not load it), within a deadline.

A document's refs and redirects name URLs its author chose, so they may reach the root document's origin or
public hosts only (`oauth.addresses.is_public_address`, the rule the client metadata documents' fetch applies):
otherwise a document could make the gateway GET 169.254.169.254 or an intranet service and show the answer to
agents as a description.
"""

from __future__ import annotations

import ipaddress
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urljoin, urlsplit

from catalog.errors import DocumentError
from catalog.fetched import MAX_BYTES, Fetch, Fetched, Loading, read_file
from catalog.loading import Document, OpenAPIApp, load_document

if TYPE_CHECKING:
    from oauth.addresses import Address

__all__ = ["FETCH_TIMEOUT", "fetch_document", "http_fetch", "load_app_document"]

#: How long fetching one document may take, from connecting to the last byte.
FETCH_TIMEOUT = 10.0
_ACCEPT = "application/json, application/yaml;q=0.9, */*;q=0.5"
#: The most redirects one fetch follows.
_MAX_REDIRECTS = 10


def http_fetch(timeout: float = FETCH_TIMEOUT, *, allow_address: Callable[[Address], bool] | None = None) -> Fetch:
    """A fetch for the catalog that gives up on a URL after `timeout` seconds, saying so (`allow_address`: see
    `fetch_document`)."""
    if not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")

    def fetch(uri: str, loading: Loading) -> Fetched:
        return fetch_document(uri, loading, timeout=timeout, allow_address=allow_address)

    return fetch


def fetch_document(
    uri: str,
    loading: Loading | None = None,
    *,
    timeout: float = FETCH_TIMEOUT,
    allow_address: Callable[[Address], bool] | None = None,
) -> Fetched:
    """The bytes and media type at a `file:` or `http(s):` URI; DocumentError saying why when it cannot be read.

    An http(s) URL that does not answer within `timeout` seconds (connect, answer and body together) fails
    with a message saying so; one that would go past the deadline of its `loading` fails with
    `loading.overtime()`. Bodies over MAX_BYTES are refused.

    The URL and each redirect (followed one hop at a time, at most 10) may go to the origin of the load's root
    document (`uri` itself without `loading`: the operator named it), or to a host every address of which
    `allow_address` accepts (None: public ones, `oauth.addresses.is_public_address`), connecting to the
    address that was checked so that a second DNS answer cannot rebind it; anything else (loopback, private,
    link-local such as 169.254.169.254, ...) is refused before connecting. Tests that serve on 127.0.0.1 pass
    another `allow_address`.
    """
    scheme = urlsplit(uri).scheme
    if scheme not in ("http", "https"):
        return read_file(uri, loading)
    import httpx2

    if allow_address is None:
        from oauth.addresses import is_public_address  # here, so that catalog commands on files load no oauth

        allow_address = is_public_address
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
    url = uri
    try:
        with httpx2.Client(timeout=httpx2.Timeout(deadline - now), follow_redirects=False) as client:
            for _ in range(_MAX_REDIRECTS + 1):
                route = _route(uri, url, loading.root, allow_address)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise too_slow
                with client.stream(
                    "GET",
                    route.target,
                    headers={"Accept": _ACCEPT, **route.headers},
                    extensions=route.extensions,
                    timeout=httpx2.Timeout(left),
                ) as response:
                    if response.has_redirect_location:
                        url = _redirect_target(uri, url, response.headers["location"])
                        continue
                    if response.status_code != 200:
                        raise DocumentError(
                            f"fetching {_hop(uri, url)} failed with HTTP {response.status_code} "
                            f"{response.reason_phrase}; check the URL",
                            location=uri,
                        )
                    parts: list[bytes] = []
                    size = 0
                    for chunk in response.iter_bytes():
                        size += len(chunk)
                        if size > MAX_BYTES:
                            raise DocumentError(
                                f"{uri!r} is larger than {MAX_BYTES // (1024 * 1024)} MiB; download it and load the "
                                "file",
                                location=uri,
                            )
                        parts.append(chunk)
                        if time.monotonic() > deadline:
                            raise too_slow
                    return Fetched(content=b"".join(parts), media_type=response.headers.get("content-type"))
    except httpx2.TimeoutException:
        raise too_slow from None
    except httpx2.HTTPError as error:
        raise DocumentError(
            f"cannot fetch {_hop(uri, url)}: {error or type(error).__name__}; check the URL and the network",
            location=uri,
        ) from None
    raise DocumentError(
        f"{uri!r} redirects more than {_MAX_REDIRECTS} times (last to {url!r}); give the URL it ends at",
        location=uri,
    )


@dataclass(frozen=True)
class _Route:
    """Where one GET goes: the URL to connect to, and the headers and extensions that keep the name it was for."""

    target: str
    headers: dict[str, str]
    extensions: dict[str, Any]


def _origin(url: str) -> tuple[str, str, int] | None:
    """A URL's origin (RFC 6454 §4: scheme, host, port); None for one that is not http(s)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    try:
        port = parts.port
    except ValueError:
        return None
    return parts.scheme, parts.hostname.rstrip(".").lower(), port or (443 if parts.scheme == "https" else 80)


def _route(uri: str, url: str, root: str, allow_address: Callable[[Address], bool]) -> _Route:
    """How to GET `url` (`uri` itself, or where it redirected): as it is on the root's origin; elsewhere at an
    address it resolves to, once every one is allowed; DocumentError saying what to do when one is not."""
    origin = _origin(url)
    if origin is None:
        raise DocumentError(f"{_hop(uri, url)} is not an http(s) URL with a host; check the URL", location=uri)
    if origin == _origin(root):
        return _Route(target=url, headers={}, extensions={})
    scheme, host, port = origin
    try:
        addresses = _resolve(host, port)
    except OSError as error:
        raise DocumentError(
            f"cannot fetch {_hop(uri, url)}: the host {host!r} does not resolve ({error}); check the URL and the "
            "network",
            location=uri,
        ) from None
    refused = [str(address) for address in addresses if not allow_address(address)]
    if refused or not addresses:
        own = f"its own origin ({_scheme_host(root)}) or " if _origin(root) else ""
        raise DocumentError(
            f"{_hop(uri, url)} is on {', '.join(refused) or 'no address'}, which is not a public address; the "
            f"refs and redirects of a document may reach {own}hosts whose every address is public, so that a "
            "document cannot make this server fetch from its own network; bundle the document into one file "
            "where that host is reachable (e.g. `npx @redocly/cli bundle`) and load that",
            location=uri,
        )
    parts = urlsplit(url)
    userinfo, _, hostport = parts.netloc.rpartition("@")
    address = addresses[0]
    literal = f"[{address}]" if address.version == 6 else str(address)
    target = parts._replace(netloc=f"{userinfo}{'@' if userinfo else ''}{literal}:{port}").geturl()
    # Connect to the checked address; Host, and TLS's SNI and certificate check, still name the host.
    return _Route(
        target=target,
        headers={"Host": hostport},
        extensions={"sni_hostname": host} if scheme == "https" else {},
    )


def _scheme_host(url: str) -> str:
    """`https://host:port` of a URL, without user info."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"


def _resolve(host: str, port: int) -> list[Address]:
    """Every address `host` resolves to, in the resolver's order; OSError when it does not."""
    addresses: list[Address] = []
    for *_, sockaddr in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        address = ipaddress.ip_address(str(sockaddr[0]).split("%")[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


def _redirect_target(uri: str, url: str, location: str) -> str:
    """The absolute URL a redirect from `url` names; DocumentError for one that is not http(s)."""
    target = urljoin(url, location)
    if urlsplit(target).scheme not in ("http", "https"):
        raise DocumentError(
            f"{_hop(uri, url)} redirects to {target!r}, which is not an http(s) URL; give the document's URL",
            location=uri,
        )
    return target


def _hop(uri: str, url: str) -> str:
    """`uri` quoted, and where it redirected when that is another URL."""
    return repr(uri) if url == uri else f"{uri!r} (redirected to {url!r})"


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
