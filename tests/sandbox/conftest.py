"""A small host for the sandbox tests: a shop of items behind the function-caller callback a gateway would give."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from sandbox import CallError, Sandbox, ScriptLimits

ITEMS = {
    1: {"id": 1, "name": "mug", "price": 12, "tags": ["kitchen"]},
    2: {"id": 2, "name": "lamp", "price": 40, "tags": ["home", "light"]},
    3: {"id": 3, "name": "kettle", "price": 30, "tags": ["kitchen"]},
}
FUNCTIONS = ("shop.list_items", "shop.get_item", "shop.echo", "shop.big", "shop.crash", "shop.slow", "shop.gate")
#: Short limits keep the hostile suite fast: every case must end within TIMEOUT plus MARGIN.
TIMEOUT = 0.75
MARGIN = 0.5
LIMITS = ScriptLimits(timeout=TIMEOUT, max_calls=20, max_concurrent=3, slot_wait=0.2, max_log_lines=5)


class Shop:
    """The host side of a script's calls: what a gateway's Dispatcher would answer, in memory."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.gate_reached = anyio.Event()
        self.gate = anyio.Event()

    async def __call__(self, name: str, args: dict[str, Any]) -> Any:
        self.calls.append((name, args))
        if name == "shop.list_items":
            return [{"id": item["id"], "name": item["name"]} for item in ITEMS.values()]
        if name == "shop.get_item":
            item = ITEMS.get(args.get("id", 0))
            if item is None:
                raise CallError("shop.get_item failed: HTTP 404 Not Found", status=404, body={"detail": "no item"})
            return item
        if name == "shop.echo":
            return args
        if name == "shop.big":
            return "x" * args.get("size", 2_000_000)
        if name == "shop.crash":
            raise RuntimeError("the shop's handler has a bug")
        if name == "shop.slow":
            await anyio.sleep(args.get("seconds", 0.1))
            return {"slept": args.get("seconds", 0.1)}
        if name == "shop.gate":
            self.gate_reached.set()
            await self.gate.wait()
            return "opened"
        raise CallError(f"unknown function {name!r}")


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def sandbox() -> AsyncIterator[Sandbox]:
    """One sandbox (and its warm workers) shared by the tests of a module."""
    async with Sandbox(FUNCTIONS, LIMITS) as shared:
        yield shared


@pytest.fixture
def shop() -> Shop:
    return Shop()
