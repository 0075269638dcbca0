"""Peak resident memory of `mcp-gateway catalog check` as a whole process, beside FastMCP on the same document.

FastMCP's side reads the document, runs `FastMCP.from_openapi` and `list_tools()` (it has no catalog command).
Each figure is the median `ru_maxrss` of several fresh processes, the sides interleaved.

    .venv/bin/python bench/memory.py                       # GitHub and Stripe, 3 runs per side
    .venv/bin/python bench/memory.py --repeat 5 --no-fastmcp
    .venv/bin/python bench/memory.py --docs github          # FastMCP takes minutes on Stripe
    .venv/bin/python bench/memory.py --semantic             # `catalog search` on GitHub without and with the extra

Targets (issue 15): GitHub's catalog at most 100 MiB, Stripe's at most 150 MiB. With --semantic: one search on
GitHub's catalog, lexically and reranked with the `semantic` extra (model loaded, the catalog's vectors read from a
cache made by a first run, itself reported with its embedding); the extra adds at most 250 MiB (issue 32).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

from _competitor import ensure_fastmcp
from _processes import FASTMCP_CHECK, Run, corpus_file, median, our_cli, run_once

DOCUMENTS = {"github": ("github-api.github.com.json", 100.0), "stripe": ("stripe-spec3.yaml", 150.0)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per document and side (default 3)")
    parser.add_argument("--no-fastmcp", action="store_true", help="measure our side only")
    parser.add_argument("--docs", nargs="+", choices=sorted(DOCUMENTS), default=sorted(DOCUMENTS), help="documents")
    parser.add_argument("--semantic", action="store_true", help="GitHub's search without and with the semantic extra")
    args = parser.parse_args()
    if args.semantic:
        return _semantic(args.repeat)
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


SEMANTIC_LIMIT_MIB = 250.0


def _semantic(repeat: int) -> int:
    """Peak RSS of one `catalog search` on GitHub, lexical and semantic; exit 1 when the extra adds over the limit."""
    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="memory-semantic-")  # the children's vector cache
    path = str(corpus_file(DOCUMENTS["github"][0]))
    search = [*our_cli(), "catalog", "search", path, "create an issue"]
    cold = run_once([*search, "--semantic-search"], timeout=900)
    lexical: list[Run] = []
    semantic: list[Run] = []
    for _ in range(repeat):
        lexical.append(run_once([*search, "--no-semantic-search"]))
        semantic.append(run_once([*search, "--semantic-search"]))
    if any(run.code for run in [cold, *lexical, *semantic]):
        print("a search failed: is the semantic extra installed? pip install -e '.[semantic]'")
        return 1
    plain, reranked = median(lexical, "peak_mib"), median(semantic, "peak_mib")
    print(f"{'GitHub catalog search':<34} {'peak MiB':>9} {'seconds':>8}")
    print(f"{'lexical':<34} {plain:>9.1f} {median(lexical, 'seconds'):>8.2f}")
    print(f"{'semantic, vectors from the cache':<34} {reranked:>9.1f} {median(semantic, 'seconds'):>8.2f}")
    print(f"{'semantic, embedding every function':<34} {cold.peak_mib:>9.1f} {cold.seconds:>8.2f}")
    added = max(reranked, cold.peak_mib) - plain
    print(f"the extra adds {added:.1f} MiB at most (limit {SEMANTIC_LIMIT_MIB:.0f} MiB)")
    return 1 if added > SEMANTIC_LIMIT_MIB else 0


if __name__ == "__main__":
    sys.exit(main())
