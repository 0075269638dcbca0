"""Search quality: how often the function a task needs is in the top 1, 5 and 10, per group of query sets.

    .venv/bin/python bench/search_quality.py                  # every group, one line each
    .venv/bin/python bench/search_quality.py --per-api heldout --misses
    .venv/bin/python bench/search_quality.py --semantic       # also with the `semantic` extra's reranking

The query sets are the tests' (`tests/catalog/search_queries/`): the tuning sets (round 1), the later rounds
used for tuning (round2/, round3/) and the held-out sets, never tuned on (heldout/; `*-r4.yaml`, `*-r5.yaml`
are rounds 4 and 5).
Only the held-out figures say how search does on tasks it has not seen, and only while nobody tunes on them:
list their misses (--misses) to report, never to tune. The issue's target is 95% in the top 5.
Ranking only: no rendering, no timing (see search_latency.py). Lexical ranking unless --semantic, which adds a row per
group ranked with the `semantic` extra (its vectors made first, cached as search caches them).
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
QUERIES = REPO / "tests" / "catalog" / "search_queries"
DEFAULT_CORPUS = Path(os.environ.get("MCP_GATEWAY_CORPUS", REPO.parent / "shared" / "corpus" / "specs"))
GROUPS = {"tuning": QUERIES, "round2": QUERIES / "round2", "round3": QUERIES / "round3", "heldout": QUERIES / "heldout"}
TARGET = 0.95


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table; exit 0 (a quality figure is a result here, not a failure)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("groups", nargs="*", help=f"groups to measure, of {', '.join(GROUPS)} (default: all)")
    parser.add_argument("--per-api", nargs="*", metavar="GROUP", default=[], help="one line per set of these groups")
    parser.add_argument("--misses", action="store_true", help="list the top-5 misses of the --per-api groups")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="folder of the corpus documents")
    parser.add_argument("--semantic", action="store_true", help="also rank with the semantic extra (a row each)")
    args = parser.parse_args(argv)
    unknown = sorted((set(args.groups) | set(args.per_api)) - set(GROUPS))
    if unknown:
        parser.error(f"unknown group(s) {', '.join(unknown)}; use {', '.join(GROUPS)}")

    sys.path.insert(0, str(REPO))
    from catalog.builder import build_catalog
    from catalog.loading import load_document
    from catalog.model import Catalog
    from catalog.search import Ranking, SearchIndex

    catalogs: dict[str, Catalog] = {}
    rankings = {"": Ranking(semantic=False)}
    if args.semantic:
        rankings["semantic"] = Ranking(semantic=True)
    print("| group | sets | phrasings | top 1 | top 5 | top 10 |\n|---|---:|---:|---:|---:|---:|")
    for group, (label, ranking) in itertools.product(args.groups or list(GROUPS), rankings.items()):
        indexes: dict[str, SearchIndex] = {}
        totals = [0, 0, 0, 0]
        lines: list[str] = []
        paths = sorted(GROUPS[group].glob("*.yaml"))
        for path in paths:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
            document = data["document"]
            if document not in catalogs:
                catalogs[document] = build_catalog(load_document(args.corpus / document))
            if document not in indexes:
                indexes[document] = SearchIndex(catalogs[document], ranking)
                indexes[document].build(wait_semantic=None)
            counts = [0, 0, 0, 0]
            misses: list[str] = []
            for entry in data["queries"]:
                names = [function.name for function in indexes[document].rank(entry["q"], limit=10)]
                expected = set(entry["expect"])
                counts[0] += 1
                for column, top in enumerate((1, 5, 10), start=1):
                    counts[column] += bool(expected & set(names[:top]))
                if args.misses and group in args.per_api and not expected & set(names[:5]):
                    misses.append(f"    miss {path.stem}: {entry['q']!r} wants {entry['expect'][0]}; got {names[:3]}")
            totals = [a + b for a, b in zip(totals, counts, strict=True)]
            if group in args.per_api:
                lines.append(f"| {group}/{path.stem}{f' ({label})' if label else ''} | 1 | {_row(counts)} |")
                lines.extend(misses)
        print(f"| **{group}**{f' ({label})' if label else ''} | {len(paths)} | {_row(totals)} |")
        for line in lines:
            print(line)
    print(f"\ntarget: {TARGET:.0%} in the top 5 on tasks not seen (the heldout group)")
    return 0


def _row(counts: Sequence[int]) -> str:
    total = counts[0] or 1
    return f"{counts[0]} | " + " | ".join(f"{hits / total:.1%}" for hits in counts[1:])


if __name__ == "__main__":
    raise SystemExit(main())
