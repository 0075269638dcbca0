"""The hostile suite: every script here tries to hurt the host, and each must end in a clean failure within the
timeout plus a small margin, while other scripts keep being served."""

from __future__ import annotations

import dataclasses
import os
import signal
import time
from pathlib import Path

import anyio
import pytest

from sandbox import FailureKind, Sandbox, ScriptResult, WorkerCrashError
from tests.sandbox.conftest import FUNCTIONS, LIMITS, MARGIN, TIMEOUT, Shop

pytestmark = pytest.mark.anyio

HOSTILE: dict[str, tuple[str, set[FailureKind]]] = {
    "infinite loop": ("for (;;) {}", {"timeout"}),
    "loop that catches the interrupt": ("for (;;) { try { for (;;) {} } catch (e) {} }", {"timeout"}),
    "loop in a sort comparator": ("[3, 2, 1].sort(() => { for (;;) {} })", {"timeout"}),
    "loop in a JSON reviver": ("JSON.parse('[1, 2]', () => { for (;;) {} })", {"timeout"}),
    "loop in a getter": ("const o = { get x() { for (;;) {} } }; o.x", {"timeout"}),
    "loop in a Proxy trap": ("new Proxy({}, { get() { for (;;) {} } }).anything", {"timeout"}),
    "loop in toString": ("String({ toString() { for (;;) {} } })", {"timeout"}),
    "loop in a thenable result": ("return { then() { for (;;) {} } }", {"timeout"}),
    "microtask flood": (
        "function spin() { Promise.resolve().then(spin) }\nspin(); await new Promise(() => {})",
        {"timeout"},
    ),
    # Each link waits for the next, so the chain grows until it runs out of memory or time. Out of memory inside
    # a promise job, QuickJS may reject with null instead of an error (reported as "threw null", with a hint), or
    # drop the job that carried the chain, which leaves the script awaiting a promise nothing settles.
    "promise chain flood": (
        "const loop = () => Promise.resolve().then(loop); await loop()",
        {"timeout", "memory", "error", "stalled"},
    ),
    "await loop": ("for (;;) await null", {"timeout"}),
    "loop that catches async interrupts": (
        "for (;;) { try { await (async () => { for (;;) {} })() } catch (e) {} }",
        {"timeout"},
    ),
    "catastrophic regular expression": ("/(a+)+$/.test('a'.repeat(40) + 'b')", {"timeout"}),
    "catastrophic regex in replace": ("('x'.repeat(40) + 'y!').replace(/^(x+x+)+y$/, '')", {"timeout"}),
    "array memory bomb": ("const a = []; for (;;) a.push(new Array(1e5).fill(1))", {"memory"}),
    "string memory bomb": ("let s = 'x'; for (;;) s += s", {"memory"}),
    "typed array memory bomb": ("const a = []; for (;;) a.push(new Float64Array(1e6))", {"memory"}),
    "memory bomb that catches out of memory": (
        "const a = []; for (;;) { try { a.push(new Array(1e6).fill(1)) } catch (e) {} }",
        {"memory", "timeout"},
    ),
    "one huge buffer": ("new ArrayBuffer(2 ** 31).byteLength", {"error", "memory"}),
    "deep recursion": ("function f() { return f() + 1 }\nf()", {"error"}),
    "deep recursion in JSON.stringify": (
        "let o = {}; for (let i = 0; i < 1e6; i++) o = {a: o}; JSON.stringify(o).length",
        {"error", "memory"},
    ),
    "huge result": ("'x'.repeat(5e6)", {"result"}),
    "call flood without awaiting": ("for (;;) call('shop.echo', {})", {"error"}),
    "call flood that catches the cap": ("for (;;) { try { call('shop.echo', {}) } catch (e) {} }", {"timeout"}),
    "log flood": ("for (;;) console.log('y'.repeat(1000))", {"timeout"}),
    "a promise nothing resolves": ("await new Promise(() => {})", {"stalled"}),
}


