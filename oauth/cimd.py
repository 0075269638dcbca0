"""Client ID Metadata Documents: a client_id that is an https URL names the JSON document describing the client.

The server fetches that URL, so the fetch is guarded against server-side request forgery: https only, every
address the name resolves to must be public (no private, loopback, link-local, shared, reserved or multicast
address), the connection goes to the address that was checked (no second DNS lookup to rebind), redirects are
not followed, and the response is capped in size and time. Documents are cached (draft-ietf-oauth-client-id-
metadata-document §4.3: honour HTTP caching, within bounds).

A fetch that fails says only that the document could not be fetched: which of resolving, connecting, TLS,
waiting or the HTTP status failed would turn the server into a probe of other hosts' ports, so that detail
goes to the operator's log alone. Failures are remembered for a minute, and fetches are limited per host and
overall, so a visitor cannot make the server knock on many doors quickly.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import re
import socket
import ssl
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from typing import Any, Final
from urllib.parse import urlsplit

import anyio
import httpx2

from oauth.errors import ClientDocumentError
from oauth.store import Clock

__all__ = ["Address", "ClientDocuments", "Resolver", "is_client_id_url", "is_public_address"]

logger = logging.getLogger(__name__)

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[list[Address]]]
"""Resolves a host name and port to the addresses to connect to."""

_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*(\d+)", re.IGNORECASE)
_DEFAULT_TTL: Final = 300.0
_MIN_TTL: Final = 60.0
_MAX_TTL: Final = 24 * 3600.0
#: How long a failed fetch is remembered (and answered without fetching again).
_FAILURE_TTL: Final = 60.0
#: Fetches allowed per host, and overall, within `_FETCH_WINDOW` seconds.
_FETCHES_PER_HOST: Final = 10
_FETCHES: Final = 100
_FETCH_WINDOW: Final = 60.0


class _Unreachable(Exception):
    """The document could not be fetched; the message is the operator's detail, never shown to the visitor."""


def _unreachable(url: str) -> ClientDocumentError:
    return ClientDocumentError(
        f"the client metadata document at {url!r} could not be fetched; the app's developer must serve it over "
        "https from a public address, answering 200"
    )


def is_client_id_url(client_id: str) -> bool:
    """Whether `client_id` is a Client ID Metadata Document URL (draft §3): https, a path, no fragment,
    no user info, no dot segments."""
    try:
        parts = urlsplit(client_id)
        parts.port  # noqa: B018 - raises ValueError for a malformed port
    except ValueError:
        return False
    if parts.scheme != "https" or not parts.hostname or parts.fragment or "@" in parts.netloc:
        return False
    segments = parts.path.split("/")
    return parts.path not in ("", "/") and "." not in segments and ".." not in segments


#: The NAT64 well-known prefix (RFC 6052): its addresses end in the IPv4 address they translate to.
_NAT64: Final = ipaddress.IPv6Network("64:ff9b::/96")


def is_public_address(address: Address) -> bool:
    """Whether `address` is on the public internet: not private, loopback, link-local, shared or reserved."""
    if isinstance(address, ipaddress.IPv6Address):
        # An IPv4 address inside an IPv6 one (mapped, 6to4, NAT64) is reached as that IPv4 address.
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None:
            return is_public_address(embedded)
    return address.is_global and not address.is_multicast


async def _resolve(host: str, port: int) -> list[Address]:
    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses: list[Address] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%")[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


