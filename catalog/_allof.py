"""The properties of a schema with those of its allOf parts merged in, in time linear in the document.

A part listed many times (an allOf of F refs to a schema whose allOf lists F refs, and so on) is merged from one
result per (schema, depth), not walked again: a few kilobytes of such refs would otherwise take F^depth steps.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from typing import Any

from catalog._refs import RefResolver

__all__ = ["MAX_ALLOF_DEPTH", "MAX_MERGED_PROPERTIES", "AllOfProperties", "Merged"]

#: allOf parts nested deeper than this below the schema asked about are left out of its properties.
MAX_ALLOF_DEPTH = 8
#: The most properties one AllOfProperties may copy while merging (real documents: under 2,500 for a whole
#: catalog's request bodies, under 400 for one term); past it, what is asked has no properties (None).
MAX_MERGED_PROPERTIES = 200_000

#: Property names to their schemas, in the order the parts and then the schema itself list them; required names.
Merged = tuple[Mapping[str, Any], Set[str]]

_NONE: Merged = ({}, frozenset())
# allOf parts with only these keys add no constraint, so a part without properties may be one when flattening.
_PLAIN_KEYS = frozenset({"description", "title", "type"})


class _OverBudget(Exception):
    """The merge would copy more than the properties left."""


class AllOfProperties:
    """Merges the properties of schemas and their allOf parts, each (schema, depth) once per instance.

    `objects_only`: a schema that may not be a plain object (oneOf, anyOf, another type, or an allOf part that is
    neither an object with properties nor plain) has no properties; otherwise every part's properties count.
    Results are shared between calls: callers read them and never change them.
    """

    def __init__(
        self, resolver: RefResolver | None, *, objects_only: bool, budget: int = MAX_MERGED_PROPERTIES
    ) -> None:
        self._resolver = resolver
        self._objects_only = objects_only
        self._left = budget
        # (id of a dereferenced schema, depth) -> that schema (which keeps its id taken) and its merged properties.
        self._merged: dict[tuple[int, int], tuple[Any, Merged]] = {}

    def of(self, schema: Any) -> Merged | None:
        """The properties and required names of `schema`; None when merging them would exceed the budget."""
        try:
            return self._merge(schema, 0)
        except _OverBudget:
            self._left = 0
            return None

    def _deref(self, schema: Any) -> Any:
        return self._resolver.deref(schema)[0] if self._resolver is not None else schema

    def _merge(self, schema: Any, depth: int) -> Merged:
        resolved = self._deref(schema)
        if not isinstance(resolved, Mapping) or depth > MAX_ALLOF_DEPTH:
            return _NONE
        key = (id(resolved), depth)
        known = self._merged.get(key)
        if known is not None:
            return known[1]
        merged = self._merge_parts(resolved, depth)
        self._merged[key] = (resolved, merged)
        return merged

    def _merge_parts(self, resolved: Mapping[str, Any], depth: int) -> Merged:
        if self._objects_only:
            if any(key in resolved for key in ("oneOf", "anyOf")):
                return _NONE
            kind = resolved.get("type")
            if kind not in (None, "object") and kind != ["object"]:
                return _NONE
        self._spend(1)
        properties: dict[str, Any] = {}
        required: set[str] = set()
        parts = resolved.get("allOf")
        for part in parts if isinstance(parts, list) else []:
            part_properties, part_required = self._merge(part, depth + 1)
            if self._objects_only and not part_properties:
                part_resolved = self._deref(part)
                if isinstance(part_resolved, Mapping) and set(part_resolved) - _PLAIN_KEYS:
                    return _NONE  # An allOf part that is not a plain object cannot be flattened faithfully.
            self._spend(len(part_properties) + len(part_required))
            properties.update(part_properties)
            required |= part_required
        own = resolved.get("properties")
        if isinstance(own, Mapping):
            self._spend(len(own))
            properties.update({str(name): value for name, value in own.items()})
        listed = resolved.get("required")
        if isinstance(listed, list):
            self._spend(len(listed))
            required |= {item for item in listed if isinstance(item, str)}
        return properties, required

    def _spend(self, count: int) -> None:
        self._left -= count
        if self._left < 0:
            raise _OverBudget
