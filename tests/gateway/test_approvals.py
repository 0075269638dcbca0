"""One contract, every store approval handles live in: a SQLite file two instances share, and a real redis-server;
then two gateway instances behind one Redis store, where a handle one gives is used on the other."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest

from catalog.model import Function
from gateway.errors import ToolError
from gateway.limits import Limits
from gateway.options import Effects
from gateway.policy import CallerPolicy, Policy
from gateway.requests import RequestInfo
from gateway.rest.credentials import Credentials
from gateway.tools.approvals import Approvals, Pending, arguments_hash
from tests.gateway.task_stores import RedisPair, SqlitePair, StorePair
from tests.gateway.test_approval import DELETE, connect, delete, demo_catalog, make_gateway, product_exists
from tests.oauth.conftest import FakeClock

pytestmark = pytest.mark.anyio

AGAIN = "Ask again."


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@functools.cache
def policy() -> Policy:
    return Policy(demo_catalog(), limits=Limits(approvals_pending_per_caller=3), approval="destructive")


def caller(key: str = "alice", scopes: tuple[str, ...] = ("a", "b")) -> CallerPolicy:
    return policy().of(RequestInfo(transport="http", principal=Credentials({"x-api-key": key}, scopes)))


def deleting() -> Function:
    return demo_catalog().function(DELETE)


class ApprovalsContract(StorePair):
    """What approval handles do on every store; subclasses open two instances' views of one store."""

    ttl = 60.0

    @asynccontextmanager
    async def instances(self, clock: FakeClock) -> AsyncIterator[tuple[Approvals, Approvals]]:
        async with self.stores(clock) as (one, two):
            yield (
                Approvals(one, ttl=self.ttl, clock=clock, owns_store=False),
                Approvals(two, ttl=self.ttl, clock=clock, owns_store=False),
            )

    async def test_a_handle_given_on_one_instance_is_used_once_on_another(self) -> None:
        clock = self.clock()
        async with self.instances(clock) as (one, two):
            handle = await one.issue(caller(), deleting(), {"product_id": 1}, kind="confirmation")
            assert len(handle.value) >= 32 and handle.expires_at == pytest.approx(clock() + self.ttl, abs=1)
            pending = await two.pending(caller(), handle.value, kind="confirmation", refusal=AGAIN)
            assert (pending.function, pending.arguments_hash) == (DELETE, arguments_hash({"product_id": 1}))
            await two.spend(caller(), pending, refusal=AGAIN)
            with pytest.raises(ToolError, match=r"^No call is waiting for approval"):
                await one.pending(caller(), handle.value, kind="confirmation", refusal=AGAIN)
            with pytest.raises(ToolError, match=rf"{AGAIN}$"):
                await one.spend(caller(), pending, refusal=AGAIN)

    async def test_of_two_instances_spending_one_handle_at_once_exactly_one_does(self) -> None:
        clock = self.clock()
        async with self.instances(clock) as (one, two):
            spent: list[bool] = []

            async def spend(approvals: Approvals, found: Pending) -> None:
                try:
                    await approvals.spend(caller(), found, refusal=AGAIN)
                except ToolError:
                    spent.append(False)
                else:
                    spent.append(True)

            for _ in range(5):
                spent.clear()
                handle = await one.issue(caller(), deleting(), {"product_id": 1}, kind="form")
                pending = await one.pending(caller(), handle.value, kind="form", refusal=AGAIN)
                async with anyio.create_task_group() as group:
                    group.start_soon(spend, one, pending)
                    group.start_soon(spend, two, pending)
                assert sorted(spent) == [False, True]

    async def test_a_handle_is_its_callers_alone_and_of_its_kind(self) -> None:
        clock = self.clock()
        async with self.instances(clock) as (one, two):
            handle = await one.issue(caller(), deleting(), {}, kind="form")
            for other in (caller(scopes=("a",)), caller("bob"), caller(scopes=())):
                with pytest.raises(ToolError, match=r"^No call is waiting"):
                    await two.pending(other, handle.value, kind="form", refusal=AGAIN)
            with pytest.raises(ToolError, match=r"^No call is waiting"):
                await two.pending(caller(), handle.value, kind="confirmation", refusal=AGAIN)
            assert (await two.pending(caller(), handle.value, kind="form", refusal=AGAIN)).approves({"any": 1})

    async def test_a_handle_expires_after_its_ttl(self) -> None:
        clock = self.clock()
        async with self.instances(clock) as (one, two):
            handle = await one.issue(caller(), deleting(), {}, kind="confirmation")
            await self.let_pass(clock, self.ttl * 1.5)
            with pytest.raises(ToolError, match=r"^No call is waiting"):
                await two.pending(caller(), handle.value, kind="confirmation", refusal=AGAIN)

    async def test_a_caller_keeps_at_most_its_budget_of_handles_until_one_is_spent(self) -> None:
        clock = self.clock()
        async with self.instances(clock) as (one, two):
            handles = [await one.issue(caller(), deleting(), {}, kind="form") for _ in range(3)]
            with pytest.raises(ToolError, match=r"you have 3 calls waiting .* is 3\)"):
                await two.issue(caller(), deleting(), {}, kind="form")
            await two.issue(caller("bob"), deleting(), {}, kind="form")
            first = await two.pending(caller(), handles[0].value, kind="form", refusal=AGAIN)
            await two.spend(caller(), first, refusal=AGAIN)
            await two.issue(caller(), deleting(), {}, kind="form")


class TestSqliteApprovals(SqlitePair, ApprovalsContract):
    pass


class TestRedisApprovals(RedisPair, ApprovalsContract):
    ttl = 0.4

    async def test_two_gateway_instances_behind_one_store_agree_on_a_confirmation(self) -> None:
        effects = Effects(approval="destructive", approval_store=self.url)
        (app_one, one), (app_two, two) = make_gateway(effects=effects), make_gateway(effects=effects)
        async with one.lifespan(), two.lifespan(), connect(app_one) as first, connect(app_two) as second:
            handle = ((await delete(first, 3)).structured_content or {})["confirmation"]
            assert not (await delete(second, 3, confirmation=handle)).is_error
            assert not await product_exists(second, 3)
            assert (await delete(first, 3, confirmation=handle)).is_error and await product_exists(first, 3)
