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
#: What opens connections or speaks to an app: the catalog is handed a `fetch` callable instead.
TRANSPORT = {
    "urllib.request",
    "urllib3",
    "http.client",
    "http.server",
    "socket",
    "ssl",
    "asyncio",
    "anyio",
    "sniffio",
    "websockets",
    "h11",
    "h2",
    "a2wsgi",
}
FORBIDDEN = {
    "catalog": WEB | TRANSPORT | {"gateway", "sandbox", "oauth", "quickjs", "authlib"},
    "sandbox": WEB | {"gateway", "oauth", "authlib"},
    "oauth": {"sandbox", "gateway"},
}


def imported_modules(source: str) -> set[str]:
    """Every module an absolute import in `source` names, with its parents (`urllib.request` gives `urllib` too;
    `from urllib import request` gives `urllib.request`), wherever it sits (inside functions as well)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {".".join(name.split(".")[:end]) for name in names for end in range(1, name.count(".") + 2)}


def imported_packages(package: str) -> dict[str, set[str]]:
    return {
        str(path.relative_to(ROOT)): imported_modules(path.read_text(encoding="utf-8"))
        for path in sorted((ROOT / package).rglob("*.py"))
    }


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_packages_import_only_what_their_layer_allows(package: str) -> None:
    offenders = {
        path: sorted(names & FORBIDDEN[package])
        for path, names in imported_packages(package).items()
        if names & FORBIDDEN[package]
    }
    assert offenders == {}


@pytest.mark.parametrize(
    "source",
    [
        "import urllib.request",
        "from urllib.request import urlopen",
        "from urllib import request",
        "def f():\n    import http.client",
        "import anyio",
        "from httpx2 import Client",
        "import socket",
        "from starlette.requests import Request",
    ],
)
def test_a_transport_import_in_the_catalog_is_caught_wherever_it_is_written(source: str) -> None:
    assert imported_modules(source) & FORBIDDEN["catalog"]


def test_the_catalog_may_still_parse_urls() -> None:
    assert not imported_modules("from urllib.parse import urljoin\nimport urllib.parse") & FORBIDDEN["catalog"]


@pytest.mark.parametrize("module", [catalog, gateway])
def test_public_api_is_an_explicit_sorted_all(module: object) -> None:
    exported = list(module.__all__)  # type: ignore[attr-defined]
    assert exported == sorted(exported)
    for name in exported:
        assert hasattr(module, name), name
