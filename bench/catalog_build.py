"""Cold catalog build time and peak memory per corpus document, side by side with FastMCP.from_openapi.

Every measurement runs in a fresh subprocess, so imports and caches of one run never help the next. Each worker
first imports its side and builds a tiny warm-up document (so lazy imports inside the build are not timed), takes
`ru_maxrss` as its baseline, then times the real document. Import + warm-up time is reported separately.

    .venv/bin/python bench/catalog_build.py                 # every corpus document, 3 runs each
    .venv/bin/python bench/catalog_build.py --quick         # the documents under 1 MB
    .venv/bin/python bench/catalog_build.py --docs github stripe --repeat 5 --json /tmp/build.json

Our side runs in the interpreter that runs this script (the project's .venv); FastMCP runs in bench/.venv-bench,
made by bench/setup.sh on first use (it pins its own mcp/pydantic versions, so it cannot share our venv).
See bench/README.md for what each column means.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypedDict

from _competitor import DEFAULT_CORPUS, REPO, ensure_fastmcp

Side = Literal["ours", "fastmcp"]

MULTIFILE = "digitalocean-public-v2.multifile"
MULTIFILE_ENTRY = Path("specification") / "DigitalOcean-public.v2.yaml"
#: Swagger 2.0 documents: FastMCP mis-parses them (our loader converts them first), so nothing to compare.
SKIPPED = frozenset({"oai-uber-swagger2.json", "slack-web-swagger2.json"})
QUICK_BYTES = 1_000_000
MIB = 1024.0  # ru_maxrss is in KiB on Linux

#: Built by both sides before the baseline, so lazy imports inside a build are counted as import time.
WARMUP_DOCUMENT: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Warm-up", "version": "1"},
    "servers": [{"url": "http://127.0.0.1:9"}],
    "paths": {
        "/pets/{pet_id}": {
            "get": {
                "operationId": "getPet",
                "tags": ["pets"],
                "parameters": [{"name": "pet_id", "in": "path", "required": True, "schema": {"type": "string"}}],
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}},
                    }
                },
            },
            "put": {
                "operationId": "putPet",
                "tags": ["pets"],
                "parameters": [{"name": "pet_id", "in": "path", "required": True, "schema": {"type": "string"}}],
                "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}},
                "responses": {"204": {"description": "done"}},
            },
        }
    },
    "components": {
        "schemas": {
            "Pet": {
                "type": "object",
                "required": ["name"],
                "properties": {"name": {"type": "string"}, "parent": {"$ref": "#/components/schemas/Pet"}},
            }
        }
    },
}


class Measurement(TypedDict, total=False):
    """What one worker run reports (milliseconds and MiB); `error` set when the build failed."""

    side: Side
    import_ms: float
    ops: int
    load_ms: float
    build_ms: float
    total_ms: float
    schemas_ms: float
    schemas_too_large: int
    peak_mib: float
    peak_schemas_mib: float
    parse_ms: float
    from_openapi_ms: float
    list_tools_ms: float
    tools: int
    error: str


# Workers: each runs in its own fresh interpreter and writes one Measurement as JSON to `out`.


def _maxrss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / MIB


def _parse(path: Path) -> Any:
    """The document as FastMCP gets it: a dict, parsed the way our loader parses (json, or libyaml when present)."""
    import yaml

    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with path.open("rb") as stream:
        return json.load(stream) if path.suffix == ".json" else yaml.load(stream, Loader=loader)  # noqa: S506


def _warmup_files(folder: Path) -> list[Path]:
    """The warm-up document as a .json and a .yaml file (JSON is YAML), so both parsers get imported."""
    files = [folder / "warmup.json", folder / "warmup.yaml"]
    files[0].write_text(json.dumps(WARMUP_DOCUMENT), encoding="utf-8")
    files[1].write_text(json.dumps(WARMUP_DOCUMENT, indent=1), encoding="utf-8")
    return files


def _worker_ours(path: Path) -> Measurement:
    started = time.perf_counter()
    from catalog.builder import build_catalog
    from catalog.errors import SchemaTooLargeError
    from catalog.loading import load_document

    with tempfile.TemporaryDirectory() as tmp:
        for warm in _warmup_files(Path(tmp)):
            for function in build_catalog(load_document(warm)).functions():
                function.input_schema()
    result = Measurement(side="ours", import_ms=(time.perf_counter() - started) * 1000)
    gc.collect()
    baseline = _maxrss_mib()
    try:
        t0 = time.perf_counter()
        document = load_document(path)
        t1 = time.perf_counter()
        catalog = build_catalog(document)
        t2 = time.perf_counter()
        peak = _maxrss_mib() - baseline
        too_large = 0
        functions = catalog.functions()
        t3 = time.perf_counter()
        for function in functions:
            try:
                function.input_schema()
            except SchemaTooLargeError:
                too_large += 1
        t4 = time.perf_counter()
    except Exception as error:  # a benchmark boundary: report it in the table instead of crashing the run
        result["error"] = _describe(error)
        return result
    result.update(
        Measurement(
            ops=len(functions),
            load_ms=(t1 - t0) * 1000,
            build_ms=(t2 - t1) * 1000,
            total_ms=(t2 - t0) * 1000,
            schemas_ms=(t4 - t3) * 1000,
            schemas_too_large=too_large,
            peak_mib=peak,
            peak_schemas_mib=_maxrss_mib() - baseline,
        )
    )
    return result


def _worker_fastmcp(path: Path) -> Measurement:
    started = time.perf_counter()
    import logging

    import httpx2
    from fastmcp import FastMCP

    # FastMCP logs one warning per odd route; we report failures ourselves and do not time its logging.
    logging.getLogger("fastmcp").setLevel(logging.CRITICAL)

    async def build(spec: Any) -> tuple[float, float, int]:
        # A client that is never used to send: building and listing tools is the work being timed.
        async with httpx2.AsyncClient(base_url="http://127.0.0.1:9") as client:
            t0 = time.perf_counter()
            server = FastMCP.from_openapi(openapi_spec=spec, client=client)
            t1 = time.perf_counter()
            tools = await server.list_tools()
            t2 = time.perf_counter()
        return (t1 - t0) * 1000, (t2 - t1) * 1000, len(tools)

    with tempfile.TemporaryDirectory() as tmp:
        for warm in _warmup_files(Path(tmp)):
            asyncio.run(build(_parse(warm)))
    result = Measurement(side="fastmcp", import_ms=(time.perf_counter() - started) * 1000)
    gc.collect()
    baseline = _maxrss_mib()
    try:
        t0 = time.perf_counter()
        spec = _parse(path)
        parse_ms = (time.perf_counter() - t0) * 1000
        from_openapi_ms, list_tools_ms, tools = asyncio.run(build(spec))
    except Exception as error:  # a benchmark boundary: FastMCP failing on a document is a result, not a crash
        result["error"] = _describe(error)
        return result
    result.update(
        Measurement(
            parse_ms=parse_ms,
            from_openapi_ms=from_openapi_ms,
            list_tools_ms=list_tools_ms,
            total_ms=parse_ms + from_openapi_ms + list_tools_ms,
            tools=tools,
            peak_mib=_maxrss_mib() - baseline,
        )
    )
    return result


def _describe(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text[:300]}"


def _run_worker(side: Side, path: Path, out: Path) -> None:
    measure = _worker_ours if side == "ours" else _worker_fastmcp
    out.write_text(json.dumps(measure(path)), encoding="utf-8")


# The driver: picks documents, spawns workers, takes medians, prints the table.


@dataclass(frozen=True, kw_only=True)
class Doc:
    """One corpus document: its display name and the file to load."""

    name: str
    path: Path
    size: int


@dataclass(kw_only=True)
class Row:
    """Every run of one document, both sides."""

    doc: Doc
    ours: list[Measurement] = field(default_factory=list)
    fastmcp: list[Measurement] = field(default_factory=list)


def corpus_docs(corpus: Path) -> list[Doc]:
    """Every corpus document we compare, smallest first; the multi-file tree by its entry file."""
    docs = [
        Doc(name=path.name, path=path, size=path.stat().st_size)
        for path in corpus.iterdir()
        if path.suffix in (".json", ".yaml", ".yml") and path.name not in SKIPPED
    ]
    tree = corpus / MULTIFILE
    if tree.is_dir():
        size = sum(p.stat().st_size for p in tree.rglob("*") if p.is_file())
        docs.append(Doc(name=MULTIFILE, path=tree / MULTIFILE_ENTRY, size=size))
    return sorted(docs, key=lambda d: (d.size, d.name))


def select(docs: Sequence[Doc], names: Sequence[str] | None, *, quick: bool) -> list[Doc]:
    """The documents whose name contains one of `names` (all without names), only small ones when `quick`."""
    chosen = [d for d in docs if not names or any(n.lower() in d.name.lower() for n in names)]
    if quick:
        chosen = [d for d in chosen if d.size < QUICK_BYTES and d.name != MULTIFILE]
    return chosen


def spawn(python: Path | str, side: Side, doc: Doc, timeout: float) -> Measurement:
    """One cold run in a fresh interpreter; a crash, a kill or a timeout becomes a Measurement with `error`."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp, "result.json")
        command = [str(python), str(Path(__file__).resolve()), "--worker", side, str(doc.path), str(out)]
        env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1"}
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=REPO, env=env)
        except subprocess.TimeoutExpired:
            return Measurement(side=side, error=f"timed out after {timeout:.0f} s")
        if out.exists():
            loaded: Measurement = json.loads(out.read_text(encoding="utf-8"))
            return loaded
        tail = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        return Measurement(side=side, error=f"worker exited {done.returncode}: {tail[:300]}")


