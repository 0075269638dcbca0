"""`Outage`: whether a store is down, told once to the operator, and when to try it again.

A store that fails says so with an exception carrying `detail` (which store, what failed) and `unreachable`
(the server or the file could not be reached at all). The first failure of an outage is logged as an error;
later ones are only counted (`OutageListener.store_failure`), until an operation succeeds with no failure for
`settle` seconds, which is logged as the recovery with how long it lasted and how many operations failed. While
the store is unreachable, operations are refused at once instead of each waiting on a dead or silent server: the
next attempt is due after `first_retry` seconds, doubling up to `longest_retry`, and only one operation at a time
makes it; so a store that comes back is used again within `longest_retry` (plus one attempt's time).
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, TypeVar

from oauth.errors import StoreUnavailableError
from oauth.store import RecordKind, TokenStore

__all__ = ["Failure", "Outage", "OutageListener", "WatchedStore"]

_T = TypeVar("_T")

logger = logging.getLogger("gateway.stores")


class Failure(Protocol):
    """What a failing store raises: what failed, for the log, and whether the store was unreachable."""

    detail: str
    unreachable: bool


class OutageListener(Protocol):
    """Told of every failed operation (refused at once or tried) and of each change between up and down; must not
    raise or block."""

    def store_failure(self, store: str) -> None: ...

    def store_state(self, store: str, up: bool) -> None: ...


class Outage:
    """The state of one store (`name`, e.g. "token store"), shared by everything that uses it in this process."""

    def __init__(
        self,
        name: str,
        *,
        first_retry: float = 0.1,
        longest_retry: float = 2.0,
        settle: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.first_retry = first_retry
        self.longest_retry = longest_retry
        self.settle = settle
        self.listeners: list[OutageListener] = []
        self._clock = clock
        self._since: float | None = None
        self._last_failure = 0.0
        self._failures = 0
        self._retry_at = 0.0
        self._backoff = 0.0
        self._trying = False
        self.last_detail = ""

    @property
    def down(self) -> bool:
        """Whether an outage is going on: a failure with no settled success after it."""
        return self._since is not None

    def refused(self) -> bool:
        """True while the store is known unreachable and the next attempt is not due: fail at once, don't wait."""
        return self._backoff > 0 and self._clock() < self._retry_at

    def failed(self, failure: Failure) -> None:
        """Count a failed operation; the first of an outage is logged with what failed."""
        now = self._clock()
        self._last_failure = now
        self._failures += 1
        self.last_detail = failure.detail
        if failure.unreachable:
            self._backoff = min(self._backoff * 2, self.longest_retry) if self._backoff else self.first_retry
            self._retry_at = now + self._backoff
        if self._since is None:
            self._since = now
            self._failures = 1
            logger.error(
                "the %s is unavailable: %s; requests that need it are answered 503 until it is back",
                self.name,
                failure.detail,
            )
            self._tell_state(up=False)
        for listener in self.listeners:
            _safely(listener.store_failure, self.name)

    def succeeded(self) -> None:
        """An operation worked: the store is reachable; the outage ends once no failure came for `settle` s."""
        self._backoff = 0.0
        if self._since is None:
            return
        now = self._clock()
        if now - self._last_failure < self.settle:
            return
        logger.warning(
            "the %s is back after %.1f s; %d operations failed meanwhile",
            self.name,
            self._last_failure - self._since,
            self._failures,
        )
        self._since = None
        self._failures = 0
        self._tell_state(up=True)

    async def guard(
        self,
        operation: Callable[[], Awaitable[_T]],
        failures: type[BaseException],
        refusal: Callable[[str], BaseException],
    ) -> _T:
        """Run `operation` unless the store is known unreachable and not yet due for another attempt, or another
        operation is trying it (then raise `refusal(detail)` at once, counted as a failure): while a store is
        unreachable, one operation at a time finds out whether it is back. `failures` it raises are counted, and a
        success is noted."""
        trial = self._backoff > 0
        if self.refused() or (trial and self._trying):
            # Unreachable a moment ago, and not yet due (or another request is finding out): don't wait on it.
            self._failures += 1
            for listener in self.listeners:
                _safely(listener.store_failure, self.name)
            raise refusal(f"{self.last_detail} (not tried again yet: the store was unreachable a moment ago)")
        self._trying = self._trying or trial
        try:
            result = await operation()
        except failures as error:
            self.failed(error)  # type: ignore[arg-type]
            raise
        finally:
            if trial:
                self._trying = False
        self.succeeded()
        return result

    def _tell_state(self, *, up: bool) -> None:
        for listener in self.listeners:
            _safely(listener.store_state, self.name, up)


class WatchedStore:
    """A `TokenStore` whose failures are reported through `outage`; while its store is unreachable, operations
    are refused at once (StoreUnavailableError) until the next attempt is due."""

    def __init__(self, store: TokenStore, outage: Outage) -> None:
        self.store = store
        self.outage = outage
        self._probe_key = f"ready:{secrets.token_hex(8)}"

    async def _watched(self, operation: Callable[[], Awaitable[_T]]) -> _T:
        return await self.outage.guard(operation, StoreUnavailableError, _refusal)

    async def probe(self) -> str | None:
        """None when the store answers a write and a read now; else which store is unavailable (for a readiness
        check; what failed is in the log)."""
        try:
            await self._watched(lambda: self.store.count(self._probe_key, window=60.0))
        except StoreUnavailableError:
            return f"the {self.outage.name} is unavailable"
        return None

    async def put(self, kind: RecordKind, key: str, record: Mapping[str, Any], *, expires_at: float) -> None:
        """See `TokenStore.put`."""
        await self._watched(lambda: self.store.put(kind, key, record, expires_at=expires_at))

    async def get(self, kind: RecordKind, key: str) -> dict[str, Any] | None:
        """See `TokenStore.get`."""
        return await self._watched(lambda: self.store.get(kind, key))

    async def claim(self, kind: RecordKind, key: str) -> tuple[dict[str, Any] | None, bool]:
        """See `TokenStore.claim`."""
        return await self._watched(lambda: self.store.claim(kind, key))

    async def extend(self, kind: RecordKind, key: str, *, expires_at: float) -> bool:
        """See `TokenStore.extend`."""
        return await self._watched(lambda: self.store.extend(kind, key, expires_at=expires_at))

    async def count(self, key: str, *, window: float) -> int:
        """See `TokenStore.count`."""
        return await self._watched(lambda: self.store.count(key, window=window))

    async def put_capped(
        self, kind: RecordKind, key: str, record: Mapping[str, Any], *, expires_at: float, limit: int
    ) -> bool:
        """See `TokenStore.put_capped`."""
        return await self._watched(lambda: self.store.put_capped(kind, key, record, expires_at=expires_at, limit=limit))

    async def delete(self, kind: RecordKind, key: str) -> None:
        """See `TokenStore.delete`."""
        await self._watched(lambda: self.store.delete(kind, key))

    async def aclose(self) -> None:
        """See `TokenStore.aclose`."""
        await self.store.aclose()


def _refusal(detail: str) -> StoreUnavailableError:
    return StoreUnavailableError(detail, unreachable=True)


def _safely(method: Callable[..., None], *args: object) -> None:
    try:
        method(*args)
    except Exception:
        logger.exception("a store outage listener failed")
