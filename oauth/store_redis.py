"""`RedisStore`: the token store in Redis, for several gateway instances behind a load balancer."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping
from typing import Any

import redis.asyncio as redis
from redis.exceptions import RedisError

from oauth.errors import StoreError, StoreUnavailableError
from oauth.redis_client import client, unreachable
from oauth.store import Clock, RecordKind

__all__ = ["RedisStore"]

#: KEYS[1]: the counter, "<ends-at> <count>"; ARGV: now, the end of a new window, its length in ms.
_COUNT = """
local value = redis.call('GET', KEYS[1])
if value then
    local ends, count = string.match(value, '^(%S+) (%d+)$')
    if ends and tonumber(ends) > tonumber(ARGV[1]) then
        count = tonumber(count) + 1
        redis.call('SET', KEYS[1], ends .. ' ' .. count, 'KEEPTTL')
        return count
    end
end
redis.call('SET', KEYS[1], ARGV[2] .. ' 1', 'PX', ARGV[3])
return 1
"""

#: KEYS: the record, its claim marker, the kind's index (a sorted set of keys by expiry); ARGV: the record's
#: value, its TTL in ms, now, its expiry, the limit, its key.
_PUT_CAPPED = """
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[3])
if not redis.call('ZSCORE', KEYS[3], ARGV[6]) and redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[5]) then
    return 0
end
redis.call('DEL', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[6])
redis.call('PEXPIRE', KEYS[3], ARGV[2], 'GT')
if redis.call('PTTL', KEYS[3]) < 0 then
    redis.call('PEXPIRE', KEYS[3], ARGV[2])
end
return 1
"""


class RedisStore:
    """A `TokenStore` in Redis: one string key per record, expiring with it, under `prefix`.

    `claim` is `SET <claim-key> NX`, atomic across every instance that shares the server. Records carry their
    own expiry too, checked against `clock`, so Redis's TTL only reclaims memory: every key this store writes
    has one. `put_capped` keeps an index of its kind's keys (a sorted set by expiry) to count them.
    """

    def __init__(self, client: redis.Redis, *, prefix: str = "mcp-oauth:", clock: Clock | None = None) -> None:
        self.client = client
        self.prefix = prefix
        self._clock = clock or time.time

    @classmethod
    def from_url(cls, url: str, *, prefix: str = "mcp-oauth:", clock: Clock | None = None) -> RedisStore:
        """A store on the Redis server at `url`, e.g. redis://127.0.0.1:6379/0."""
        return cls(client(url), prefix=prefix, clock=clock)

    def _key(self, kind: RecordKind, key: str) -> str:
        return f"{self.prefix}{kind}:{key}"

    def _claim_key(self, kind: RecordKind, key: str) -> str:
        return f"{self.prefix}claimed:{kind}:{key}"

    def _index_key(self, kind: RecordKind) -> str:
        return f"{self.prefix}index:{kind}"

    async def put(self, kind: RecordKind, key: str, record: Mapping[str, Any], *, expires_at: float) -> None:
        """See `TokenStore.put`."""
        ttl_ms = math.ceil((expires_at - self._clock()) * 1000)
        value = json.dumps({"expires_at": expires_at, "record": dict(record)})
        try:
            async with self.client.pipeline(transaction=True) as pipe:
                pipe.delete(self._claim_key(kind, key))
                if ttl_ms > 0:
                    pipe.set(self._key(kind, key), value, px=ttl_ms)
                else:
                    pipe.delete(self._key(kind, key))
                await pipe.execute()
        except RedisError as error:
            raise _unavailable(error) from error

    async def get(self, kind: RecordKind, key: str) -> dict[str, Any] | None:
        """See `TokenStore.get`."""
        found = await self._read(kind, key)
        return found[1] if found is not None else None

    async def _read(self, kind: RecordKind, key: str) -> tuple[float, dict[str, Any]] | None:
        try:
            raw = await self.client.get(self._key(kind, key))
        except RedisError as error:
            raise _unavailable(error) from error
        if raw is None:
            return None
        try:
            value = json.loads(raw)
            expires_at, record = float(value["expires_at"]), value["record"]
        except (ValueError, KeyError, TypeError) as error:
            raise StoreError(f"a record in Redis is not one this store wrote: {raw[:80]!r}") from error
        if expires_at <= self._clock() or not isinstance(record, dict):
            return None
        return expires_at, record

    async def claim(self, kind: RecordKind, key: str) -> tuple[dict[str, Any] | None, bool]:
        """See `TokenStore.claim`."""
        found = await self._read(kind, key)
        if found is None:
            return None, False
        expires_at, record = found
        try:
            # The marker lives as long as the record, so a reused code or token is recognised until it expires.
            ttl_ms = max(1, math.ceil((expires_at - self._clock()) * 1000))
            first = await self.client.set(self._claim_key(kind, key), b"1", nx=True, px=ttl_ms)
        except RedisError as error:
            raise _unavailable(error) from error
        return record, bool(first)

    async def extend(self, kind: RecordKind, key: str, *, expires_at: float) -> bool:
        """See `TokenStore.extend`: the record is written back only where its key still exists (`SET XX`)."""
        found = await self._read(kind, key)
        if found is None:
            return False
        now = self._clock()
        value = json.dumps({"expires_at": expires_at, "record": found[1]})
        try:
            written = await self.client.set(
                self._key(kind, key), value, px=max(1, math.ceil((expires_at - now) * 1000)), xx=True
            )
        except RedisError as error:
            raise _unavailable(error) from error
        return bool(written)

    async def count(self, key: str, *, window: float) -> int:
        """See `TokenStore.count`: one Lua script, so it is atomic and keeps the store's clock for the window."""
        now = self._clock()
        try:
            counted = await self.client.eval(
                _COUNT, 1, self._key("attempts", key), repr(now), repr(now + window), max(1, math.ceil(window * 1000))
            )
        except RedisError as error:
            raise _unavailable(error) from error
        return int(counted)

    async def put_capped(
        self, kind: RecordKind, key: str, record: Mapping[str, Any], *, expires_at: float, limit: int
    ) -> bool:
        """See `TokenStore.put_capped`: one Lua script over the kind's index, so it is atomic."""
        now = self._clock()
        ttl_ms = math.ceil((expires_at - now) * 1000)
        if ttl_ms <= 0:
            return False
        value = json.dumps({"expires_at": expires_at, "record": dict(record)})
        keys = (self._key(kind, key), self._claim_key(kind, key), self._index_key(kind))
        try:
            stored = await self.client.eval(
                _PUT_CAPPED, 3, *keys, value, ttl_ms, repr(now), repr(expires_at), limit, key
            )
        except RedisError as error:
            raise _unavailable(error) from error
        return bool(stored)

    async def delete(self, kind: RecordKind, key: str) -> None:
        """See `TokenStore.delete`."""
        try:
            async with self.client.pipeline(transaction=True) as pipe:
                pipe.delete(self._key(kind, key), self._claim_key(kind, key))
                pipe.zrem(self._index_key(kind), key)
                await pipe.execute()
        except RedisError as error:
            raise _unavailable(error) from error

    async def aclose(self) -> None:
        """See `TokenStore.aclose`."""
        await self.client.aclose()


def _unavailable(error: RedisError) -> StoreUnavailableError:
    return StoreUnavailableError(
        f"the Redis token store failed: {type(error).__name__}: {error}", unreachable=unreachable(error)
    )
