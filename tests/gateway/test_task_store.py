"""One contract, every task store: SQLite (a file two instances share) and Redis (a real redis-server)."""

from __future__ import annotations

import contextlib
import sqlite3

import anyio
import pytest

from gateway.errors import ConfigError
from gateway.mcp.tasks.store import (
    Full,
    RedisTaskStore,
    SqliteTaskStore,
    TaskStore,
    TaskStoreError,
    open_task_store,
)
from tests.gateway.task_stores import RedisPair, SqlitePair, StorePair
from tests.oauth.conftest import FakeClock

pytestmark = pytest.mark.anyio

HOUR = 3600.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class TaskStoreContract(StorePair):
    """The behaviour every `TaskStore` must have; subclasses say how to open two views of one store and how time
    passes for it."""

    lifetime = 60.0
    """How long the short-lived tasks of the expiry tests live."""

    async def test_a_task_created_is_read_back_from_another_instance_by_its_owner_only(self) -> None:
        clock = FakeClock()
        async with self.stores(clock) as (one, two):
            assert await one.create("alice", "t1", {"status": "working"}, expires_at=clock.now + HOUR, limit=5) is None
            assert await two.get("alice", "t1") == {"status": "working"}
            assert await two.get("bob", "t1") is None
            assert await two.get("alice", "t2") is None

    async def test_a_task_is_gone_once_it_expires(self) -> None:
        clock = self.clock()
        async with self.stores(clock) as (one, two):
            await one.create("alice", "t1", {"n": 1}, expires_at=clock.now + self.lifetime, limit=5)
            await self.let_pass(clock, self.lifetime / 4)
            assert await two.get("alice", "t1") == {"n": 1}
            assert await two.ids("alice") == ["t1"]
            await self.let_pass(clock, self.lifetime)
            assert await two.get("alice", "t1") is None
            assert await two.ids("alice") == []
            assert await two.claim("alice", "t1") == (None, False)

    async def test_an_owners_tasks_are_listed_newest_first_and_no_one_elses(self) -> None:
        clock = FakeClock()
        async with self.stores(clock) as (one, two):
            for index in range(4):
                await (one, two)[index % 2].create(
                    "alice", f"t{index}", {"n": index}, expires_at=clock.now + HOUR - index, limit=10
                )
                clock.advance(1)
            await one.create("bob", "b1", {}, expires_at=clock.now + HOUR, limit=10)
            assert await two.ids("alice") == ["t3", "t2", "t1", "t0"]
            assert await one.ids("bob") == ["b1"]
            assert await one.ids("carol") == []

    async def test_an_owner_keeps_at_most_its_limit_even_when_creations_race(self) -> None:
        clock = FakeClock()
        async with self.stores(clock) as (one, two):
            full: list[Full | None] = []

            async def create(store: TaskStore, index: int) -> None:
                full.append(await store.create("alice", f"t{index}", {}, expires_at=clock.now + HOUR, limit=3))

            async with anyio.create_task_group() as tg:
                for index in range(12):
                    tg.start_soon(create, (one, two)[index % 2], index)
            assert full.count(None) == 3 and full.count("person") == 9
            assert len(await one.ids("alice")) == 3
            assert await one.create("bob", "b", {}, expires_at=clock.now + HOUR, limit=3) is None

    async def test_a_person_keeps_at_most_its_limit_in_a_pool_whatever_owners_it_creates_under(self) -> None:
        clock = self.clock()
        async with self.stores(clock) as (one, two):

            async def create(
                store: TaskStore, owner: str, task_id: str, *, lifetime: float = HOUR, **counted: str
            ) -> Full | None:
                expires_at, person = clock.now + lifetime, counted.get("person", "alice")
                pool = counted.get("pool", "tasks")
                return await store.create(owner, task_id, {}, expires_at=expires_at, limit=2, pool=pool, person=person)

            assert await create(one, "alice-wide", "t1") is None
            assert await create(two, "alice-narrow", "t2", lifetime=self.lifetime) is None
            assert await create(one, "alice-other-client", "t3") == "person"
            assert await one.ids("alice-wide") == ["t1"] and await two.ids("alice-narrow") == ["t2"]
            # Another pool, and another person, count apart.
            assert await create(two, "approval:alice-wide", "a1", pool="approvals") is None
            assert await create(two, "bob", "b1", person="bob") is None
            # A place comes back when a task is taken, or expires (a put keeps it counted).
            await one.put("alice-wide", "t1", {"status": "completed"}, expires_at=clock.now + HOUR)
            assert await create(one, "alice-other-client", "t3") == "person"
            assert await two.take("alice-wide", "t1") == {"status": "completed"}
            assert await create(one, "alice-other-client", "t3") is None
            assert await create(one, "alice-other-client", "t4") == "person"
            await self.let_pass(clock, self.lifetime * 1.5)
            assert await create(one, "alice-other-client", "t4") is None

    async def test_a_place_comes_back_when_a_task_expires(self) -> None:
        clock = self.clock()
        async with self.stores(clock) as (one, two):
            assert await one.create("alice", "old", {}, expires_at=clock.now + self.lifetime, limit=1) is None
            assert await two.create("alice", "new", {}, expires_at=clock.now + HOUR, limit=1) == "person"
            await self.let_pass(clock, self.lifetime * 1.25)
            assert await two.create("alice", "new", {}, expires_at=clock.now + HOUR, limit=1) is None
            assert await one.ids("alice") == ["new"]

    async def test_only_the_first_claim_is_first_even_when_claims_race(self) -> None:
        clock = FakeClock()
        async with self.stores(clock) as (one, two):
            await one.create("alice", "t", {"status": "working"}, expires_at=clock.now + HOUR, limit=5)
            results: list[bool] = []

            async def claim(store: TaskStore) -> None:
                record, first = await store.claim("alice", "t")
                assert record == {"status": "working"}
                results.append(first)

            async with anyio.create_task_group() as tg:
                for index in range(20):
                    tg.start_soon(claim, (one, two)[index % 2])
            assert sorted(results) == [False] * 19 + [True]
            assert await one.claim("alice", "missing") == (None, False)
            assert await one.claim("bob", "t") == (None, False)

    async def test_of_racing_takes_exactly_one_gets_the_task_which_is_then_gone_and_uncounted(self) -> None:
        clock = FakeClock()
        async with self.stores(clock) as (one, two):
            await one.create("alice", "t", {"n": 1}, expires_at=clock.now + HOUR, limit=1)
            taken: list[dict[str, object] | None] = []

            async def take(store: TaskStore) -> None:
                taken.append(await store.take("alice", "t"))

            async with anyio.create_task_group() as tg:
                for index in range(20):
                    tg.start_soon(take, (one, two)[index % 2])
            assert [record for record in taken if record is not None] == [{"n": 1}]
            assert await two.get("alice", "t") is None and await one.ids("alice") == []
            assert await one.create("alice", "u", {}, expires_at=clock.now + HOUR, limit=1) is None
            assert await one.take("bob", "u") is None and await one.take("alice", "missing") is None

    async def test_an_expired_task_cannot_be_taken(self) -> None:
        clock = self.clock()
        async with self.stores(clock) as (one, two):
            await one.create("alice", "t", {}, expires_at=clock.now + self.lifetime, limit=5)
            await self.let_pass(clock, self.lifetime * 1.5)
            assert await two.take("alice", "t") is None

    async def test_a_put_replaces_the_record_and_its_expiry_and_keeps_the_claim(self) -> None:
        clock = self.clock()
        async with self.stores(clock) as (one, two):
            await one.create("alice", "t", {"status": "working"}, expires_at=clock.now + self.lifetime, limit=5)
            assert (await one.claim("alice", "t"))[1] is True
            await two.put("alice", "t", {"status": "completed"}, expires_at=clock.now + HOUR)
            assert await one.get("alice", "t") == {"status": "completed"}
            assert (await two.claim("alice", "t"))[1] is False
            await self.let_pass(clock, self.lifetime * 1.5)
            assert await one.get("alice", "t") == {"status": "completed"}
            assert await one.ids("alice") == ["t"]

    async def test_a_pool_keeps_at_most_its_total_of_all_owners_even_when_creations_race(self) -> None:
        clock = FakeClock()
        async with self.stores(clock) as (one, two):
            full: list[Full | None] = []

            async def create(store: TaskStore, index: int) -> None:
                full.append(
                    await store.create(
                        f"owner{index}", f"t{index}", {}, expires_at=clock.now + HOUR, limit=3, total=5, pool="tasks"
                    )
                )

            async with anyio.create_task_group() as tg:
                for index in range(12):
                    tg.start_soon(create, (one, two)[index % 2], index)
            assert full.count(None) == 5 and full.count("pool") == 7
            assert sum([len(await one.ids(f"owner{index}")) for index in range(12)]) == 5
            # Another pool counts apart, and a pool without a total has no bound in all.
            approval = await two.create(
                "owner0", "a", {}, expires_at=clock.now + HOUR, limit=3, total=1, pool="approvals"
            )
            assert approval is None
            assert await two.create("owner99", "u", {}, expires_at=clock.now + HOUR, limit=3) is None

    async def test_a_place_in_the_pool_comes_back_when_a_task_is_taken_or_expires_and_a_put_keeps_it_counted(
        self,
    ) -> None:
        clock = self.clock()
        async with self.stores(clock) as (one, two):

            async def create(store: TaskStore, owner: str, task_id: str, lifetime: float = HOUR) -> bool:
                full = await store.create(owner, task_id, {}, expires_at=clock.now + lifetime, limit=5, total=2)
                return full is None

            assert await create(one, "alice", "kept", self.lifetime)
            assert await create(two, "bob", "taken")
            assert not await create(one, "carol", "c1")
            assert await two.take("bob", "taken") == {}
            assert await create(one, "carol", "c1", self.lifetime)
            assert not await create(two, "dave", "d1")
            await one.put("alice", "kept", {"status": "completed"}, expires_at=clock.now + HOUR)
            await self.let_pass(clock, self.lifetime * 1.5)
            assert await create(two, "dave", "d1")  # carol's expired; alice's lives on with its put
            assert not await create(one, "erin", "e1")
            assert await one.ids("alice") == ["kept"]

    async def test_an_address_keeps_at_most_its_share_of_a_pool_whatever_owners_it_creates_under_even_when_racing(
        self,
    ) -> None:
        clock = FakeClock()
        async with self.stores(clock) as (one, two):
            full: list[Full | None] = []

            async def create(store: TaskStore, index: int) -> None:
                full.append(
                    await store.create(
                        f"made-up-{index}",
                        "t",
                        {},
                        expires_at=clock.now + HOUR,
                        limit=3,
                        total=10,
                        address="203.0.113.7",
                        address_limit=4,
                    )
                )

            async with anyio.create_task_group() as tg:
                for index in range(12):
                    tg.start_soon(create, (one, two)[index % 2], index)
            assert full.count(None) == 4 and full.count("address") == 8
            assert sum([len(await one.ids(f"made-up-{index}")) for index in range(12)]) == 4

            async def from_(
                address: str | None, owner: str, *, pool: str = "tasks", share: int | None = 4, total: int = 10
            ) -> Full | None:
                return await two.create(
                    owner,
                    "t" if pool == "tasks" else "a",
                    {},
                    expires_at=clock.now + HOUR,
                    limit=1,
                    total=total,
                    pool=pool,
                    address=address,
                    address_limit=share,
                )

            # Another address, a caller without one, and the address in another pool each have a place of their own.
            assert await from_("2001:db8::/64", "carol") is None
            assert await from_(None, "stdio") is None
            assert await from_("203.0.113.7", "approval:made-up-0", pool="approvals") is None
            # A task from an address whose share is not counted then is counted in the address's share later.
            assert await from_("198.51.100.1", "erin", share=None) is None
            assert await from_("198.51.100.1", "frank", share=1) == "address"
            # A person's limit (the owner's, when no person is named) is met before its address's share, and an
            # address's share before the pool's total: the pool keeps 7 tasks now.
            assert await from_("198.51.100.1", "erin", share=1, total=7) == "person"
            assert await from_("198.51.100.1", "frank", share=1, total=7) == "address"
            assert await from_("192.0.2.9", "gina", share=1, total=7) == "pool"

    async def test_a_place_in_an_addresss_share_comes_back_when_a_task_is_taken_or_expires_and_a_put_keeps_it(
        self,
    ) -> None:
        clock = self.clock()
        async with self.stores(clock) as (one, two):

            async def create(store: TaskStore, owner: str, lifetime: float = HOUR) -> Full | None:
                return await store.create(
                    owner, "t", {}, expires_at=clock.now + lifetime, limit=5, address="203.0.113.7", address_limit=2
                )

            assert await create(one, "alice", self.lifetime) is None
            assert await create(two, "bob") is None
            assert await create(one, "carol") == "address"
            assert await two.take("bob", "t") == {}
            assert await create(one, "carol", self.lifetime) is None
            assert await create(two, "dave") == "address"
            await one.put("alice", "t", {"status": "completed"}, expires_at=clock.now + HOUR)
            await self.let_pass(clock, self.lifetime * 1.5)
            assert await create(two, "dave") is None  # carol's expired; alice's lives on with its put
            assert await create(one, "erin") == "address"
            assert await one.get("alice", "t") == {"status": "completed"}


