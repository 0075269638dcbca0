"""Every real document of the corpus loads (Swagger 2.0 ones converted) and builds a sound, deterministic catalog."""

from __future__ import annotations

import os

import jsonschema
import pytest

from catalog.builder import build_catalog
from catalog.errors import SchemaTooLargeError
from catalog.loading import load_document
from catalog.render import describe_function, explain_term, function_line
from catalog.snapshot import catalog_snapshot, dump_snapshot
from tests.corpus import SWAGGER_2, corpus_catalog, corpus_documents, corpus_path

ACCEPTED = corpus_documents()
META = jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)


@pytest.mark.parametrize("name", sorted(SWAGGER_2))
def test_swagger_2_documents_load_converted_with_a_note_counting_their_operations(name: str) -> None:
    document = load_document(corpus_path(name))
    assert document.openapi == "3.0.3"
    note = document.warnings[0]
    assert note.pointer == "#/swagger"
    assert f"Swagger 2.0 document, converted in-process to OpenAPI 3.0.3 ({SWAGGER_2[name]} operations)" in note.message
    assert len(corpus_catalog(name).functions()) == SWAGGER_2[name]


@pytest.mark.parametrize("name", ACCEPTED)
def test_every_corpus_document_builds_a_catalog_whose_functions_render(name: str) -> None:
    catalog = corpus_catalog(name)
    for function in catalog.functions():
        assert function_line(function).startswith(function.name + "(")
        assert describe_function(catalog, function).startswith(function.name + "(")
        assert function.name.count(".") == 1
    for term in catalog.terms[:50]:
        assert explain_term(catalog, term).startswith(term.name)


@pytest.mark.parametrize("name", ACCEPTED)
def test_every_input_schema_is_valid_json_schema_2020_12_or_refused_as_too_large(name: str) -> None:
    catalog = corpus_catalog(name)
    checked_defs: set[str] = set()
    for function in catalog.functions():
        try:
            schema = dict(function.input_schema())
        except SchemaTooLargeError:
            continue
        # Shared $defs are checked once per document, which keeps this test fast on the big APIs.
        defs = schema.pop("$defs", {})
        for part_name, part in [(function.name, schema), *((n, d) for n, d in defs.items() if n not in checked_defs)]:
            errors = [error.message for error in META.iter_errors(part)]
            assert errors == [], f"{function.name} ({part_name}): {errors[:3]}"
        checked_defs.update(defs)


@pytest.mark.parametrize("name", [n for n in ACCEPTED if n != "github-api.github.com.json"])
def test_building_twice_gives_byte_identical_snapshots(name: str) -> None:
    first = dump_snapshot(catalog_snapshot(corpus_catalog(name)))
    again = dump_snapshot(catalog_snapshot(build_catalog(load_document(corpus_path(name)))))
    assert first == again


@pytest.mark.parametrize(
    ("name", "largest_share"), [("stripe-spec3.yaml", 0.1), ("discord-api.json", 0.25), ("chroma-server.json", 0.5)]
)
def test_untagged_apis_get_useful_modules_not_one_giant_default(name: str, largest_share: float) -> None:
    catalog = corpus_catalog(name)
    sizes = [len(module.functions) for module in catalog.modules]
    assert len(catalog.modules) >= 8
    assert max(sizes) <= len(catalog.functions()) * largest_share
    assert "default" not in {module.name for module in catalog.modules}


def test_function_names_are_unique_and_every_operation_is_a_function() -> None:
    catalog = corpus_catalog("github-api.github.com.json")
    names = [function.name for function in catalog.functions()]
    assert len(names) == len(set(names)) == 1223


def _numbers_as_floats(value: object) -> object:
    """Redocly's bundle writes 10.0 as 10 and rounds 2**64 - 1; compare numbers as floats."""
    if isinstance(value, dict):
        return {key: _numbers_as_floats(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_numbers_as_floats(item) for item in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return value


def test_the_multi_file_digitalocean_tree_gives_the_same_catalog_as_its_bundled_twin() -> None:
    multifile = catalog_snapshot(corpus_catalog("digitalocean-public-v2.multifile"))
    bundled = catalog_snapshot(corpus_catalog("digitalocean-public-v2.bundled.yaml"))
    assert [f["name"] for m in multifile["modules"] for f in m["functions"]] == [
        f["name"] for m in bundled["modules"] for f in m["functions"]
    ]
    assert [t["name"] for t in multifile["terms"]] == [t["name"] for t in bundled["terms"]]
    assert _numbers_as_floats(multifile) == _numbers_as_floats(bundled)


def test_snapshots_are_identical_whatever_the_hash_seed() -> None:
    import subprocess
    import sys

    document = str(corpus_path("discord-api.json"))
    outputs = {
        subprocess.run(
            [sys.executable, "-m", "gateway.cli", "catalog", "snapshot", document],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1
