"""`TaskStore`: where task-augmented calls keep their state, so any instance can answer for any task.

Each task belongs to an owner (the caller policy's `owner`: login and grant) and a pool (`tasks`, or `approvals`
for approval handles), is counted against a person (the caller policy's `person`, whose per-caller limit it
takes; the owner when none is named), comes from a client address (the caller policy's `address`, None for
callers without one), and expires with its ttl. The store keeps a per-owner, a per-person, a per-pool and a
per-address index, so listing an owner's live tasks and counting a person's is one query, and creating a task
within its person's limit, its address's share of the pool and the pool's total is atomic across instances (a
client that switches identities still meets its address's share and the total). `claim` makes the move to a
terminal status atomic: of a cancel and the call's own end (on this or another instance), exactly one wins; `take`
removes a record atomically, so of two takes exactly one gets it (approval handles are spent so).
Implementations: `SqliteTaskStore` (in memory, the default for one process, or one file several processes on a
host share) and `RedisTaskStore` (several instances behind a load balancer). `open_task_store(url)` picks one.
"""

from __future__ import annotations

import json
import math
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Final, Literal, Protocol, TypeVar

import anyio.to_thread

from gateway.errors import ConfigError, GatewayError
from gateway.extras import require
from oauth.outage import Outage
from oauth.redis_client import URL_SCHEMES as REDIS_URL_SCHEMES
from oauth.redis_client import client, unreachable
from oauth.sqlite_file import DatabaseGone, SqliteFile, transaction

__all__ = [
    "Clock",
    "Full",
    "RedisTaskStore",
    "SqliteTaskStore",
    "TaskStore",
    "TaskStoreError",
    "WatchedTaskStore",
    "open_task_store",
]

Clock = Callable[[], float]
"""Seconds since the epoch; injected so that tests can move time."""

Full = Literal["person", "address", "pool"]
"""Which count refused a new task: its person's limit, its address's share of the pool, or the pool's total."""

_T = TypeVar("_T")


class TaskStoreError(GatewayError):
    """The task store cannot answer (its server does not answer, its file is gone, its disk is full, or the
    gateway has stopped). The message is the one clients see; `detail` says, for the operator's log, which store
    and what failed; `unreachable` and `retry_after` as `oauth.errors.StoreUnavailableError` has them."""

    def __init__(self, detail: str, *, unreachable: bool = False, retry_after: int = 5) -> None:
        super().__init__("the task store is unavailable; retry shortly")
        self.detail = detail
        self.unreachable = unreachable
        self.retry_after = retry_after


class TaskStore(Protocol):
    """Tasks by owner and id; every method is safe to call concurrently, from several processes sharing one
    backend. Records are JSON-serializable mappings."""

    async def create(
        self,
        owner: str,
        task_id: str,
        record: Mapping[str, Any],
        *,
        expires_at: float,
        limit: int,
        total: int | None = None,
        pool: str = "tasks",
        address: str | None = None,
        address_limit: int | None = None,
        person: str | None = None,
    ) -> Full | None:
        """Store a new task of `owner` in `pool` from client `address` unless `person` (None: the owner) keeps
        `limit` live tasks in the pool already, under whatever owners, the pool keeps `address_limit` live tasks
        from `address` (either None: not counted) or `total` live tasks of all owners (None: no total); None when
        it was stored, else which count was full. Atomic: concurrent creations never leave a person more than
        `limit` in the pool, an address more than `address_limit`, nor the pool more than `total`."""

    async def get(self, owner: str, task_id: str) -> dict[str, Any] | None:
        """The task, or None when there is none, it has expired, or it is another owner's."""

    async def put(self, owner: str, task_id: str, record: Mapping[str, Any], *, expires_at: float) -> None:
        """Replace the task's record and expiry (its claim stays)."""

    async def claim(self, owner: str, task_id: str) -> tuple[dict[str, Any] | None, bool]:
        """Mark the task as ending and return it, with True when this call was the first to claim it; a missing
        or expired task gives (None, False)."""

    async def ids(self, owner: str) -> list[str]:
        """The ids of the owner's live tasks, newest first."""

    async def take(self, owner: str, task_id: str) -> dict[str, Any] | None:
        """Remove the live task and return it; None when there is none (missing, expired, another owner's, or
        taken already). Atomic: of concurrent takes on any instance, exactly one gets it."""

    async def aclose(self) -> None:
        """Release connections; the store is not used afterwards."""