async def _run_beside_a_benign_script(sandbox: Sandbox, shop: Shop, source: str) -> tuple[ScriptResult, float]:
    """Run `source`; while it runs, a benign script must be served promptly. The hostile result and its time."""
    outcome: list[ScriptResult] = []
    elapsed: list[float] = []

    async def hostile() -> None:
        started = time.monotonic()
        outcome.append(await sandbox.run(source, shop))
        elapsed.append(time.monotonic() - started)

    async with anyio.create_task_group() as tg:
        tg.start_soon(hostile)
        await anyio.sleep(0.05)
        with anyio.fail_after(0.5):
            benign = await sandbox.run("const item = await api.shop.get_item({id: 3}); item.name", Shop())
        assert benign.value == "kettle"
    return outcome[0], elapsed[0]


@pytest.mark.parametrize("case", list(HOSTILE))
async def test_a_hostile_script_ends_in_a_clean_failure_within_the_timeout(
    sandbox: Sandbox, shop: Shop, case: str
) -> None:
    source, kinds = HOSTILE[case]
    result, elapsed = await _run_beside_a_benign_script(sandbox, shop, source)
    assert result.failure is not None, result
    assert result.failure.kind in kinds, result.failure
    assert result.failure.message
    assert elapsed < TIMEOUT + MARGIN


async def test_after_the_hostile_suite_every_worker_still_answers(sandbox: Sandbox, shop: Shop) -> None:
    async with anyio.create_task_group() as tg:
        for _ in range(LIMITS.max_concurrent):
            tg.start_soon(sandbox.run, "1", shop)
    assert len(sandbox.worker_pids) == LIMITS.max_concurrent


async def test_a_worker_killed_mid_run_is_a_clean_failure_that_is_reported_and_replaced(shop: Shop) -> None:
    reported: list[Exception] = []

    async def report(error: Exception) -> None:
        reported.append(error)

    limits = dataclasses.replace(LIMITS, max_concurrent=1, timeout=5.0)
    async with Sandbox(FUNCTIONS, limits) as single:
        results: list[ScriptResult] = []

        async def run() -> None:
            results.append(await single.run("await api.shop.gate(); 'never'", shop, report=report))

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await shop.gate_reached.wait()
            (victim,) = single.busy_pids
            started = time.monotonic()
            os.kill(victim, signal.SIGKILL)
        assert time.monotonic() - started < 1.0
        (result,) = results
        assert result.failure is not None and result.failure.kind == "crashed"
        assert "stopped unexpectedly" in result.failure.message
        assert len(reported) == 1 and isinstance(reported[0], WorkerCrashError)
        assert "killed by signal 9" in str(reported[0])
        assert victim not in single.worker_pids
        assert (await single.run("'still serving'", Shop())).value == "still serving"


async def test_a_run_cancelled_by_its_caller_kills_its_worker(shop: Shop) -> None:
    async with Sandbox(FUNCTIONS, dataclasses.replace(LIMITS, max_concurrent=1)) as single:
        with anyio.move_on_after(0.2):
            await single.run("for (;;) {}", shop)
        assert single.busy_pids == ()
        assert (await single.run("2 + 2", shop)).value == 4


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
async def test_memory_bombs_do_not_grow_the_host(sandbox: Sandbox, shop: Shop) -> None:
    before = _rss()
    for case in ("array memory bomb", "string memory bomb", "typed array memory bomb", "huge result"):
        result = await sandbox.run(HOSTILE[case][0], shop)
        assert result.failure is not None
    assert _rss() - before < 32 * 1024 * 1024


@pytest.mark.skipif(not Path("/proc/self/limits").exists(), reason="reads /proc")
async def test_workers_run_under_an_os_memory_limit(sandbox: Sandbox, shop: Shop) -> None:
    await sandbox.run("1", shop)
    for pid in sandbox.worker_pids:
        limits = Path(f"/proc/{pid}/limits").read_text()
        line = next(line for line in limits.splitlines() if line.startswith("Max address space"))
        assert line.split()[3] == str(LIMITS.worker_address_space)


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc")
async def test_workers_inherit_no_environment(sandbox: Sandbox, shop: Shop) -> None:
    await sandbox.run("1", shop)
    for pid in sandbox.worker_pids:
        assert Path(f"/proc/{pid}/environ").read_bytes() == b""


def _rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")
