"""Semantic reranking (the `semantic` extra): the model files' digests, the vector cache, the lexical fallback
before the vectors are ready, and that reranking keeps what lexical ranking gets right by name.

The tests that run the model skip where the extra is not installed (`make` installs it, so CI runs them); the
others check that search without it stays lexical and imports none of it.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from catalog import _search_semantic as semantic
from catalog.builder import load_catalog
from catalog.errors import SemanticModelError
from catalog.model import Catalog
from catalog.search import Ranking, SearchIndex, search
from demo import create_app

REPO = Path(__file__).resolve().parents[2]
WAIT = 120.0  # seconds: the demo's vectors take well under one


@pytest.fixture
def shop() -> Catalog:
    """A fresh demo catalog for each test: vectors are made once per catalog."""
    return load_catalog(create_app())


def semantic_ranking(cache_dir: Path) -> Ranking:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tokenizers")
    pytest.importorskip(semantic.MODEL_PACKAGE)
    return Ranking(semantic=True, cache_dir=cache_dir)


# -- without the extra, or turned off ------------------------------------------------------------------------------


def test_search_without_the_extra_imports_no_numpy_onnxruntime_or_tokenizers() -> None:
    code = (
        "import sys\n"
        "from catalog.builder import load_catalog\n"
        "from catalog.search import search\n"
        "from demo import create_app\n"
        "print(search(load_catalog(create_app()), 'cancel an order').functions[0].name)\n"
        "print(sorted(name for name in ('numpy', 'onnxruntime', 'tokenizers') if name in sys.modules))\n"
    )
    env = {**os.environ, "MCP_GATEWAY_SEMANTIC_SEARCH": "0", "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.splitlines() == ["orders.cancel_order", "[]"]


def test_semantic_ranking_is_on_by_default_only_where_the_extra_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCP_GATEWAY_SEMANTIC_SEARCH")
    assert Ranking().semantic_on is semantic.installed()
    assert not Ranking().required
    monkeypatch.setenv("MCP_GATEWAY_SEMANTIC_SEARCH", "off")
    assert not Ranking().semantic_on
    monkeypatch.setenv("MCP_GATEWAY_SEMANTIC_SEARCH", "1")
    assert Ranking().semantic_on
    assert Ranking().required
    assert not Ranking(semantic=False).semantic_on


def test_a_ranking_turned_off_ranks_exactly_as_lexical_search(shop: Catalog) -> None:
    for query in ("cancel an order", "who am I", "list products"):
        lexical = SearchIndex(shop).rank(query)
        assert SearchIndex(shop, Ranking(semantic=False)).rank(query) == lexical


def test_required_semantic_ranking_without_its_model_package_is_refused_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch, shop: Catalog
) -> None:
    real = importlib.util.find_spec

    def without_model(name: str, *args: object) -> object:
        return None if name == semantic.MODEL_PACKAGE else real(name)

    monkeypatch.setattr(importlib.util, "find_spec", without_model)
    with pytest.raises(SemanticModelError, match=r"openapi-mcp-gateway\[semantic\]"):
        search(shop, "cancel an order", ranking=Ranking(semantic=True))


# -- the model files ---------------------------------------------------------------------------------------------


def test_a_model_file_whose_sha256_differs_is_refused_naming_the_file_and_the_fix(tmp_path: Path) -> None:
    semantic_ranking(tmp_path)
    model = tmp_path / "model.onnx"
    shutil.copyfile(semantic.model_file(), model)
    with model.open("r+b") as stream:
        stream.seek(1000)
        byte = stream.read(1)
        stream.seek(1000)
        stream.write(bytes([byte[0] ^ 1]))
    with pytest.raises(SemanticModelError) as raised:
        semantic.Embedder(model)
    assert str(model) in str(raised.value)
    assert "pip install --force-reinstall 'openapi-mcp-gateway[semantic]'" in str(raised.value)


def test_a_changed_tokenizer_file_is_refused_too(tmp_path: Path) -> None:
    semantic_ranking(tmp_path)
    tokenizer = tmp_path / "tokenizer.json"
    tokenizer.write_bytes(semantic.TOKENIZER.read_bytes().replace(b'"[UNK]"', b'"[UNKNOWN]"', 1))
    with pytest.raises(SemanticModelError, match=r"tokenizer\.json"):
        semantic.Embedder(tokenizer=tokenizer)


def test_a_changed_adapter_file_is_refused_too(tmp_path: Path) -> None:
    semantic_ranking(tmp_path)
    adapter = tmp_path / "adapter.npy"
    data = bytearray(semantic.ADAPTER.read_bytes())
    data[-1] ^= 1
    adapter.write_bytes(bytes(data))
    with pytest.raises(SemanticModelError, match=r"adapter\.npy"):
        semantic.Embedder(adapter=adapter)


def test_the_model_license_and_notice_ship_beside_the_tokenizer() -> None:
    folder = semantic.TOKENIZER.parent
    assert "Apache License" in (folder / "LICENSE.txt").read_text(encoding="utf-8")
    notice = (folder / "NOTICE.txt").read_text(encoding="utf-8")
    assert semantic.MODEL_SHA256 in notice
    assert semantic.TOKENIZER_SHA256 in notice
    assert semantic.ADAPTER_SHA256 in notice


def test_the_adapter_moves_query_vectors_and_leaves_them_of_length_one(tmp_path: Path) -> None:
    semantic_ranking(tmp_path)
    import numpy

    adapted, plain = semantic.Embedder(), semantic.Embedder(adapter=None)
    for query in ("mute notifications for a repository", "who am I"):
        moved, unmoved = adapted.query(query), plain.query(query)
        assert abs(float(numpy.linalg.norm(moved)) - 1) < 1e-5
        assert float(moved @ unmoved) < 0.999
        assert numpy.array_equal(unmoved, plain.embed([query])[0])


# -- the vectors and their cache -----------------------------------------------------------------------------------


def test_vectors_are_written_to_the_cache_and_read_back_from_it(tmp_path: Path, shop: Catalog) -> None:
    ranking = semantic_ranking(tmp_path)
    assert SearchIndex(shop, ranking).build(wait_semantic=WAIT)
    files = list(tmp_path.glob("*.npy"))
    assert [path.stem for path in files] == [
        semantic.cache_key([semantic.function_text(function) for function in shop.functions()])
    ]
    again = load_catalog(create_app())
    semantic._KNOWN.clear()  # as in a new process: only the file has them
    files[0].touch()
    before = files[0].stat().st_mtime_ns
    assert SearchIndex(again, ranking).build(wait_semantic=WAIT)
    assert files[0].stat().st_mtime_ns == before
    first = semantic.vectors_of(shop, None).matrix
    second = semantic.vectors_of(again, None).matrix
    assert first is not None and second is not None
    assert first.tolist() == second.tolist()


def test_the_cache_is_keyed_by_the_function_texts(tmp_path: Path, shop: Catalog) -> None:
    texts = [semantic.function_text(function) for function in shop.functions()]
    changed = [*texts[:-1], texts[-1] + " (changed)"]
    assert semantic.cache_key(texts) != semantic.cache_key(changed)
    assert semantic.cache_key(texts) != semantic.cache_key(texts[:-1])
    assert semantic.cache_key(texts) == semantic.cache_key(list(texts))


def test_a_corrupt_cache_file_is_embedded_again_and_rewritten(
    tmp_path: Path, shop: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    ranking = semantic_ranking(tmp_path)
    texts = [semantic.function_text(function) for function in shop.functions()]
    path = tmp_path / f"{semantic.cache_key(texts)}.npy"
    path.write_bytes(b"\x93NUMPY not really")
    semantic._KNOWN.clear()
    with caplog.at_level(logging.WARNING, logger=semantic.__name__):
        assert SearchIndex(shop, ranking).build(wait_semantic=WAIT)
    assert "embedding again" in caplog.text
    import numpy

    stored = numpy.load(path)
    assert stored.shape == (len(texts), 384)
    assert numpy.allclose(numpy.linalg.norm(stored, axis=1), 1.0, atol=1e-4)


# -- ranking -------------------------------------------------------------------------------------------------------


def test_searches_before_the_vectors_are_ready_rank_lexically(
    tmp_path: Path, shop: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    ranking = semantic_ranking(tmp_path)
    release = threading.Event()
    real = semantic._cached

    def held(*args: object) -> object:
        release.wait(WAIT)
        return real(*args)  # type: ignore[arg-type]

    semantic._KNOWN.clear()
    monkeypatch.setattr(semantic, "_cached", held)
    index = SearchIndex(shop, ranking)
    assert not index.build(wait_semantic=0)
    lexical = SearchIndex(shop, Ranking(semantic=False))
    for query in ("cancel an order", "who am I", "show me what I bought"):
        assert index.rank(query) == lexical.rank(query)
    release.set()
    assert index.build(wait_semantic=WAIT)


def test_reranking_keeps_exact_name_hits_first(tmp_path: Path, shop: Catalog) -> None:
    ranking = semantic_ranking(tmp_path)
    index = SearchIndex(shop, ranking)
    assert index.build(wait_semantic=WAIT)
    for function in shop.functions():
        for query in (function.name, function.function_name):
            assert index.rank(query, limit=3)[0] is function, query


def test_reranking_orders_the_lexical_candidates_and_the_few_nearest_in_meaning(tmp_path: Path, shop: Catalog) -> None:
    ranking = semantic_ranking(tmp_path)
    index = SearchIndex(shop, ranking)
    assert index.build(wait_semantic=WAIT)
    lexical = SearchIndex(shop, Ranking(semantic=False))
    limit = semantic.CANDIDATES + semantic.NEAREST
    for query in ("cancel an order", "show me what I bought", "remove a product"):
        reranked = index.rank(query, limit=limit)
        candidates = set(lexical.rank(query, limit=semantic.CANDIDATES))
        assert candidates <= set(reranked)
        assert len(set(reranked) - candidates) <= semantic.NEAREST
        assert search(shop, query, ranking=ranking).functions == reranked[:10]


def test_a_task_in_words_the_api_never_uses_finds_its_function_by_meaning_and_nonsense_finds_none(
    tmp_path: Path, shop: Catalog
) -> None:
    ranking = semantic_ranking(tmp_path)
    index = SearchIndex(shop, ranking)
    assert index.build(wait_semantic=WAIT)
    lexical = SearchIndex(shop, Ranking(semantic=False))
    assert not lexical.rank("refund")
    assert index.rank("refund", limit=3)[0].name == "orders.cancel_order"
    for nonsense in ("xyzzy", "the weather in paris", "asdf qwerty"):
        assert not lexical.rank(nonsense)
        assert not index.rank(nonsense), nonsense
        assert search(shop, nonsense, ranking=ranking).text.startswith("No function matches")


def test_reranking_within_a_module_adds_only_that_modules_functions(tmp_path: Path, shop: Catalog) -> None:
    ranking = semantic_ranking(tmp_path)
    index = SearchIndex(shop, ranking)
    assert index.build(wait_semantic=WAIT)
    for module in shop.modules:
        for query in ("cancel an order", "who am I", "remove a product"):
            assert {function.module for function in index.rank(query, module=module.name, limit=30)} <= {module.name}


@pytest.mark.slow
def test_reranking_github_keeps_the_lexical_top_hit_for_tasks_that_name_a_call(tmp_path: Path) -> None:
    from tests.corpus import corpus_catalog

    ranking = semantic_ranking(tmp_path)
    github = corpus_catalog("github-api.github.com.json")
    assert SearchIndex(github, ranking).build(wait_semantic=600)
    assert search(github, "merge a pull request", ranking=ranking).functions[0].name == "pulls.merge"
    assert search(github, "create an issue", ranking=ranking).functions[0].name == "issues.create"
    assert search(github, "issues.create_comment", ranking=ranking).functions[0].name == "issues.create_comment"


def test_reranking_keeps_other_routes_to_the_same_call_after_every_different_call(tmp_path: Path) -> None:
    from catalog.builder import build_catalog
    from catalog.loading import load_document
    from tests.catalog.test_search import ROUTES

    ranking = semantic_ranking(tmp_path)
    catalog = build_catalog(load_document(ROUTES))
    index = SearchIndex(catalog, ranking)
    assert index.build(wait_semantic=WAIT)
    for query in ("chat completion", "complete a chat", "send chat messages to the model"):
        names = [function.name for function in index.rank(query, limit=6)]
        routes = [position for position, name in enumerate(names) if name in ("llm.chat", "llm.chat_v1")]
        assert len(routes) == 2, (query, names)
        assert routes[1] > max(p for p, name in enumerate(names) if name not in ("llm.chat", "llm.chat_v1")), names


def test_a_view_of_a_catalog_being_embedded_takes_its_vectors_instead_of_embedding_them_again(
    tmp_path: Path, shop: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    ranking = semantic_ranking(tmp_path)
    release = threading.Event()
    embedded: list[int] = []
    real = semantic._cached

    def held(texts: list[str], *args: object) -> object:
        embedded.append(len(texts))
        release.wait(WAIT)
        return real(texts, *args)  # type: ignore[arg-type]

    semantic._KNOWN.clear()
    monkeypatch.setattr(semantic, "_cached", held)
    assert not SearchIndex(shop, ranking).build(wait_semantic=0)
    view = Catalog(
        title=shop.title, version=shop.version, description=shop.description, modules=shop.modules[:2], terms=()
    )
    index = SearchIndex(view, ranking)
    assert not index.build(wait_semantic=0.2)
    release.set()
    assert index.build(wait_semantic=WAIT)
    assert embedded == [len(shop.functions())]
    assert index.rank("cancel an order")


def test_a_view_of_a_catalog_finds_by_meaning_only_functions_of_its_own(tmp_path: Path, shop: Catalog) -> None:
    ranking = semantic_ranking(tmp_path)
    assert SearchIndex(shop, ranking).build(wait_semantic=WAIT)
    kept = [module for module in shop.modules if module.name in ("products", "users")]
    view = Catalog(title=shop.title, version=shop.version, description=shop.description, modules=kept, terms=())
    index = SearchIndex(view, ranking)
    assert index.build(wait_semantic=WAIT)
    own = {function.name for function in view.functions()}
    for query in ("refund", "cancel an order", "what did I purchase", "delete a customer"):
        assert {function.name for function in index.rank(query, limit=30)} <= own, query


# A catalog of 2,000 functions takes the model tens of seconds to embed, so the process exits in the middle of it.
_EXIT_WHILE = """
import sys, time
from catalog import _search_semantic as semantic
from catalog.builder import load_catalog
from catalog.search import Ranking, SearchIndex

