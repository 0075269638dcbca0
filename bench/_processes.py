"""Run a whole command as a fresh process and measure it: wall time and peak resident memory (ru_maxrss).

Shared by cli_startup.py and memory.py: both compare our CLI with FastMCP doing the same job, each side a
whole process, interleaved so that machine noise hits both alike.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from _competitor import DEFAULT_CORPUS

__all__ = ["FASTMCP_CHECK", "Run", "corpus_file", "median", "our_cli", "run_once"]

#: FastMCP's equivalent of `mcp-gateway catalog check FILE`: read the document, build the server from it,
#: list its tools, print the count (FastMCP has no catalog command of its own).
FASTMCP_CHECK = """
import asyncio, json, logging, sys
import httpx2, yaml
from fastmcp import FastMCP
logging.getLogger("fastmcp").setLevel(logging.CRITICAL)
path = sys.argv[1]
data = open(path, "rb").read()
loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
spec = json.loads(data) if data.lstrip()[:1] == b"{" else yaml.load(data, Loader=loader)
async def main():
    async with httpx2.AsyncClient(base_url="http://127.0.0.1:9") as client:
        server = FastMCP.from_openapi(openapi_spec=spec, client=client)
        tools = await server.list_tools()
    print(f"{len(tools)} tools")
asyncio.run(main())
"""


@dataclass(frozen=True, kw_only=True)
class Run:
    """One process: how long it took from start to exit, its peak RSS in MiB, and its exit status."""

    seconds: float
    peak_mib: float
    code: int


def our_cli() -> list[str]:
    """Our `mcp-gateway` as installed next to this interpreter (the console script a user runs)."""
    script = Path(sys.executable).parent / "mcp-gateway"
    return [str(script)] if script.exists() else [sys.executable, "-m", "gateway.cli"]


def corpus_file(name: str) -> Path:
    path = DEFAULT_CORPUS / name
    if not path.exists():
        sys.exit(f"{path} is missing: set MCP_GATEWAY_CORPUS to the corpus folder (see bench/README.md)")
    return path


def run_once(argv: Sequence[str], *, timeout: float = 300.0) -> Run:
    """Run `argv` to its end with output discarded; its own wall time and peak RSS (from wait4, this child only)."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = started + timeout
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            process.kill()
            pid, status, usage = os.wait4(process.pid, 0)
            break
        time.sleep(0.002)  # polling a child in a benchmark, not waiting for an event in a test
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    code = process.returncode
    if code != 0 and process.stderr is not None:
        print(f"{argv[0]} ... exited {code}: {process.stderr.read().decode()[-500:]}", file=sys.stderr)
    return Run(seconds=seconds, peak_mib=usage.ru_maxrss / 1024, code=code)


def median(runs: Sequence[Run], field: str) -> float:
    return statistics.median(getattr(run, field) for run in runs)
