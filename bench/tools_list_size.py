"""The size of tools/list for the largest corpus documents: our fixed tools against FastMCP's tool per operation.

    .venv/bin/python bench/tools_list_size.py                          # the eight largest APIs
    .venv/bin/python bench/tools_list_size.py --docs github stripe --json /tmp/tools-list.json

Each side runs in a fresh subprocess per document. Ours (the project's .venv) builds `Gateway(spec=path)` with
the fixed tools only and answers one real tools/list request in-process (MCP 2025-11-25, over its streamable
HTTP app); FastMCP (bench/.venv-bench, made by bench/setup.sh) builds `FastMCP.from_openapi(spec)` and its
in-memory client lists the tools. The size is the `tools` array as compact UTF-8 JSON: what an agent's context
receives before the first call. "~tokens" is bytes / 4, a rough guide only.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypedDict

from _competitor import DEFAULT_CORPUS, REPO, ensure_fastmcp

Side = Literal["ours", "fastmcp"]

#: The largest documents of the corpus, by name and file.
DOCUMENTS = {
    "github": "github-api.github.com.json",
    "stripe": "stripe-spec3.yaml",
    "kubernetes": "kubernetes-apis-guru.json",
    "digitalocean": "digitalocean-public-v2.bundled.yaml",
    "openai": "openai-openapi.yaml",
    "jira": "atlassian-jira.json",
    "box": "box-box.json",
    "litellm": "litellm-proxy.json",
}


class Measurement(TypedDict, total=False):
    """What one worker reports."""

    tools: int
    bytes: int
    largest_tool: str
    largest_tool_bytes: int
    seconds: float
    error: str


def _compact(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def _measure(tools: list[dict[str, Any]], started: float) -> Measurement:
    sizes = [(len(_compact(tool)), str(tool["name"])) for tool in tools]
    largest = max(sizes, default=(0, "-"))
    return Measurement(
        tools=len(tools),
        bytes=len(_compact(tools)),
        largest_tool=largest[1],
        largest_tool_bytes=largest[0],
        seconds=time.perf_counter() - started,
    )


def _worker_ours(path: Path) -> Measurement:
    import asyncio

    import httpx2

    from gateway.gateway import Gateway

    started = time.perf_counter()
    gateway = Gateway(spec=str(path))

    async def tools_list() -> list[dict[str, Any]]:
        transport = httpx2.ASGITransport(gateway.asgi())
        async with httpx2.AsyncClient(transport=transport, base_url="http://localhost") as http:
            response = await http.post(
                "/mcp",
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                headers={"accept": "application/json", "mcp-protocol-version": "2025-11-25"},
            )
        response.raise_for_status()
        tools: list[dict[str, Any]] = response.json()["result"]["tools"]
        return tools

    tools = asyncio.run(tools_list())
    if [tool["name"] for tool in tools] != [spec.name for spec in gateway.tools()]:
        raise RuntimeError("tools/list does not show gateway.tools()")
    return _measure(tools, started)


def _worker_fastmcp(path: Path) -> Measurement:
    import asyncio
    import logging

    import httpx2
    import yaml
    from fastmcp import Client, FastMCP

    logging.getLogger("fastmcp").setLevel(logging.CRITICAL)
    started = time.perf_counter()
    # Parsed as our loader parses: json, or libyaml's safe loader when present.
    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with path.open("rb") as stream:
        spec = json.load(stream) if path.suffix == ".json" else yaml.load(stream, Loader=loader)  # noqa: S506

    async def tools_list() -> list[dict[str, Any]]:
        async with httpx2.AsyncClient(base_url="http://127.0.0.1:9") as rest:
            server = FastMCP.from_openapi(openapi_spec=spec, client=rest)
            async with Client(server) as client:
                listed = await client.list_tools()
        return [tool.model_dump(by_alias=True, mode="json", exclude_none=True) for tool in listed]

    return _measure(asyncio.run(tools_list()), started)


def _run_worker(side: Side, path: Path, out: Path) -> None:
    measure = _worker_ours if side == "ours" else _worker_fastmcp
    try:
        result = measure(path)
    except Exception as error:  # a benchmark boundary: a side failing on a document is a result
        result = Measurement(error=f"{type(error).__name__}: {' '.join(str(error).split())[:300]}")
    out.write_text(json.dumps(result), encoding="utf-8")


def spawn(python: Path | str, side: Side, path: Path, timeout: float) -> Measurement:
    """One worker in a fresh interpreter; a crash or a timeout becomes a Measurement with `error`."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp, "result.json")
        command = [str(python), str(Path(__file__).resolve()), "--worker", side, str(path), str(out)]
        env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1"}
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=REPO, env=env)
        except subprocess.TimeoutExpired:
            return Measurement(error=f"timed out after {timeout:.0f} s")
        if out.exists():
            loaded: Measurement = json.loads(out.read_text(encoding="utf-8"))
            return loaded
        tail = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        return Measurement(error=f"worker exited {done.returncode}: {tail[:300]}")