class ClientDocuments:
    """Fetches and caches Client ID Metadata Documents; `fetch` raises ClientDocumentError saying what is wrong.

    `resolve`, `allow_address` and `ssl_context` exist for tests that serve a document on 127.0.0.1 with a
    certificate of their own; production keeps the defaults.
    """

    def __init__(
        self,
        *,
        timeout: float = 5.0,
        max_bytes: int = 5 * 1024,
        max_entries: int = 1000,
        resolve: Resolver | None = None,
        allow_address: Callable[[Address], bool] = is_public_address,
        ssl_context: ssl.SSLContext | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self._resolve = resolve or _resolve
        self._allow_address = allow_address
        self._clock = clock or time.time
        self._cache: OrderedDict[str, tuple[float, dict[str, Any] | ClientDocumentError]] = OrderedDict()
        self._fetched: OrderedDict[str, deque[float]] = OrderedDict()
        self._http = httpx2.AsyncClient(
            verify=ssl_context if ssl_context is not None else True, follow_redirects=False, trust_env=False
        )

    async def fetch(self, url: str) -> dict[str, Any]:
        """The metadata document at `url` (cached), checked to be a JSON object no larger than `max_bytes`."""
        now = self._clock()
        cached = self._cache.get(url)
        if cached is not None and cached[0] > now:
            self._cache.move_to_end(url)
            if isinstance(cached[1], ClientDocumentError):
                raise ClientDocumentError(cached[1].description)
            return cached[1]
        if not is_client_id_url(url):
            raise ClientDocumentError(f"client_id {url!r} is not an https URL with a path")
        host = urlsplit(url).hostname or ""
        if not self._may_fetch(host, now):
            logger.warning("not fetching the client metadata document %s: too many fetches in a minute", url)
            raise ClientDocumentError(
                f"too many client metadata documents were fetched from {host!r} just now; try again in a minute"
            )
        try:
            with anyio.fail_after(self.timeout):
                document, ttl = await self._download(url)
        except (TimeoutError, _Unreachable) as failure:
            detail = str(failure) or f"it did not arrive within {self.timeout:g} s"
            logger.warning("the client metadata document %s could not be fetched: %s", url, detail)
            self._remember(url, _unreachable(url), _FAILURE_TTL)
            raise _unreachable(url) from None
        except ClientDocumentError as error:
            self._remember(url, error, _FAILURE_TTL)
            raise
        self._remember(url, document, ttl)
        return document

    def _remember(self, url: str, outcome: dict[str, Any] | ClientDocumentError, ttl: float) -> None:
        if ttl > 0:
            self._cache[url] = (self._clock() + ttl, outcome)
            self._cache.move_to_end(url)
            while len(self._cache) > self.max_entries:
                self._cache.popitem(last=False)

    def _may_fetch(self, host: str, now: float) -> bool:
        """Count a fetch from `host`, unless the host's or the overall budget for the window is spent."""
        since = now - _FETCH_WINDOW
        for times in self._fetched.values():
            while times and times[0] <= since:
                times.popleft()
        for empty in [name for name, times in self._fetched.items() if not times]:
            del self._fetched[empty]
        times = self._fetched.setdefault(host, deque())
        if len(times) >= _FETCHES_PER_HOST or sum(map(len, self._fetched.values())) >= _FETCHES:
            return False
        times.append(now)
        return True

    async def aclose(self) -> None:
        """Close the connections; the fetcher is not used afterwards."""
        await self._http.aclose()

    async def _download(self, url: str) -> tuple[dict[str, Any], float]:
        parts = urlsplit(url)
        host, port = parts.hostname or "", parts.port or 443
        try:
            addresses = await self._resolve(host, port)
        except OSError as error:
            raise _Unreachable(f"the host does not resolve: {error}") from None
        refused = [str(address) for address in addresses if not self._allow_address(address)]
        if refused or not addresses:
            raise _Unreachable(f"it resolves to {', '.join(refused) or 'no address'}, which is not a public address")
        address = addresses[0]
        literal = f"[{address}]" if address.version == 6 else str(address)
        target = parts._replace(netloc=f"{literal}:{port}").geturl()
        headers = {"host": parts.netloc, "accept": "application/json"}
        try:
            # Connect to the checked address; TLS still verifies the certificate against the host name (SNI).
            async with self._http.stream("GET", target, headers=headers, extensions={"sni_hostname": host}) as response:
                if response.status_code != 200:
                    raise _Unreachable(f"the server answered HTTP {response.status_code}, not 200")
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body.extend(chunk)
                    if len(body) > self.max_bytes:
                        raise ClientDocumentError(
                            f"the client metadata document at {url!r} is larger than {self.max_bytes} bytes"
                        )
                cache_control = response.headers.get("cache-control", "")
        except httpx2.HTTPError as error:
            raise _Unreachable(f"{type(error).__name__}: {error}") from None
        try:
            document = json.loads(bytes(body))
        except ValueError:
            raise ClientDocumentError(f"the client metadata document at {url!r} is not JSON") from None
        if not isinstance(document, dict):
            raise ClientDocumentError(f"the client metadata document at {url!r} is not a JSON object")
        return document, _ttl(cache_control)


def _ttl(cache_control: str) -> float:
    """How long to cache a document: its max-age, within one minute and one day; five minutes by default."""
    if "no-store" in cache_control.lower():
        return 0.0
    match = _MAX_AGE.search(cache_control)
    if match is None:
        return _DEFAULT_TTL
    return min(max(float(match[1]), _MIN_TTL), _MAX_TTL)
