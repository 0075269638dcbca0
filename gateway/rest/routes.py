"""Whether the documented operations route in the app, asked of Starlette's routers without running a handler.

A document that does not describe the app's root (`app.mount("/api", api)` publishing `api.openapi()`)
makes every in-process call a 404 that looks like a wrong id. The gateway checks at start-up instead, and
says which prefix or sub-app would fit.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from starlette.routing import BaseRoute, Host, Match, Mount, Router

from catalog.model import Catalog, Function
from gateway.errors import ConfigError

__all__ = ["RouteReport", "call_prefix", "check_routes", "mounted_prefixes", "serves"]

logger = logging.getLogger("gateway")

#: How many unrouted operations a start-up error names.
_EXAMPLES: Final = 5
#: How many operations the start-up route check tries before it tries them all.
_SAMPLE: Final = 24

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


def _all_route(report: RouteReport) -> bool:
    """Every operation routes for certain (static files mounted there would take any path, and do not count)."""
    return report.known and report.routed == report.checked


def _relative_server(catalog: Catalog) -> str:
    """The document's first server URL when it is a path (`/api`): where its paths live in the app."""
    first = catalog.servers[0] if catalog.servers else ""
    return first.rstrip("/") if first.startswith("/") else ""


def call_prefix(app: Any, catalog: Catalog, given: str | None) -> str:
    """The prefix calls go under: the `given` one, else the document's relative server URL, or (when none of the
    documented operations route there and no prefix was given) the one mounted path under which all of them do,
    said loudly. Refuses (ConfigError) an app in which they route nowhere, naming the prefix or sub-app that fits.

    Operations that do not route while others do are not reported: frameworks route in ways inspection cannot
    always follow (FastAPI's low-priority routes), and such a call answers the app's own 404.
    """
    prefix = given if given is not None else _relative_server(catalog)
    functions = catalog.functions()
    if not check_routes(app, functions, prefix, sample=_SAMPLE).none_route:
        return prefix
    report = check_routes(app, functions, prefix)
    if not report.none_route:
        return prefix
    examples = ", ".join(f"{f.method} {prefix}{f.path}" for f in report.unrouted[:_EXAMPLES])
    fits = [
        candidate
        for candidate in dict.fromkeys(["", *mounted_prefixes(app)])
        if candidate != prefix and _all_route(check_routes(app, functions, candidate, sample=_SAMPLE))
    ]
    where = f"under the prefix {prefix!r}" if prefix else "at the app's root"
    why = " (the document's relative server URL)" if prefix and given is None else ""
    if len(fits) == 1 and given is None:
        # The app's own document for a sub-app it mounts (Prefect: the API at /api): unambiguous, so served.
        logger.warning(
            "none of the document's %d operations route in the app %s%s, and all of them route under %r, where "
            "the app mounts a sub-app: calls go there; pass prefix=%r (--prefix %s) to say so and silence this",
            report.checked,
            where,
            why,
            fits[0],
            fits[0],
            fits[0] or "''",
        )
        return fits[0]
    if fits:
        option = fits[0] or "''"
        under = " or ".join(map(repr, fits))
        fix = (
            f"they route under {under}: pass prefix={fits[0]!r} (--prefix {option}) or the one whose document "
            "this is, or give that sub-app as app="
        )
    else:
        fix = "give the app whose document this is, or pass prefix= with the path the app serves them under"
    raise ConfigError(
        f"none of the document's {report.checked} operations route in the app {where}{why} (e.g. {examples}): "
        f"every call would answer 404. {fix[0].upper()}{fix[1:]}"
    )


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
