"""Turn an OpenAPI 3.x document into the agent-facing catalog: modules, functions and a glossary of terms.

catalog = load_catalog("openapi.yaml")
catalog.function("orders.create").input_schema()
"""

from __future__ import annotations

from catalog.builder import build_catalog, load_catalog
from catalog.composite import Caller, Composite, Concept, composite
from catalog.errors import CatalogConfigError, CatalogError, DocumentError, SchemaTooLargeError, UnknownNameError
from catalog.loading import Document, DocumentWarning, load_app_document, load_document
from catalog.model import Arg, Catalog, Function, Module, Term
from catalog.search import SearchResult
from catalog.snapshot import catalog_snapshot, dump_snapshot

__all__ = [
    "Arg",
    "Caller",
    "Catalog",
    "CatalogConfigError",
    "CatalogError",
    "Composite",
    "Concept",
    "Document",
    "DocumentError",
    "DocumentWarning",
    "Function",
    "Module",
    "SchemaTooLargeError",
    "SearchResult",
    "Term",
    "UnknownNameError",
    "build_catalog",
    "catalog_snapshot",
    "composite",
    "dump_snapshot",
    "load_app_document",
    "load_catalog",
    "load_document",
]
