"""Resolve local `$ref`s (`#/components/schemas/Pet`) inside one loaded document, finitely and with caching."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog._pointer import MISSING, escape_token, lookup, split_fragment

__all__ = ["MAX_REF_CHAIN", "SCHEMA_PREFIX", "RefResolver", "decode_pointer", "encode_pointer_token"]

SCHEMA_PREFIX = "#/components/schemas/"
#: The most `$ref`s followed from one ref to a value that is not a ref: a longer chain is left unresolved, with a
#: warning when the document is loaded (the loader, the bundler and the resolver all stop here).
MAX_REF_CHAIN = 64


def decode_pointer(ref: str) -> list[str] | None:
    """The tokens of a local JSON pointer ref (`#/a/b~1c` → ['a', 'b/c']), or None when it is not local."""
    return split_fragment(ref[1:]) if ref.startswith("#") else None


encode_pointer_token = escape_token


class RefResolver:
    """Looks up local refs in a document; unresolvable refs and ref chains that loop resolve to None."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self._document = document
        self._cache: dict[str, Any] = {}
        components = document.get("components")
        schemas = components.get("schemas") if isinstance(components, Mapping) else None
        self.schemas: Mapping[str, Any] = schemas if isinstance(schemas, Mapping) else {}

    @property
    def document(self) -> Mapping[str, Any]:
        """The document refs are resolved in."""
        return self._document

    def lookup(self, ref: str) -> Any:
        """The value at `ref` (one step, not following a `$ref` found there), or None when it does not exist."""
        if ref in self._cache:
            return self._cache[ref]
        tokens = decode_pointer(ref)
        value = None if tokens is None else lookup(self._document, tokens)
        if value is MISSING:
            value = None
        self._cache[ref] = value
        return value

    def deref(self, value: Any) -> tuple[Any, str | None]:
        """Follow `$ref`s from `value` to a value that is not a ref.

        Returns the value and the last ref followed (None when `value` was no ref). A missing target or a chain
        that loops gives (None, ref).
        """
        last: str | None = None
        seen: set[str] = set()
        while isinstance(value, Mapping) and isinstance(value.get("$ref"), str):
            ref = value["$ref"]
            if ref in seen or len(seen) >= MAX_REF_CHAIN:
                return None, ref
            seen.add(ref)
            last = ref
            value = self.lookup(ref)
            if value is None:
                return None, ref
        return value, last

    @staticmethod
    def schema_name(value: Any) -> str | None:
        """The component name when `value` is exactly a ref to a named schema (`{$ref: #/components/schemas/X}`)."""
        if isinstance(value, Mapping):
            ref = value.get("$ref")
            if isinstance(ref, str) and ref.startswith(SCHEMA_PREFIX):
                tokens = decode_pointer(ref)
                if tokens is not None and len(tokens) == 3:
                    return tokens[2]
        return None
