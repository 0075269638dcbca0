"""Compare two QuickJS bindings behind sandbox/engine.py in one run: language, hostile suite, interrupts, memory,
speed, and the ratios candidate / current.

    bench/setup-engines.sh                                   # once: bench/.engines/{quickjs,quickjs-ng}
    .venv/bin/python bench/engine_compare.py                 # 3 rounds x 20 runs per workload and side
    .venv/bin/python bench/engine_compare.py --rounds 5 --repeat 30 --json /tmp/engines.json
    .venv/bin/python bench/engine_compare.py --no-hostile    # skip the pytest run of the hostile suite

Each side is a fresh interpreter with its binding's folder first on the import path (so `import _quickjs` and the
sandbox's workers take that binding); sides take turns round by round, so machine noise hits both alike. Every
figure is the median over rounds of each round's median.

- language: how many of FEATURES run (each a JS expression that must be true);
- hostile: `pytest tests/sandbox/test_hostile.py` on that binding (real workers, the suite's own expectations);
- interrupt: `Engine.run(case, timeout=0.5)` in a process of its own, killed after 5 s: how long past 0.5 s the
  engine took to stop by itself (QuickJS's CPU-time interrupt), or "-" when it did not (only the host's kill at
  the deadline ends it);
- memory: each bomb with the default 64 MiB heap: the outcome kind and the process's peak RSS;
- speed: in-process `Engine.run` of each workload (fresh context each run, calls answered in memory), and the
  start of one worker (`Sandbox.start()`: spawn, imports, confinement, ready).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
ENGINES = REPO / "bench" / ".engines"
SIDES = ("quickjs", "quickjs-ng")

FEATURES = {
    "optional chaining (ES2020)": "({a: {b: 1}})?.a?.b === 1",
    "nullish coalescing (ES2020)": "(null ?? 2) === 2",
    "BigInt (ES2020)": "(2n ** 64n).toString() === '18446744073709551616'",
    "Promise.allSettled (ES2020)": "typeof Promise.allSettled === 'function'",
    "String.replaceAll (ES2021)": "'aaa'.replaceAll('a', 'b') === 'bbb'",
    "logical assignment (ES2021)": "(() => { let x = null; x ??= 3; return x === 3 })()",
    "Promise.any (ES2021)": "typeof Promise.any === 'function'",
    "WeakRef (ES2021)": "typeof WeakRef === 'function'",
    "Array.at (ES2022)": "[1, 2, 3].at(-1) === 3",
    "Object.hasOwn (ES2022)": "Object.hasOwn({a: 1}, 'a')",
    "Error cause (ES2022)": "new Error('x', {cause: 1}).cause === 1",
    "class static block (ES2022)": "(() => { class A { static v; static { A.v = 5 } } return A.v === 5 })()",
    "RegExp d flag (ES2022)": "/a/d.exec('a').indices[0][0] === 0",
    "findLast (ES2023)": "[1, 2, 3].findLast((x) => x < 3) === 2",
    "toSorted (ES2023)": "[3, 1].toSorted()[0] === 1",
    "Array.with (ES2023)": "[1, 2].with(0, 5)[0] === 5",
    "Object.groupBy (ES2024)": "Object.groupBy([1, 2, 3], (x) => (x % 2 ? 'odd' : 'even')).odd.length === 2",
    "Promise.withResolvers (ES2024)": "typeof Promise.withResolvers === 'function'",
    "String.isWellFormed (ES2024)": "'a'.isWellFormed()",
    "Set.union (ES2025)": "new Set([1, 2]).union(new Set([3])).size === 3",
    "iterator helpers (ES2025)": "[1, 2, 3].values().map((x) => x * 2).toArray()[2] === 6",
}

INTERRUPTS = {
    "loop": "for (;;) {}",
    "loop catching the interrupt": "for (;;) { try { for (;;) {} } catch (e) {} }",
    "loop in a sort comparator": "[3, 2, 1].sort(() => { for (;;) {} })",
    "microtask flood": "function spin() { Promise.resolve().then(spin) }\nspin(); await new Promise(() => {})",
    "catastrophic regex": "/(a+)+$/.test('a'.repeat(40) + 'b')",
    "catastrophic regex in replace": "('x'.repeat(40) + 'y!').replace(/^(x+x+)+y$/, '')",
}

MEMORY = {
    "array bomb": "const a = []; for (;;) a.push(new Array(1e5).fill(1))",
    "string bomb": "let s = 'x'; for (;;) s += s",
    "typed array bomb": "const a = []; for (;;) a.push(new Float64Array(1e6))",
    "one huge buffer": "new ArrayBuffer(2 ** 31).byteLength",
    "object bomb": "const a = []; for (;;) a.push({k: a.length, v: 'x' + a.length})",
}

#: Workloads that run on both engines (nothing past ES2021); `orders` answers with 2,000 orders (~250 KB JSON).
WORKLOADS = {
    "empty script": "null",
    "one call, aggregate 2,000 orders": (
        "const orders = await call('shop.orders', {});\n"
        "const totals = {};\n"
        "for (const o of orders) totals[o.status] = (totals[o.status] || 0) + o.total;\n"
        "Object.keys(totals).length"
    ),
    "20 calls in callAll": (
        "const r = await callAll(Array.from({length: 20}, (_, i) => ({name: 'shop.item', args: {id: i}})));\nr.length"
    ),
    "sieve of primes below 200,000": (
        "const n = 200000, sieve = new Uint8Array(n); let count = 0;\n"
        "for (let i = 2; i < n; i++) { if (!sieve[i]) { count++; for (let j = i * 2; j < n; j += i) sieve[j] = 1 } }\n"
        "count"
    ),
    "sort 50,000 numbers with a comparator": (
        "const a = []; let x = 7; for (let i = 0; i < 50000; i++) { x = (x * 48271) % 2147483647; a.push(x) }\n"
        "a.sort((p, q) => p - q); a[0]"
    ),
    "map/filter/reduce over 50,000 objects": (
        "const rows = Array.from({length: 50000}, (_, i) => ({id: i, price: i % 97, tag: 't' + (i % 7)}));\n"
        "rows.filter(r => r.tag === 't3').map(r => r.price * 2).reduce((s, v) => s + v, 0)"
    ),
    "strings: build, split, regex over 20,000 words": (
        "const words = []; for (let i = 0; i < 20000; i++) words.push('word' + i);\n"
        "const text = words.join(' ');\n"
        "text.split(' ').filter(w => /7$/.test(w)).join(',').replace(/word/g, 'w').length"
    ),
    "JSON.stringify + parse of 1 MB": (
        "const data = Array.from({length: 10000},\n"
        "  (_, i) => ({id: i, name: 'item ' + i, tags: ['a', 'b'], n: i / 3}));\n"
        "JSON.parse(JSON.stringify(data)).length"
    ),
}


# The side: runs in a fresh interpreter with one binding first on the import path.


def _orders() -> str:
    statuses = ("paid", "open", "refunded", "shipped")
    return json.dumps(
        [
            {"id": i, "status": statuses[i % 4], "total": i % 113, "lines": [{"sku": f"s{i}", "qty": 1}]}
            for i in range(2000)
        ]
    )


class _Link:
    """Answers every call at once from memory: `shop.orders` with 2,000 orders, anything else with its args."""

    def __init__(self, orders: str) -> None:
        from sandbox.engine import Reply

        self._reply = Reply
        self._orders = orders
        self._queue: list[tuple[int, str, str]] = []

    def call(self, call_id: int, name: str, args_json: str) -> None:
        self._queue.append((call_id, name, args_json))

    def log(self, line: str) -> None:
        pass

    def next_reply(self, timeout: float) -> Any:
        if not self._queue:
            return None
        call_id, name, args_json = self._queue.pop(0)
        return self._reply(id=call_id, ok=True, text=self._orders if name == "shop.orders" else args_json)


def _engine() -> Any:
    from sandbox.engine import Engine, EngineLimits

    limits = EngineLimits(
        memory_bytes=64 * 1024 * 1024,
        stack_bytes=1024 * 1024,
        max_calls=200,
        max_arg_bytes=65536,
        max_result_bytes=65536,
        max_log_lines=200,
        max_log_bytes=16384,
    )
    return Engine(["shop.orders", "shop.item"], limits)


def side_speed(repeat: int) -> dict[str, Any]:
    import _quickjs  # type: ignore[import-not-found]

    engine, orders = _engine(), _orders()
    out: dict[str, Any] = {"binding": _quickjs.__file__, "features": {}, "speed": {}}
    for name, expression in FEATURES.items():
        outcome = engine.run(expression, 2.0, _Link(orders))
        out["features"][name] = outcome.kind == "json" and outcome.text == "true"
    for name, source in WORKLOADS.items():
        for _ in range(2):
            first = engine.run(source, 30.0, _Link(orders))
        if not first.ok:
            raise SystemExit(f"{name} failed on {_quickjs.__file__}: {first.kind} {first.text}")
        samples = []
        for _ in range(repeat):
            started = time.perf_counter()
            engine.run(source, 30.0, _Link(orders))
            samples.append((time.perf_counter() - started) * 1000)
        out["speed"][name] = statistics.median(samples)
    out["speed"]["worker start (spawn to ready)"] = _worker_start(max(repeat // 2, 5))
    return out


def _worker_start(repeat: int) -> float:
    import anyio

    from sandbox import Sandbox, ScriptLimits

    async def once() -> float:
        sandbox = Sandbox(["a.b"], ScriptLimits(max_concurrent=1))
        started = time.perf_counter()
        await sandbox.start()
        elapsed = (time.perf_counter() - started) * 1000
        await sandbox.aclose()
        return elapsed

    async def main() -> float:
        return statistics.median([await once() for _ in range(repeat)])

    return anyio.run(main)


def side_interrupt(case: str) -> dict[str, Any]:
    engine = _engine()
    started = time.monotonic()
    outcome = engine.run(INTERRUPTS[case], 0.5, _Link("[]"))
    return {"kind": outcome.kind, "seconds": time.monotonic() - started}


def side_memory(case: str) -> dict[str, Any]:
    import resource

    engine = _engine()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    outcome = engine.run(MEMORY[case], 5.0, _Link("[]"))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"kind": outcome.kind, "seconds": time.monotonic() - started, "peak_mib": (peak - before) / 1024}


# The driver.


def _env(side: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ENGINES / side), str(REPO)])
    return env


def _run_side(side: str, *args: str, timeout: float = 600) -> dict[str, Any] | None:
    command = [sys.executable, __file__, "--side", side, *args]
    try:
        done = subprocess.run(command, env=_env(side), capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return None
    if done.returncode != 0:
        raise SystemExit(f"{side} {' '.join(args)} failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def _hostile(side: str) -> str:
    command = [sys.executable, "-m", "pytest", "tests/sandbox/test_hostile.py", "-q", "-p", "no:cacheprovider"]
    started = time.monotonic()
    done = subprocess.run(command, cwd=REPO, env=_env(side), capture_output=True, text=True, check=False)
    elapsed = time.monotonic() - started
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-300:]
    failed = [line.split("::", 1)[1] for line in done.stdout.splitlines() if line.startswith("FAILED")]
    return f"{summary} ({elapsed:.1f} s)" + ("; failed: " + "; ".join(failed) if failed else "")


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = ["| " + " | ".join(cell.ljust(width) for cell, width in zip(header, widths, strict=True)) + " |"]
    lines.append("|" + "|".join("-" * (width + 2) for width in widths) + "|")
    lines += [
        "| " + " | ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) + " |" for row in rows
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--side", help=argparse.SUPPRESS)
    parser.add_argument("--interrupt", help=argparse.SUPPRESS)
    parser.add_argument("--memory", help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--no-hostile", action="store_true")
    parser.add_argument("--json", type=Path)
    options = parser.parse_args()
    if options.side:
        if options.interrupt:
            print(json.dumps(side_interrupt(options.interrupt)))
        elif options.memory:
            print(json.dumps(side_memory(options.memory)))
        else:
            print(json.dumps(side_speed(options.repeat)))
        return
    if not all((ENGINES / side).is_dir() for side in SIDES):
        subprocess.run(["bash", str(REPO / "bench" / "setup-engines.sh")], check=True)

    rounds: dict[str, list[dict[str, Any]]] = {side: [] for side in SIDES}
    for _ in range(options.rounds):
        for side in SIDES:
            result = _run_side(side, "--repeat", str(options.repeat))
            assert result is not None
            rounds[side].append(result)
    interrupts = {
        side: {case: _run_side(side, "--interrupt", case, timeout=5) for case in INTERRUPTS} for side in SIDES
    }
    memory = {side: {case: _run_side(side, "--memory", case, timeout=30) for case in MEMORY} for side in SIDES}
    hostile = {} if options.no_hostile else {side: _hostile(side) for side in SIDES}

    current, candidate = SIDES
    for side in SIDES:
        print(f"binding {side}: {rounds[side][0]['binding']}")
    features = rounds[current][0]["features"]
    print(
        "\n"
        + _table(
            ["feature", current, candidate],
            [
                [name, "yes" if features[name] else "no", "yes" if rounds[candidate][0]["features"][name] else "no"]
                for name in features
            ],
        )
    )
    speed_rows = []
    medians: dict[str, dict[str, float]] = {}
    for name in rounds[current][0]["speed"]:
        values = {side: statistics.median(r["speed"][name] for r in rounds[side]) for side in SIDES}
        medians[name] = values
        speed_rows.append(
            [name, f"{values[current]:.2f}", f"{values[candidate]:.2f}", f"{values[candidate] / values[current]:.2f}x"]
        )
    print("\n" + _table(["workload (median ms)", current, candidate, f"{candidate} / {current}"], speed_rows))

    def stop(result: dict[str, Any] | None) -> str:
        if result is None:
            return "did not stop within 5 s"
        return f"{result['kind']} after {result['seconds']:.2f} s"

    print(
        "\n"
        + _table(
            ["interrupt (timeout 0.5 s)", current, candidate],
            [[case, stop(interrupts[current][case]), stop(interrupts[candidate][case])] for case in INTERRUPTS],
        )
    )

    def bomb(result: dict[str, Any] | None) -> str:
        if result is None:
            return "did not end within 30 s"
        return f"{result['kind']} after {result['seconds']:.2f} s, +{result['peak_mib']:.0f} MiB"

    print(
        "\n"
        + _table(
            ["memory (64 MiB heap)", current, candidate],
            [[case, bomb(memory[current][case]), bomb(memory[candidate][case])] for case in MEMORY],
        )
    )
    for side, line in hostile.items():
        print(f"\nhostile suite on {side}: {line}")
    if options.json:
        options.json.write_text(
            json.dumps(
                {"rounds": rounds, "interrupts": interrupts, "memory": memory, "hostile": hostile, "medians": medians},
                indent=1,
            )
        )


if __name__ == "__main__":
    main()
