"""How long the command line takes as a whole process, beside FastMCP doing the same job in the same run.

Rows: `--help` (ours: `mcp-gateway --help`; FastMCP: `fastmcp --help`), and `catalog check` of GitHub's and
Stripe's documents (FastMCP: read the document, `FastMCP.from_openapi`, `list_tools()`, print the count; it has
no catalog command). Each row is the median of several fresh processes, the sides interleaved; the bare
interpreter's start-up is shown as the floor.

    .venv/bin/python bench/cli_startup.py                  # 5 runs per row
    .venv/bin/python bench/cli_startup.py --repeat 9 --no-fastmcp

Targets (issue 15): `--help` within 0.3 s; `catalog check` of GitHub's document within 0.7 s and at least 8x
faster than FastMCP's.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from _competitor import ensure_fastmcp
from _processes import FASTMCP_CHECK, Run, corpus_file, median, our_cli, run_once

TARGETS = {"--help": 0.3, "catalog check github": 0.7}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5, help="fresh processes per row and side (default 5)")
    parser.add_argument("--no-fastmcp", action="store_true", help="measure our side only")
    args = parser.parse_args()
    fastmcp = None if args.no_fastmcp else ensure_fastmcp()
    ours = our_cli()
    github = corpus_file("github-api.github.com.json")
    stripe = corpus_file("stripe-spec3.yaml")
    rows: list[tuple[str, list[str], list[str] | None]] = [
        ("python -c pass (floor)", [sys.executable, "-c", "pass"], None),
        ("--help", [*ours, "--help"], [str(Path(fastmcp).parent / "fastmcp"), "--help"] if fastmcp else None),
        ("catalog check github", [*ours, "catalog", "check", str(github)], _fastmcp_check(fastmcp, github)),
        # FastMCP takes minutes on Stripe's document (bench/tools_list_size.py): our side only.
        ("catalog check stripe", [*ours, "catalog", "check", str(stripe)], None),
    ]
    print(f"{'command':<24} {'ours s':>8} {'fastmcp s':>10} {'ratio':>7} {'target':>8}")
    failed = False
    for name, our_argv, their_argv in rows:
        our_runs: list[Run] = []
        their_runs: list[Run] = []
        for _ in range(args.repeat):
            our_runs.append(run_once(our_argv))
            if their_argv is not None:
                their_runs.append(run_once(their_argv))
        mine = median(our_runs, "seconds")
        theirs = median(their_runs, "seconds") if their_runs else None
        target = TARGETS.get(name)
        failed = failed or (target is not None and mine > target) or any(run.code for run in our_runs)
        print(
            f"{name:<24} {mine:>8.3f} {_or_dash(theirs, '.3f'):>10} "
            f"{_or_dash(theirs / mine if theirs else None, '.1f', 'x'):>7} {_or_dash(target, '.1f', ' s'):>8}"
        )
    return 1 if failed else 0


def _fastmcp_check(fastmcp: Path | None, document: Path) -> list[str] | None:
    return [str(fastmcp), "-c", FASTMCP_CHECK, str(document)] if fastmcp else None


def _or_dash(value: float | None, spec: str, unit: str = "") -> str:
    return "-" if value is None else f"{value:{spec}}{unit}"


if __name__ == "__main__":
    sys.exit(main())
