"""What a function does to the API's data: reads, writes, or destroys, decided once for every place that shows it.

The HTTP method gives the default (GET and HEAD read, DELETE destroys, the rest write). Real APIs read with
POST (`/flows/filter`, `/count`) and delete with POST (bulk deletes), so two operation extensions override it:

- `x-mcp-read-only: true` marks an operation that changes nothing (`false` marks a GET that does);
- `x-mcp-destructive: true` marks one that deletes or overwrites data (`false` a DELETE that only archives).

FastAPI apps set them with `openapi_extra={"x-mcp-read-only": True}`. The operator's rules (`EffectRules`,
patterns on full function names) override both. Tool annotations, the `[read]`/`[write]`/`[destructive]`
marks, run_script's read-only gate, snapshots and the reference page all read the result.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from catalog.errors import CatalogConfigError

if TYPE_CHECKING:
    from catalog.model import Function

__all__ = [
    "DESTRUCTIVE_EXTENSION",
    "READ_ONLY_EXTENSION",
    "Effect",
    "EffectRules",
    "EffectSource",
    "document_effect",
    "effect_candidates",
    "method_effect",
]

Effect = Literal["read", "write", "destructive"]
EffectSource = Literal["method", "document", "operator"]

READ_ONLY_EXTENSION: Final = "x-mcp-read-only"
DESTRUCTIVE_EXTENSION: Final = "x-mcp-destructive"

#: Name words that say a POST only reads (`count_flow_runs`, `flows.filter`, `search_users`).
_READ_WORDS: Final = frozenset(
    {"list", "get", "search", "query", "filter", "count", "find", "read", "lookup", "fetch", "retrieve", "describe"}
    | {"show", "check", "validate", "preview", "estimate", "calculate", "compute", "exists", "match", "paginate"}
)
#: First words that say a POST changes something, whatever follows (`create_search_tool`).
_WRITE_VERBS: Final = frozenset(
    {"create", "update", "set", "add", "insert", "upsert", "patch", "put", "save", "write", "edit", "modify"}
    | {"register", "rotate", "regenerate", "reset", "start", "stop", "cancel", "run", "trigger", "send", "upload"}
    | {"import", "move", "copy", "clone", "assign", "grant", "revoke", "enable", "disable", "approve", "reject"}
    | {"submit", "publish", "merge", "close", "lock", "unlock", "invite", "apply", "generate", "refresh"}
)
#: Name words that say a POST deletes (`bulk_delete_users`, `remove_members`, `purge_cache`).
_DELETE_WORDS: Final = frozenset({"delete", "remove", "purge", "destroy", "erase", "wipe", "drop", "clear"})


def method_effect(method: str) -> Effect:
    """The effect HTTP gives a method (RFC 9110 §9.2.1: GET and HEAD are safe; DELETE removes)."""
    upper = method.upper()
    if upper in ("GET", "HEAD"):
        return "read"
    return "destructive" if upper == "DELETE" else "write"


def document_effect(operation: Mapping[str, Any], method: str) -> tuple[Effect | None, str | None]:
    """The effect the operation's extensions declare (None when they declare none), and a warning when they
    contradict each other or are not booleans."""
    read_only = operation.get(READ_ONLY_EXTENSION)
    destructive = operation.get(DESTRUCTIVE_EXTENSION)
    for name, value in ((READ_ONLY_EXTENSION, read_only), (DESTRUCTIVE_EXTENSION, destructive)):
        if value is not None and not isinstance(value, bool):
            return None, f"{name} must be true or false, not {value!r}; ignored"
    if read_only is True and destructive is True:
        return "destructive", f"{READ_ONLY_EXTENSION} and {DESTRUCTIVE_EXTENSION} are both true: read as destructive"
    if destructive is True:
        return "destructive", None
    if read_only is True:
        return "read", None
    default = method_effect(method)
    if (read_only is False and default == "read") or (destructive is False and default == "destructive"):
        return "write", None
    return None, None


@dataclass(frozen=True, kw_only=True)
class EffectRules:
    """The operator's word on effects: `fnmatch` patterns on full function names (`*.count_*`, `flows.read_*`).

    A function two lists match is refused at build time; a pattern that matches nothing is a warning.
    """

    read_only: tuple[str, ...] = ()
    destructive: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()

    @classmethod
    def of(
        cls, *, read_only: Sequence[str] = (), destructive: Sequence[str] = (), writes: Sequence[str] = ()
    ) -> EffectRules:
        """Rules from pattern lists; CatalogConfigError for a pattern that is not a non-empty string."""
        for option, patterns in (("read_only", read_only), ("destructive", destructive), ("writes", writes)):
            if isinstance(patterns, str):
                raise CatalogConfigError(f"{option} is a list of patterns, not one string: [{patterns!r}]")
            for pattern in patterns:
                if not isinstance(pattern, str) or not pattern.strip():
                    raise CatalogConfigError(f"{option}: {pattern!r} is not a pattern such as '*.count_*'")
        return cls(read_only=tuple(read_only), destructive=tuple(destructive), writes=tuple(writes))

    def __bool__(self) -> bool:
        return bool(self.read_only or self.destructive or self.writes)

    def effect(self, name: str) -> Effect | None:
        """The effect the rules give the function `name`, or None; CatalogConfigError when two lists match it."""
        matched = [
            (effect, pattern)
            for effect, patterns in (
                ("read", self.read_only),
                ("destructive", self.destructive),
                ("write", self.writes),
            )
            for pattern in patterns
            if fnmatch.fnmatchcase(name, pattern)
        ]
        effects = {effect for effect, _ in matched}
        if len(effects) > 1:
            listed = ", ".join(f"{pattern!r} ({effect})" for effect, pattern in matched)
            raise CatalogConfigError(f"{name} is matched by rules that disagree: {listed}; make one of them narrower")
        return matched[0][0] if matched else None  # type: ignore[return-value]

    def unused(self, names: Iterable[str]) -> list[str]:
        """The patterns that match none of `names`: likely typos."""
        listed = list(names)
        return [
            pattern
            for pattern in (*self.read_only, *self.destructive, *self.writes)
            if not any(fnmatch.fnmatchcase(name, pattern) for name in listed)
        ]


def effect_candidates(functions: Iterable[Function]) -> list[tuple[Function, Effect]]:
    """The POST functions whose effect only the method decided, with the effect their names suggest ('read'
    for `count_flow_runs`, 'destructive' for `bulk_delete_users`). A report, never a reclassification."""
    found: list[tuple[Function, Effect]] = []
    for function in functions:
        if function.method != "POST" or function.effect_source != "method" or function.read_only:
            continue
        if function.destructive:
            continue
        suggested = _suggested(function.function_name)
        if suggested is not None:
            found.append((function, suggested))
    return found


def _suggested(name: str) -> Effect | None:
    words = name.split("_")
    if words[0] in _WRITE_VERBS:  # `create_remove_token`, `create_search_tool`: what it does comes first
        return None
    if any(word in _DELETE_WORDS for word in words):
        return "destructive"
    if words[0] in _READ_WORDS or any(word in ("filter", "count", "search", "query") for word in words[1:]):
        return "read"
    return None
