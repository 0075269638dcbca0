"""Whether the documented operations route in the app, asked of Starlette's routers without running a handler.

A document that does not describe the app's root (`app.mount("/api", api)` publishing `api.openapi()`)
makes every in-process call a 404 that looks like a wrong id. The gateway checks at start-up instead, and
says which prefix or sub-app would fit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from starlette.routing import BaseRoute, Host, Match, Mount, Router

from catalog.model import Function

__all__ = ["RouteReport", "check_routes", "mounted_prefixes", "serves"]

_TEMPLATE: Final = re.compile(r"\{([^{}/]+)\}")
_UUID: Final = "00000000-0000-4000-8000-000000000000"


@dataclass(frozen=True, kw_only=True)
class RouteReport:
    """Which functions route in the app under `prefix`; `known` is False when the app's routing is opaque."""

    prefix: str
    checked: int
    unrouted: tuple[Function, ...]
    known: bool = True
    #: How many route for certain (a mounted app that cannot be asked, static files say, may take the rest).
    routed: int = 0

    @property
    def none_route(self) -> bool:
        """True when no documented operation routes (and there were some to check)."""
        return self.known and self.checked > 0 and len(self.unrouted) == self.checked


def check_routes(app: Any, functions: Iterable[Function], prefix: str, *, sample: int | None = None) -> RouteReport:
    """Try each operation's method and path (parameters filled with sample values) under `prefix`; with
    `sample`, only that many operations spread evenly over the document (FastAPI's included routers make
    each try cost, and a prefix that is wrong is wrong for every path)."""
    router = _router(app)
    operations = [function for function in functions if function.composite is None and function.path]
    if sample is not None and len(operations) > sample:
        step = len(operations) / sample
        operations = [operations[int(index * step)] for index in range(sample)]
    if router is None:
        return RouteReport(prefix=prefix, checked=len(operations), unrouted=(), known=False)
    root_path = getattr(app, "root_path", "") or ""
    found = [(function, _routes(router.routes, _scope(function, prefix, root_path))) for function in operations]
    unrouted = tuple(function for function, routed in found if routed is False)
    certain = sum(1 for _, routed in found if routed is True)
    return RouteReport(prefix=prefix, checked=len(operations), unrouted=unrouted, routed=certain)


def serves(app: Any, path: str) -> bool:
    """True when the app has a route or mount of its own at exactly `path` (catch-all routes do not count)."""
    router = _router(app)
    if router is None:
        return False

    def walk(routes: Sequence[BaseRoute], base: str) -> bool:
        for route in routes:
            own = getattr(route, "path", None)
            if not isinstance(own, str) or "{" in own:
                continue
            if base + own == path:
                return True
            if isinstance(route, Mount) and path.startswith(base + own + "/") and walk(route.routes, base + own):
                return True
        return False

    return walk(router.routes, "")


def mounted_prefixes(app: Any) -> list[str]:
    """The paths of the sub-apps and routers the app mounts, outermost first (`/api`, `/api/v1`)."""
    router = _router(app)
    found: list[str] = []

    def walk(routes: Sequence[BaseRoute], base: str) -> None:
        for route in routes:
            if isinstance(route, Mount) and route.path:
                found.append(base + route.path)
                walk(route.routes, base + route.path)

    if router is not None:
        walk(router.routes, "")
    return found


def _router(app: Any) -> Router | None:
    if isinstance(app, Router):
        return app
    router = getattr(app, "router", None)
    return router if isinstance(router, Router) else None


def _scope(function: Function, prefix: str, root_path: str) -> dict[str, Any]:
    samples = {arg.name: _sample(arg.schema) for arg in function.args if arg.location == "path"}
    path = _TEMPLATE.sub(lambda match: samples.get(match.group(1), "1"), function.path)
    return {
        "type": "http",
        "method": function.method,
        "path": prefix.rstrip("/") + path,
        "root_path": root_path,
        "headers": [(b"host", b"localhost")],
        "path_params": {},
    }


def _sample(schema: Any) -> str:
    """A value that fits the router's convertors for this parameter: digits route as str, int and float."""
    if isinstance(schema, dict) and schema.get("format") == "uuid":
        return _UUID
    return "1"


def _routes(routes: Sequence[BaseRoute], scope: dict[str, Any]) -> bool | None:
    """True when a route takes the request, False when none does, None when a mounted app cannot tell."""
    opaque = False
    for route in routes:
        try:
            match, child = route.matches(scope)
        except Exception:  # a custom route that cannot be asked: it may well take the request
            opaque = True
            continue
        if match is Match.NONE:
            continue
        if isinstance(route, Mount | Host):
            inner = route.routes
            if not inner:
                return None  # an app that is not a router (static files, another framework)
            found = _routes(inner, {**scope, **child})
            if found is not False:
                return found
            continue
        if match is Match.FULL:
            return True
    return None if opaque else False
