"""A run restricted to a caller's view of the catalog, probed as an attacker would: a hidden function must be as
absent from `api` and as unknown to `call` as a name that never existed, on the host too, and one run's view
must never show in another's, on the same worker or not."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Sequence
from typing import Any

import anyio
import pytest

from sandbox import LimitsError, Sandbox
from sandbox.pool import Worker
from tests.sandbox.conftest import LIMITS

pytestmark = pytest.mark.anyio

CATALOG = (
    "orders.list_orders",
    "orders.get_order",
    "customers.get_customer",
    "customers.delete_customer",
    "customers.list_customers",
    "refunds.create_refund",
)
VISIBLE = ("orders.list_orders", "orders.get_order")
OTHERS = ("customers.get_customer", "refunds.create_refund")

#: What a script learns of the names around it, every way it can list or probe `api`.
SURVEY = """
const forIn = [];
for (const module in api) { forIn.push(module); for (const name in api[module]) forIn.push(module + "." + name) }
return {
  keys: Object.keys(api),
  modules: Object.fromEntries(Object.entries(api).map(([name, module]) => [name, Object.keys(module)])),
  names: Object.getOwnPropertyNames(api),
  own: Reflect.ownKeys(api).map(String),
  descriptors: Object.keys(Object.getOwnPropertyDescriptors(api)),
  json: JSON.stringify(api),
  forIn: forIn,
}
"""

#: Everything a script can observe of one name, whether the caller may see it or it never existed.
PROBE = """
async function probe(name) {
  const [module, fn] = name.split(".");
  const seen = {
    inApi: module in api,
    hasOwn: Object.hasOwn(api, module),
    typeofModule: typeof api[module],
    typeofFunction: typeof (api[module] || {})[fn],
    descriptor: Object.getOwnPropertyDescriptor(api, module) === undefined,
  };
  for (const [label, run] of [
    ["call", () => call(name, {id: 1})],
    ["callLong", () => call(name + "x".repeat(200), {})],
    ["viaApi", () => api[module][fn]({id: 1})],
  ]) {
    try {
      seen[label] = {value: await run()};
    } catch (error) {
      seen[label] = {
        name: error.name, message: error.message.split(name).join("<name>"), function: error.function,
        status: error.status, body: error.body, keys: Object.keys(error), stack: error.stack,
      };
    }
  }
  const [settled] = await callAll([{name: name, args: {}}]);
  seen.callAll = {error: settled instanceof Error, message: String(settled.message).split(name).join("<name>")};
  return seen;
}
"""


class Host:
    """The caller's function caller: answers every call it is reached with, and remembers it."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.pids: list[tuple[int, ...]] = []
        self.sandbox: Sandbox | None = None

    async def __call__(self, name: str, args: dict[str, Any]) -> Any:
        self.calls.append(name)
        if self.sandbox is not None:
            self.pids.append(self.sandbox.busy_pids)
        return {"function": name}


@pytest.fixture(scope="module")
async def catalog() -> AsyncIterator[Sandbox]:
    """A sandbox with the whole catalog, as a gateway makes one for all its callers."""
    async with Sandbox(CATALOG, LIMITS) as shared:
        yield shared


def single_worker() -> Sandbox:
    """A sandbox with one worker, so every run of a test reuses the same process and its warm context."""
    return Sandbox(CATALOG, dataclasses.replace(LIMITS, max_concurrent=1, max_runs_per_worker=1000))


async def survey(sandbox: Sandbox, functions: Sequence[str] | None) -> dict[str, Any]:
    result = await sandbox.run(SURVEY, Host(), functions=functions)
    assert result.ok, result.failure
    assert isinstance(result.value, dict)
    return result.value


async def test_a_restricted_run_lists_only_the_modules_and_functions_it_may_call(catalog: Sandbox) -> None:
    seen = await survey(catalog, VISIBLE)
    assert seen == {
        "keys": ["orders"],
        "modules": {"orders": ["list_orders", "get_order"]},
        "names": ["orders"],
        "own": ["orders"],
        "descriptors": ["orders"],
        "json": '{"orders":{}}',
        "forIn": ["orders", "orders.list_orders", "orders.get_order"],
    }


