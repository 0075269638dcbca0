"""Client ID Metadata Documents: a client_id that is an https URL names the JSON document describing the client.

The server fetches that URL, so the fetch is guarded against server-side request forgery: https only, every
address the name resolves to must be public (`oauth.addresses.is_public_address`: no private, loopback,
link-local, shared, reserved or multicast address), the connection goes to the address that was checked (no
second DNS lookup to rebind), redirects are not followed, and the response is capped in size and time.
Documents are cached (draft-ietf-oauth-client-id-metadata-document §4.3: honour HTTP caching, within bounds).

A fetch that fails says only that the document could not be fetched: which of resolving, connecting, TLS,
waiting or the HTTP status failed would turn the server into a probe of other hosts' ports, so that detail
goes to the operator's log alone. Failures are remembered for a minute.

Fetches are budgeted (`FetchBudgets`) on behalf of the address whose request needs the document, so a visitor
can neither make the server knock on many doors quickly nor spend the budget others need: one address may
fetch a few documents from one host and a few in all, its network (IPv4 /24, IPv6 /48) a few more, the server
more again, and each budget is smaller than the next. A host's budget is one address's: fetches that one
address spent at claude.ai never refuse another address's fetch of claude.ai's document.

A document fetched before is still served, for up to `stale_if_error` seconds past its expiry, while fetching
it again is refused by a budget or fails on the way (RFC 5861 §4: no answer, a timeout, a 5xx or a 429), so
that a visitor who spends the server's budget cannot lock out the clients it already knows. Any other answer
is the publisher's: a document withdrawn (404, 410, a redirect) or changed into one that is not acceptable
(not JSON, too large, not an object) replaces the copy, which is never served again.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import math
import re
import socket
import ssl
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

import anyio
import httpx2

from oauth._log import loggable
from oauth.addresses import Address, is_public_address, network_key, rate_key
from oauth.errors import ClientDocumentError, ConfigError, FetchBudget
from oauth.store import Clock

__all__ = ["ClientDocuments", "FetchBudgets", "Resolver", "is_client_id_url"]

logger = logging.getLogger(__name__)

Resolver = Callable[[str, int], Awaitable[list[Address]]]
"""Resolves a host name and port to the addresses to connect to."""

_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*(\d+)", re.IGNORECASE)
_DEFAULT_TTL: Final = 300.0
_MIN_TTL: Final = 60.0
_MAX_TTL: Final = 24 * 3600.0
#: How long a failed fetch is remembered (and answered without fetching again).
_FAILURE_TTL: Final = 60.0


class _Unreachable(Exception):
    """The document could not be fetched; the message is the operator's detail, never shown to the visitor.

    `transient` when the publisher failed to answer (RFC 5861 §4), so that a copy fetched before may stand in.
    """

    def __init__(self, detail: str, *, transient: bool = True) -> None:
        super().__init__(detail)
        self.transient = transient


def _is_transient(status: int) -> bool:
    """Whether an HTTP status says the publisher failed to answer (RFC 5861 §4: 500, 502, 503, 504; and 429,
    which asks to come back later), rather than answering that there is no document here."""
    return status >= 500 or status == 429


def _unreachable(url: str) -> ClientDocumentError:
    return ClientDocumentError(
        f"the client metadata document at {url!r} could not be fetched; the app's developer must serve it over "
        "https from a public address, answering 200"
    )


def is_client_id_url(client_id: str) -> bool:
    """Whether `client_id` is a Client ID Metadata Document URL (draft §3): https, a path, no fragment,
    no user info, no dot segments, and no whitespace or control characters (which URL parsers drop silently)."""
    if not client_id.isprintable() or " " in client_id:
        return False
    try:
        parts = urlsplit(client_id)
        parts.port  # noqa: B018 - raises ValueError for a malformed port
    except ValueError:
        return False
    if parts.scheme != "https" or not parts.hostname or parts.fragment or "@" in parts.netloc:
        return False
    segments = parts.path.split("/")
    return parts.path not in ("", "/") and "." not in segments and ".." not in segments


async def _resolve(host: str, port: int) -> list[Address]:
    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses: list[Address] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%")[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


@dataclass(frozen=True, kw_only=True)
class FetchBudgets:
    """How many metadata documents may be fetched within `window` seconds, and on whose behalf.

    A fetch counts against the address whose request needs the document (an IPv6 address by its /64, as every
    per-address limit of this package), against that address's network (an IPv4 /24, an IPv6 /48) and against
    the server. `per_host` bounds the distinct documents one address has fetched from one host: fetching one of
    those again costs that address's other budgets only. Each budget is at most the next, and a network's is
    below the server's, so no address and no network can spend everyone's budget. Many networks together still
    can, for a window: then documents fetched before stand in (`ClientDocuments` `stale_if_error`), and only
    clients this server has never fetched wait.
    """

    window: float = 60.0
    per_host: int = 5
    per_address: int = 10
    per_network: int = 30
    overall: int = 100

    def __post_init__(self) -> None:
        if not isinstance(self.window, int | float) or isinstance(self.window, bool) or self.window <= 0:
            raise ConfigError(f"FetchBudgets.window must be a positive number of seconds, got {self.window!r}")
        for name in ("per_host", "per_address", "per_network", "overall"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"FetchBudgets.{name} must be a whole number of at least 1, got {value!r}")
        if not self.per_host <= self.per_address <= self.per_network < self.overall:
            raise ConfigError(
                f"FetchBudgets must grow from per_host ({self.per_host}) to per_address ({self.per_address}) to "
                f"per_network ({self.per_network}), which must stay below overall ({self.overall}) so that one "
                "network cannot spend every fetch; lower the smaller budgets or raise the larger ones"
            )


@dataclass(frozen=True)
class _Refusal:
    """A budget that is spent: which, whose (the key it is counted under) and why, for the operator."""

    budget: FetchBudget
    key: str
    reason: str


class _Spending:
    """The fetches each budget of `FetchBudgets` has counted within its window."""

    def __init__(self, budgets: FetchBudgets) -> None:
        self.budgets = budgets
        #: When each fetch within the window was counted, by "address <key>", "network <key>" and "overall".
        self._times: dict[str, deque[float]] = {}
        #: The documents each address had fetched from each host, and when last.
        self._documents: dict[tuple[str, str], dict[str, float]] = {}

    def spend(self, *, url: str, host: str, address: str, now: float) -> _Refusal | None:
        """Count a fetch of `url` from `host` for `address`; or, counting nothing, the budget that is spent."""
        self._forget(now - self.budgets.window)
        budgets, window = self.budgets, f"{self.budgets.window:g} s"
        who, network = f"address {rate_key(address)}", f"network {network_key(address)}"
        fetched = self._documents.get((who, host), {})
        if url not in fetched and len(fetched) >= budgets.per_host:
            reason = f"{who} fetched {len(fetched)} documents from {host!r} in {window}"
            return _Refusal("host", f"{who} {host}", reason)
        limits: tuple[tuple[FetchBudget, str, int], ...] = (
            ("address", who, budgets.per_address),
            ("network", network, budgets.per_network),
            ("overall", "overall", budgets.overall),
        )
        for budget, key, most in limits:
            if len(self._times.get(key, ())) >= most:
                whose = "" if key == "overall" else f"{key} caused "
                return _Refusal(budget, key, f"{whose}{most} fetches in {window}")
        self._documents.setdefault((who, host), {})[url] = now
        for key in (who, network, "overall"):
            self._times.setdefault(key, deque()).append(now)
        return None

    def _forget(self, since: float) -> None:
        """Drop what was counted at or before `since`."""
        for key, times in list(self._times.items()):
            while times and times[0] <= since:
                times.popleft()
            if not times:
                del self._times[key]
        for pair, fetched in list(self._documents.items()):
            for url in [url for url, at in fetched.items() if at <= since]:
                del fetched[url]
            if not fetched:
                del self._documents[pair]


_REFUSALS: Final[dict[FetchBudget, str]] = {
    "host": "too many client metadata documents at {host!r} were fetched for this address just now",
    "address": "too many client metadata documents were fetched for this address just now",
    "network": "too many client metadata documents were fetched for this address's network just now",
    "overall": "too many client metadata documents were fetched just now",
}


@dataclass(kw_only=True)
class _Stored:
    """A document fetched successfully, fresh until `expires_at`."""

    document: dict[str, Any]
    expires_at: float
    #: When the operator was last told that this document is served past its expiry.
    stale_logged_at: float = -math.inf


class ClientDocuments:
    """Fetches and caches Client ID Metadata Documents; `fetch` raises ClientDocumentError saying what is wrong.

    `budgets` limit the fetches (`FetchBudgets`); a document fetched before stands in for up to `stale_if_error`
    seconds past its expiry while fetching it again is refused or fails on the way (0: never). `resolve`,
    `allow_address` and `ssl_context` exist for tests that serve a document on 127.0.0.1 with a certificate of
    their own; production keeps the defaults.
    """

    def __init__(
        self,
        *,
        timeout: float = 5.0,
        max_bytes: int = 5 * 1024,
        max_entries: int = 1000,
        budgets: FetchBudgets | None = None,
        stale_if_error: float = 24 * 3600.0,
        resolve: Resolver | None = None,
        allow_address: Callable[[Address], bool] = is_public_address,
        ssl_context: ssl.SSLContext | None = None,
        clock: Clock | None = None,
    ) -> None:
        if not isinstance(stale_if_error, int | float) or isinstance(stale_if_error, bool) or stale_if_error < 0:
            raise ConfigError(f"stale_if_error must be a number of seconds, 0 or more, got {stale_if_error!r}")
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self.budgets = budgets or FetchBudgets()
        self.stale_if_error = stale_if_error
        self._resolve = resolve or _resolve
        self._allow_address = allow_address
        self._clock = clock or time.time
        self._documents: OrderedDict[str, _Stored] = OrderedDict()
        #: Failed fetches, each answered without fetching again until the time it is kept with.
        self._failures: OrderedDict[str, tuple[float, ClientDocumentError]] = OrderedDict()
        self._spending = _Spending(self.budgets)
        #: When the operator was last told that each budget is spent (its key), so a visitor cannot flood the log.
        self._refusals_logged: dict[str, float] = {}
        self._http = httpx2.AsyncClient(
            verify=ssl_context if ssl_context is not None else True, follow_redirects=False, trust_env=False
        )

    async def fetch(self, url: str, *, address: str) -> dict[str, Any]:
        """The metadata document at `url` (cached), checked to be a JSON object no larger than `max_bytes`.

        `address` is where the request that needs the document comes from (`oauth._http.client_address`); a
        fetch counts against its budgets. ClientDocumentError with `refused_by` when a budget is spent and no
        copy fetched before can stand in.
        """
        now = self._clock()
        stored = self._documents.get(url)
        if stored is not None:
            self._documents.move_to_end(url)
            if stored.expires_at > now:
                return stored.document
        failed = self._failures.get(url)
        if failed is not None and failed[0] > now:
            # Told to the operator when it failed; until it is tried again, the copy stands in as it did then.
            if stored is not None and self._may_stand_in(stored, now):
                return stored.document
            raise ClientDocumentError(failed[1].description)
        if not is_client_id_url(url):
            raise ClientDocumentError(f"client_id {url!r} is not an https URL with a path")
        host = (urlsplit(url).hostname or "").rstrip(".")
        refused = self._spending.spend(url=url, host=host, address=address, now=now)
        if refused is not None:
            if stored is not None and self._may_stand_in(stored, now):
                why = (
                    f"not fetching it for {loggable(address)}: the {refused.budget} budget is spent ({refused.reason})"
                )
                return self._stand_in(url, stored, now, why)
            self._log_refusal(url, address, refused, now)
            window = self.budgets.window
            again = "a minute" if window == 60 else f"{window:g} seconds"
            raise ClientDocumentError(
                f"{_REFUSALS[refused.budget].format(host=host)}; try again in {again}",
                refused_by=refused.budget,
                retry_after=math.ceil(window),
            )
        try:
            with anyio.fail_after(self.timeout):
                document, ttl = await self._download(url)
        except (TimeoutError, _Unreachable) as failure:
            detail = str(failure) or f"it did not arrive within {self.timeout:g} s"
            self._remember_failure(url, _unreachable(url))
            if isinstance(failure, _Unreachable) and not failure.transient:
                # The publisher answered that there is no document: the copy fetched before is withdrawn too.
                self._documents.pop(url, None)
            elif stored is not None and self._may_stand_in(stored, self._clock()):
                return self._stand_in(url, stored, self._clock(), f"it could not be fetched again: {detail}")
            logger.warning("the client metadata document %s could not be fetched: %s", loggable(url), loggable(detail))
            raise _unreachable(url) from None
        except ClientDocumentError as error:
            # The publisher changed the document into one that is not acceptable: it replaces the copy.
            self._documents.pop(url, None)
            self._remember_failure(url, error)
            raise
        self._failures.pop(url, None)
        if ttl > 0:
            self._documents[url] = _Stored(document=document, expires_at=self._clock() + ttl)
            self._documents.move_to_end(url)
            while len(self._documents) > self.max_entries:
                self._documents.popitem(last=False)
        else:
            # Cache-Control: no-store: no copy is kept, not even to stand in.
            self._documents.pop(url, None)
        return document

    def _may_stand_in(self, stored: _Stored, now: float) -> bool:
        """Whether `stored`, expired, is recent enough to be served for a document that cannot be fetched now."""
        return now - stored.expires_at < self.stale_if_error

    def _stand_in(self, url: str, stored: _Stored, now: float, why: str) -> dict[str, Any]:
        """The copy fetched before, served stale; the operator is told, once a window for each document."""
        if now - stored.stale_logged_at >= self.budgets.window:
            stored.stale_logged_at = now
            logger.warning(
                "serving the client metadata document %s fetched before, %d s past its expiry (at most %g s): %s",
                loggable(url),
                now - stored.expires_at,
                self.stale_if_error,
                why,
            )
        return stored.document

    def _remember_failure(self, url: str, error: ClientDocumentError) -> None:
        self._failures[url] = (self._clock() + _FAILURE_TTL, error)
        self._failures.move_to_end(url)
        while len(self._failures) > self.max_entries:
            self._failures.popitem(last=False)

    def _log_refusal(self, url: str, address: str, refused: _Refusal, now: float) -> None:
        """Tell the operator which budget refused a fetch: at its first refusal in a window, so that a visitor
        cannot flood the log."""
        since = now - self.budgets.window
        for key in [key for key, at in self._refusals_logged.items() if at <= since]:
            del self._refusals_logged[key]
        if refused.key in self._refusals_logged:
            return
        self._refusals_logged[refused.key] = now
        logger.warning(
            "not fetching the client metadata document %s for %s: the %s budget is spent (%s)",
            loggable(url),
            loggable(address),
            refused.budget,
            refused.reason,
        )

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
                    raise _Unreachable(
                        f"the server answered HTTP {response.status_code}, not 200",
                        transient=_is_transient(response.status_code),
                    )
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
