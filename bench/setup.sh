#!/usr/bin/env bash
# Create bench/.venv-bench with the competitor (FastMCP) the benchmarks compare against.
# It is a separate virtualenv because FastMCP pins its own mcp/pydantic/httpx2 versions.
# FastAPI and jsonschema are there too: call_latency.py serves the demo app (imported from this checkout)
# under FastMCP.from_fastapi in this venv.
# Override the version with FASTMCP_SPEC, e.g. FASTMCP_SPEC='fastmcp>=4' bench/setup.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="$here/.venv-bench"
python="${PYTHON:-python3}"
spec="${FASTMCP_SPEC:-fastmcp==4.2.3}"
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet "$spec" pyyaml 'fastapi>=0.115' 'jsonschema>=4.23'
"$venv/bin/python" -c 'import fastmcp; print("fastmcp", fastmcp.__version__, "in", __import__("sys").prefix)'
