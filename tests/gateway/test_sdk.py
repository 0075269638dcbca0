"""The MCP SDK's internals are touched in one module only, and only on the SDK versions it was checked against."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gateway.mcp import _sdk

GATEWAY = Path(__file__).resolve().parents[2] / "gateway"
#: The SDK's documented entry points, which any module may import.
PUBLIC = {"mcp.server.lowlevel", "mcp.server.context", "mcp.shared.exceptions", "mcp.server.stdio"}


def test_the_installed_mcp_sdk_is_one_the_gateway_supports() -> None:
    low, high = (".".join(map(str, bound)) for bound in _sdk.SUPPORTED_SDK)
    installed = _sdk.sdk_version()
    assert _sdk.sdk_supported(installed), (
        f"mcp {installed} is installed, but gateway/mcp/_sdk.py was checked against mcp >= {low}, < {high}: it uses "
        "the SDK's internals (its request kernel, born-ready connections, the private 2026-07-28 entry, the shape "
        "of its result sieve). Install a supported mcp, or check gateway/mcp/_sdk.py against this one (run "
        "tests/gateway/test_streamable_http.py) and widen SUPPORTED_SDK."
    )


@pytest.mark.parametrize(
    ("version", "supported"),
    [("2.3.0", True), ("2.3.7", True), ("2.3.0rc1", True), ("2.4.0", False), ("2.2.9", False), ("1.27.0", False)],
)
def test_the_supported_range_includes_its_lower_bound_and_excludes_the_next_minor(
    version: str, supported: bool
) -> None:
    assert _sdk.sdk_supported(version) is supported


def test_only_the_sdk_module_imports_from_the_sdk_beyond_its_public_entry_points() -> None:
    offenders = []
    for path in sorted(GATEWAY.rglob("*.py")):
        if path.name == "_sdk.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            offenders += [
                f"{path.relative_to(GATEWAY.parent)}: {name}"
                for name in names
                if (name == "mcp" or name.startswith("mcp.")) and name != "mcp" and name not in PUBLIC
            ]
    assert offenders == []


def test_pyproject_pins_mcp_to_the_releases_the_bridge_supports() -> None:
    import tomllib

    project = tomllib.loads((GATEWAY.parent / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    (requirement,) = [item for item in project["dependencies"] if item.startswith("mcp")]
    low, high = (".".join(map(str, bound)) for bound in _sdk.SUPPORTED_SDK)
    assert requirement == f"mcp>={low},<{high}"


def test_an_unsupported_sdk_is_said_once_at_start_up(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(_sdk, "sdk_version", lambda: "9.9.0")
    monkeypatch.setattr(_sdk, "_warned", [])
    with caplog.at_level("WARNING", logger="gateway"):
        _sdk.warn_if_unsupported()
        _sdk.warn_if_unsupported()
    warned = [record.getMessage() for record in caplog.records if "mcp 9.9.0 is installed" in record.getMessage()]
    assert warned == [
        "mcp 9.9.0 is installed, but the gateway was checked against mcp >= 2.3, < 2.4 and uses the SDK's internals: "
        "calls may fail. Install a supported release: pip install 'mcp>=2.3,<2.4'"
    ]
