"""The resources, resource templates and prompts of two surface snapshots, each difference classified.

Breaking: a resource, template or prompt removed; a resource's or template's media type changed; a prompt argument
removed (clients that send it are refused), added as required or made required. Non-breaking: additions, optional
arguments, titles and descriptions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["surface_changes"]

Add = Callable[[bool, Any, str, str], None]


def _keyed(value: Any, key: str) -> dict[str, Mapping[str, Any]]:
    items = value if isinstance(value, list) else []
    return {str(item[key]): item for item in items if isinstance(item, Mapping) and key in item}


def surface_changes(old: Mapping[str, Any], new: Mapping[str, Any], add: Add) -> None:
    """Report through `add(breaking, subject, name, message)` every difference in resources and prompts."""
    for section, key, label in (("resources", "uri", "resource"), ("resourceTemplates", "uriTemplate", "template")):
        _resources(_keyed(old.get(section), key), _keyed(new.get(section), key), label, add)
    _prompts(_keyed(old.get("prompts"), "name"), _keyed(new.get("prompts"), "name"), add)


def _resources(
    old: Mapping[str, Mapping[str, Any]], new: Mapping[str, Mapping[str, Any]], label: str, add: Add
) -> None:
    for uri, before in old.items():
        after = new.get(uri)
        if after is None:
            add(True, "resource", uri, f"{label} removed")
            continue
        if before.get("mimeType") != after.get("mimeType"):
            add(True, "resource", uri, f"media type changed from {before.get('mimeType')} to {after.get('mimeType')}")
        for key in sorted(set(before) | set(after)):
            if key != "mimeType" and before.get(key) != after.get(key):
                add(False, "resource", uri, f"{key} changed")
    for uri in new:
        if uri not in old:
            add(False, "resource", uri, f"{label} added")


def _prompts(old: Mapping[str, Mapping[str, Any]], new: Mapping[str, Mapping[str, Any]], add: Add) -> None:
    for name, before in old.items():
        after = new.get(name)
        if after is None:
            add(True, "prompt", name, "removed")
            continue
        old_args, new_args = _keyed(before.get("arguments"), "name"), _keyed(after.get("arguments"), "name")
        for arg in old_args:
            if arg not in new_args:
                add(True, "prompt", name, f"argument {arg!r} removed")
        for arg, entry in new_args.items():
            required = entry.get("required") is True
            if arg not in old_args:
                add(required, "prompt", name, f"argument {arg!r} added as {'required' if required else 'optional'}")
            elif required and old_args[arg].get("required") is not True:
                add(True, "prompt", name, f"argument {arg!r} is now required")
            elif not required and old_args[arg].get("required") is True:
                add(False, "prompt", name, f"argument {arg!r} is now optional")
            elif entry != old_args[arg]:
                add(False, "prompt", name, f"argument {arg!r}: description changed")
        for key in sorted((set(before) | set(after)) - {"name", "arguments"}):
            if before.get(key) != after.get(key):
                add(False, "prompt", name, f"{key} changed")
    for name in new:
        if name not in old:
            add(False, "prompt", name, "added")
