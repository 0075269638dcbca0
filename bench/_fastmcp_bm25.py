"""FastMCP's own BM25 tool search over the tools FastMCP.from_openapi makes from one document (run in its venv).

    bench/.venv-bench/bin/python bench/_fastmcp_bm25.py < request.json > answer.json

The request is `{"document": PATH, "queries": [TEXT, ...], "limit": N}`; the answer is
`{"tools": N, "hits": [[[METHOD, PATH], ...], ...]}` (one list per query, best first, each tool named by its
operation so the caller can map it to its own names), or `{"error": TEXT}` when FastMCP cannot build the document.
Every query is ranked by `BM25SearchTransform._search`, the ranking its `search_tools` tool returns, over the tools
`list_tools()` gives (calling the tool itself over an in-memory client gives the same list but re-lists every tool
per query: minutes per document). Status-code keys that YAML reads as integers are turned into strings first (FastMCP's
model refuses them; that is a loading detail, not what is measured here).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Any


def _parse(path: Path) -> Any:
    if path.suffix == ".json":
        return json.loads(path.read_text(encoding="utf-8"))
    import yaml

    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return _string_keys(yaml.load(path.read_text(encoding="utf-8"), Loader=loader))  # noqa: S506 (a safe loader)


def _string_keys(node: Any) -> Any:
    if isinstance(node, dict):
        return {str(key): _string_keys(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_string_keys(item) for item in node]
    return node


async def _rank(spec: Any, queries: list[str], limit: int) -> dict[str, Any]:
    import httpx2
    from fastmcp import FastMCP
    from fastmcp.server.transforms.search import BM25SearchTransform

    async with httpx2.AsyncClient(base_url="http://127.0.0.1:9") as http:
        server = FastMCP.from_openapi(openapi_spec=spec, client=http)
        tools = await server.list_tools()
    operations = {}
    for tool in tools:
        route = tool._route  # type: ignore[attr-defined]  # OpenAPITool keeps the operation it calls
        operations[tool.name] = (route.method.upper(), route.path)
    search = BM25SearchTransform(max_results=limit)
    hits = [[operations[tool.name] for tool in await search._search(tools, query)] for query in queries]
    return {"tools": len(operations), "hits": hits}


def main() -> int:
    logging.getLogger("fastmcp").setLevel(logging.CRITICAL)
    request = json.load(sys.stdin)
    try:
        answer = asyncio.run(_rank(_parse(Path(request["document"])), request["queries"], request["limit"]))
    except Exception as error:  # a document FastMCP cannot build is a result, reported by the caller
        answer = {"error": f"{type(error).__name__}: {str(error)[:300]}"}
    json.dump(answer, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
