"""Every difference between two gateway surface snapshots, each classified breaking or non-breaking.

The rules are in `gateway.snapshot.check`'s docstring; schemas are judged by `gateway.snapshot.schema_diff`.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from gateway.snapshot.calls_diff import own_server_change, security_change, servers_changes, style_change
from gateway.snapshot.resources_diff import surface_changes
from gateway.snapshot.schema_diff import Direction, schema_changes

__all__ = ["Change", "FailOn", "SnapshotDiff", "Subject", "diff_snapshots"]

FailOn = Literal["breaking", "any"]
Subject = Literal["snapshot", "server", "instructions", "tool", "module", "function", "term", "resource", "prompt"]

#: Fields that are derived from others (signatures render the args); reported only when nothing else explains
#: a difference, so one added argument is one line, not three.
_DERIVED = frozenset({"line", "signature", "type", "accepted_by", "returned_by", "functions"})
_SHORT = 70


@dataclass(frozen=True, kw_only=True)
class Change:
    """One classified difference: what it is about (`subject`, `name`) and what happened, in words."""

    breaking: bool
    subject: Subject
    #: The tool, module, function, term, resource URI or prompt; "" for the snapshot, server and instructions.
    name: str
    message: str

    @property
    def severity(self) -> Literal["breaking", "non-breaking"]:
        """`breaking` or `non-breaking`."""
        return "breaking" if self.breaking else "non-breaking"

    def __str__(self) -> str:
        return f"{self.subject} {self.name}: {self.message}" if self.name else f"{self.subject}: {self.message}"


@dataclass(frozen=True)
class SnapshotDiff:
    """The changes between two snapshots, in the order found: snapshot, server, tools, modules, functions, terms,
    resources, prompts."""

    changes: tuple[Change, ...] = ()

    @property
    def breaking(self) -> tuple[Change, ...]:
        """The breaking changes."""
        return tuple(change for change in self.changes if change.breaking)

    @property
    def non_breaking(self) -> tuple[Change, ...]:
        """The non-breaking changes."""
        return tuple(change for change in self.changes if not change.breaking)

    def fails(self, fail_on: FailOn) -> bool:
        """True when the gate `fail_on` rejects this diff: any breaking change, or any change at all."""
        return bool(self.breaking if fail_on == "breaking" else self.changes)

    def __bool__(self) -> bool:
        return bool(self.changes)


class _Changes:
    """Collects changes once each, in order."""

    def __init__(self) -> None:
        self.items: dict[tuple[bool, str, str, str], Change] = {}

    def add(self, breaking: bool, subject: Subject, name: str, message: str) -> None:
        key = (breaking, subject, name, message)
        if key not in self.items:
            self.items[key] = Change(breaking=breaking, subject=subject, name=name, message=message)

    def about(self, subject: Subject, name: str) -> int:
        return sum(1 for change in self.items.values() if change.subject == subject and change.name == name)


def diff_snapshots(old: Mapping[str, Any], new: Mapping[str, Any]) -> SnapshotDiff:
    """Every difference between two surface snapshots, each classified breaking or non-breaking.

    Any difference at all yields at least one change, so equal diffs mean equal surfaces.
    """
    out = _Changes()
    if old.get("format") != new.get("format"):
        out.add(False, "snapshot", "", f"format changed from {old.get('format')!r} to {new.get('format')!r}")
    old_server, new_server = _mapping(old.get("server")), _mapping(new.get("server"))
    for key in sorted(set(old_server) | set(new_server)):
        if old_server.get(key) != new_server.get(key):
            out.add(False, "server", "", f"{key} changed{_shown(old_server.get(key), new_server.get(key))}")
    if old.get("instructions") != new.get("instructions"):
        before, after = old.get("instructions"), new.get("instructions")
        out.add(False, "instructions", "", f"changed{_shown(before, after) or _lines(before, after)}")
    _tools(_listed(old.get("tools")), _listed(new.get("tools")), out)
    old_catalog, new_catalog = _mapping(old.get("catalog")), _mapping(new.get("catalog"))
    if old_catalog.get("format") != new_catalog.get("format"):
        before, after = old_catalog.get("format"), new_catalog.get("format")
        # Breaking whatever the gate: the older file does not record what the newer one does, so it cannot vouch
        # for it until it is written again.
        out.add(
            True,
            "snapshot",
            "",
            f"catalog format changed from {before!r} to {after!r}, which also records {_RECORDED.get(after, 'more')}: "
            "re-record the file (accept this change) and review what it adds",
        )
        old_catalog, new_catalog = _common_format(old_catalog, new_catalog)
    for key in ("title", "version"):
        if old_catalog.get(key) != new_catalog.get(key):
            out.add(False, "server", "", f"API {key} changed{_shown(old_catalog.get(key), new_catalog.get(key))}")
    for breaking, message in servers_changes(old_catalog.get("servers"), new_catalog.get("servers")):
        out.add(breaking, "server", "", message)
    old_modules, new_modules = _listed(old_catalog.get("modules")), _listed(new_catalog.get("modules"))
    _modules(old_modules, new_modules, out)
    _functions(_all_functions(old_modules), _all_functions(new_modules), out)
    _terms(_listed(old_catalog.get("terms")), _listed(new_catalog.get("terms")), out)
    surface_changes(old, new, out.add)
    handled = ("format", "server", "instructions", "tools", "catalog", "resources", "resourceTemplates", "prompts")
    _rest(old, new, handled, "snapshot", "", out)
    _rest(old_catalog, new_catalog, ("format", "title", "version", "servers", "modules", "terms"), "snapshot", "", out)
    if not out.items and old != new:
        out.add(False, "snapshot", "", "the files differ in details this check does not classify")
    return SnapshotDiff(tuple(out.items.values()))


#: What each catalog format added, for the message that asks to re-record an older file.
_RECORDED: dict[object, str] = {
    2: "where calls go and who may make them (servers, each function's own server and security, argument styles)",
}
#: The keys each catalog format added: at the catalog's top, in each function, in each argument.
_ADDED_IN: dict[int, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    2: (("servers",), ("server", "security"), ("style", "explode")),
}


def _common_format(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    """Both catalogs without the keys the older of their formats does not record, so that only what both record
    is compared."""
    formats = [value for value in (old.get("format"), new.get("format")) if isinstance(value, int)]
    oldest = min(formats, default=0)
    added = [keys for version, keys in _ADDED_IN.items() if version > oldest]
    top, per_function, per_arg = (frozenset(key for keys in added for key in keys[level]) for level in range(3))

    def function(entry: Any) -> Any:
        if not isinstance(entry, Mapping):
            return entry
        args = [_without(arg, per_arg) for arg in entry.get("args") or []]
        return {**_without(entry, per_function), "args": args}

    def strip(catalog: Mapping[str, Any]) -> Mapping[str, Any]:
        modules = [
            {**module, "functions": [function(entry) for entry in module.get("functions") or []]}
            if isinstance(module, Mapping)
            else module
            for module in catalog.get("modules") or []
        ]
        return {**_without(catalog, top), "modules": modules}

    return strip(old), strip(new)


def _without(value: Any, keys: frozenset[str]) -> Any:
    return {key: item for key, item in value.items() if key not in keys} if isinstance(value, Mapping) else value


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _listed(value: Any) -> dict[str, Mapping[str, Any]]:
    """Named entries of a list by name, in order."""
    items = value if isinstance(value, list) else []
    return {str(item["name"]): item for item in items if isinstance(item, Mapping) and "name" in item}


def _all_functions(modules: Mapping[str, Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    found: dict[str, Mapping[str, Any]] = {}
    for module in modules.values():
        found.update(_listed(module.get("functions")))
    return found


def _lines(before: Any, after: Any) -> str:
    """` (2 lines added, 1 removed)`: the size of a change to a long text."""
    if not isinstance(before, str) or not isinstance(after, str):
        return ""
    marks = [line[0] for line in difflib.ndiff(before.splitlines(), after.splitlines()) if line[:1] in "+-"]
    added = marks.count("+")
    return f" ({added} line{'s' if added != 1 else ''} added, {marks.count('-')} removed)"


def _shown(before: Any, after: Any) -> str:
    """`: 'a' → 'b'` for short values, nothing for long ones (the file shows them)."""
    if isinstance(before, str | int | float | None) and isinstance(after, str | int | float | None):
        rendered = (repr(before), repr(after))
        if all(len(text) <= _SHORT and "\n" not in text for text in rendered):
            return f": {rendered[0]} → {rendered[1]}"
    return ""


def _rest(
    old: Mapping[str, Any], new: Mapping[str, Any], handled: Iterable[str], subject: Subject, name: str, out: _Changes
) -> None:
    """Report keys the comparison did not handle; derived keys only when nothing else was found for `name`."""
    done = set(handled)
    quiet = out.about(subject, name) > 0
    for key in sorted(set(old) | set(new), key=str):
        if key in done or old.get(key) == new.get(key) or (key in _DERIVED and quiet):
            continue
        out.add(False, subject, name, f"{key} changed{_shown(old.get(key), new.get(key))}")


def _wording(
    old: Mapping[str, Any], new: Mapping[str, Any], key: str, subject: Subject, name: str, out: _Changes
) -> None:
    if old.get(key) != new.get(key):
        out.add(False, subject, name, f"{key} changed{_shown(old.get(key), new.get(key))}")


def _schema(
    old: Any,
    new: Any,
    subject: Subject,
    name: str,
    out: _Changes,
    *,
    root: str,
    path: str = "",
    label: str | None = None,
    direction: Direction,
) -> None:
    for breaking, message in schema_changes(old, new, root=root, path=path, label=label, direction=direction):
        out.add(breaking, subject, name, message)


# Tools

_HINTS = (
    # (annotation, the value that is riskier for the caller, message when it becomes riskier, when it stops)
    ("readOnlyHint", False, "no longer read-only", "now read-only"),
    ("destructiveHint", True, "now destructive", "no longer destructive"),
    ("idempotentHint", False, "no longer idempotent", "now idempotent"),
    ("openWorldHint", True, "now reaches the open world", "no longer reaches the open world"),
)


def _tools(old: Mapping[str, Mapping[str, Any]], new: Mapping[str, Mapping[str, Any]], out: _Changes) -> None:
    for name in old:
        if name not in new:
            out.add(True, "tool", name, "removed")
    for name in new:
        if name not in old:
            out.add(False, "tool", name, "added")
    for name, before in old.items():
        after = new.get(name)
        if after is not None and before != after:
            _tool(name, before, after, out)


def _tool(name: str, old: Mapping[str, Any], new: Mapping[str, Any], out: _Changes) -> None:
    for key in ("title", "description"):
        _wording(old, new, key, "tool", name, out)
    _tool_schema(name, old.get("inputSchema"), new.get("inputSchema"), "input", out)
    before, after = old.get("outputSchema"), new.get("outputSchema")
    if before is None and after is not None:
        out.add(False, "tool", name, "now declares an output schema (structured results)")
    elif before is not None and after is None:
        out.add(True, "tool", name, "no longer declares an output schema (structured results)")
    else:
        _tool_schema(name, before, after, "output", out)
    old_hints, new_hints = _mapping(old.get("annotations")), _mapping(new.get("annotations"))
    for hint, risky, riskier, safer in _HINTS:
        if old_hints.get(hint) != new_hints.get(hint):
            more = new_hints.get(hint) is risky
            # An open-world hint is information, not a promise a client relies on.
            out.add(more and hint != "openWorldHint", "tool", name, riskier if more else safer)
    _rest(old_hints, new_hints, [hint for hint, *_ in _HINTS], "tool", f"{name}", out)
    _rest(old, new, ("name", "title", "description", "inputSchema", "outputSchema", "annotations"), "tool", name, out)


def _tool_schema(name: str, old: Any, new: Any, direction: Direction, out: _Changes) -> None:
    """A tool schema: its root, then each `$defs` entry on its own (refs are compared by name)."""
    if old == new:
        return
    root, label = ("argument", "input schema") if direction == "input" else ("result field", "result")
    before, after = _mapping(old), _mapping(new)
    strip = ("$defs", "$schema")
    _schema(
        {k: v for k, v in before.items() if k not in strip},
        {k: v for k, v in after.items() if k not in strip},
        "tool",
        name,
        out,
        root=root,
        label=label,
        direction=direction,
    )
    old_defs, new_defs = _mapping(before.get("$defs")), _mapping(after.get("$defs"))
    for term in sorted(set(old_defs) | set(new_defs)):
        if term not in new_defs:
            out.add(True, "tool", name, f"type {term!r} removed from the {direction} schema")
        elif term not in old_defs:
            out.add(False, "tool", name, f"type {term!r} added to the {direction} schema")
        else:
            _schema(
                old_defs[term], new_defs[term], "tool", name, out, root=f"{term} field", label=term, direction=direction
            )


# Modules and functions


def _modules(old: Mapping[str, Mapping[str, Any]], new: Mapping[str, Mapping[str, Any]], out: _Changes) -> None:
    for name, before in old.items():
        after = new.get(name)
        if after is None:
            out.add(True, "module", name, "removed")
            continue
        _wording(before, after, "description", "module", name, out)
        _rest(before, after, ("name", "description", "functions"), "module", name, out)
    for name in new:
        if name not in old:
            out.add(False, "module", name, "added")


def _functions(old: Mapping[str, Mapping[str, Any]], new: Mapping[str, Mapping[str, Any]], out: _Changes) -> None:
    removed = [name for name in old if name not in new]
    added = [name for name in new if name not in old]
    renamed: dict[str, str] = {}
    routes = {_route(new[name]): name for name in added if _route(new[name]) is not None}
    for name in removed:
        target = routes.pop(_route(old[name]), None) if _route(old[name]) is not None else None
        if target is not None:
            renamed[name] = target
            out.add(True, "function", name, f"renamed to {target}")
        else:
            out.add(True, "function", name, "removed")
    for name in added:
        if name not in renamed.values():
            out.add(False, "function", name, "added")
    for name, before in old.items():
        after = new.get(name) or new.get(renamed.get(name, ""))
        if after is not None and before != after:
            _function(str(after["name"]), before, after, out, renamed=name in renamed)


def _route(function: Mapping[str, Any]) -> tuple[str, str] | None:
    method, path = function.get("method"), function.get("path")
    return (str(method), str(path)) if method and path else None


_FUNCTION_KEYS = (
    "name",
    "summary",
    "description",
    "method",
    "path",
    "args",
    "returns",
    "read_only",
    "destructive",
    "deprecated",
    "server",
    "security",
)


def _function(
    name: str, old: Mapping[str, Any], new: Mapping[str, Any], out: _Changes, *, renamed: bool = False
) -> None:
    """The changes of one function; after a rename (reported already), not the line and signature it changed."""
    _args(name, old.get("args") or [], new.get("args") or [], out)
    if old.get("returns") != new.get("returns"):
        out.add(True, "function", name, f"return type changed from {old.get('returns')} to {new.get('returns')}")
    if old.get("read_only") is True and new.get("read_only") is not True:
        out.add(True, "function", name, "no longer read-only")
    elif old.get("read_only") is not True and new.get("read_only") is True:
        out.add(False, "function", name, "now read-only")
    if old.get("destructive") is not True and new.get("destructive") is True:
        out.add(True, "function", name, "now destructive")
    elif old.get("destructive") is True and new.get("destructive") is not True:
        out.add(False, "function", name, "no longer destructive")
    if old.get("deprecated") != new.get("deprecated"):
        out.add(False, "function", name, "now deprecated" if new.get("deprecated") else "no longer deprecated")
    if _route(old) != _route(new):
        before = " ".join(_route(old) or ("composite",))
        after = " ".join(_route(new) or ("composite",))
        out.add(False, "function", name, f"route changed from {before} to {after} (agents call it by name)")
    for found in (
        own_server_change(old.get("server"), new.get("server")),
        security_change(old.get("security"), new.get("security")),
    ):
        if found is not None:
            out.add(found[0], "function", name, found[1])
    for key in ("summary", "description"):
        _wording(old, new, key, "function", name, out)
    _rest(old, new, _FUNCTION_KEYS + (tuple(_DERIVED) if renamed else ()), "function", name, out)


def _arg_keys(args: Iterable[Any]) -> dict[str, Mapping[str, Any]]:
    """Args by name; an arg whose name repeats (path and body both have `id`) is keyed `name (in)`."""
    listed = [arg for arg in args if isinstance(arg, Mapping)]
    counts: dict[str, int] = {}
    for arg in listed:
        counts[str(arg.get("name"))] = counts.get(str(arg.get("name")), 0) + 1
    keyed: dict[str, Mapping[str, Any]] = {}
    for arg in listed:
        name = str(arg.get("name"))
        keyed[name if counts[name] == 1 else f"{name} ({arg.get('in')})"] = arg
    return keyed


def _args(name: str, old_args: Iterable[Any], new_args: Iterable[Any], out: _Changes) -> None:
    old, new = _arg_keys(old_args), _arg_keys(new_args)
    for key in old:
        if key not in new:
            out.add(True, "function", name, f"arg {key!r} removed")
    for key, arg in new.items():
        if key not in old:
            required = arg.get("required") is True
            out.add(required, "function", name, f"arg {key!r} added as {'required' if required else 'optional'}")
    for key, before in old.items():
        after = new.get(key)
        if after is None or before == after:
            continue
        if before.get("required") is not True and after.get("required") is True:
            out.add(True, "function", name, f"arg {key!r} is now required")
        elif before.get("required") is True and after.get("required") is not True:
            out.add(False, "function", name, f"arg {key!r} is now optional")
        if before.get("in") != after.get("in"):
            out.add(False, "function", name, f"arg {key!r} moved from {before.get('in')} to {after.get('in')}")
        old_schema, new_schema = _mapping(before.get("schema")), _mapping(after.get("schema"))
        _schema(old_schema, new_schema, "function", name, out, root="arg", path=key, direction="input")
        if old_schema.get("description") == new_schema.get("description"):
            _wording(before, after, "description", "function", name, out)
        sent = style_change(key, before, after)
        if sent is not None:
            out.add(sent[0], "function", name, sent[1])
        _rest(
            before,
            after,
            ("name", "required", "in", "schema", "description", "style", "explode"),
            "function",
            name,
            out,
        )


# Terms


def _terms(old: Mapping[str, Mapping[str, Any]], new: Mapping[str, Mapping[str, Any]], out: _Changes) -> None:
    added = [name for name in new if name not in old]
    shapes = {_shape(new[name]): name for name in added if _shape(new[name]) is not None}
    renamed: set[str] = set()
    for name, before in old.items():
        if name in new:
            continue
        shape = _shape(before)
        target = shapes.pop(shape, None) if shape is not None else None
        if target is not None:
            renamed.add(target)
            out.add(True, "term", name, f"renamed to {target}")
        else:
            out.add(True, "term", name, "removed")
    for name in added:
        if name not in renamed:
            out.add(False, "term", name, "added")
    for name, before in old.items():
        after = new.get(name)
        if after is not None and before != after:
            _term(name, before, after, out)


def _shape(term: Mapping[str, Any]) -> str | None:
    """A term's schema without its title, for telling a renamed term from a removed one."""
    schema = term.get("schema")
    if not isinstance(schema, Mapping):
        return None
    return json.dumps({k: v for k, v in schema.items() if k != "title"}, sort_keys=True)


def _term(name: str, old: Mapping[str, Any], new: Mapping[str, Any], out: _Changes) -> None:
    _wording(old, new, "description", "term", name, out)
    old_aliases, new_aliases = list(old.get("aliases") or []), list(new.get("aliases") or [])
    for alias in old_aliases:
        if alias not in new_aliases:
            out.add(True, "term", name, f"alias {alias!r} removed")
    for alias in new_aliases:
        if alias not in old_aliases:
            out.add(False, "term", name, f"alias {alias!r} added")
    before, after = old.get("schema"), new.get("schema")
    if before is None and after is not None:
        out.add(False, "term", name, "now has a schema")
    elif before is not None and after is None:
        out.add(True, "term", name, "no longer has a schema")
    elif before != after:
        accepted = bool(old.get("accepted_by") or new.get("accepted_by"))
        returned = bool(old.get("returned_by") or new.get("returned_by"))
        direction: Direction = (
            "input" if accepted and not returned else "output" if returned and not accepted else "both"
        )
        _schema(before, after, "term", name, out, root="field", label="schema", direction=direction)
    _rest(old, new, ("name", "description", "aliases", "schema"), "term", name, out)
