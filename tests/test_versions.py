"""The supported range: pyproject.toml's lower bounds for the packages an app shares with the gateway are the
releases `make test-oldest` installs (constraints-oldest.txt), so the floor the project states is the one tested."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
#: The packages an app and the gateway share, each at its oldest supported release in constraints-oldest.txt.
SHARED = ("fastapi", "starlette", "pydantic", "anyio")


def lower_bounds(requirements: list[str]) -> dict[str, Version]:
    """Name → the `>=` bound of each requirement that has one."""
    bounds: dict[str, Version] = {}
    for line in requirements:
        requirement = Requirement(line)
        for specifier in requirement.specifier:
            if specifier.operator == ">=":
                bounds[requirement.name] = Version(specifier.version)
    return bounds


def oldest_pins() -> dict[str, Version]:
    lines = (ROOT / "constraints-oldest.txt").read_text().splitlines()
    pins = [line.split("==") for line in lines if line and not line.startswith("#")]
    return {name: Version(version) for name, version in pins}


def test_the_oldest_environment_installs_the_lower_bound_pyproject_states_for_each_shared_package() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    stated = lower_bounds(project["dependencies"]) | lower_bounds(project["optional-dependencies"]["demo"])
    pins = oldest_pins()
    assert {name: pins.get(name) for name in SHARED} == {name: stated.get(name) for name in SHARED}


def test_the_demo_and_dev_extras_state_the_same_oldest_fastapi() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert lower_bounds(extras["dev"])["fastapi"] == lower_bounds(extras["demo"])["fastapi"]
