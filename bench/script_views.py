"""What a caller's view of the catalog costs a run: an empty script's `Sandbox.run`, in-process, one worker.

    .venv/bin/python bench/script_views.py                 # 200 runs per case
    .venv/bin/python bench/script_views.py --repeat 500 --json /tmp/views.json

Cases, on a catalog of 4 functions and one of 1,000 (names as long as GitHub's), each run back to back and
again after 20 ms idle (untimed), which is when a worker sets its next context up ahead:

- no view (`functions=None`), the figure the others are divided by;
- the same view every run (half the catalog): what a gateway's callers with one grant cost;
- two views in turn: each run has another view than the worker's last, so it sets its own context up.

With an older sandbox on the path (one without `functions`), only the "no view" rows are measured: run it with
`PYTHONPATH=<old tree>` for a before-and-after of the run without a view.
"""

from __future__ import annotations

import argparse
import inspect
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
IDLE = 0.02
CATALOGS = {
    "4 functions": ("orders.list_orders", "orders.get_order", "customers.get_customer", "customers.delete_customer"),
    "1,000 functions": tuple(f"module_{index // 20}.list_repository_things_{index}" for index in range(1000)),
}


async def nothing(name: str, args: dict[str, Any]) -> Any:
    return None


async def measure(repeat: int, idle: float, run: Callable[[int], Awaitable[Any]]) -> list[float]:
    """Milliseconds of `repeat` runs after five warm-up runs, each run after `idle` seconds untimed."""
    import anyio

    for index in range(5):
        await run(index)
    samples = []
    for index in range(repeat):
        if idle:
            await anyio.sleep(idle)
        started = time.perf_counter()
        result = await run(index)
        samples.append((time.perf_counter() - started) * 1000)
        if not result.ok:
            raise SystemExit(f"the empty script failed: {result.failure}")
    return samples


async def bench(repeat: int) -> dict[str, list[float]]:
    from sandbox import Sandbox, ScriptLimits

    views = "functions" in inspect.signature(Sandbox.run).parameters
    limits = ScriptLimits(max_concurrent=1, max_runs_per_worker=1_000_000)
    samples: dict[str, list[float]] = {}
    for catalog, names in CATALOGS.items():
        async with Sandbox(names, limits) as sandbox:
            for mode, idle in (("back to back", 0.0), (f"after {IDLE * 1000:g} ms idle", IDLE)):
                for case, run in cases(sandbox, names, views=views).items():
                    samples[f"{catalog}, {mode}: {case}"] = await measure(repeat, idle, run)
    return samples


def cases(sandbox: Any, names: tuple[str, ...], *, views: bool) -> dict[str, Callable[[int], Awaitable[Any]]]:
    """The runs to time on `sandbox`, by case; only the run without a view when the sandbox has no views."""
    halves = (names[: len(names) // 2], names[len(names) // 2 :])
    runs: dict[str, Callable[[int], Awaitable[Any]]] = {"no view": lambda index: sandbox.run("null", nothing)}
    if views:
        runs["one view"] = lambda index: sandbox.run("null", nothing, functions=halves[0])
        runs["two views in turn"] = lambda index: sandbox.run("null", nothing, functions=halves[index % 2])
    return runs


def main(argv: Sequence[str] | None = None) -> int:
    """Measure and print the table and the ratios to the run without a view."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=200, help="timed runs per case")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write every sample here")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, not {args.repeat!r}")

    import anyio

    sys.path.append(str(REPO))  # after PYTHONPATH, so an older tree given there is the one measured
    import sandbox

    print(f"sandbox: {Path(sandbox.__file__).parent}")
    samples = anyio.run(bench, args.repeat)
    width = max(len(label) for label in samples)
    print(f"{'case':<{width}}  {'median ms':>10}  {'p95 ms':>8}  {'x no view':>9}")
    for label, runs in samples.items():
        base = samples[label.rsplit(": ", 1)[0] + ": no view"]
        ratio = statistics.median(runs) / statistics.median(base)
        p95 = sorted(runs)[max(0, round(0.95 * len(runs)) - 1)]
        print(f"{label:<{width}}  {statistics.median(runs):>10.3f}  {p95:>8.3f}  {ratio:>9.2f}")
    if args.json:
        args.json.write_text(json.dumps(samples, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
