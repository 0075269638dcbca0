"""Where the benchmarks find the corpus and FastMCP, the competitor they measure against."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
DEFAULT_CORPUS = Path(os.environ.get("MCP_GATEWAY_CORPUS", REPO.parent / "shared" / "corpus" / "specs"))
#: FastMCP pins its own mcp, pydantic and httpx2, so it lives in a virtualenv of its own (bench/setup.sh).
FASTMCP_VENV = BENCH / ".venv-bench"
FASTMCP_PYTHON = FASTMCP_VENV / "bin" / "python"


def ensure_fastmcp() -> Path:
    """The competitor's interpreter, running bench/setup.sh first when FastMCP or what it needs is missing."""
    probe = [str(FASTMCP_PYTHON), "-c", "import fastmcp, fastapi, jsonschema"]
    if not FASTMCP_PYTHON.exists() or subprocess.run(probe, capture_output=True, check=False).returncode != 0:
        print("bench/.venv-bench lacks FastMCP or FastAPI: running bench/setup.sh", file=sys.stderr)
        subprocess.run(["bash", str(BENCH / "setup.sh")], check=True)
    return FASTMCP_PYTHON
