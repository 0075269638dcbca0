"""Reference page and surface snapshot on a large API: page size, render time, browser load and filter latency.

    .venv/bin/python bench/reference_bench.py                     # GitHub's document, 5 runs
    .venv/bin/python bench/reference_bench.py --spec stripe-spec3.yaml --repeat 3 --json /tmp/reference.json
    .venv/bin/python bench/reference_bench.py --no-browser        # without Chromium

The catalog is built once and timed on its own line, as the baseline the other figures are compared with. Then:
the page is rendered `--repeat` times (median); it is written to a file and gzipped, as the gateway serves it; the
surface snapshot is taken and dumped, and a snapshot check (load the committed file, diff it) is timed. With
Chromium and playwright-core installed (scripts/install-browser), the page is loaded from the file in headless
Chromium (DOMContentLoaded and load from the navigation timing) and the filter is timed per keystroke, `--repeat`
passes over the same keystrokes (median): once until its handler, style recalculation and layout are done, once
until the next frame is drawn (which adds the page's animation-frame work, such as scrolling to the first match,
and the paint).

No other OpenAPI-to-MCP tool (FastMCP included) renders a page of what its agents read, so there is no competitor
column: the ratios compare with the input document (size) and with building the catalog (time).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from catalog.builder import build_catalog  # noqa: E402 - after the path setup, for running as a script
from catalog.loading import load_document  # noqa: E402
from catalog.snapshot import dump_snapshot  # noqa: E402
from gateway.gateway import Gateway  # noqa: E402
from gateway.reference import reference_page  # noqa: E402
from gateway.snapshot.check import diff_snapshots, gateway_snapshot, load_snapshot  # noqa: E402

DEFAULT_CORPUS = Path(os.environ.get("MCP_GATEWAY_CORPUS", REPO.parent / "shared" / "corpus" / "specs"))
PLAYWRIGHT_CORE = REPO / ".tools" / "browser" / "node_modules" / "playwright-core"
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
#: What people type into the filter, one keystroke at a time for the first, whole words for the rest.
FILTER_QUERIES = ("r", "re", "rep", "repo", "repos", "issue comment", "pull request review", "")

BROWSER_SCRIPT = r"""
"use strict";
const { chromium } = require(process.env.PLAYWRIGHT_CORE);
const [url, queries, passes] = [process.argv[2], JSON.parse(process.argv[3]), Number(process.argv[4])];
(async () => {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM, args: [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"] });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const started = Date.now();
    await page.goto(url, { waitUntil: "load" });
    const load = Date.now() - started;
    const timing = await page.evaluate(() => {
      const nav = performance.getEntriesByType("navigation")[0];
      return { domContentLoaded: nav.domContentLoadedEventEnd, loadEvent: nav.loadEventEnd,
               items: document.querySelectorAll(".item[data-s]").length };
    });
    const filter = queries.map((query) => ({ query, ms: [], frame: [], shown: 0 }));
    for (let pass = 0; pass < passes; pass++) {
      for (const step of filter) {
        const one = await page.evaluate((q) => new Promise((resolve) => {
          const input = document.getElementById("filter");
          const t0 = performance.now();
          input.value = q;
          input.dispatchEvent(new Event("input"));
          void document.body.offsetHeight;  // include the style recalculation and layout the change causes
          const ms = performance.now() - t0;
          const shown = document.querySelectorAll(".item.fn:not([hidden])").length;
          // Until the next frame is drawn: the page's own animation-frame work and the paint.
          requestAnimationFrame(() => {
            const channel = new MessageChannel();
            channel.port1.onmessage = () => resolve({ ms, frame: performance.now() - t0, shown });
            channel.port2.postMessage(null);
          });
        }), step.query);
        step.ms.push(one.ms);
        step.frame.push(one.frame);
        step.shown = one.shown;
      }
    }
    process.stdout.write(JSON.stringify({ load, ...timing, passes, filter }) + "\n");
  } finally {
    await browser.close();
  }
})().catch((error) => { process.stderr.write(String(error && error.stack || error) + "\n"); process.exit(1); });
"""


def _timed(action: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Median wall time in seconds over `repeat` runs, and the last result."""
    times: list[float] = []
    result: Any = None
    for _ in range(repeat):
        started = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def _browser(page: Path, passes: int) -> dict[str, Any] | None:
    node = REPO / ".tools" / "bin" / "node"
    executable = str(node) if node.exists() else shutil.which("node")
    if executable is None or not CHROMIUM.exists() or not PLAYWRIGHT_CORE.is_dir():
        print("(no Chromium or playwright-core: run scripts/install-browser for the browser figures)", file=sys.stderr)
        return None
    with tempfile.NamedTemporaryFile("w", suffix=".js", delete=False) as script:
        script.write(BROWSER_SCRIPT)
    try:
        environment = {**os.environ, "PLAYWRIGHT_CORE": str(PLAYWRIGHT_CORE), "CHROMIUM": str(CHROMIUM)}
        done = subprocess.run(
            [executable, script.name, page.as_uri(), json.dumps(list(FILTER_QUERIES)), str(passes)],
            capture_output=True,
            text=True,
            env=environment,
            timeout=180,
            check=False,
        )
    finally:
        os.unlink(script.name)
    if done.returncode != 0:
        print(f"browser run failed:\n{done.stderr}", file=sys.stderr)
        return None
    measured: dict[str, Any] = json.loads(done.stdout)
    for step in measured["filter"]:
        step["runs_ms"], step["runs_frame_ms"] = step.pop("ms"), step.pop("frame")
        step["ms"], step["frame_ms"] = statistics.median(step["runs_ms"]), statistics.median(step["runs_frame_ms"])
    return measured