async def test_a_restricted_run_cannot_reach_a_hidden_module_or_function_by_name(catalog: Sandbox) -> None:
    source = """[
      Object.keys(api), JSON.stringify(Object.keys(api)), Object.keys(api.orders), "customers" in api,
      typeof api.customers, "delete_customer" in api.orders, typeof api.orders.delete_customer,
      api.customers === api.nope, Object.getOwnPropertyNames(api.orders),
    ]"""
    result = await catalog.run(source, Host(), functions=["orders.get_order", "orders.list_orders"])
    assert result.value == [
        ["orders"],
        '["orders"]',
        ["list_orders", "get_order"],
        False,
        "undefined",
        False,
        "undefined",
        True,
        ["list_orders", "get_order"],
    ]


async def test_a_hidden_function_is_indistinguishable_from_one_that_never_existed(catalog: Sandbox) -> None:
    source = (
        PROBE
        + """
    return [await probe("customers.delete_customer"), await probe("orders.delete_order"), await probe("nope.nothing")]
    """
    )
    host = Host()
    restricted = await catalog.run(source, host, functions=VISIBLE)
    assert restricted.ok, restricted.failure
    async with Sandbox(VISIBLE, LIMITS) as never_had_them:
        baseline = await never_had_them.run(source, Host())
        assert await survey(catalog, VISIBLE) == await survey(never_had_them, None)
    assert restricted.value == baseline.value
    assert host.calls == []


async def test_calling_a_hidden_function_throws_what_calling_a_name_that_never_existed_throws(
    catalog: Sandbox,
) -> None:
    source = """
    const thrown = [];
    for (const name of ["customers.delete_customer", "nope.nothing"]) {
      try { await call(name, {}) } catch (error) {
        thrown.push({name: error.name, message: error.message.replace(name, "<name>"), function: error.function})
      }
    }
    thrown
    """
    host = Host()
    result = await catalog.run(source, host, functions=VISIBLE)
    hidden, unknown = result.value
    assert hidden == {
        "name": "Error",
        "message": "Unknown function '<name>'. Call only the catalog's functions.",
        "function": "customers.delete_customer",
    }
    assert {**hidden, "function": "nope.nothing"} == unknown
    assert host.calls == []


async def test_a_misspelt_hidden_name_is_offered_no_suggestion_that_names_a_hidden_function(
    catalog: Sandbox,
) -> None:
    name = "const name = ['customers', 'delete_custome'].join('.')\n"  # made at run time: not checked before
    source = name + "try { await call(name, {}) } catch (error) { return error.message }"
    shown = await catalog.run(source, Host())
    hidden = await catalog.run(source, Host(), functions=VISIBLE)
    assert "Did you mean customers.delete_customer, " in shown.value  # what the hint would leak
    assert hidden.value == "Unknown function 'customers.delete_custome'. Call only the catalog's functions."
    literal = "await call('customers.delete_custome', {})"
    refused = await catalog.run(literal, Host(), functions=VISIBLE)
    assert refused.failure is not None and refused.failure.kind == "refused"
    assert "delete_customer" not in refused.failure.message


