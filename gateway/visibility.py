"""A surface per caller: which catalog functions each caller sees and may call.

Two rules, both optional: the operator's `visible(caller, function)` hook, and OAuth scopes mapped to patterns
on function names (`{"orders:read": ["orders.list_*", "orders.get_*"]}`). A function is on a caller's surface
when every rule given lets it through. A function off the surface is *unknown* to that caller, never
"forbidden": search, describe, explain, promoted tools, call_function and run_script's calls all answer as if
it did not exist, so its name does not leak.

Scopes come from the credentials: an auth function whose headers carry `scopes` (the OAuth server's do, see
`Credentials`) scopes its caller; a caller whose credentials carry no scopes (an API key passed through,
stdio) is not limited by the scope map, only by `visible`.
"""

from __future__ import annotations

import fnmatch
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Final, Literal

from catalog.model import Catalog, Function, Module
from gateway.caller import RequestInfo
from gateway.errors import ConfigError

__all__ = ["Caller", "Credentials", "ScopeMap", "Surface", "View", "VisibleHook"]

ScopeMap = Mapping[str, Sequence[str]]
"""OAuth scope → patterns on full function names (`fnmatch`: `orders.*`, `*.list_*`) that the scope reaches."""

#: How many distinct restricted catalogs are kept (each has its own search index, built on first search).
_VIEWS: Final = 32


class Credentials(dict[str, str]):
    """REST headers an auth function returned, with the OAuth `scopes` of the token (None when it has none)."""

    scopes: frozenset[str] | None

    def __init__(self, headers: Mapping[str, str], scopes: Collection[str] | None = None) -> None:
        super().__init__(headers)
        self.scopes = frozenset(scopes) if scopes is not None else None

    @classmethod
    def of(cls, headers: Mapping[str, str]) -> Credentials:
        """`headers` with the scopes they carry: a `scopes` attribute (any collection of strings) or none."""
        scopes = getattr(headers, "scopes", None)
        if isinstance(scopes, str) or not isinstance(scopes, Collection):
            scopes = None
        return cls(dict(headers), [str(scope) for scope in scopes] if scopes is not None else None)


@dataclass(frozen=True, kw_only=True)
class Caller:
    """Who is asking, as the `visible` hook sees it.

    `scopes`: the OAuth scopes of the caller's token, or None when its credentials carry none. `credentials`:
    the REST headers its calls carry (empty over stdio until the operator gives some). `request`: the MCP
    request itself (its HTTP headers, principal and peer).
    """

    transport: Literal["http", "stdio", "in-process"]
    scopes: frozenset[str] | None
    credentials: Mapping[str, str]
    request: RequestInfo = field(repr=False)

    @classmethod
    def of(cls, request: RequestInfo) -> Caller:
        """The caller of an MCP request."""
        principal = request.principal
        scopes = principal.scopes if isinstance(principal, Credentials) else None
        credentials = dict(principal) if isinstance(principal, Mapping) else {}
        return cls(transport=request.transport, scopes=scopes, credentials=credentials, request=request)


VisibleHook = Callable[[Caller, Function], bool]
"""Whether `caller` may see and call `function`; called for each function, so keep it quick (no I/O)."""


@dataclass(frozen=True, kw_only=True, eq=False)
class View:
    """One caller's surface: the catalog restricted to its functions, and their names."""

    catalog: Catalog
    names: frozenset[str]
    complete: bool

    def allows(self, function: Function | str) -> bool:
        """Whether the function (or full name) is on this surface."""
        return self.complete or (function if isinstance(function, str) else function.name) in self.names