def open_task_store(url: str | None, *, clock: Clock | None = None) -> TaskStore:
    """The store a URL names: `redis://host:port/db` (or `rediss://`, `unix://`) for Redis, a SQLite file path
    (`sqlite:///path` or a plain path), or None for an in-memory SQLite database of this process."""
    if url is None:
        return SqliteTaskStore(":memory:", clock=clock)
    if url.startswith(REDIS_URL_SCHEMES):
        require("redis", "a Redis task store (--tasks-store redis://...)")
        return RedisTaskStore.from_url(url, clock=clock)
    path = url.removeprefix("sqlite:///") if url.startswith("sqlite:///") else url
    if "://" in path or not path:
        raise ConfigError(f"task store {url!r}: give redis://host:port/db or a SQLite file path")
    return SqliteTaskStore(path, clock=clock)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS gateway_tasks (
    owner TEXT NOT NULL,
    task_id TEXT NOT NULL,
    record TEXT NOT NULL,
    created REAL NOT NULL,
    expires_at REAL NOT NULL,
    claimed INTEGER NOT NULL DEFAULT 0,
    pool TEXT NOT NULL DEFAULT 'tasks',
    address TEXT,
    person TEXT,
    PRIMARY KEY (owner, task_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS gateway_tasks_owner ON gateway_tasks (owner, expires_at);
CREATE INDEX IF NOT EXISTS gateway_tasks_expiry ON gateway_tasks (expires_at);
"""
_PURGE_EVERY = 60.0


def _upgrade(db: sqlite3.Connection) -> None:
    """Give a file made before pools its `pool` column (its rows are tasks), one made before addresses its
    `address` column (its rows come from no address), one made before persons its `person` column (its rows count
    against their owners), and the pool, address and person indexes."""
    with transaction(db):
        columns = {row[1] for row in db.execute("PRAGMA table_info(gateway_tasks)")}
        if "pool" not in columns:
            db.execute("ALTER TABLE gateway_tasks ADD COLUMN pool TEXT NOT NULL DEFAULT 'tasks'")
        if "address" not in columns:
            db.execute("ALTER TABLE gateway_tasks ADD COLUMN address TEXT")
        if "person" not in columns:
            db.execute("ALTER TABLE gateway_tasks ADD COLUMN person TEXT")
            db.execute("UPDATE gateway_tasks SET person = owner")
        db.execute("CREATE INDEX IF NOT EXISTS gateway_tasks_pool ON gateway_tasks (pool, expires_at)")
        db.execute(
            "CREATE INDEX IF NOT EXISTS gateway_tasks_address ON gateway_tasks (pool, address, expires_at) "
            "WHERE address IS NOT NULL"
        )
        db.execute("CREATE INDEX IF NOT EXISTS gateway_tasks_person ON gateway_tasks (pool, person, expires_at)")


class SqliteTaskStore:
    """A `TaskStore` in SQLite: `:memory:` for this process alone, or a file (WAL, readable by its owner only) that
    several processes on one host share. Calls run in a worker thread, one at a time per store."""

    def __init__(self, path: str | Path, *, clock: Clock | None = None) -> None:
        self.path = str(path)
        self._clock = clock or time.time
        self._lock = threading.Lock()
        self._file = SqliteFile(self.path, _SCHEMA, what="SQLite task store")
        self._closed = False
        self._purged_at = 0.0
        #: The connection `_upgrade` last ran on (a file reopened, restored from a backup, is checked again).
        self._upgraded: sqlite3.Connection | None = None

    async def _in_thread(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        def run() -> _T:
            with self._lock:
                if self._closed:
                    raise TaskStoreError(f"the SQLite task store {self.path!r} is closed; the gateway has stopped")
                try:
                    db = self._file.connection()
                    if db is not self._upgraded:
                        _upgrade(db)
                        self._upgraded = db
                    return work(db)
                except DatabaseGone as error:
                    raise TaskStoreError(str(error), unreachable=True) from error
                except sqlite3.Error as error:
                    raise TaskStoreError(f"the SQLite task store {self.path} failed: {error}") from error

        return await anyio.to_thread.run_sync(run)

    def _purge(self, db: sqlite3.Connection, now: float) -> None:
        if now - self._purged_at > _PURGE_EVERY:
            self._purged_at = now
            db.execute("DELETE FROM gateway_tasks WHERE expires_at <= ?", (now,))

    async def create(
        self,
        owner: str,
        task_id: str,
        record: Mapping[str, Any],
        *,
        expires_at: float,
        limit: int,
        total: int | None = None,
        pool: str = "tasks",
        address: str | None = None,
        address_limit: int | None = None,
        person: str | None = None,
    ) -> Full | None:
        """See `TaskStore.create`: the counts and the insert share one write transaction."""
        now, text, counted = self._clock(), json.dumps(record), owner if person is None else person

        def work(db: sqlite3.Connection) -> Full | None:
            self._purge(db, now)
            with transaction(db):
                (kept,) = db.execute(
                    "SELECT count(*) FROM gateway_tasks WHERE pool = ? AND person = ? AND expires_at > ?",
                    (pool, counted, now),
                ).fetchone()
                if kept >= limit:
                    return "person"
                if address is not None and address_limit is not None:
                    (shared,) = db.execute(
                        "SELECT count(*) FROM gateway_tasks WHERE pool = ? AND address = ? AND expires_at > ?",
                        (pool, address, now),
                    ).fetchone()
                    if shared >= address_limit:
                        return "address"
                if total is not None:
                    (pooled,) = db.execute(
                        "SELECT count(*) FROM gateway_tasks WHERE pool = ? AND expires_at > ?", (pool, now)
                    ).fetchone()
                    if pooled >= total:
                        return "pool"
                db.execute(
                    "INSERT OR REPLACE INTO gateway_tasks (owner, task_id, record, created, expires_at, claimed, "
                    "pool, address, person) VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?)",
                    (owner, task_id, text, now, expires_at, pool, address, counted),
                )
                return None

        return await self._in_thread(work)

    async def get(self, owner: str, task_id: str) -> dict[str, Any] | None:
        """See `TaskStore.get`."""
        now = self._clock()
        row = await self._in_thread(
            lambda db: db.execute(
                "SELECT record FROM gateway_tasks WHERE owner = ? AND task_id = ? AND expires_at > ?",
                (owner, task_id, now),
            ).fetchone()
        )
        return _load(row[0]) if row is not None else None

    async def put(self, owner: str, task_id: str, record: Mapping[str, Any], *, expires_at: float) -> None:
        """See `TaskStore.put`."""
        text = json.dumps(record)
        await self._in_thread(
            lambda db: db.execute(
                "UPDATE gateway_tasks SET record = ?, expires_at = ? WHERE owner = ? AND task_id = ?",
                (text, expires_at, owner, task_id),
            )
        )

    async def claim(self, owner: str, task_id: str) -> tuple[dict[str, Any] | None, bool]:
        """See `TaskStore.claim`: one conditional UPDATE, atomic across processes."""
        now = self._clock()
        updated = await self._in_thread(
            lambda db: (
                db.execute(
                    "UPDATE gateway_tasks SET claimed = 1 "
                    "WHERE owner = ? AND task_id = ? AND expires_at > ? AND claimed = 0",
                    (owner, task_id, now),
                ).rowcount
            )
        )
        return await self.get(owner, task_id), updated == 1

    async def ids(self, owner: str) -> list[str]:
        """See `TaskStore.ids`."""
        now = self._clock()
        rows = await self._in_thread(
            lambda db: db.execute(
                "SELECT task_id FROM gateway_tasks WHERE owner = ? AND expires_at > ? ORDER BY created DESC",
                (owner, now),
            ).fetchall()
        )
        return [row[0] for row in rows]

    async def take(self, owner: str, task_id: str) -> dict[str, Any] | None:
        """See `TaskStore.take`: one DELETE ... RETURNING, atomic across processes."""
        now = self._clock()

        def work(db: sqlite3.Connection) -> list[Any]:
            with transaction(db):
                return db.execute(
                    "DELETE FROM gateway_tasks WHERE owner = ? AND task_id = ? AND expires_at > ? RETURNING record",
                    (owner, task_id, now),
                ).fetchall()

        rows = await self._in_thread(work)
        return _load(rows[0][0]) if rows else None

    async def aclose(self) -> None:
        """See `TaskStore.aclose`: after any statement running in a worker thread, never during one (a SQLite
        connection closed under a running statement takes the process down)."""

        def close() -> None:
            with self._lock:
                self._closed = True
                self._file.close()

        await anyio.to_thread.run_sync(close)


# Redis: the task under `{prefix}task:{owner}:{id}` (JSON: its creation, its pool, its person, its address when
# it has one, its record; with the task's expiry), its claim beside it, the owner's index a sorted set of ids, the
# pool's index `{prefix}pool:{pool}`, the person's `{prefix}person:{pool}:{person}` and the address's
# `{prefix}address:{pool}:{address}` sorted sets of `{owner}:{id}`, all scored by expiry and trimmed of the
# expired on every creation that counts them. A task's pool, person and address are read from its JSON by `take`
# and `put`, which name their indexes from `prefix` (ARGV); a task stored before persons were counted has none.
_CREATE = """
local index, key, pooled, counted, shared = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local now, expires_ms, limit, total = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[6])
local share = tonumber(ARGV[8])
redis.call('ZREMRANGEBYSCORE', index, '-inf', now)
redis.call('ZREMRANGEBYSCORE', counted, '-inf', now)
if redis.call('ZCARD', counted) >= limit then return 'person' end
local sets = {index, pooled, counted}
if shared then
  redis.call('ZREMRANGEBYSCORE', shared, '-inf', now)
  if share >= 0 and redis.call('ZCARD', shared) >= share then return 'address' end
  sets[4] = shared
end
redis.call('ZREMRANGEBYSCORE', pooled, '-inf', now)
if total >= 0 and redis.call('ZCARD', pooled) >= total then return 'pool' end
redis.call('SET', key, ARGV[4], 'PXAT', expires_ms)
redis.call('ZADD', index, expires_ms, ARGV[5])
for i = 2, #sets do redis.call('ZADD', sets[i], expires_ms, ARGV[7]) end
for _, set in ipairs(sets) do
  local left = redis.call('PTTL', set)
  if left < 0 or now + left < expires_ms then redis.call('PEXPIREAT', set, expires_ms) end
end
return ''
"""
# The task, its claim and its places in the indexes go at once; the task's text is the answer (nil: none to take).
_TAKE = """
local text = redis.call('GET', KEYS[2])
if not text then return false end
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('ZREM', KEYS[1], ARGV[1])
local decoded = cjson.decode(text)
local pool, person, address = decoded['pool'], decoded['person'], decoded['address']
if pool then redis.call('ZREM', ARGV[2] .. 'pool:' .. pool, ARGV[3]) end
if pool and person then redis.call('ZREM', ARGV[2] .. 'person:' .. pool .. ':' .. person, ARGV[3]) end
if pool and address then redis.call('ZREM', ARGV[2] .. 'address:' .. pool .. ':' .. address, ARGV[3]) end
return text
"""
# The task's creation time, pool and address stay; the indexes live as long as their longest-lived task.
_PUT = """
local index, key, claim = KEYS[1], KEYS[2], KEYS[3]
local now, expires_ms = tonumber(ARGV[1]), tonumber(ARGV[2])
local created, pool, person, address = now, nil, nil, nil
local old = redis.call('GET', key)
if old then
  local decoded = cjson.decode(old)
  created, pool, person, address = decoded['created'], decoded['pool'], decoded['person'], decoded['address']
end
local sets = {index}
local text = '{"created":' .. string.format('%d', created)
if pool then
  text = text .. ',"pool":' .. cjson.encode(pool)
  sets[#sets + 1] = ARGV[5] .. 'pool:' .. pool
  if person then
    text = text .. ',"person":' .. cjson.encode(person)
    sets[#sets + 1] = ARGV[5] .. 'person:' .. pool .. ':' .. person
  end
  if address then
    text = text .. ',"address":' .. cjson.encode(address)
    sets[#sets + 1] = ARGV[5] .. 'address:' .. pool .. ':' .. address
  end
end
for i = 2, #sets do redis.call('ZADD', sets[i], expires_ms, ARGV[6]) end
text = text .. ',"record":' .. ARGV[3] .. '}'
redis.call('SET', key, text, 'PXAT', expires_ms)
redis.call('ZADD', index, expires_ms, ARGV[4])
redis.call('PEXPIREAT', claim, expires_ms)
for _, set in ipairs(sets) do
  local left = redis.call('PTTL', set)
  if left < 0 or now + left < expires_ms then redis.call('PEXPIREAT', set, expires_ms) end
end
"""


class RedisTaskStore:
    """A `TaskStore` in Redis, shared by every instance that names the same server and database."""

    def __init__(self, client: Any, *, prefix: str = "mcp-gateway:", clock: Clock | None = None) -> None:
        self.client = client
        self.prefix = prefix
        self._clock = clock or time.time
        self._create = client.register_script(_CREATE)
        self._put = client.register_script(_PUT)
        self._take = client.register_script(_TAKE)

    @classmethod
    def from_url(cls, url: str, *, prefix: str = "mcp-gateway:", clock: Clock | None = None) -> RedisTaskStore:
        """A store on the Redis server at `url`."""
        return cls(client(url, decode_responses=True), prefix=prefix, clock=clock)

    def _key(self, owner: str, task_id: str) -> str:
        return f"{self.prefix}task:{owner}:{task_id}"

    def _index(self, owner: str) -> str:
        return f"{self.prefix}tasks:{owner}"

    def _pool(self, pool: str) -> str:
        return f"{self.prefix}pool:{pool}"

    def _address(self, pool: str, address: str) -> str:
        return f"{self.prefix}address:{pool}:{address}"

    def _person(self, pool: str, person: str) -> str:
        return f"{self.prefix}person:{pool}:{person}"

    async def _call(self, what: str, work: Any) -> Any:
        from redis.exceptions import RedisError

        try:
            return await work
        except RedisError as error:
            raise TaskStoreError(
                f"the Redis task store failed to {what}: {type(error).__name__}: {error}",
                unreachable=unreachable(error),
            ) from error

    async def create(
        self,
        owner: str,
        task_id: str,
        record: Mapping[str, Any],
        *,
        expires_at: float,
        limit: int,
        total: int | None = None,
        pool: str = "tasks",
        address: str | None = None,
        address_limit: int | None = None,
        person: str | None = None,
    ) -> Full | None:
        """See `TaskStore.create`: one script, atomic on the server."""
        now_ms = math.floor(self._clock() * 1000)
        expires_ms = max(math.ceil(expires_at * 1000), now_ms + 1)
        counted = owner if person is None else person
        stored: dict[str, Any] = {"created": now_ms, "pool": pool, "person": counted}
        if address is not None:
            stored["address"] = address
        text = json.dumps({**stored, "record": record})
        full = await self._call(
            "create a task",
            self._create(
                # The address's index is the fifth key when the task comes from an address.
                keys=[
                    self._index(owner),
                    self._key(owner, task_id),
                    self._pool(pool),
                    self._person(pool, counted),
                    *([] if address is None else [self._address(pool, address)]),
                ],
                args=[
                    now_ms,
                    expires_ms,
                    limit,
                    text,
                    task_id,
                    -1 if total is None else total,
                    f"{owner}:{task_id}",
                    -1 if address_limit is None else address_limit,
                ],
            ),
        )
        return _FULL.get(full)

    async def get(self, owner: str, task_id: str) -> dict[str, Any] | None:
        """See `TaskStore.get`."""
        text = await self._call("read a task", self.client.get(self._key(owner, task_id)))
        return _load(text)["record"] if text is not None else None

    async def put(self, owner: str, task_id: str, record: Mapping[str, Any], *, expires_at: float) -> None:
        """See `TaskStore.put`: one script, atomic on the server."""
        key = self._key(owner, task_id)
        now_ms = math.floor(self._clock() * 1000)
        expires_ms = max(math.ceil(expires_at * 1000), now_ms + 1)
        await self._call(
            "write a task",
            self._put(
                keys=[self._index(owner), key, f"{key}:claim"],
                args=[now_ms, expires_ms, json.dumps(record), task_id, self.prefix, f"{owner}:{task_id}"],
            ),
        )

    async def claim(self, owner: str, task_id: str) -> tuple[dict[str, Any] | None, bool]:
        """See `TaskStore.claim`: SET NX on the task's claim key."""
        record = await self.get(owner, task_id)
        if record is None:
            return None, False
        ttl = await self._call("read a task", self.client.pttl(self._key(owner, task_id)))
        first = await self._call(
            "claim a task", self.client.set(f"{self._key(owner, task_id)}:claim", "1", nx=True, px=max(int(ttl), 1))
        )
        return record, bool(first)

    async def ids(self, owner: str) -> list[str]:
        """See `TaskStore.ids`: the index's live ids, ordered by the tasks' creation."""
        now_ms = math.floor(self._clock() * 1000)
        members = await self._call("list tasks", self.client.zrangebyscore(self._index(owner), f"({now_ms}", "+inf"))
        if not members:
            return []
        texts = await self._call("list tasks", self.client.mget([self._key(owner, member) for member in members]))
        found = [(_load(text)["created"], member) for member, text in zip(members, texts, strict=True) if text]
        return [member for _, member in sorted(found, reverse=True)]

    async def take(self, owner: str, task_id: str) -> dict[str, Any] | None:
        """See `TaskStore.take`: one script, atomic on the server."""
        key = self._key(owner, task_id)
        text = await self._call(
            "take a task",
            self._take(
                keys=[self._index(owner), key, f"{key}:claim"], args=[task_id, self.prefix, f"{owner}:{task_id}"]
            ),
        )
        return _load(text)["record"] if text is not None else None

    async def aclose(self) -> None:
        """See `TaskStore.aclose`."""
        await self.client.aclose()


class WatchedTaskStore:
    """A `TaskStore` whose failures are reported through `outage` (logged once per outage, counted); while its
    store is unreachable, operations are refused at once until the next attempt is due."""

    def __init__(self, store: TaskStore, outage: Outage) -> None:
        self.store = store
        self.outage = outage

    async def _watched(self, operation: Callable[[], Awaitable[_T]]) -> _T:
        return await self.outage.guard(operation, TaskStoreError, _refusal)

    async def probe(self) -> str | None:
        """None when the store answers a read now; else which store is unavailable (for a readiness check; what
        failed is in the log)."""
        try:
            await self._watched(lambda: self.store.ids("ready-probe"))
        except TaskStoreError:
            return f"the {self.outage.name} is unavailable"
        return None

    async def create(
        self,
        owner: str,
        task_id: str,
        record: Mapping[str, Any],
        *,
        expires_at: float,
        limit: int,
        total: int | None = None,
        pool: str = "tasks",
        address: str | None = None,
        address_limit: int | None = None,
        person: str | None = None,
    ) -> Full | None:
        """See `TaskStore.create`."""
        return await self._watched(
            lambda: self.store.create(
                owner,
                task_id,
                record,
                expires_at=expires_at,
                limit=limit,
                total=total,
                pool=pool,
                address=address,
                address_limit=address_limit,
                person=person,
            )
        )

    async def get(self, owner: str, task_id: str) -> dict[str, Any] | None:
        """See `TaskStore.get`."""
        return await self._watched(lambda: self.store.get(owner, task_id))

    async def put(self, owner: str, task_id: str, record: Mapping[str, Any], *, expires_at: float) -> None:
        """See `TaskStore.put`."""
        await self._watched(lambda: self.store.put(owner, task_id, record, expires_at=expires_at))

    async def claim(self, owner: str, task_id: str) -> tuple[dict[str, Any] | None, bool]:
        """See `TaskStore.claim`."""
        return await self._watched(lambda: self.store.claim(owner, task_id))

    async def ids(self, owner: str) -> list[str]:
        """See `TaskStore.ids`."""
        return await self._watched(lambda: self.store.ids(owner))

    async def take(self, owner: str, task_id: str) -> dict[str, Any] | None:
        """See `TaskStore.take`."""
        return await self._watched(lambda: self.store.take(owner, task_id))

    async def aclose(self) -> None:
        """See `TaskStore.aclose`."""
        await self.store.aclose()


#: What the create script answers when a count is full ('' when it stored the task).
_FULL: Final[Mapping[str, Full]] = {"person": "person", "address": "address", "pool": "pool"}


def _refusal(detail: str) -> TaskStoreError:
    return TaskStoreError(detail, unreachable=True)


def _load(text: str | bytes) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(text)
    return value