def median(runs: Sequence[Measurement], key: str) -> float | None:
    """The median of `key` over the runs that have it, or None."""
    values = [float(run[key]) for run in runs if key in run]  # type: ignore[literal-required]
    return statistics.median(values) if values else None


def first_error(runs: Sequence[Measurement]) -> str | None:
    """The error of the first failed run, or None when every run succeeded."""
    return next((run["error"] for run in runs if "error" in run), None)


def ratio(numerator: float | None, denominator: float | None, *, floor: float = 0.0) -> float | None:
    """numerator / denominator, or None when either is missing or the denominator is at most `floor`."""
    if numerator is None or denominator is None or denominator <= floor:
        return None
    return numerator / denominator


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def _mib(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"


def _times(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}x"


COLUMNS = (
    "doc",
    "ops",
    "load ms",
    "build ms",
    "total ms",
    "schemas ms",
    "peak MiB",
    "+schemas MiB",
    "fastmcp tools",
    "fastmcp ms",
    "fastmcp MiB",
    "x time",
    "x time+schemas",
    "x mem",
)


def summarize(row: Row) -> dict[str, Any]:
    """The medians and ratios of one document (the raw runs stay in `row`)."""
    ours_total = median(row.ours, "total_ms")
    schemas = median(row.ours, "schemas_ms")
    ours_peak = median(row.ours, "peak_mib")
    fm_total = median(row.fastmcp, "total_ms")
    fm_peak = median(row.fastmcp, "peak_mib")
    with_schemas = None if ours_total is None or schemas is None else ours_total + schemas
    return {
        "ops": median(row.ours, "ops"),
        "load_ms": median(row.ours, "load_ms"),
        "build_ms": median(row.ours, "build_ms"),
        "total_ms": ours_total,
        "schemas_ms": schemas,
        "schemas_too_large": median(row.ours, "schemas_too_large"),
        "peak_mib": ours_peak,
        "peak_schemas_mib": median(row.ours, "peak_schemas_mib"),
        "import_ms": median(row.ours, "import_ms"),
        "error": first_error(row.ours),
        "fastmcp_tools": median(row.fastmcp, "tools"),
        "fastmcp_parse_ms": median(row.fastmcp, "parse_ms"),
        "fastmcp_from_openapi_ms": median(row.fastmcp, "from_openapi_ms"),
        "fastmcp_list_tools_ms": median(row.fastmcp, "list_tools_ms"),
        "fastmcp_ms": fm_total,
        "fastmcp_peak_mib": fm_peak,
        "fastmcp_import_ms": median(row.fastmcp, "import_ms"),
        "fastmcp_error": first_error(row.fastmcp),
        "ratio_time": ratio(fm_total, ours_total),
        "ratio_time_with_schemas": ratio(fm_total, with_schemas),
        # Below 1 MiB the RSS high-water mark is page noise; no ratio.
        "ratio_memory": ratio(fm_peak, ours_peak, floor=1.0),
    }


def table_cells(row: Row, s: Mapping[str, Any]) -> list[str]:
    """One table line; a failed side shows its error in place of its figures."""
    if s["error"]:
        ours = ["-", "ERROR", "", "", "", "", ""]
    else:
        ours = [
            f"{s['ops']:.0f}",
            _ms(s["load_ms"]),
            _ms(s["build_ms"]),
            _ms(s["total_ms"]),
            _ms(s["schemas_ms"]) + (f" ({s['schemas_too_large']:.0f} too large)" if s["schemas_too_large"] else ""),
            _mib(s["peak_mib"]),
            _mib(s["peak_schemas_mib"]),
        ]
    if s["fastmcp_error"]:
        fm = ["-", "ERROR", "-"]
    elif not row.fastmcp:
        fm = ["-", "not run", "-"]
    else:
        fm = [f"{s['fastmcp_tools']:.0f}", _ms(s["fastmcp_ms"]), _mib(s["fastmcp_peak_mib"])]
    ratios = [_times(s["ratio_time"]), _times(s["ratio_time_with_schemas"]), _times(s["ratio_memory"])]
    return [row.doc.name, *ours, *fm, *ratios]


def render_table(rows: Sequence[list[str]]) -> str:
    """A Markdown pipe table, padded so it also reads well in a terminal."""
    widths = [max(len(COLUMNS[i]), *(len(r[i]) for r in rows)) for i in range(len(COLUMNS))]

    def line(cells: Sequence[str]) -> str:
        padded = [c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))]
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join("-" * (w + 1) + (":" if i else "-") for i, w in enumerate(widths)) + "|"
    return "\n".join([line(COLUMNS), rule, *(line(r) for r in rows)])


