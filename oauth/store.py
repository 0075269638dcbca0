"""`TokenStore`: where the authorization server keeps clients, logins in progress, codes, grants and tokens.

A store is a small key-value map with expiry and four atomic operations: `claim`, which is what makes codes
single-use and refresh tokens rotate; `extend`, which keeps a grant alive without bringing back one that was
revoked meanwhile; `count`, which limits attempts per address; and `put_capped`, which keeps at most so many
records of a kind (clients registered but never used). Expired records are removed by the store, not only
hidden, so the space they take comes back. Keys of secret-bearing records (codes,
tokens) are hashes of the secrets (see `oauth._crypto.token_hash`), and the users' REST credentials inside
grants are sealed, so the store holds nothing directly usable. Implementations: `SqliteStore` (one file, the
embedded default; several processes on one host may share it) and `RedisStore` (several gateway instances
behind a load balancer).
`open_store(url)` picks one from a URL.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol

from oauth.errors import ConfigError
from oauth.redis_client import URL_SCHEMES as REDIS_URL_SCHEMES

__all__ = ["Clock", "RecordKind", "TokenStore", "open_store"]

RecordKind = Literal[
    "client", "new-client", "request", "code", "grant", "access", "refresh", "attempts", "upstream", "ended"
]
"""What a record is: a registered client that has had tokens, one that has not yet (kept with `put_capped`), a
login in progress, an authorization code, a grant (one consent of one user to one client: the token family),
an access token, a refresh token, a counter of attempts (which only `count` reads and writes), the identity
provider's tokens of a grant (sealed; renewed apart from the grant), or why a grant ended when the provider
ended it (so that its refresh is refused saying so)."""

Clock = Callable[[], float]
"""Seconds since the epoch; injected so that tests can move time."""


class TokenStore(Protocol):
    """A map from (kind, key) to a JSON-serializable record that expires; every method is safe to call
    concurrently, from several processes sharing one backend."""

    async def put(self, kind: RecordKind, key: str, record: Mapping[str, Any], *, expires_at: float) -> None:
        """Store `record` until `expires_at`, replacing any record under the key (and its claim)."""

    async def get(self, kind: RecordKind, key: str) -> dict[str, Any] | None:
        """The record under the key, or None when there is none or it has expired."""

    async def claim(self, kind: RecordKind, key: str) -> tuple[dict[str, Any] | None, bool]:
        """Mark the record as used and return it, with True when this call was the first to claim it.

        Atomic: of any number of concurrent claims, exactly one sees True. A missing or expired record gives
        (None, False).
        """

    async def extend(self, kind: RecordKind, key: str, *, expires_at: float) -> bool:
        """Keep the record under the key until `expires_at`, its content and claim as they are; False when there
        is none or it has expired. Never creates a record, so a concurrent `delete` wins over it."""

    async def count(self, key: str, *, window: float) -> int:
        """Add one to the counter of attempts `key` and return the count: 1 for the first attempt, or the first
        after the counter's window (of `window` seconds from that first attempt) ran out.

        Atomic: of any number of concurrent counts, each sees a different number.
        """

    async def put_capped(
        self, kind: RecordKind, key: str, record: Mapping[str, Any], *, expires_at: float, limit: int
    ) -> bool:
        """Store `record` as `put` does, unless `limit` unexpired records of `kind` are stored already; True when
        it was stored. Atomic: concurrent calls never store more than `limit`. Records of a kind kept this way
        are written with `put_capped` only (and removed with `delete` or by expiring)."""

    async def delete(self, kind: RecordKind, key: str) -> None:
        """Remove the record under the key, if any."""

    async def aclose(self) -> None:
        """Release connections; the store is not used afterwards."""


def open_store(url: str, *, clock: Clock | None = None) -> TokenStore:
    """The store a URL names: `redis://host:port/db` (or `rediss://`) for Redis, else a SQLite file path
    (`sqlite:///path/file.db` or a plain path)."""
    if url.startswith(REDIS_URL_SCHEMES):
        from oauth.store_redis import RedisStore

        return RedisStore.from_url(url, clock=clock)
    path = url.removeprefix("sqlite:///") if url.startswith("sqlite:///") else url
    if "://" in path:
        raise ConfigError(f"store URL {url!r}: give redis://host:port/db or a SQLite file path")
    from oauth.store_sqlite import SqliteStore

    return SqliteStore(path, clock=clock)
