"""Dependencies point one way: catalog knows no web framework or HTTP client, sandbox no MCP or HTTP, and oauth
plugs into the gateway through the `auth` function alone, importing nothing from it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import catalog
import gateway

ROOT = Path(__file__).resolve().parents[1]
WEB = {"starlette", "fastapi", "uvicorn", "httpx", "httpx2", "httpcore", "requests", "aiohttp", "mcp", "mcp_types"}
FORBIDDEN = {
    "catalog": WEB | {"gateway", "sandbox", "oauth", "quickjs", "authlib"},
    "sandbox": WEB | {"gateway", "oauth", "authlib"},
    "oauth": {"sandbox", "gateway"},
}


def imported_packages(package: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
        found[str(path.relative_to(ROOT))] = names
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_packages_import_only_what_their_layer_allows(package: str) -> None:
    offenders = {
        path: sorted(names & FORBIDDEN[package])
        for path, names in imported_packages(package).items()
        if names & FORBIDDEN[package]
    }
    assert offenders == {}


@pytest.mark.parametrize("module", [catalog, gateway])
def test_public_api_is_an_explicit_sorted_all(module: object) -> None:
    exported = list(module.__all__)  # type: ignore[attr-defined]
    assert exported == sorted(exported)
    for name in exported:
        assert hasattr(module, name), name