def geometric_mean(values: Sequence[float]) -> float | None:
    """The geometric mean, or None for no values."""
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def report(rows: Sequence[Row], summaries: Sequence[Mapping[str, Any]], repeat: int) -> str:
    """The table, the errors in full, the import times and the issue's targets."""
    lines = [render_table([table_cells(r, s) for r, s in zip(rows, summaries, strict=True)]), ""]
    lines.append(
        f"median of {repeat} cold runs each; ms = wall time, MiB = ru_maxrss rise over the post-import baseline; "
        "'x' = FastMCP / ours (x time+schemas: ours includes rendering every input schema)"
    )
    for row, s in zip(rows, summaries, strict=True):
        if s["error"]:
            lines.append(f"ours    failed on {row.doc.name}: {s['error']}")
        if s["fastmcp_error"]:
            lines.append(f"fastmcp failed on {row.doc.name}: {s['fastmcp_error']}")
        if s["fastmcp_tools"] is not None and s["ops"] is not None and s["fastmcp_tools"] != s["ops"]:
            lines.append(f"note: {row.doc.name}: FastMCP made {s['fastmcp_tools']:.0f} tools for {s['ops']:.0f} ops")
    for label, key in (("time", "ratio_time"), ("time+schemas", "ratio_time_with_schemas"), ("memory", "ratio_memory")):
        mean = geometric_mean([s[key] for s in summaries if s[key]])
        if mean is not None:
            lines.append(f"geometric mean FastMCP/ours ({label}): {mean:.1f}x")
    imports = [s["import_ms"] for s in summaries if s["import_ms"] is not None]
    fm_imports = [s["fastmcp_import_ms"] for s in summaries if s["fastmcp_import_ms"] is not None]
    if imports:
        text = f"import + warm-up, not in the figures above: ours {statistics.median(imports):,.0f} ms"
        if fm_imports:
            text += f", FastMCP {statistics.median(fm_imports):,.0f} ms"
        lines.append(text)
    lines.extend(_targets(rows, summaries))
    return "\n".join(lines)


