"""Who sees which functions: the operator's `Access` rules, and the per-caller `View` they cut from the catalog.

Four rules, all optional: `hide` (patterns on function names no caller sees), the operator's
`visible(caller, function)` hook, OAuth scopes mapped to patterns (`{"orders:read": ["orders.list_*"]}`), and the
document's own scopes (`document_scopes`: each operation's security requirements, `Function.oauth_scopes`).
A function is on a caller's view when every rule given lets it through. A function off the view is *unknown* to
that caller, never "forbidden", so its name does not leak.

Scopes come from the credentials: an auth function whose headers carry `scopes` (the OAuth server's do) scopes its
caller; a caller whose credentials carry no scopes (an API key passed through, stdio) is limited by `hide` and
`visible` alone.
"""

from __future__ import annotations

import difflib
import fnmatch
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from catalog.model import Catalog, Function, Module
from gateway.errors import ConfigError
from gateway.flags import cli
from gateway.policy.caller import Caller

__all__ = ["Access", "ScopeMap", "View", "Visibility", "VisibleHook", "restricted"]

ScopeMap = Mapping[str, Sequence[str]]
"""OAuth scope → patterns on full function names (`fnmatch`: `orders.*`, `*.list_*`) that the scope reaches."""

VisibleHook = Callable[[Caller, Function], bool]
"""Whether `caller` may see and call `function`; called for each function, so keep it quick (no I/O)."""

#: How many distinct restricted catalogs are kept (each has its own search index, built on first search).
_VIEWS: Final = 32
#: How many distinct scope sets' reach is kept.
_SCOPE_SETS: Final = 256


@dataclass(frozen=True, kw_only=True)
class Access:
    """The operator's rules of who sees which functions (`hide`, `visible`, `scopes`); none given: everyone sees
    every function. `hide` and each scope's patterns must name at least one function (a typo would leave shown
    what was meant hidden, or grant nothing), checked when the gateway is built."""

    hide: Sequence[str] = field(
        default=(),
        metadata=cli(
            "hide these functions from every caller: listings, search, describe, calls and scripts",
            metavar="PATTERN",
        ),
    )
    visible: VisibleHook | None = field(default=None, compare=False)
    scopes: ScopeMap | None = field(
        default=None,
        metadata=cli(
            "an OAuth scope and functions it reaches (again for more patterns of one scope); a caller whose token "
            "carries scopes then sees and calls only the functions they reach",
            name="scope",
            metavar="SCOPE=PATTERN",
            repeat=True,
            build=lambda items: scope_map(items),
        ),
    )

    document_scopes: bool = field(
        default=False,
        metadata=cli(
            "a caller whose token carries scopes sees and calls only the functions whose OAuth scopes (the "
            "document's security requirements) it holds; a call of one it lacks asks for them (scope step-up)",
            name="scopes-from-document",
        ),
    )

    def __post_init__(self) -> None:
        if isinstance(self.hide, str) or not all(isinstance(pattern, str) for pattern in self.hide):
            raise ConfigError(
                f"Access.hide is a list of function-name patterns, e.g. ['customers.*'], not {self.hide!r}"
            )
        object.__setattr__(self, "hide", tuple(self.hide))
        if self.visible is not None and not callable(self.visible):
            raise ConfigError(f"Access.visible must be a function of (caller, function), got {self.visible!r}")
        if self.scopes is not None:
            object.__setattr__(self, "scopes", _scope_map(self.scopes))

    @property
    def active(self) -> bool:
        """Whether some caller may see less than the whole catalog."""
        return bool(self.hide) or self.visible is not None or self.scopes is not None or self.document_scopes


@dataclass(frozen=True, kw_only=True, eq=False)
class View:
    """One caller's functions: the catalog restricted to them, and their names."""

    catalog: Catalog
    names: frozenset[str]
    complete: bool

    def allows(self, function: Function | str) -> bool:
        """Whether the function (or full name) is on this view."""
        return self.complete or (function if isinstance(function, str) else function.name) in self.names