@dataclass(frozen=True, kw_only=True)
class Row:
    """Both sides for one document."""

    name: str
    path: Path
    ours: Measurement
    fastmcp: Measurement | None


def _kib(value: int | None) -> str:
    return "-" if value is None else f"{value / 1024:,.1f}"


def render_table(rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table; the first row is the header, every column but the first right-aligned."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]

    def line(cells: Sequence[str]) -> str:
        padded = [c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))]
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join("-" * (w + 2) if i == 0 else "-" * (w + 1) + ":" for i, w in enumerate(widths)) + "|"
    return "\n".join([line(rows[0]), rule, *(line(row) for row in rows[1:])])


def report(rows: Sequence[Row]) -> str:
    """The table and the notes on failures."""
    header = ["API", "ours tools", "ours KiB", "~tokens", "FastMCP tools", "FastMCP KiB", "~tokens", "FastMCP / ours"]
    table = [header]
    notes = []
    for row in rows:
        ours, theirs = row.ours, row.fastmcp or Measurement()
        ours_bytes, their_bytes = ours.get("bytes"), theirs.get("bytes")
        ratio = f"{their_bytes / ours_bytes:,.0f}x" if ours_bytes and their_bytes else "-"
        table.append(
            [
                row.name,
                str(ours.get("tools", "-")),
                _kib(ours_bytes),
                f"{ours_bytes // 4:,}" if ours_bytes else "-",
                str(theirs.get("tools", "-")),
                _kib(their_bytes),
                f"{their_bytes // 4:,}" if their_bytes else "-",
                ratio,
            ]
        )
        for side, measured in (("ours", ours), ("FastMCP", row.fastmcp)):
            if measured is not None and "error" in measured:
                notes.append(f"{side} failed on {row.path.name}: {measured['error']}")
        if "largest_tool" in theirs:
            notes.append(
                f"{row.name}: FastMCP's largest tool is {theirs['largest_tool']} "
                f"({theirs.get('largest_tool_bytes', 0) / 1024:,.1f} KiB)"
            )
    return "\n".join([render_table(table), "", *notes])


def main(argv: Sequence[str] | None = None) -> int:
    """Measure and print the table; exit 1 when our side failed on a document."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--docs", nargs="+", metavar="NAME", choices=sorted(DOCUMENTS), help="only these APIs")
    parser.add_argument("--no-fastmcp", action="store_true", help="measure our side only")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds before one worker is abandoned")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="folder of the corpus documents")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the figures here")
    parser.add_argument("--worker", nargs=3, metavar=("SIDE", "DOC", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        side, doc, out = args.worker
        if side not in ("ours", "fastmcp"):
            parser.error(f"unknown worker side {side!r}")
        _run_worker(side, Path(doc), Path(out))
        return 0
    if not args.corpus.is_dir():
        parser.error(f"corpus folder {str(args.corpus)!r} not found; pass --corpus or set MCP_GATEWAY_CORPUS")
    fastmcp = None if args.no_fastmcp else ensure_fastmcp()
    rows = []
    for name in args.docs or DOCUMENTS:
        path = args.corpus / DOCUMENTS[name]
        ours = spawn(sys.executable, "ours", path, args.timeout)
        theirs = spawn(fastmcp, "fastmcp", path, args.timeout) if fastmcp is not None else None
        rows.append(Row(name=name, path=path, ours=ours, fastmcp=theirs))
        print(f"{name}: ours {ours.get('bytes', '-')} B, fastmcp {(theirs or {}).get('bytes', '-')} B", file=sys.stderr)
    print(report(rows))
    if args.json:
        data = [{"api": r.name, "file": r.path.name, "ours": r.ours, "fastmcp": r.fastmcp} for r in rows]
        args.json.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return 1 if any("error" in row.ours for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