moment, cache_dir = sys.argv[1], sys.argv[2]
paths = {
    f"/things{n}/{{id}}": {"get": {"operationId": f"getThing{n}", "summary": f"Fetch thing number {n} by its id"}}
    for n in range(2000)
}
document = {"openapi": "3.0.3", "info": {"title": "Things", "version": "1"}, "paths": paths}
SearchIndex(load_catalog(document), Ranking(semantic=True, cache_dir=cache_dir)).build(wait_semantic=0)
deadline = time.monotonic() + 60
if moment == "loading":  # onnxruntime imported: the session is being made
    while "onnxruntime" not in sys.modules and time.monotonic() < deadline:
        time.sleep(0.001)
    time.sleep(0.05)
else:  # the model is loaded and the functions are being embedded
    while semantic._EMBEDDER is None and time.monotonic() < deadline:
        time.sleep(0.001)
    time.sleep(0.5)
print("exiting", flush=True)
"""


@pytest.mark.parametrize("moment", ["loading", "embedding"])
def test_a_process_that_exits_while_the_model_is_busy_in_the_background_exits_cleanly(
    tmp_path: Path, moment: str
) -> None:
    semantic_ranking(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", _EXIT_WHILE, moment, str(tmp_path)],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "MCP_GATEWAY_SEMANTIC_SEARCH": "1"},
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert (done.returncode, done.stdout) == (0, "exiting\n"), done.stderr[-2000:]
    assert "terminate called" not in done.stderr
