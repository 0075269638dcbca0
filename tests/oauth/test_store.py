"""One contract, every token store: SQLite (a file) and Redis (a real redis-server on a free port)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
import redis.asyncio as redis

from oauth import TokenStore, open_store
from oauth.errors import ConfigError
from oauth.store_redis import RedisStore
from oauth.store_sqlite import SqliteStore
from tests.oauth.conftest import FakeClock

pytestmark = pytest.mark.anyio


class TokenStoreContract:
    """The behaviour every `TokenStore` must have; subclasses say how to open two views of one store."""

    @asynccontextmanager
    async def stores(self, clock: FakeClock) -> AsyncIterator[tuple[TokenStore, TokenStore]]:
        """Two stores over the same data, as two gateway instances would have."""
        raise NotImplementedError
        yield  # pragma: no cover

    async def leftovers(self, clock: FakeClock) -> list[str]:
        """What the backend still holds that will not go away by itself (a row or key past its expiry, or
        without one)."""
        raise NotImplementedError

    async def test_a_record_put_is_read_back_from_another_instance(self) -> None:
        async with self.stores(FakeClock()) as (one, two):
            await one.put("grant", "g1", {"client_id": "c", "scopes": ["mcp"]}, expires_at=one_hour())
            assert await two.get("grant", "g1") == {"client_id": "c", "scopes": ["mcp"]}
            assert await two.get("grant", "missing") is None
            assert await two.get("access", "g1") is None

    async def test_a_record_is_gone_once_it_expires(self) -> None:
        clock = FakeClock()
        async with self.stores(clock) as (one, two):
            await one.put("code", "k", {"v": 1}, expires_at=clock.now + 60)
            clock.advance(59)
            assert await two.get("code", "k") == {"v": 1}
            clock.advance(1)
            assert await two.get("code", "k") is None
            assert await two.claim("code", "k") == (None, False)

    async def test_only_the_first_claim_is_first_even_when_claims_race(self) -> None:
        async with self.stores(FakeClock()) as (one, two):
            await one.put("refresh", "r", {"grant_id": "g"}, expires_at=one_hour())
            results: list[bool] = []

            async def claim(store: TokenStore) -> None:
                record, first = await store.claim("refresh", "r")
                assert record == {"grant_id": "g"}
                results.append(first)

            async with anyio.create_task_group() as tg:
                for index in range(20):
                    tg.start_soon(claim, (one, two)[index % 2])
            assert sorted(results) == [False] * 19 + [True]
            assert await one.claim("refresh", "missing") == (None, False)

    async def test_put_replaces_a_record_and_its_claim_and_delete_removes_both(self) -> None:
        async with self.stores(FakeClock()) as (one, two):
            await one.put("request", "p", {"step": 1}, expires_at=one_hour())
            assert (await two.claim("request", "p"))[1] is True
            await one.put("request", "p", {"step": 2}, expires_at=one_hour())
            assert await two.claim("request", "p") == ({"step": 2}, True)
            await two.delete("request", "p")
            await two.delete("request", "never-there")
            assert await one.get("request", "p") is None

    async def test_extend_keeps_a_record_longer_but_never_brings_back_a_deleted_one(self) -> None:
        clock = FakeClock()
        async with self.stores(clock) as (one, two):
            await one.put("grant", "g", {"client_id": "c"}, expires_at=clock.now + 60)
            assert (await one.claim("grant", "g"))[1] is True
            assert await two.extend("grant", "g", expires_at=clock.now + 3600) is True
            clock.advance(120)
            assert await one.get("grant", "g") == {"client_id": "c"}
            assert (await one.claim("grant", "g"))[1] is False  # the claim stays as it was
            await one.delete("grant", "g")
            assert await two.extend("grant", "g", expires_at=clock.now + 3600) is False
            assert await two.get("grant", "g") is None
            await one.put("grant", "old", {"client_id": "c"}, expires_at=clock.now + 1)
            clock.advance(1)
            assert await two.extend("grant", "old", expires_at=clock.now + 3600) is False
            assert await one.get("grant", "old") is None

    async def test_counts_race_to_distinct_numbers_and_start_again_after_the_window(self) -> None:
        clock = FakeClock()
        async with self.stores(clock) as (one, two):
            seen: list[int] = []

            async def count(store: TokenStore) -> None:
                seen.append(await store.count("address:198.51.100.7", window=600))

            async with anyio.create_task_group() as tg:
                for index in range(20):
                    tg.start_soon(count, (one, two)[index % 2])
            assert sorted(seen) == list(range(1, 21))
            assert await one.count("address:203.0.113.9", window=600) == 1
            clock.advance(599)
            assert await two.count("address:198.51.100.7", window=600) == 21
            clock.advance(1)
            assert await two.count("address:198.51.100.7", window=600) == 1

    async def test_a_capped_kind_keeps_at_most_its_limit_even_when_puts_race(self) -> None:
        clock = FakeClock()
        async with self.stores(clock) as (one, two):
            stored: list[bool] = []

            async def put(index: int) -> None:
                store = (one, two)[index % 2]
                stored.append(
                    await store.put_capped("new-client", f"c{index}", {"n": index}, expires_at=clock.now + 60, limit=5)
                )

            async with anyio.create_task_group() as tg:
                for index in range(20):
                    tg.start_soon(put, index)
            assert sorted(stored) == [False] * 15 + [True] * 5
            kept = [index for index in range(20) if await one.get("new-client", f"c{index}") is not None]
            assert len(kept) == 5
            # Writing a stored key again takes no new place; deleting one makes room for another.
            again = await two.put_capped(
                "new-client", f"c{kept[0]}", {"n": "again"}, expires_at=clock.now + 60, limit=5
            )
            assert again is True
            assert await one.put_capped("new-client", "late", {}, expires_at=clock.now + 60, limit=5) is False
            await one.delete("new-client", f"c{kept[1]}")
            assert await two.put_capped("new-client", "late", {}, expires_at=clock.now + 60, limit=5) is True
            # Other kinds do not count, and expired records leave room.
            await one.put("client", "used", {}, expires_at=clock.now + 3600)
            assert await one.put_capped("new-client", "later", {}, expires_at=clock.now + 60, limit=5) is False
            clock.advance(60)
            assert await two.put_capped("new-client", "later", {"n": 1}, expires_at=clock.now + 60, limit=5) is True
            assert await one.get("new-client", "later") == {"n": 1}
            assert await one.get("new-client", "late") is None

    async def test_expired_records_are_removed_from_the_backend_not_only_hidden(self) -> None:
        clock = FakeClock()
        async with self.stores(clock) as (one, two):
            await one.put("client", "c", {"client_id": "c"}, expires_at=clock.now + 60)
            await one.put_capped("new-client", "n", {"client_id": "n"}, expires_at=clock.now + 60, limit=10)
            await one.claim("client", "c")
            await one.count("address:198.51.100.7", window=60)
            await one.put("grant", "g", {}, expires_at=clock.now + 60)
            await one.extend("grant", "g", expires_at=clock.now + 120)
            clock.advance(121)
            # Any later write, of any kind, lets the store reclaim what expired.
            await two.count("address:203.0.113.9", window=600)
            assert await self.leftovers(clock) == []

    async def test_kinds_are_separate_namespaces(self) -> None:
        async with self.stores(FakeClock()) as (one, _):
            await one.put("access", "same", {"kind": "access"}, expires_at=one_hour())
            await one.put("refresh", "same", {"kind": "refresh"}, expires_at=one_hour())
            assert await one.get("access", "same") == {"kind": "access"}
            assert await one.get("refresh", "same") == {"kind": "refresh"}


_NOW = FakeClock().now


def one_hour() -> float:
    return _NOW + 3600


class TestSqliteStore(TokenStoreContract):
    @pytest.fixture(autouse=True)
    def _folder(self, tmp_path: Path) -> None:
        self.path = tmp_path / "state" / "oauth.db"

    @asynccontextmanager
    async def stores(self, clock: FakeClock) -> AsyncIterator[tuple[TokenStore, TokenStore]]:
        one, two = SqliteStore(self.path, clock=clock), SqliteStore(self.path, clock=clock)
        try:
            yield one, two
        finally:
            await one.aclose()
            await two.aclose()

    async def leftovers(self, clock: FakeClock) -> list[str]:
        with sqlite3.connect(self.path) as db:
            rows = db.execute("SELECT kind, key FROM oauth_records WHERE expires_at <= ?", (clock.now,)).fetchall()
        return [f"{kind}:{key}" for kind, key in rows]

    async def test_a_new_store_file_and_its_folders_are_readable_by_their_owner_only(self, tmp_path: Path) -> None:
        path = tmp_path / "state" / "deeper" / "oauth.db"
        previous = os.umask(0o022)  # the common default, under which files are world-readable unless made private
        try:
            store = SqliteStore(path)
            await store.put("grant", "g", {"credentials": "sealed"}, expires_at=one_hour())
        finally:
            os.umask(previous)
        await store.aclose()
        assert oct(path.stat().st_mode & 0o777) == "0o600"
        assert oct(path.parent.stat().st_mode & 0o777) == "0o700"
        assert oct((tmp_path / "state").stat().st_mode & 0o777) == "0o700"
        for sibling in path.parent.iterdir():  # the -wal and -shm files, while they exist
            assert oct(sibling.stat().st_mode & 0o777) == "0o600", sibling.name


class TestRedisStore(TokenStoreContract):
    @pytest.fixture(autouse=True)
    def _server(self, redis_url: str, request: pytest.FixtureRequest) -> None:
        self.url = redis_url
        # A prefix per test keeps the tests apart on the one server the session shares.
        self.prefix = f"test-{request.node.name}:"

    @asynccontextmanager
    async def stores(self, clock: FakeClock) -> AsyncIterator[tuple[TokenStore, TokenStore]]:
        one = RedisStore(redis.Redis.from_url(self.url), prefix=self.prefix, clock=clock)
        two = RedisStore(redis.Redis.from_url(self.url), prefix=self.prefix, clock=clock)
        try:
            yield one, two
        finally:
            await one.aclose()
            await two.aclose()

    async def leftovers(self, clock: FakeClock) -> list[str]:
        # Redis removes a key when its TTL runs out; a key without one would stay for ever.
        client = redis.Redis.from_url(self.url)
        try:
            keys = [key async for key in client.scan_iter(match=f"{self.prefix}*")]
            assert keys, "the test wrote nothing under its prefix"
            return [key.decode() for key in keys if await client.pttl(key) < 0]
        finally:
            await client.aclose()


def test_open_store_picks_the_implementation_from_the_url(tmp_path: Path) -> None:
    assert isinstance(open_store(str(tmp_path / "a.db")), SqliteStore)
    assert isinstance(open_store(f"sqlite:///{tmp_path}/b.db"), SqliteStore)
    assert isinstance(open_store("redis://127.0.0.1:1/0"), RedisStore)
    with pytest.raises(ConfigError, match="redis://host:port/db"):
        open_store("postgres://db/oauth")
