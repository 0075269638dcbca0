"""Two instances' views of one task store, SQLite or Redis, for the contracts of what lives in it (tasks,
approval handles): a contract class names its tests, and a store pair below says how to open the store and how
time passes for it."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
import redis.asyncio as redis

from gateway.mcp.tasks.store import RedisTaskStore, SqliteTaskStore, TaskStore
from tests.oauth.conftest import FakeClock


class ServerClock(FakeClock):
    """The real clock, for a store whose server keeps the time (Redis expires keys itself): time passes by waiting."""

    @property
    def now(self) -> float:
        return time.time()

    @now.setter
    def now(self, value: float) -> None:
        pass

    def advance(self, seconds: float) -> None:
        raise AssertionError("a server's clock cannot be moved; wait with the contract's let_pass")


class StorePair:
    """How a contract opens two instances' views of one store and lets time pass: by default a fake clock."""

    def clock(self) -> FakeClock:
        return FakeClock()

    async def let_pass(self, clock: FakeClock, seconds: float) -> None:
        clock.advance(seconds)

    @asynccontextmanager
    async def stores(self, clock: FakeClock) -> AsyncIterator[tuple[TaskStore, TaskStore]]:
        """Two stores over the same data, as two gateway instances would have."""
        raise NotImplementedError
        yield  # pragma: no cover


class SqlitePair(StorePair):
    """Two `SqliteTaskStore`s on one file."""

    @pytest.fixture(autouse=True)
    def _folder(self, tmp_path: Path) -> None:
        self.path = tmp_path / "state" / "tasks.db"

    @asynccontextmanager
    async def stores(self, clock: FakeClock) -> AsyncIterator[tuple[TaskStore, TaskStore]]:
        one, two = SqliteTaskStore(self.path, clock=clock), SqliteTaskStore(self.path, clock=clock)
        try:
            yield one, two
        finally:
            await one.aclose()
            await two.aclose()


class RedisPair(StorePair):
    """Two `RedisTaskStore`s on the session's redis-server, under a key prefix of the test's own."""

    def clock(self) -> FakeClock:
        return ServerClock()

    async def let_pass(self, clock: FakeClock, seconds: float) -> None:
        await anyio.sleep(seconds)  # Redis expires keys by its own clock

    @pytest.fixture(autouse=True)
    def _server(self, redis_url: str, request: pytest.FixtureRequest) -> None:
        self.url = redis_url
        self.prefix = f"test-{request.node.name}:"

    @asynccontextmanager
    async def stores(self, clock: FakeClock) -> AsyncIterator[tuple[TaskStore, TaskStore]]:
        one = RedisTaskStore(redis.Redis.from_url(self.url, decode_responses=True), prefix=self.prefix, clock=clock)
        two = RedisTaskStore(redis.Redis.from_url(self.url, decode_responses=True), prefix=self.prefix, clock=clock)
        try:
            yield one, two
        finally:
            await one.aclose()
            await two.aclose()