class TestSqliteTaskStore(SqlitePair, TaskStoreContract):
    def old_file(self, clock: FakeClock, columns: str, values: tuple[str | None, ...]) -> None:
        """A store file as an earlier version made it: the first columns, then `columns`; one task of alice's,
        'old', whose values of `columns` are `values`."""
        self.path.parent.mkdir(mode=0o700)
        with contextlib.closing(sqlite3.connect(self.path)) as db:
            db.executescript(
                "CREATE TABLE gateway_tasks (owner TEXT NOT NULL, task_id TEXT NOT NULL, record TEXT NOT NULL, "
                "created REAL NOT NULL, expires_at REAL NOT NULL, claimed INTEGER NOT NULL DEFAULT 0, "
                f"{columns}PRIMARY KEY (owner, task_id)) WITHOUT ROWID;"
            )
            marks = ", ?" * len(values)
            db.execute(
                f"INSERT INTO gateway_tasks VALUES ('alice', 'old', '{{}}', ?, ?, 0{marks})",  # noqa: S608
                (clock.now, clock.now + HOUR, *values),
            )
            db.commit()

    async def test_a_file_made_before_pools_counts_its_tasks_in_the_tasks_pool(self) -> None:
        clock = FakeClock()
        self.old_file(clock, "", ())
        async with self.stores(clock) as (one, two):
            assert await two.get("alice", "old") == {}
            assert await one.create("bob", "new", {}, expires_at=clock.now + HOUR, limit=5, total=1) == "pool"
            assert await one.create("bob", "new", {}, expires_at=clock.now + HOUR, limit=5, total=2) is None

    async def test_a_file_made_before_addresses_counts_its_tasks_under_no_address(self) -> None:
        clock = FakeClock()
        self.old_file(clock, "pool TEXT NOT NULL DEFAULT 'tasks', ", ("tasks",))
        async with self.stores(clock) as (one, two):

            async def create(owner: str) -> Full | None:
                return await one.create(
                    owner, "t", {}, expires_at=clock.now + HOUR, limit=5, total=3, address="::1", address_limit=1
                )

            assert await two.get("alice", "old") == {}
            assert await create("bob") is None
            assert await create("carol") == "address"
            assert await one.create("carol", "t", {}, expires_at=clock.now + HOUR, limit=5, total=3) is None
            assert await one.create("dave", "t", {}, expires_at=clock.now + HOUR, limit=5, total=3) == "pool"
        with contextlib.closing(sqlite3.connect(self.path)) as db:
            indexes = {row[1] for row in db.execute("PRAGMA index_list(gateway_tasks)")}
        assert "gateway_tasks_address" in indexes

    async def test_a_file_made_before_persons_counts_its_tasks_against_their_owners(self) -> None:
        clock = FakeClock()
        self.old_file(clock, "pool TEXT NOT NULL DEFAULT 'tasks', address TEXT, ", ("tasks", None))
        async with self.stores(clock) as (one, two):
            assert await two.get("alice", "old") == {}
            assert await one.create("alice", "new", {}, expires_at=clock.now + HOUR, limit=1) == "person"
            assert await one.create("bob", "new", {}, expires_at=clock.now + HOUR, limit=1, person="alice") == "person"
            assert await one.create("bob", "new", {}, expires_at=clock.now + HOUR, limit=1) is None
        with contextlib.closing(sqlite3.connect(self.path)) as db:
            indexes = {row[1] for row in db.execute("PRAGMA index_list(gateway_tasks)")}
        assert "gateway_tasks_person" in indexes

    async def test_the_file_is_the_owners_alone_in_a_folder_it_made(self) -> None:
        async with self.stores(FakeClock()) as (one, _):
            await one.ids("alice")
        assert self.path.stat().st_mode & 0o777 == 0o600
        assert self.path.parent.stat().st_mode & 0o777 == 0o700

    async def test_closing_while_statements_run_waits_for_them_and_later_use_says_the_store_is_closed(self) -> None:
        clock = FakeClock()
        store = SqliteTaskStore(":memory:", clock=clock)
        await store.create("alice", "t", {}, expires_at=clock.now + HOUR, limit=5)
        outcomes: list[str] = []

        async def read() -> None:
            try:
                outcomes.append("read" if await store.get("alice", "t") == {} else "wrong")
            except TaskStoreError as error:
                outcomes.append(error.detail)

        async with anyio.create_task_group() as tg:
            for _ in range(50):
                tg.start_soon(read)
            tg.start_soon(store.aclose)
        closed = "the SQLite task store ':memory:' is closed; the gateway has stopped"
        assert set(outcomes) <= {"read", closed} and len(outcomes) == 50
        with pytest.raises(TaskStoreError, match="the task store is unavailable; retry shortly") as refused:
            await store.get("alice", "t")
        assert refused.value.detail == closed


class TestRedisTaskStore(RedisPair, TaskStoreContract):
    lifetime = 0.4

    async def test_a_server_that_does_not_answer_is_a_task_store_error_naming_what_failed(self) -> None:
        store = RedisTaskStore.from_url("redis://127.0.0.1:9/0")
        with pytest.raises(TaskStoreError, match=r"^the task store is unavailable; retry shortly$") as failed:
            await store.get("alice", "t")
        assert failed.value.detail.startswith("the Redis task store failed to read a task: ConnectionError")
        assert failed.value.unreachable
        await store.aclose()


def test_a_store_url_names_its_backend_and_anything_else_is_refused() -> None:
    assert isinstance(open_task_store(None), SqliteTaskStore)
    assert isinstance(open_task_store("tasks.db"), SqliteTaskStore)
    assert open_task_store("sqlite:///var/tasks.db").path == "var/tasks.db"  # type: ignore[attr-defined]
    assert isinstance(open_task_store("redis://127.0.0.1:6379/0"), RedisTaskStore)
    for url in ("postgres://db/tasks", "sqlite:///"):
        with pytest.raises(ConfigError, match=r"give redis://host:port/db or a SQLite file path"):
            open_task_store(url)
