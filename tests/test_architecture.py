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


# Inside gateway/: the subpackages are layers, and no module imports its way back to itself.

#: What each part of gateway/ may not import (besides the leaves every part may use: errors, limits, requests,
#: types, arguments, observability). The policy and the REST side know no MCP; MCP knows no catalog tool, REST
#: call or Gateway; nothing below the Gateway imports it or its options.
LAYERS = {
    "gateway.policy": {"gateway.mcp", "gateway.tools", "gateway.rest", "gateway.observability"},
    "gateway.rest": {"gateway.mcp", "gateway.tools", "gateway.policy"},
    "gateway.mcp": {"gateway.tools", "gateway.rest", "gateway.reference"},
    "gateway.snapshot": {"gateway.tools", "gateway.rest"},
    "gateway.tools": {"gateway.snapshot"},
    "gateway.apps": {"gateway.tools", "gateway.rest", "gateway.snapshot"},
}
ABOVE_ALL = {"gateway.gateway", "gateway.options", "gateway.cli"}


def gateway_modules() -> dict[str, set[str]]:
    """Each module of gateway/ and the modules of gateway/ it imports (at the top, inside functions, or for types
    only), its own parent packages left out (importing a submodule runs them anyway)."""
    paths = {}
    for path in (ROOT / "gateway").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        paths[name] = path
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        imported = {module for module in imported_modules(path.read_text(encoding="utf-8")) if module in paths}
        # The most specific module an import names: `gateway.rest.request`, not also its package `gateway.rest`.
        specific = {module for module in imported if not any(other.startswith(module + ".") for other in imported)}
        graph[name] = {module for module in specific if module != name and not name.startswith(module + ".")}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_of_the_gateway_imports_its_way_back_to_itself() -> None:
    assert cycles(gateway_modules()) == []


def test_a_cycle_is_found_however_long_it_is() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_each_part_of_the_gateway_imports_only_the_parts_below_it(layer: str) -> None:
    forbidden = LAYERS[layer] | ABOVE_ALL
    offenders = {
        module: sorted(
            target for target in targets if any(target == f or target.startswith(f + ".") for f in forbidden)
        )
        for module, targets in gateway_modules().items()
        if module == layer or module.startswith(layer + ".")
    }
    assert {module: found for module, found in offenders.items() if found} == {}


def test_gateway_takes_exactly_the_options_gateway_config_lists_about_a_dozen_of_them() -> None:
    import dataclasses
    import inspect

    from gateway.gateway import Gateway
    from gateway.options import GatewayConfig

    options = [item.name for item in dataclasses.fields(GatewayConfig) if item.init]
    assert list(inspect.signature(Gateway).parameters) == options
    assert len(options) <= 17