class Visibility:
    """`Access` applied to one catalog: each caller's `View`, cached per distinct set of names.

    Construction refuses `hide` and scope patterns that name no function, with the closest names.
    """

    def __init__(self, catalog: Catalog, access: Access) -> None:
        self.catalog = catalog
        self.access = access
        names = [function.name for function in catalog.functions()]
        for pattern in access.hide:
            _check_pattern(names, pattern, f"hide {pattern!r}")
        for scope, patterns in (access.scopes or {}).items():
            for pattern in patterns:
                _check_pattern(names, pattern, f"scope {scope!r}: pattern {pattern!r}")
        self._all = View(catalog=catalog, names=frozenset(names), complete=True)
        hidden = _matching(catalog, access.hide)
        self._shown = self._all.names - hidden
        self._by_scopes: dict[frozenset[str], frozenset[str]] = {}
        self._meeting_cache: dict[frozenset[str], frozenset[str]] = {}
        self._required = {function.name: function.oauth_scopes for function in catalog.functions()}
        self._views: OrderedDict[frozenset[str], View] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def active(self) -> bool:
        """Whether some caller may see less than the whole catalog."""
        return self.access.active

    def view(self, caller: Caller) -> View:
        """The functions `caller` sees."""
        if not self.active:
            return self._all
        names = self._shown
        scopes = self.access.scopes
        if scopes is not None and caller.scopes is not None:
            names = names & self._scoped(caller.scopes)
        if self.access.document_scopes and caller.scopes is not None:
            names = names & self._meeting(caller.scopes)
        hook = self.access.visible
        if hook is not None:
            names = frozenset(
                function.name
                for function in self.catalog.functions()
                if function.name in names and hook(caller, function) is True
            )
        return self._view_of(names)

    def allows(self, caller: Caller, function: Function) -> bool:
        """Whether `caller` sees `function` (without building its whole view)."""
        if not self.active:
            return True
        if function.name not in self._shown:
            return False
        scopes = self.access.scopes
        if scopes is not None and caller.scopes is not None and function.name not in self._scoped(caller.scopes):
            return False
        if (
            self.access.document_scopes
            and caller.scopes is not None
            and not _meets(function.oauth_scopes, caller.scopes)
        ):
            return False
        hook = self.access.visible
        return hook is None or hook(caller, function) is True

    def scopes_needed(self, caller: Caller, name: str) -> tuple[str, ...] | None:
        """The scopes `caller` would need to call the function `name` when the document's scopes are all that keep
        it off the caller's view (the requirement with the fewest missing scopes, whole); else None."""
        granted = caller.scopes
        if not self.access.document_scopes or granted is None or name not in self._shown:
            return None
        required = self._required.get(name, ())
        if _meets(required, granted):
            return None
        scopes = self.access.scopes
        if scopes is not None and name not in self._scoped(granted):
            return None
        hook = self.access.visible
        if hook is not None and hook(caller, self.catalog.function(name)) is not True:
            return None
        return min(required, key=lambda needed: (len(set(needed) - granted), needed))

    def _meeting(self, granted: frozenset[str]) -> frozenset[str]:
        """The functions whose document scopes `granted` holds."""
        found = self._meeting_cache.get(granted)
        if found is None:
            found = frozenset(name for name, required in self._required.items() if _meets(required, granted))
            with self._lock:
                if len(self._meeting_cache) >= _SCOPE_SETS:
                    self._meeting_cache.clear()
                self._meeting_cache[granted] = found
        return found

    def _scoped(self, granted: frozenset[str]) -> frozenset[str]:
        found = self._by_scopes.get(granted)
        if found is None:
            scopes = self.access.scopes or {}
            found = _matching(self.catalog, [pattern for scope in granted for pattern in scopes.get(scope, ())])
            with self._lock:
                if len(self._by_scopes) >= _SCOPE_SETS:
                    self._by_scopes.clear()
                self._by_scopes[granted] = found
        return found

    def _view_of(self, names: frozenset[str]) -> View:
        if names == self._all.names:
            return self._all
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


def _meets(required: tuple[tuple[str, ...], ...], granted: frozenset[str]) -> bool:
    """Whether `granted` holds every scope of one of the `required` sets (none required: always)."""
    return not required or any(granted.issuperset(needed) for needed in required)


def scope_map(items: Sequence[str]) -> dict[str, list[str]]:
    """`SCOPE=PATTERN` items (as `--scope` takes them) as a scope map; ConfigError for an item of another shape.

    The pattern follows the last `=`: a scope token may hold one (RFC 6749 §3.3), a function name never does.
    """
    scopes: dict[str, list[str]] = {}
    for item in items:
        scope, _, pattern = item.rpartition("=")
        if not scope.strip() or not pattern.strip():
            raise ConfigError(
                f"--scope takes SCOPE=PATTERN, e.g. orders:read=orders.get_*, not {item!r} (repeat it for more)"
            )
        scopes.setdefault(scope.strip(), []).append(pattern.strip())
    return scopes