class Surface:
    """The rules that cut a catalog down per caller; inactive (everything visible) when neither rule is given.

    Construction checks that every scope pattern names at least one function, and raises ConfigError with the
    closest names otherwise (a typo would silently hide a function from everyone).
    """

    def __init__(self, catalog: Catalog, *, visible: VisibleHook | None = None, scopes: ScopeMap | None = None) -> None:
        if visible is not None and not callable(visible):
            raise ConfigError(f"visible must be a function of (caller, function), got {visible!r}")
        self.catalog = catalog
        self.visible = visible
        self.scopes = _checked_scopes(catalog, scopes) if scopes is not None else None
        self._full = View(catalog=catalog, names=frozenset(f.name for f in catalog.functions()), complete=True)
        self._by_scopes: dict[frozenset[str], frozenset[str]] = {}
        self._views: OrderedDict[frozenset[str], View] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def active(self) -> bool:
        """Whether some caller may see less than the whole catalog."""
        return self.visible is not None or self.scopes is not None

    def view(self, request: RequestInfo) -> View:
        """The surface of the caller of `request`."""
        if not self.active:
            return self._full
        caller = Caller.of(request)
        names = self._full.names
        if self.scopes is not None and caller.scopes is not None:
            names = self._scoped(caller.scopes)
        if self.visible is not None:
            hook = self.visible
            names = frozenset(
                function.name
                for function in self.catalog.functions()
                if function.name in names and hook(caller, function) is True
            )
        return self._view_of(names)

    def allows(self, request: RequestInfo, function: Function) -> bool:
        """Whether the caller of `request` may see and call `function` (without building its whole view)."""
        if not self.active:
            return True
        caller = Caller.of(request)
        if self.scopes is not None and caller.scopes is not None and function.name not in self._scoped(caller.scopes):
            return False
        return self.visible is None or self.visible(caller, function) is True

    def _scoped(self, granted: frozenset[str]) -> frozenset[str]:
        found = self._by_scopes.get(granted)
        if found is None:
            scopes = self.scopes or {}
            patterns = [pattern for scope in granted for pattern in scopes.get(scope, ())]
            found = frozenset(
                function.name
                for function in self.catalog.functions()
                if any(fnmatch.fnmatchcase(function.name, pattern) for pattern in patterns)
            )
            with self._lock:
                if len(self._by_scopes) >= 256:
                    self._by_scopes.clear()
                self._by_scopes[granted] = found
        return found

    def _view_of(self, names: frozenset[str]) -> View:
        if names == self._full.names:
            return self._full
        with self._lock:
            found = self._views.get(names)
            if found is not None:
                self._views.move_to_end(names)
                return found
        view = View(catalog=restricted(self.catalog, names), names=names, complete=False)
        with self._lock:
            self._views[names] = view
            while len(self._views) > _VIEWS:
                self._views.popitem(last=False)
        return view


def restricted(catalog: Catalog, names: Collection[str]) -> Catalog:
    """`catalog` with only the functions named: empty modules dropped, terms' users cut to those functions."""
    keep = frozenset(names)
    modules: list[Module] = []
    for module in catalog.modules:
        functions = tuple(function for function in module.functions if function.name in keep)
        if functions:
            modules.append(replace(module, functions=functions))
    terms = [
        replace(
            term,
            accepted_by=tuple(name for name in term.accepted_by if name in keep),
            returned_by=tuple(name for name in term.returned_by if name in keep),
        )
        for term in catalog.terms
    ]
    return Catalog(
        title=catalog.title,
        version=catalog.version,
        description=catalog.description,
        modules=modules,
        terms=terms,
        warnings=catalog.warnings,
        space=catalog.space,
        servers=catalog.servers,
    )


def _checked_scopes(catalog: Catalog, scopes: ScopeMap) -> dict[str, tuple[str, ...]]:
    if not isinstance(scopes, Mapping):
        raise ConfigError(
            f"scopes maps OAuth scopes to function-name patterns, e.g. {{'orders:read': ['orders.*']}}, not {scopes!r}"
        )
    names = [function.name for function in catalog.functions()]
    checked: dict[str, tuple[str, ...]] = {}
    for scope, patterns in scopes.items():
        if not isinstance(scope, str) or not scope or any(ch.isspace() for ch in scope):
            raise ConfigError(f"scope {scope!r} must be a non-empty scope name without spaces")
        if isinstance(patterns, str) or not isinstance(patterns, Sequence):
            raise ConfigError(
                f"scope {scope!r}: give a list of function-name patterns, e.g. ['orders.*'], not {patterns!r}"
            )
        for pattern in patterns:
            if not isinstance(pattern, str) or not any(fnmatch.fnmatchcase(name, pattern) for name in names):
                close = [name for name in names if isinstance(pattern, str) and pattern.split(".")[0] in name][:5]
                hint = f"; functions such as {', '.join(close)}" if close else "; search_functions lists them"
                raise ConfigError(f"scope {scope!r}: pattern {pattern!r} names no function of the catalog{hint}")
        checked[scope] = tuple(patterns)
    return checked
