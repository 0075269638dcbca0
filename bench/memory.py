"""Peak resident memory of `mcp-gateway catalog check` as a whole process, beside FastMCP on the same document.

FastMCP's side reads the document, runs `FastMCP.from_openapi` and `list_tools()` (it has no catalog command).
Each figure is the median `ru_maxrss` of several fresh processes, the sides interleaved.

    .venv/bin/python bench/memory.py                       # GitHub and Stripe, 3 runs per side
    .venv/bin/python bench/memory.py --repeat 5 --no-fastmcp
    .venv/bin/python bench/memory.py --docs github          # FastMCP takes minutes on Stripe

Targets (issue 15): GitHub's catalog at most 100 MiB, Stripe's at most 150 MiB.
"""

from __future__ import annotations

import argparse
import sys

from _competitor import ensure_fastmcp
from _processes import FASTMCP_CHECK, Run, corpus_file, median, our_cli, run_once

DOCUMENTS = {"github": ("github-api.github.com.json", 100.0), "stripe": ("stripe-spec3.yaml", 150.0)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per document and side (default 3)")
    parser.add_argument("--no-fastmcp", action="store_true", help="measure our side only")
    parser.add_argument("--docs", nargs="+", choices=sorted(DOCUMENTS), default=sorted(DOCUMENTS), help="documents")
    args = parser.parse_args()
    fastmcp = None if args.no_fastmcp else ensure_fastmcp()
    ours = our_cli()
    print(f"{'document':<10} {'ours MiB':>9} {'fastmcp MiB':>12} {'ratio':>7} {'target':>8}")
    failed = False
    for name in args.docs:
        file, target = DOCUMENTS[name]
        path = str(corpus_file(file))
        our_runs: list[Run] = []
        their_runs: list[Run] = []
        for _ in range(args.repeat):
            our_runs.append(run_once([*ours, "catalog", "check", path]))
            if fastmcp is not None:
                their_runs.append(run_once([str(fastmcp), "-c", FASTMCP_CHECK, path]))
        mine = median(our_runs, "peak_mib")
        theirs = median(their_runs, "peak_mib") if their_runs else None
        failed = failed or mine > target or any(run.code for run in our_runs)
        ratio = f"{theirs / mine:.1f}x" if theirs else "-"
        print(f"{name:<10} {mine:>9.1f} {f'{theirs:.1f}' if theirs else '-':>12} {ratio:>7} {target:>6.0f} MiB")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