def _targets(rows: Sequence[Row], summaries: Sequence[Mapping[str, Any]]) -> list[str]:
    """Issue #2: GitHub's document builds in under 1 s and at least 10x faster than FastMCP."""
    for row, s in zip(rows, summaries, strict=True):
        if row.doc.name.startswith("github") and s["total_ms"] is not None:
            found = [f"target: GitHub load+build < 1,000 ms: {s['total_ms']:,.0f} ms, {_ok(s['total_ms'] < 1000)}"]
            if s["ratio_time"] is not None:
                found.append(
                    f"target: >= 10x faster than FastMCP: {s['ratio_time']:.1f}x, {_ok(s['ratio_time'] >= 10)}"
                )
            return found
    return []


def _ok(met: bool) -> str:
    return "met" if met else "NOT MET"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the table; exit 1 when our side failed on a document."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--docs", nargs="+", metavar="NAME", help="only documents whose file name contains NAME")
    parser.add_argument("--quick", action="store_true", help=f"only documents under {QUICK_BYTES:,} bytes")
    parser.add_argument("--repeat", type=int, default=3, help="cold runs per document and side (median is shown)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write every raw run and median here")
    parser.add_argument("--no-fastmcp", action="store_true", help="measure our side only")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds before one run is abandoned")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="folder of the corpus documents")
    parser.add_argument("--worker", nargs=3, metavar=("SIDE", "DOC", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        side, doc, out = args.worker
        if side not in ("ours", "fastmcp"):
            parser.error(f"unknown worker side {side!r}")
        _run_worker(side, Path(doc), Path(out))
        return 0
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, not {args.repeat!r}")
    if not args.corpus.is_dir():
        parser.error(f"corpus folder {str(args.corpus)!r} not found; pass --corpus or set MCP_GATEWAY_CORPUS")
    docs = select(corpus_docs(args.corpus), args.docs, quick=args.quick)
    if not docs:
        parser.error(f"no corpus document matches {args.docs!r}")
    fastmcp = None if args.no_fastmcp else ensure_fastmcp()

    rows: list[Row] = []
    for doc in docs:
        row = Row(doc=doc)
        for _ in range(args.repeat):
            # Interleave the sides so machine noise hits both alike; stop repeating a side that failed.
            if not first_error(row.ours):
                row.ours.append(spawn(sys.executable, "ours", doc, args.timeout))
            if fastmcp is not None and not first_error(row.fastmcp):
                row.fastmcp.append(spawn(fastmcp, "fastmcp", doc, args.timeout))
        rows.append(row)
        s = summarize(row)
        print(
            f"{doc.name}: ours {_ms(s['total_ms'])} ms, fastmcp {_ms(s['fastmcp_ms'])} ms", file=sys.stderr, flush=True
        )

    summaries = [summarize(row) for row in rows]
    print(report(rows, summaries, args.repeat))
    if args.json:
        raw = [
            {"doc": r.doc.name, "bytes": r.doc.size, "median": s, "ours": r.ours, "fastmcp": r.fastmcp}
            for r, s in zip(rows, summaries, strict=True)
        ]
        meta = {"repeat": args.repeat, "python": sys.version.split()[0], "cpus": os.cpu_count(), "memory": "ru_maxrss"}
        args.json.write_text(json.dumps({"meta": meta, "documents": raw}, indent=2) + "\n", encoding="utf-8")
    return 1 if any(s["error"] for s in summaries) else 0


if __name__ == "__main__":
    sys.exit(main())