def restricted(catalog: Catalog, names: Collection[str]) -> Catalog:
    """`catalog` with only the functions named: empty modules dropped, terms' users cut to those functions, and
    the terms only the other functions use (directly or inside another such term) dropped, so a hidden function's
    types are as unknown as its name. Terms no function uses (a concept, an unused schema) stay."""
    keep = frozenset(names)
    modules: list[Module] = []
    for module in catalog.modules:
        functions = tuple(function for function in module.functions if function.name in keep)
        if functions:
            modules.append(replace(module, functions=functions))
    hidden = _hidden_terms(catalog, keep)
    terms = [
        replace(
            term,
            accepted_by=tuple(name for name in term.accepted_by if name in keep),
            returned_by=tuple(name for name in term.returned_by if name in keep),
        )
        for term in catalog.terms
        if term.name not in hidden
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


def _hidden_terms(catalog: Catalog, keep: frozenset[str]) -> frozenset[str]:
    """The terms some function uses but none of `keep` does, directly or through the terms they refer to."""
    refers = _term_refs(catalog)

    def reached(roots: Collection[str]) -> set[str]:
        seen, pending = set(roots), list(roots)
        while pending:
            for name in refers.get(pending.pop(), ()):
                if name not in seen:
                    seen.add(name)
                    pending.append(name)
        return seen

    used = [term for term in catalog.terms if term.accepted_by or term.returned_by]
    visible = [term.name for term in used if any(name in keep for name in (*term.accepted_by, *term.returned_by))]
    return frozenset(reached([term.name for term in used]) - reached(visible))


_TERM_REFS: Final[weakref.WeakKeyDictionary[Catalog, dict[str, frozenset[str]]]] = weakref.WeakKeyDictionary()
_TERM_REFS_LOCK: Final = threading.Lock()


def _term_refs(catalog: Catalog) -> dict[str, frozenset[str]]:
    """Each term's name → the terms its schema refers to (`$ref` to another component schema); once per catalog."""
    with _TERM_REFS_LOCK:
        known = _TERM_REFS.get(catalog)
    if known is not None:
        return known
    names = {term.name for term in catalog.terms}
    refers: dict[str, frozenset[str]] = {}
    for term in catalog.terms:
        found: set[str] = set()
        pending: list[object] = [term.schema]
        while pending:
            node = pending.pop()
            if isinstance(node, Mapping):
                ref = node.get("$ref")
                if isinstance(ref, str):
                    target = ref.rpartition("/")[2].replace("~1", "/").replace("~0", "~")
                    if target in names and target != term.name:
                        found.add(target)
                pending.extend(node.values())
            elif isinstance(node, list):
                pending.extend(node)
        refers[term.name] = frozenset(found)
    with _TERM_REFS_LOCK:
        _TERM_REFS[catalog] = refers
    return refers


def _matching(catalog: Catalog, patterns: Sequence[str]) -> frozenset[str]:
    return frozenset(
        function.name
        for function in catalog.functions()
        if any(fnmatch.fnmatchcase(function.name, pattern) for pattern in patterns)
    )


def _check_pattern(names: Sequence[str], pattern: str, what: str) -> None:
    if any(fnmatch.fnmatchcase(name, pattern) for name in names):
        return
    close = (
        difflib.get_close_matches(pattern, names, n=3, cutoff=0.5)
        or [name for name in names if pattern.split(".")[0] in name][:3]
    )
    hint = f"; closest: {', '.join(close)}" if close else "; search_functions (or `catalog search`) finds the names"
    raise ConfigError(f"{what} names no function of the catalog{hint}")


def _scope_map(scopes: object) -> dict[str, tuple[str, ...]]:
    if not isinstance(scopes, Mapping):
        raise ConfigError(
            f"scopes maps OAuth scopes to function-name patterns, e.g. {{'orders:read': ['orders.*']}}, not {scopes!r}"
        )
    checked: dict[str, tuple[str, ...]] = {}
    for scope, patterns in scopes.items():
        if not isinstance(scope, str) or not scope or any(ch.isspace() for ch in scope):
            raise ConfigError(f"scope {scope!r} must be a non-empty scope name without spaces")
        if isinstance(patterns, str) or not isinstance(patterns, Sequence):
            raise ConfigError(
                f"scope {scope!r}: give a list of function-name patterns, e.g. ['orders.*'], not {patterns!r}"
            )
        if not all(isinstance(pattern, str) for pattern in patterns):
            raise ConfigError(f"scope {scope!r}: patterns are strings such as 'orders.*', got {list(patterns)!r}")
        checked[scope] = tuple(patterns)
    return checked