async def test_a_worker_that_ignores_its_view_still_cannot_call_a_hidden_function(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def kept_to_itself(worker: Worker, view: bytes) -> None:
        """A compromised worker: it is told its view and goes on listing and calling every function."""

    monkeypatch.setattr(Worker, "select", kept_to_itself)
    source = """
    const listed = Object.keys(api);
    let answer;
    try { answer = await api.customers.delete_customer({id: 1}) } catch (error) { answer = error.message }
    return [listed, answer, await api.orders.get_order({id: 1})]
    """
    host = Host()
    async with single_worker() as sandbox:
        result = await sandbox.run(source, host, functions=VISIBLE)
    listed, refused, allowed = result.value
    assert listed == ["orders", "customers", "refunds"]  # the worker lies about the view...
    assert refused == "Unknown function 'customers.delete_customer'. Call only the catalog's functions."
    assert allowed == {"function": "orders.get_order"}
    assert host.calls == ["orders.get_order"]  # ...and the host's gate still refuses the hidden function


async def test_runs_with_different_views_on_one_worker_each_see_their_own() -> None:
    views: list[tuple[str, ...] | None] = [VISIBLE, VISIBLE, OTHERS, VISIBLE, None, CATALOG, OTHERS, (), VISIBLE]
    pids: set[int] = set()
    async with single_worker() as sandbox:
        for functions in views:
            seen = await survey(sandbox, functions)
            expected = CATALOG if functions is None else [name for name in CATALOG if name in functions]
            assert seen["forIn"] == [part for name in expected for part in _listing(name, expected)]
            pids.update(sandbox.worker_pids)
    assert len(pids) == 1


async def test_concurrent_runs_with_different_views_each_see_their_own(catalog: Sandbox) -> None:
    views: list[tuple[str, ...] | None] = [VISIBLE, OTHERS, None, ("refunds.create_refund",)] * 4
    seen: dict[int, dict[str, Any]] = {}

    async def one(index: int, functions: tuple[str, ...] | None) -> None:
        seen[index] = await survey(catalog, functions)

    async with anyio.create_task_group() as runs:
        for index, functions in enumerate(views):
            runs.start_soon(one, index, functions)
    for index, functions in enumerate(views):
        expected = {name.partition(".")[0] for name in functions or CATALOG}
        assert set(seen[index]["keys"]) == expected, (index, functions)


async def test_a_worker_is_told_its_view_only_when_it_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[tuple[str, bytes]] = []
    send = Worker.send

    async def spied(worker: Worker, header: dict[str, Any], payload: bytes = b"") -> None:
        if header["op"] in ("view", "run"):
            sent.append((header["op"], payload if header["op"] == "view" else b""))
        await send(worker, header, payload)

    monkeypatch.setattr(Worker, "send", spied)
    async with single_worker() as sandbox:
        for functions in [None, VISIBLE, list(reversed(VISIBLE)), OTHERS, OTHERS, CATALOG, None, VISIBLE]:
            assert (await sandbox.run("1", Host(), functions=functions)).value == 1
    # One bit per function, in the catalog's order: orders.* are the first two, the others the 3rd and 6th.
    assert sent == [
        ("run", b""),
        ("view", bytes([0b000011])),
        ("run", b""),
        ("run", b""),
        ("view", bytes([0b100100])),
        ("run", b""),
        ("run", b""),
        ("view", b""),
        ("run", b""),
        ("run", b""),
        ("view", bytes([0b000011])),
        ("run", b""),
    ]


async def test_a_run_goes_to_an_idle_worker_whose_last_run_had_its_view() -> None:
    host = Host()
    async with Sandbox(CATALOG, dataclasses.replace(LIMITS, max_concurrent=2)) as sandbox:
        host.sandbox = sandbox
        for functions in [VISIBLE, VISIBLE, OTHERS, VISIBLE, OTHERS]:
            name = (functions or CATALOG)[0]
            assert (await sandbox.run(f"await call({name!r}, {{}})", host, functions=functions)).ok
    first, again, other, back, other_again = host.pids
    assert first == again == back and other == other_again and first != other


@pytest.mark.parametrize(
    ("functions", "message"),
    [
        (["orders.get_order", "admin.drop_everything"], r"1 are not, e\.g\. 'admin\.drop_everything'"),
        ("orders.get_order", "not a string: 'orders.get_order'"),
        ([["orders.get_order"]], "must be a collection of 'module.function' names"),
    ],
    ids=["a name the sandbox lacks", "one name as a string", "unhashable names"],
)
async def test_a_view_that_is_not_some_of_the_sandboxs_functions_is_refused_before_it_runs(
    catalog: Sandbox, functions: Any, message: str
) -> None:
    host = Host()
    with pytest.raises(LimitsError, match=message):
        await catalog.run("await call('orders.get_order', {})", host, functions=functions)
    assert host.calls == []


def _listing(name: str, names: Sequence[str]) -> list[str]:
    """What a for-in over `api` yields for `name`: its module first when it is the module's first function."""
    module = name.partition(".")[0]
    first = next(other for other in names if other.partition(".")[0] == module)
    return [module, name] if first == name else [name]
