"""The gateway a command describes: its flags (generated from `GatewayConfig`, plus `--app-dir`), the app
`--app` names, the bundled demo when no API is named, and the `stdio` arguments that serve the same gateway."""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import sys
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from gateway.cli.options import add_flags, gateway_options, leaves
from gateway.errors import ConfigError as GatewayConfigError
from gateway.extras import require
from gateway.flags import Where

if TYPE_CHECKING:
    from gateway.gateway import Gateway
    from gateway.options import GatewayConfig

__all__ = ["build_gateway", "demo_app", "demo_served", "gateway_flags", "import_app", "stdio_args"]

#: The demo's own defaults, where the command names no API.
DEMO_WHOAMI = "users.get_current_user"
DEMO_INSTRUCTIONS = "A demo shop: customers, products, orders and stock."
DEMO_NAME = "demo-shop"


def gateway_flags(parser: argparse.ArgumentParser, where: Collection[Where]) -> None:
    """The flags of every gateway option the commands `where` take, and `--app-dir`."""
    from gateway.options import GatewayConfig

    add_flags(parser, GatewayConfig, where=where, title="what to serve (default: the bundled demo API)")
    parser.add_argument(
        "--app-dir",
        default=os.environ.get("MCP_GATEWAY_APP_DIR"),
        metavar="DIR",
        help="the folder --app's module is imported from (default: the current folder; give it when a client such "
        "as Claude Desktop starts the server elsewhere) [MCP_GATEWAY_APP_DIR]",
    )


def demo_served(options: argparse.Namespace) -> bool:
    """Whether the options name no API, so the bundled demo is served."""
    return not (options.spec or options.app or options.upstream)


def build_gateway(
    options: argparse.Namespace, adjust: Callable[[GatewayConfig], GatewayConfig] | None = None
) -> tuple[Gateway, bool]:
    """The gateway the options describe (its config passed through `adjust` first, when given); True when it serves
    the bundled demo."""
    from dataclasses import replace

    from gateway.gateway import Gateway
    from gateway.options import GatewayConfig, Output

    def made(kwargs: dict[str, Any]) -> Gateway:
        config = GatewayConfig(**kwargs)
        return Gateway.from_config(adjust(config) if adjust is not None else config)

    kwargs = gateway_options(options)
    demo = demo_served(options)
    output = kwargs.get("output") or Output()
    if demo:
        kwargs["app"] = demo_app("the bundled demo API (served when no --spec, --app or --upstream names one)")
        kwargs.setdefault("whoami", DEMO_WHOAMI)
        kwargs["output"] = replace(
            output,
            name=output.name or DEMO_NAME,
            instructions=output.instructions or DEMO_INSTRUCTIONS,
            reference_path="/reference" if output.reference_path is None else output.reference_path,
        )
        return made(kwargs), True
    if options.upstream and not options.spec:
        raise GatewayConfigError("--upstream needs --spec: the gateway reads the API's document from it")
    if options.prefix is not None and not options.app:
        raise GatewayConfigError("--prefix applies to --app; for an upstream, put the path in --upstream's URL")
    if options.app:
        kwargs["app"] = import_app(options.app, options.app_dir)
    return made(kwargs), False


def demo_app(feature: str = "the bundled demo API") -> Any:
    """A new instance of the bundled demo API (MissingExtraError naming `feature` without the `demo` extra)."""
    require("demo", feature)
    from demo import create_app

    return create_app()


def stdio_args(options: argparse.Namespace) -> list[str]:
    """The `stdio` options that serve what `options` describe, from any folder and without MCP_GATEWAY_* variables:
    paths made absolute, `--app-dir` added for `--app`, defaults left out."""
    from gateway.options import GatewayConfig

    args: list[str] = []
    for leaf in leaves(GatewayConfig):
        if leaf.flag.where != "all":
            continue
        value = getattr(options, leaf.dest, None)
        if value is None or value is False or value == []:
            continue
        if leaf.dest == "spec" and isinstance(value, str) and os.path.exists(value):
            value = os.path.abspath(value)
        if leaf.kind == "switch":
            args.append(leaf.option)
        elif isinstance(value, list):
            for item in value:
                args.extend((leaf.option, str(item)))
        else:
            args.extend((leaf.option, f"{value:g}" if isinstance(value, float) else str(value)))
        if leaf.dest == "app":
            args.extend(("--app-dir", os.path.abspath(options.app_dir or os.getcwd())))
    return args


def import_app(reference: str, folder: str | None = None) -> Any:
    """The ASGI app `MODULE:ATTR` names (imported from `folder`, else the current one), calling ATTR first when it
    is a factory that takes no arguments."""
    module_name, _, attribute = reference.partition(":")
    if not module_name or not attribute:
        raise GatewayConfigError(f"--app takes MODULE:ATTR, e.g. myapi.main:app, not {reference!r}")
    if folder is not None and not os.path.isdir(folder):
        raise GatewayConfigError(f"--app-dir: {folder!r} is not a folder; give the folder {module_name!r} is in")
    sys.path.insert(0, os.path.abspath(folder or os.getcwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise GatewayConfigError(f"--app: cannot import {module_name!r}: {error}") from error
    found: Any = module
    for part in attribute.split("."):
        found = getattr(found, part, None)
        if found is None:
            raise GatewayConfigError(f"--app: {module_name!r} has no attribute {attribute!r}")
    if _is_asgi_app(found):
        return found
    if _is_factory(found):
        try:
            made = found()
        except Exception as error:
            raise GatewayConfigError(f"--app: {reference}() failed: {type(error).__name__}: {error}") from error
        if _is_asgi_app(made):
            return made
        raise GatewayConfigError(
            f"--app: {reference}() returned {_described(made)}, not an ASGI app such as FastAPI(); name the app "
            "or a function that returns one"
        )
    raise GatewayConfigError(
        f"--app: {reference} is {_described(found)}, not an ASGI app or a function that makes one "
        "(e.g. myapi.main:app or myapi.main:create_app)"
    )


def _is_asgi_app(value: Any) -> bool:
    """An ASGI 3 app: a Starlette-like app or router, or a callable taking (scope, receive, send)."""
    if hasattr(value, "router") or type(value).__name__ in ("Router", "Starlette"):
        return True
    if isinstance(value, type) or not callable(value):
        return False
    return _required_parameters(value) == 3


def _is_factory(value: Any) -> bool:
    return callable(value) and not isinstance(value, type) and _required_parameters(value) == 0


def _required_parameters(value: Any) -> int | None:

    try:
        signature = inspect.signature(value)
    except (TypeError, ValueError):
        return None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(1 for p in signature.parameters.values() if p.kind in kinds and p.default is inspect.Parameter.empty)


def _described(value: Any) -> str:
    kind = "a class" if isinstance(value, type) else f"a {type(value).__name__}"
    shown = repr(value)
    return f"{kind} ({shown[:80]}{'…' if len(shown) > 80 else ''})"
