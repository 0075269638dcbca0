"""Turn an OpenAPI 3.x document into the agent-facing catalog: modules, functions and a glossary of terms.

catalog = load_catalog("openapi.yaml")
catalog.function("orders.create").input_schema()

The catalog opens no connection: URLs and the files `$ref`s name are read through a `fetch` callable
(`Fetched`, see `catalog.fetched`) that the caller supplies, within `FetchLimits`. The names below are imported
on first use (PEP 562), so that importing one module (`catalog.errors`) does not load them all.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from catalog.builder import build_catalog, load_catalog
    from catalog.composite import Composite, Concept, Invoker, composite
    from catalog.errors import (
        CatalogConfigError,
        CatalogError,
        DocumentError,
        FetchLimitError,
        SchemaTooLargeError,
        UnknownNameError,
    )
    from catalog.fetched import Fetched, FetchLimits, Loading
    from catalog.loading import Document, DocumentWarning, load_document
    from catalog.model import Arg, Catalog, Function, Module, Term
    from catalog.search import SearchResult
    from catalog.snapshot import catalog_snapshot, dump_snapshot

__all__ = [
    "Arg",
    "Catalog",
    "CatalogConfigError",
    "CatalogError",
    "Composite",
    "Concept",
    "Document",
    "DocumentError",
    "DocumentWarning",
    "FetchLimitError",
    "FetchLimits",
    "Fetched",
    "Function",
    "Invoker",
    "Loading",
    "Module",
    "SchemaTooLargeError",
    "SearchResult",
    "Term",
    "UnknownNameError",
    "build_catalog",
    "catalog_snapshot",
    "composite",
    "dump_snapshot",
    "load_catalog",
    "load_document",
]

_HOMES = {
    "catalog.builder": ("build_catalog", "load_catalog"),
    "catalog.composite": ("Composite", "Concept", "Invoker", "composite"),
    "catalog.errors": (
        "CatalogConfigError",
        "CatalogError",
        "DocumentError",
        "FetchLimitError",
        "SchemaTooLargeError",
        "UnknownNameError",
    ),
    "catalog.fetched": ("FetchLimits", "Fetched", "Loading"),
    "catalog.loading": ("Document", "DocumentWarning", "load_document"),
    "catalog.model": ("Arg", "Catalog", "Function", "Module", "Term"),
    "catalog.search": ("SearchResult",),
    "catalog.snapshot": ("catalog_snapshot", "dump_snapshot"),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'catalog' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