def run(spec: Path, repeat: int, browser: bool) -> dict[str, Any]:
    """Every figure for one document, as a dict (the --json output)."""
    started = time.perf_counter()
    catalog = build_catalog(load_document(spec))
    build = time.perf_counter() - started
    gateway = Gateway(spec=catalog)
    render, page = _timed(lambda: reference_page(gateway), repeat)
    body = page.encode("utf-8")
    gzipped = gzip.compress(body, compresslevel=6, mtime=0)
    snapshot_time, surface = _timed(lambda: dump_snapshot(gateway_snapshot(gateway)), repeat)
    with tempfile.TemporaryDirectory() as folder:
        committed = Path(folder) / "api.json"
        committed.write_text(surface, encoding="utf-8")
        current = gateway_snapshot(gateway)

        def check() -> int:
            old = load_snapshot(committed)
            assert old is not None
            return len(diff_snapshots(old, current).changes)

        check_time, changes = _timed(check, repeat)
        figures: dict[str, Any] = {
            "document": spec.name,
            "document_bytes": spec.stat().st_size,
            "functions": len(catalog.functions()),
            "terms": len(catalog.terms),
            "catalog_build_s": build,
            "render_s": render,
            "page_bytes": len(body),
            "page_gzip_bytes": len(gzipped),
            "snapshot_s": snapshot_time,
            "snapshot_bytes": len(surface.encode("utf-8")),
            "snapshot_check_s": check_time,
            "snapshot_check_changes": changes,
        }
        if browser:
            page_file = Path(folder) / "reference.html"
            page_file.write_bytes(body)
            figures["browser"] = _browser(page_file, repeat)
    return figures


def _table(figures: dict[str, Any]) -> str:
    build = figures["catalog_build_s"]
    document = figures["document_bytes"]
    mib = 1024 * 1024
    rows = [
        ("catalog build (baseline)", f"{build * 1000:.0f} ms", "1.00x build"),
        ("render page", f"{figures['render_s'] * 1000:.0f} ms", f"{figures['render_s'] / build:.2f}x build"),
        ("page size", f"{figures['page_bytes'] / mib:.2f} MiB", f"{figures['page_bytes'] / document:.2f}x document"),
        (
            "page size, gzip (as served)",
            f"{figures['page_gzip_bytes'] / mib:.2f} MiB",
            f"{figures['page_gzip_bytes'] / document:.2f}x document",
        ),
        (
            "surface snapshot + dump",
            f"{figures['snapshot_s'] * 1000:.0f} ms",
            f"{figures['snapshot_s'] / build:.2f}x build",
        ),
        (
            "snapshot size",
            f"{figures['snapshot_bytes'] / mib:.2f} MiB",
            f"{figures['snapshot_bytes'] / document:.2f}x document",
        ),
        (
            "snapshot check (load + diff)",
            f"{figures['snapshot_check_s'] * 1000:.0f} ms",
            f"{figures['snapshot_check_s'] / build:.2f}x build",
        ),
    ]
    measured = figures.get("browser")
    if measured:
        rows.append(("Chromium: DOMContentLoaded (navigation timing)", f"{measured['domContentLoaded']:.0f} ms", ""))
        rows.append(("Chromium: load event (navigation timing)", f"{measured['loadEvent']:.0f} ms", ""))
        rows.append(("Chromium: goto() until load, wall clock", f"{measured['load']:.0f} ms", ""))
        for step in measured["filter"]:
            label = f"Chromium: filter {step['query']!r}" if step["query"] else "Chromium: filter cleared"
            drawn = f"{step['frame_ms']:.1f} ms until drawn; {step['shown']} functions shown"
            rows.append((label, f"{step['ms']:.1f} ms", drawn))
    width = max(len(row[0]) for row in rows)
    value = max(len(row[1]) for row in rows)
    title = (
        f"{figures['document']}: {figures['functions']} functions, {figures['terms']} terms, "
        f"document {document / mib:.2f} MiB"
    )
    lines = [title, f"{'measure':<{width}}  {'value':>{value}}  ratio", "-" * (width + value + 20)]
    lines.extend(f"{name:<{width}}  {shown:>{value}}  {ratio}" for name, shown, ratio in rows)
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0] if __doc__ else None)
    parser.add_argument("--spec", default="github-api.github.com.json", help="corpus name or path of a document")
    parser.add_argument("--repeat", type=int, default=5, help="runs per timed step (median reported)")
    parser.add_argument("--no-browser", action="store_true", help="skip the Chromium figures")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures as JSON here")
    options = parser.parse_args(argv)
    spec = Path(options.spec)
    if not spec.exists():
        spec = DEFAULT_CORPUS / options.spec
    figures = run(spec, max(options.repeat, 1), browser=not options.no_browser)
    print(_table(figures))
    if options.json is not None:
        options.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
