"""The real OpenAPI documents in ../shared/corpus/specs, loaded once per test session."""

from __future__ import annotations

import functools
import os
from pathlib import Path

from catalog.builder import build_catalog
from catalog.loading import load_document
from catalog.model import Catalog

CORPUS = Path(os.environ.get("MCP_GATEWAY_CORPUS", Path(__file__).resolve().parents[2] / "shared" / "corpus" / "specs"))
MULTIFILE_ENTRY = CORPUS / "digitalocean-public-v2.multifile" / "specification" / "DigitalOcean-public.v2.yaml"
#: The Swagger 2.0 documents, which the loader converts to OpenAPI 3.0.3, with how many operations each has.
SWAGGER_2 = {"oai-uber-swagger2.json": 5, "slack-web-swagger2.json": 174}


def corpus_documents() -> list[str]:
    """Every corpus document by name, the multi-file tree by its folder name."""
    names = sorted(p.name for p in CORPUS.iterdir() if p.suffix in (".json", ".yaml", ".yml"))
    return [*names, "digitalocean-public-v2.multifile"]


def corpus_path(name: str) -> Path:
    """The file to load for a corpus document name."""
    return MULTIFILE_ENTRY if name == "digitalocean-public-v2.multifile" else CORPUS / name


@functools.cache
def corpus_catalog(name: str) -> Catalog:
    """The catalog of a corpus document, built once per session."""
    return build_catalog(load_document(corpus_path(name)))
